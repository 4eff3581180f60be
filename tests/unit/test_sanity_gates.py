"""The ecosystem's gates on this collection (issue 6 point 6), marked ``sanity``.

Run with ``pytest -m sanity tests/unit/test_sanity_gates.py``. ``ansible-test sanity`` (in
full) and ``ansible-lint`` run exactly as a contributor runs them, through
``tests/sanity/gates.py`` (what ``make sanity`` and ``make lint`` run; its docstring says
how ansible-test is given the checkout, the pip bootstrap, and HOME): ansible-test on the
checkout's files placed as ``<tmp>/ansible_collections/hpc/pbs``, ansible-lint in the
repository root with its ``.ansible-lint`` (production profile). ``ansible-doc`` runs on a
copy of the collection. A gate whose tool is not installed is skipped, saying which.

What ansible-test sanity checks: the repository as a contributor checks it out - the
collection, the mock PBS, the cluster launcher, the integration and unit tests, the CI and
molecule tooling. Where a rule cannot apply, ``tests/sanity/ignore-2.19.txt`` says so with
its reason; where an ansible-lint rule cannot, ``.ansible-lint-ignore`` does.

Two more gates need no copy of the collection: ``antsibull-changelog lint`` (the fragments
under ``changelogs/fragments``) and ``lint-changelog-yaml``, and a check that
``meta/execution-environment.yml`` is what ansible-builder can use - it parses, names
requirement files that exist in the built collection (the ranges of
``meta/ee-requirements.txt`` are checked by ``tests/unit/test_collection_artifact.py``).
"""
import fnmatch
import os
import shutil
import subprocess
import sys

import pytest
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IGNORED = shutil.ignore_patterns(".venv", ".git", "__pycache__", ".pytest_cache", ".cluster", ".ansible",
                                 ".lead", "*.pyc", "build", "output")
GATES = os.path.join(REPO, "tests", "sanity", "gates.py")
MODULES = ("qmgr", "hook", "mom_config", "tolerate_node_failures", "cluster_info",
           "held_jobs", "accounting_report", "offline_nodes", "controller_file")

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
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=1800, check=False)
    return proc.returncode, proc.stdout


def test_ansible_test_sanity(tmp_path):
    tool("ansible-test")
    rc, out = run([sys.executable, GATES, "sanity", "--root", str(tmp_path)], REPO)
    assert rc == 0, out
    for test in ("validate-modules", "pep8", "pylint", "yamllint", "import", "compile"):
        assert 'Running sanity test "%s"' % test in out, test


def test_ansible_lint_production_profile():
    tool("ansible-lint")
    with open(os.path.join(REPO, ".ansible-lint")) as handle:
        assert yaml.safe_load(handle).get("profile") == "production"
    rc, out = run([sys.executable, GATES, "lint"], REPO)
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


def test_antsibull_changelog_lint():
    changelog = tool("antsibull-changelog")
    rc, out = run([changelog, "lint"], REPO)
    assert rc == 0 and not out.strip(), out
    rc, out = run([changelog, "lint-changelog-yaml", os.path.join("changelogs", "changelog.yaml")], REPO)
    assert rc == 0, out


def build_ignored(relative):
    """Whether galaxy.yml's build_ignore leaves ``relative`` out of the built collection."""
    with open(os.path.join(REPO, "galaxy.yml")) as handle:
        patterns = yaml.safe_load(handle).get("build_ignore") or []
    parts = relative.split("/")
    prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    return any(fnmatch.fnmatch(prefix, pattern) for pattern in patterns for prefix in prefixes)


def test_execution_environment_names_existing_files():
    with open(os.path.join(REPO, "meta", "execution-environment.yml")) as handle:
        definition = yaml.safe_load(handle)
    assert definition.get("version") == 3, definition
    dependencies = definition.get("dependencies") or {}
    assert set(dependencies) >= {"python", "system"}, dependencies
    for kind in ("python", "system"):
        relative = dependencies[kind]
        # ansible-builder resolves a collection's files from the collection root and
        # refuses absolute paths.
        assert isinstance(relative, str) and not os.path.isabs(relative), relative
        assert os.path.isfile(os.path.join(REPO, relative)), relative
        assert not build_ignored(relative), "%s is left out by galaxy.yml build_ignore" % relative
