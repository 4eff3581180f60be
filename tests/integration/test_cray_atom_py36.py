"""The cray_atom role on OpenPBS 22.05.11, whose pbs_python is CPython 3.6 (as PBS
Professional 2022 bundles it) with neither requests nor requests_unixsocket: the pinned pair
for Python 3.6 installed by pip from a wheel directory on the controller, with no index, then
a job registered with the mom's ATOM service by the bundled hook.

The hooks' interpreter there is /root/.pyenv/versions/3.6.15, which every node binds read-only
from the host: inside the mom's own mount namespace its site-packages is replaced by a writable
directory of the mom (its entries linked to a read-only view of the original), and its bin by
a copy of the mom's, so the role's pip installs into that interpreter's own site-packages
without touching the host's.

Runs on the backend openpbs-22.05.11 only (marker release_smoke; skipped on the others, whose
hooks' Python already has the modules). The wheels are downloaded from PyPI once
(``pip download --only-binary=:all: --python-version 3.6``) into
``~/.cache/hpc-pbs/wheels/atom-py36`` and reused.
"""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rjs_demo  # noqa: E402  (REPO, RECAP_RE, wait_for)

pytestmark = [pytest.mark.integration, pytest.mark.release_smoke]

SERVER = "pbs-server"
MOM = "mom1"
PYTHON = sys.executable
PINS = ["requests==2.27.1", "requests-unixsocket==0.3.0"]
WHEELS = os.path.join(os.path.expanduser("~"), ".cache", "hpc-pbs", "wheels", "atom-py36")
ORIGINAL_VIEW = "/root/atom-original-site"
PRIVATE_SITE = "/root/atom-private-site"
SITE_DIR_CODE = "import site; print(site.getsitepackages()[0])"


@pytest.fixture(scope="module")
def wheels():
    os.makedirs(WHEELS, exist_ok=True)
    names = os.listdir(WHEELS)
    if not all(any(n.startswith(pin.replace("-", "_").replace("==", "-") + "-") for n in names) for pin in PINS):
        proc = subprocess.run([PYTHON, "-m", "pip", "download", "--disable-pip-version-check", "--only-binary=:all:",
                               "--python-version", "3.6", "--implementation", "cp", "--abi", "cp36m",
                               "--platform", "manylinux2014_x86_64", "-d", WHEELS] + PINS,
                              capture_output=True, text=True, check=False)
        assert proc.returncode == 0, "pip download (PyPI needed once): " + proc.stderr[-2000:]
    return WHEELS


@pytest.fixture(scope="module")
def cluster(cluster_factory, pbs_backend):
    if pbs_backend != "openpbs-22.05.11":
        pytest.skip("only the 22.05.11 backend's pbs_python (CPython 3.6) lacks requests; the others have them")
    cluster = cluster_factory(moms=1)
    yield cluster
    cluster.down()


def play(cluster, variables):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(rjs_demo.REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    argv = [os.path.join(os.path.dirname(PYTHON), "ansible-playbook"), "-i", cluster.inventory,
            "playbooks/cray_atom.yml", "-e", json.dumps(variables)]
    proc = subprocess.run(argv, cwd=rjs_demo.REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, stdin=subprocess.DEVNULL, check=False)
    recap = {m.group(1): {"changed": int(m.group(3)), "failed": int(m.group(5))}
             for m in rjs_demo.RECAP_RE.finditer(proc.stdout)}
    return proc.returncode, proc.stdout, recap


def hooks_python(cluster, code):
    return cluster.exec(MOM, ["env", "PYTHONNOUSERSITE=1", "PYTHONPATH=", "/opt/pbs/bin/pbs_python", "-c", code])


def test_offline_wheels_make_the_atom_hook_work_on_python_36(cluster, wheels):
    version = hooks_python(cluster, "import sys; print('%d.%d' % sys.version_info[:2])")
    assert version.stdout.strip() == "3.6", version.stdout + version.stderr
    assert hooks_python(cluster, "import requests").returncode != 0
    site_dir = hooks_python(cluster, SITE_DIR_CODE).stdout.strip()
    assert site_dir.startswith("/root/.pyenv/versions/3.6.15/"), site_dir
    private = os.path.join(cluster.workdir, "nodes", MOM, "root", os.path.basename(PRIVATE_SITE))
    os.makedirs(private)
    os.makedirs(os.path.join(cluster.workdir, "nodes", MOM, "root", os.path.basename(ORIGINAL_VIEW)))
    for entry in os.listdir(site_dir):
        os.symlink(os.path.join(ORIGINAL_VIEW, entry), os.path.join(private, entry))
    cluster.exec(MOM, ["mount", "--bind", site_dir, ORIGINAL_VIEW], check=True)
    cluster.exec(MOM, ["mount", "-o", "remount,bind,ro", ORIGINAL_VIEW], check=True)
    cluster.exec(MOM, ["mount", "--bind", PRIVATE_SITE, site_dir], check=True)
    # pip also writes console scripts (charset_normalizer's) into <prefix>/bin: the mom's own
    # copy of it (128 KiB; copies, not links, so that the interpreter still finds its prefix).
    prefix_bin = os.path.join(site_dir.split("/lib/")[0], "bin")
    private_bin = os.path.join(cluster.workdir, "nodes", MOM, "root", "atom-private-bin")
    shutil.copytree(prefix_bin, private_bin, symlinks=True)
    cluster.exec(MOM, ["mount", "--bind", "/root/atom-private-bin", prefix_bin], check=True)

    # No index for the mom (its own pip.conf names one that refuses every connection): the
    # wheels are all pip may use.
    with open(os.path.join(cluster.workdir, "nodes", MOM, "etc", "pip.conf"), "w") as handle:
        handle.write("[global]\nindex-url = http://127.0.0.1:9/simple\nretries = 0\ntimeout = 2\n")

    variables = {"cray_atom_hook_source": "bundled", "cray_atom_pip_wheels_src": wheels,
                 "cray_atom_pip_packages": PINS, "cray_atom_config": {"post_timeout": 9, "delete_timeout": 9}}
    rc, output, recap = play(cluster, variables)
    assert rc == 0, output[-4000:]
    assert all(r["failed"] == 0 for r in recap.values()) and recap[MOM]["changed"] >= 1, recap
    installed = os.listdir(private)
    assert "requests-2.27.1.dist-info" in installed and "requests_unixsocket-0.3.0.dist-info" in installed
    assert not os.path.exists(os.path.join(site_dir, "requests"))  # the host's interpreter is untouched

    jobid = cluster.exec(SERVER, ["qsub", "-l", "select=1:ncpus=1"], user="pbsuser", input="sleep 1\n",
                         check=True).stdout.strip()
    log = "/var/run/atomd/atomd.sock.log"
    rjs_demo.wait_for(lambda: re.search(r'"jobid": "%s".*"method": "POST"|"method": "POST".*"jobid": "%s"'
                                        % (re.escape(jobid), re.escape(jobid)),
                                        cluster.exec(MOM, ["cat", log]).stdout), 60, "POST of %s to ATOM" % jobid)
    entries = [json.loads(line) for line in cluster.exec(MOM, ["cat", log]).stdout.splitlines()]
    assert [(e["method"], e["status"]) for e in entries if e.get("jobid") == jobid][:1] == [("POST", 200)]
