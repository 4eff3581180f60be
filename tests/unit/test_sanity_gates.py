"""The ecosystem's gates on this collection (issue 6 point 6), marked ``sanity``.

Run with ``pytest -m sanity tests/unit/test_sanity_gates.py``. They copy the collection to
``<tmp>/ansible_collections/hpc/pbs`` (ansible-test needs that layout) and run
``ansible-test sanity`` (the Python running pytest), ``ansible-lint --profile production``
and ``ansible-doc``. A gate whose tool is not installed is skipped, saying which.

ansible-test installs pinned requirements (pip 24.2, pylint, voluptuous, ...) into
venvs for validate-modules, pylint, pep8, yamllint and import; without network and
without those pins in the local index they cannot run: ``HPC_PBS_SANITY_OFFLINE=1`` then
restricts the run to the tests that need no installation.
"""
import os
import shutil
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IGNORED = shutil.ignore_patterns(".venv", ".git", "__pycache__", ".pytest_cache", ".cluster",
                                 ".lead", "*.pyc", "build")
OFFLINE_TESTS = ("compile", "shebang", "line-endings", "no-assert", "no-smart-quotes",
                 "empty-init", "use-argspec-type-path", "no-get-exception",
                 "replace-urlopen", "use-compat-six", "action-plugin-docs", "symlinks",
                 "no-illegal-filenames", "ignores")
MODULES = ("qmgr", "hook", "mom_config", "tolerate_node_failures", "cluster_info")

pytestmark = pytest.mark.sanity  # registered in tests/unit/plugins/conftest.py


def tool(name):
    path = os.path.join(os.path.dirname(sys.executable), name)
    found = path if os.access(path, os.X_OK) else shutil.which(name)
    if not found:
        pytest.skip("%s is not installed" % name)
    return found


@pytest.fixture(scope="module")
def collection(tmp_path_factory):
    root = tmp_path_factory.mktemp("collections")
    target = root / "ansible_collections" / "hpc" / "pbs"
    shutil.copytree(REPO, str(target), ignore=IGNORED)
    return root, target


def run(cmd, cwd, env=None):
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.run(cmd, cwd=str(cwd), env=full_env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=1800)
    return proc.returncode, proc.stdout


def test_ansible_test_sanity(collection):
    root, target = collection
    cmd = [tool("ansible-test"), "sanity", "--python",
           "%d.%d" % sys.version_info[:2], "--local", "--color", "no"]
    if os.environ.get("HPC_PBS_SANITY_OFFLINE"):
        for name in OFFLINE_TESTS:
            cmd += ["--test", name]
    rc, out = run(cmd, target)
    assert rc == 0, out


def test_ansible_lint_production_profile(collection):
    root, target = collection
    rc, out = run([tool("ansible-lint"), "--profile", "production", "--offline",
                   "roles", "playbooks"], target,
                  env={"ANSIBLE_COLLECTIONS_PATH": str(root)})
    assert rc == 0, out


def test_ansible_doc_lists_and_renders_every_module(collection):
    root, target = collection
    env = {"ANSIBLE_COLLECTIONS_PATH": str(root)}
    rc, out = run([tool("ansible-doc"), "-l", "hpc.pbs"], target, env=env)
    assert rc == 0, out
    for module in MODULES:
        assert "hpc.pbs.%s " % module in out
        rc, text = run([tool("ansible-doc"), "hpc.pbs.%s" % module], target, env=env)
        assert rc == 0 and "EXAMPLES" in text, text


def test_every_role_has_argument_specs():
    roles = os.path.join(REPO, "roles")
    for role in sorted(os.listdir(roles)):
        assert os.path.isfile(os.path.join(roles, role, "meta", "argument_specs.yml")), role
