"""The built collection artifact: `ansible-galaxy collection build` gives
hpc-pbs-0.1.0.tar.gz with what a site needs (the license galaxy.yml names, the release
notes, the execution environment's files, ansible-test's ignore file) and without what only
developers use (tests, mock PBS, test cluster, CI, developer docs, lint settings); installed
as the README says, from a fresh HOME in another directory, `ansible-doc` renders every
module and the playbooks load by their collection names."""
import fnmatch
import glob
import os
import subprocess
import sys
import tarfile

import pytest
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
MODULES = ["qmgr", "hook", "mom_config", "tolerate_node_failures", "cluster_info", "held_jobs", "accounting_report",
           "offline_nodes", "controller_file"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    out = tmp_path_factory.mktemp("artifact")
    collections = out / "collections"
    # An empty config, run from /, so that neither the checkout's ansible.cfg nor a copy
    # of hpc.pbs elsewhere counts as "already installed".
    empty_cfg = out / "ansible.cfg"
    empty_cfg.write_text("[defaults]\n")
    env = dict(os.environ, ANSIBLE_CONFIG=str(empty_cfg), ANSIBLE_COLLECTIONS_PATH=str(collections))
    subprocess.run([os.path.join(BIN, "ansible-galaxy"), "collection", "build", "--output-path", str(out), REPO],
                   check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd="/")
    tarball = out / "hpc-pbs-0.1.0.tar.gz"
    subprocess.run([os.path.join(BIN, "ansible-galaxy"), "collection", "install", "--force", "-p", str(collections),
                    str(tarball)], check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd="/")
    assert (collections / "ansible_collections" / "hpc" / "pbs" / "MANIFEST.json").exists()
    return tarball, collections


def test_artifact_is_named_and_excludes_tests_and_dev_files(installed):
    tarball, _unused = installed
    names = tarfile.open(tarball).getnames()
    assert "MANIFEST.json" in names
    assert any(n.startswith("plugins/modules/") for n in names)
    assert any(n.startswith("files/hooks/") for n in names)
    for excluded in ("tests/unit/", "tests/integration/", "tests/mockpbs/", "tests/benchmark/", "tests/mutation/",
                     "tests/openpbs/", "tests/reference/", "tests/support_matrix/", "tests/conftest.py",
                     "tests/sanity/gates.py", ".ci/", ".venv/", "Makefile", "requirements.txt", ".cluster/",
                     "pytest.ini", "ansible.cfg", "build/", "extensions/", ".ansible-lint", ".ansible-lint-ignore",
                     "docs/development.md", "docs/testing.md", "changelogs/fragments/", ".gitignore", "tools/"):
        assert not any(n == excluded.rstrip("/") or n.startswith(excluded) for n in names), excluded


def test_artifact_ships_license_release_notes_ee_files_and_sanity_ignores(installed):
    """What a site, an execution environment build or a collection re-check needs is in the
    tarball; under tests/ only ansible-test's ignore files (a new test directory would
    otherwise ship unnoticed)."""
    tarball, _unused = installed
    members = tarfile.open(tarball).getmembers()
    names = set(m.name for m in members)
    ignores = sorted(os.path.relpath(p, REPO) for p in glob.glob(os.path.join(REPO, "tests", "sanity", "ignore-*.txt")))
    assert ignores, "no tests/sanity/ignore-*.txt in the checkout"
    with open(os.path.join(REPO, "meta", "execution-environment.yml")) as handle:
        ee_files = sorted((yaml.safe_load(handle).get("dependencies") or {}).values())
    for needed in ["LICENSE", "CHANGELOG.rst", "changelogs/changelog.yaml", "README.md", "meta/runtime.yml",
                   "meta/execution-environment.yml"] + ee_files + ignores:
        assert needed in names, needed
    under_tests = sorted(m.name for m in members if m.name.startswith("tests/") and not m.isdir())
    assert under_tests == ignores, under_tests
    assert not [n for n in names if fnmatch.fnmatch(n, "*__pycache__*") or n.endswith(".pyc")]


def test_license_is_the_apache_2_text_galaxy_yml_names():
    with open(os.path.join(REPO, "galaxy.yml")) as handle:
        galaxy = yaml.safe_load(handle)
    assert galaxy["license"] == ["Apache-2.0"], galaxy["license"]
    with open(os.path.join(REPO, "LICENSE")) as handle:
        text = handle.read()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "END OF TERMS AND CONDITIONS" in text


def test_readme_install_works_from_a_fresh_home_in_another_directory(installed, tmp_path):
    """The README's commands: install the tarball into ~/.ansible/collections, then use the
    collection from a directory that is not the checkout, with no ANSIBLE_* setting and no
    ansible.cfg around (the checkout's ansible.cfg points at ./build/collections)."""
    tarball, _unused = installed
    home = tmp_path / "home"
    site = home / "site"
    site.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env.update(HOME=str(home), PATH=BIN + os.pathsep + env.get("PATH", ""))

    def run(*argv):
        proc = subprocess.run(list(argv), env=env, cwd=str(site), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, check=False)
        assert proc.returncode == 0, (argv, proc.stdout)
        return proc.stdout

    out = run(os.path.join(BIN, "ansible-galaxy"), "collection", "install", str(tarball),
              "-p", str(home / ".ansible" / "collections"))
    assert "not part of the configured" not in out, out
    assert (home / ".ansible" / "collections" / "ansible_collections" / "hpc" / "pbs" / "MANIFEST.json").exists()
    assert "hpc.pbs.qmgr" in run(os.path.join(BIN, "ansible-doc"), "hpc.pbs.qmgr")
    (site / "inventory.yml").write_text(
        "all:\n  children:\n    pbs_server:\n      hosts:\n        pbs-head01:\n"
        "    pbs_mom:\n      hosts:\n        node[001:004]:\n")
    for playbook in ("hpc.pbs.audit", "hpc.pbs.site"):
        out = run(os.path.join(BIN, "ansible-playbook"), "-i", "inventory.yml", playbook, "--syntax-check")
        assert str(home / ".ansible" / "collections") in out, out


def test_every_module_is_rendered():
    found = sorted(f[:-3] for f in os.listdir(os.path.join(REPO, "plugins", "modules"))
                   if f.endswith(".py") and not f.startswith("_"))
    assert found == sorted(MODULES)


@pytest.mark.parametrize("module", MODULES)
def test_ansible_doc_renders_installed_module(installed, module):
    _unused, collections = installed
    empty_cfg = collections.parent / "ansible.cfg"
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(collections), ANSIBLE_CONFIG=str(empty_cfg))
    proc = subprocess.run([os.path.join(BIN, "ansible-doc"), "hpc.pbs.%s" % module], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/", check=False)
    assert proc.returncode == 0, proc.stderr
    assert "hpc.pbs.%s" % module in proc.stdout
    assert "OPTIONS" in proc.stdout


def requirement_lines(path):
    with open(path) as handle:
        return [line.split("#", 1)[0].strip() for line in handle if line.split("#", 1)[0].strip()]


def test_execution_environment_requirements_are_ranges_the_tested_pins_satisfy():
    """meta/ee-requirements.txt: each library a plugin imports, as a range with a lower and an
    upper bound (an execution environment shared with other collections can satisfy it; no
    exact pins, no libraries only those libraries need), and the version requirements.txt
    pins for the tests is inside it."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    with open(os.path.join(REPO, "meta", "execution-environment.yml")) as handle:
        python_file = yaml.safe_load(handle)["dependencies"]["python"]
    requirements = [Requirement(line) for line in requirement_lines(os.path.join(REPO, python_file))]
    assert requirements, python_file
    pinned = {}
    for line in requirement_lines(os.path.join(REPO, "requirements.txt")):
        requirement = Requirement(line)
        pinned[canonicalize_name(requirement.name)] = [s.version for s in requirement.specifier if s.operator == "=="]
    plugin_text = ""
    for folder, _dirs, files in os.walk(os.path.join(REPO, "plugins")):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(folder, name)) as handle:
                    plugin_text += handle.read()
    for requirement in requirements:
        operators = sorted(s.operator for s in requirement.specifier)
        assert "==" not in operators and "===" not in operators, "%s is pinned, not a range" % requirement
        assert any(o in (">=", ">") for o in operators) and any(o in ("<", "<=") for o in operators), \
            "%s needs a lower and an upper bound" % requirement
        module = requirement.name.replace("-", "_")
        assert "import %s" % module in plugin_text or "from %s " % module in plugin_text, \
            "%s: no plugin imports it" % requirement.name
        tested = pinned.get(canonicalize_name(requirement.name))
        assert tested, "%s is not pinned in requirements.txt" % requirement.name
        assert requirement.specifier.contains(tested[0], prereleases=True), (str(requirement), tested)
