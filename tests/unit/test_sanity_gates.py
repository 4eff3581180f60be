"""The ecosystem's gates on this collection (issue 6 point 6), marked ``sanity``.

Run with ``pytest -m sanity tests/unit/test_sanity_gates.py``. They copy the collection to
``<tmp>/ansible_collections/hpc/pbs`` (ansible-test needs that layout) and run
``ansible-test sanity`` in full, ``ansible-lint --profile production`` and ``ansible-doc``.
A gate whose tool is not installed is skipped, saying which.

What ansible-test sanity checks: the repository as a contributor checks it out - the
collection, the mock PBS, the cluster launcher, the integration and unit tests, the CI and
molecule tooling - as ``ansible-test sanity --requirements --venv`` run in the checkout
placed as ``ansible_collections/hpc/pbs``. Only ansible-test's own generated output is left
out (:data:`SANITY_EXCLUDED`); where a rule cannot apply, ``tests/sanity/ignore-2.19.txt``
says so with its reason.

ansible-test installs each test's pinned requirements (pip 24.2, pylint, pycodestyle,
voluptuous, ...) into its own venv from the configured package index
(``--requirements --venv``). To bootstrap pip into those venvs it downloads
``get-pip-24.2.py`` from ci-files.testing.ansible.com, a host this network cannot
resolve, unless ``~/.ansible/test/cache/get_pip_24_2.py`` exists. The gate therefore runs
ansible-test with ``HOME`` = ``build/ansible-test-home`` of the checkout, where it puts
``tests/sanity/get_pip_bootstrap.py`` under that name; the venvs ansible-test builds stay
there between runs (first run about two minutes, later runs faster).

Two more gates need no copy of the collection: ``antsibull-changelog lint`` (the fragments
under ``changelogs/fragments``) and ``lint-changelog-yaml``, and a check that
``meta/execution-environment.yml`` is what ansible-builder can use - it parses, names
requirement files that exist in the built collection, and ``meta/ee-requirements.txt`` pins
exactly the versions of ``requirements.txt``.
"""
import fnmatch
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IGNORED = shutil.ignore_patterns(".venv", ".git", "__pycache__", ".pytest_cache", ".cluster", ".ansible",
                                 ".lead", "*.pyc", "build", "output")
# Left out of ansible-test sanity: only ansible-test's own generated output, never code.
# Paths relative to the repository root.
SANITY_EXCLUDED = ("tests/output",)
SANITY_HOME = os.path.join(REPO, "build", "ansible-test-home")
PIP_BOOTSTRAP = os.path.join(REPO, "tests", "sanity", "get_pip_bootstrap.py")
MODULES = ("qmgr", "hook", "mom_config", "tolerate_node_failures", "cluster_info",
           "held_jobs")

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


@pytest.fixture(scope="module")
def sanity_tree(tmp_path_factory):
    """The copy ansible-test sanity checks: the collection without SANITY_EXCLUDED."""
    root = tmp_path_factory.mktemp("sanity")
    target = root / "ansible_collections" / "hpc" / "pbs"
    shutil.copytree(REPO, str(target), ignore=IGNORED)
    for relative in SANITY_EXCLUDED:
        path = target / relative
        if path.is_dir():
            shutil.rmtree(str(path))
        elif path.exists():
            path.unlink()
    return target


def sanity_home():
    """HOME for ansible-test, holding the pip bootstrap script it looks for first."""
    cache = os.path.join(SANITY_HOME, ".ansible", "test", "cache")
    os.makedirs(cache, exist_ok=True)
    shutil.copyfile(PIP_BOOTSTRAP, os.path.join(cache, "get_pip_24_2.py"))
    return SANITY_HOME


def run(cmd, cwd, env=None):
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.run(cmd, cwd=str(cwd), env=full_env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=1800, check=False)
    return proc.returncode, proc.stdout


def test_ansible_test_sanity(sanity_tree):
    cmd = [tool("ansible-test"), "sanity", "--python", "%d.%d" % sys.version_info[:2],
           "--requirements", "--venv", "--color", "no"]
    rc, out = run(cmd, sanity_tree, env={"HOME": sanity_home()})
    assert rc == 0, out
    for test in ("validate-modules", "pep8", "pylint", "yamllint", "import", "compile"):
        assert 'Running sanity test "%s"' % test in out, test


def test_ansible_lint_production_profile(collection):
    root, target = collection
    # A HOME of its own: ansible-lint also looks in ~/.ansible/collections, where an
    # installed (older) hpc.pbs would shadow the copy under test.
    home = root / "lint-home"
    home.mkdir(exist_ok=True)
    rc, out = run([tool("ansible-lint"), "--profile", "production", "--offline",
                   "roles", "playbooks"], target,
                  env={"ANSIBLE_COLLECTIONS_PATH": str(root), "HOME": str(home)})
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


def pins(path):
    """``{normalized name: version}`` of the ``name==version`` lines of a requirements file."""
    found = {}
    with open(path) as handle:
        for line in handle:
            requirement = line.split("#", 1)[0].split(";", 1)[0].strip()
            if not requirement:
                continue
            match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s,;]+)$", requirement)
            assert match, "%s: not pinned with ==: %r" % (path, line)
            found[re.sub(r"[-_.]+", "-", match.group(1)).lower()] = match.group(2)
    return found


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
    ee_pins = pins(os.path.join(REPO, dependencies["python"]))
    repo_pins = pins(os.path.join(REPO, "requirements.txt"))
    assert "jsonschema" in ee_pins, ee_pins
    differing = {name: (version, repo_pins.get(name)) for name, version in ee_pins.items()
                 if repo_pins.get(name) != version}
    assert not differing, "ee-requirements.txt vs requirements.txt: %s" % differing
