"""The built collection artifact: `ansible-galaxy collection build` gives
hpc-pbs-0.1.0.tar.gz without tests or dev files, and after installing it
`ansible-doc` renders every module (issue 2, point 1)."""
import os
import subprocess
import sys
import tarfile

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
MODULES = ["qmgr", "hook", "mom_config", "tolerate_node_failures", "cluster_info", "held_jobs"]


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
    for excluded in ("tests/", ".ci/", ".venv/", "Makefile", "requirements.txt", ".cluster/", "pytest.ini",
                     "ansible.cfg", "build/"):
        assert not any(n == excluded.rstrip("/") or n.startswith(excluded) for n in names), excluded


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
