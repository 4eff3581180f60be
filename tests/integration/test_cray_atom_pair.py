"""The cray_atom role and a requests / requests_unixsocket pair that imports but cannot make a
request (requests 2.32 with requests-unixsocket 0.3.0: ``InvalidURL: Not supported URL scheme
http+unix``, the pair of HPE CSM 1.7's known problem with PBS_cray_atom), on every backend.

The broken pair is given to one mom only: inside that node's mount namespace (private, nothing
reaches the host or the other nodes) the site-packages directory its hooks' interpreter imports
``requests`` from is replaced by a copy whose entries link to the original, except ``requests``
and ``requests_unixsocket``, which are the real wheels of requests 2.32.3 and
requests-unixsocket 0.3.0. On the real backend that is Debian's /usr/lib/python3/dist-packages
(pbs_python is linked to the system Python 3.11, whose Debian pair requests 2.28.1 +
requests-unixsocket 0.3.0 works); on the mock, the venv's site-packages.

The wheels are downloaded from PyPI once (``pip download --only-binary=:all: --no-deps``) into
``~/.cache/hpc-pbs/wheels/atom-broken-pair`` and reused; nothing else is fetched.

The tests run in order on one cluster: the refusal (playbook and role entry point), the real
hook failing the same way on that mom (what makes the refusal right), the per-mom audit result,
then the pair restored: the audit is clean and the role goes through.

Then how missing modules get installed, on mom1 with no requests at all for its hooks' Python:
the distribution packages of its OS family (its own /etc made to say RHEL 9 or SLES 15, dnf
and zypper stand-ins on its PATH that record their command line), and pip from a wheel
directory on the controller with an index that must see no connection; with no source pip is
refused and that index sees nothing, unless ``cray_atom_pip_configured_index`` lets pip use it
(mock only: the real backend's pbs_python is Debian's externally managed Python).
"""
import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rjs_demo  # noqa: E402  (REPO, RECAP_RE, wait_for, parse_qstat_f)

pytestmark = pytest.mark.integration

SERVER = "pbs-server"
BROKEN = "mom2"
GOOD = "mom1"
MOMS = (GOOD, BROKEN)
PYTHON = sys.executable
BROKEN_PINS = ["requests==2.32.3", "requests-unixsocket==0.3.0"]
WHEEL_CACHE = os.path.join(os.path.expanduser("~"), ".cache", "hpc-pbs", "wheels", "atom-broken-pair")
ROLE_PINS = ["requests==2.34.2", "requests-unixsocket==0.4.1"]  # the role's cray_atom_pip_packages
ROLE_PINS_CACHE = os.path.join(os.path.expanduser("~"), ".cache", "hpc-pbs", "wheels", "atom-role-pins")
ORIGINAL_VIEW = "/root/atom-original-site"
BROKEN_SITE = "/root/atom-broken-site"
ERROR = "InvalidURL: Not supported URL scheme http+unix"
OFFLINE_COMMENT = "offlined by hook 'cray_atom' due to hook error"
VARIABLES = {"cray_atom_hook_source": "bundled", "cray_atom_config": {"post_timeout": 9, "delete_timeout": 9}}
REPLACED = {}  # node -> the site-packages directory break_pair replaced there
# Where the hooks' interpreter imports requests from, as a hook sees it (no user site, no
# PYTHONPATH, site.main() called by the hook).
WHERE_REQUESTS = ("import os, site, sys\n"
                  "sys.path[:] = [p for p in sys.path if p]\n"
                  "site.main()\n"
                  "import requests\n"
                  "print(os.path.dirname(os.path.dirname(os.path.abspath(requests.__file__))))\n")
VERSIONS = WHERE_REQUESTS.rsplit("print(", 1)[0] + "import urllib3\nprint(requests.__version__, urllib3.__version__)\n"


def cached_wheels(directory, pins):
    """``directory`` holding the wheels of ``pins`` (downloaded from PyPI the first time)."""
    os.makedirs(directory, exist_ok=True)
    names = sorted(os.listdir(directory))
    wanted = [pin.replace("-", "_").replace("==", "-") + "-" for pin in pins]
    if not all(any(name.startswith(prefix) for name in names) for prefix in wanted):
        proc = subprocess.run([PYTHON, "-m", "pip", "download", "--disable-pip-version-check", "--no-deps",
                               "--only-binary=:all:", "-d", directory] + pins,
                              capture_output=True, text=True, check=False)
        assert proc.returncode == 0, "pip download of %s (PyPI needed once): %s" % (pins, proc.stderr[-2000:])
    return directory


@pytest.fixture(scope="module")
def wheels():
    """The directory with the wheels of the broken pair."""
    return cached_wheels(WHEEL_CACHE, BROKEN_PINS)


@pytest.fixture(scope="module")
def cluster(cluster_factory):
    cluster = cluster_factory(moms=len(MOMS))
    yield cluster
    restore_pair(cluster, BROKEN)
    cluster.down()


def node_root(cluster, node):
    """The host directory that is ``/root`` inside ``node`` (its own, not shared)."""
    return os.path.join(cluster.workdir, "nodes", node, "root")


def hooks_site_dir(cluster, node):
    proc = cluster.exec(node, ["env", "PYTHONNOUSERSITE=1", "PYTHONPATH=", "/opt/pbs/bin/pbs_python", "-c",
                               WHERE_REQUESTS], check=True)
    return proc.stdout.strip().splitlines()[-1]


def break_pair(cluster, node, wheel_dir=None):
    """Give ``node``'s hooks' interpreter requests 2.32.3 + requests-unixsocket 0.3.0 from
    ``wheel_dir`` in place of its own pair (None: no requests / requests_unixsocket at all),
    in that node only. Returns the directory replaced."""
    site_dir = hooks_site_dir(cluster, node)
    root = node_root(cluster, node)
    broken = os.path.join(root, os.path.basename(BROKEN_SITE))
    shutil.rmtree(broken, ignore_errors=True)
    os.makedirs(broken)
    os.makedirs(os.path.join(root, os.path.basename(ORIGINAL_VIEW)), exist_ok=True)
    if wheel_dir:
        proc = subprocess.run([PYTHON, "-m", "pip", "install", "--disable-pip-version-check", "--no-deps",
                               "--no-index", "--find-links", wheel_dir, "--target", broken] + BROKEN_PINS,
                              capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr[-2000:]
    own = set(os.listdir(broken))
    # The host sees the same directory at the same path (/usr and the checkout are shared).
    for entry in os.listdir(site_dir):
        if entry in ("requests", "requests_unixsocket") or entry.startswith(("requests-", "requests_unixsocket-")):
            continue
        if entry not in own:
            os.symlink(os.path.join(ORIGINAL_VIEW, entry), os.path.join(broken, entry))
    cluster.exec(node, ["mount", "--bind", site_dir, ORIGINAL_VIEW], check=True)
    # Read-only: nothing run in the node may change the shared original through the links.
    cluster.exec(node, ["mount", "-o", "remount,bind,ro", ORIGINAL_VIEW], check=True)
    cluster.exec(node, ["mount", "--bind", BROKEN_SITE, site_dir], check=True)
    REPLACED[node] = site_dir
    return site_dir


def restore_pair(cluster, node):
    """Undo :func:`break_pair` on ``node`` (what is still mounted of it)."""
    site_dir = REPLACED.pop(node, None)
    for target in ([site_dir] if site_dir else []) + [ORIGINAL_VIEW]:
        if cluster.exec(node, ["mountpoint", "-q", target]).returncode == 0:
            cluster.exec(node, ["umount", target], check=True)


def play(cluster, playbook, variables, limit=None):
    """ansible-playbook PLAYBOOK -e JSON: (rc, output, {host: recap})."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(rjs_demo.REPO, "ansible.cfg"), ANSIBLE_FORCE_COLOR="0",
               ANSIBLE_NOCOLOR="1")
    argv = [os.path.join(os.path.dirname(PYTHON), "ansible-playbook"), "-i", cluster.inventory, playbook,
            "-e", json.dumps(variables)] + (["--limit", limit] if limit else [])
    proc = subprocess.run(argv, cwd=rjs_demo.REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, stdin=subprocess.DEVNULL, check=False)
    recap = {m.group(1): {"changed": int(m.group(3)), "failed": int(m.group(5))}
             for m in rjs_demo.RECAP_RE.finditer(proc.stdout)}
    return proc.returncode, proc.stdout, recap


def failures(output):
    """{host: message} of the tasks that failed."""
    return {host: json.loads(text)["msg"]
            for host, text in re.findall(r'^fatal: \[(\S+)\]: FAILED! => (\{.*\})$', output, re.M)}


def site_hook_exists(cluster):
    return cluster.exec(SERVER, ["qmgr", "-c", "list hook cray_atom"]).returncode == 0


def versions(cluster, node):
    """(requests, urllib3) versions the hooks' interpreter of ``node`` imports."""
    proc = cluster.exec(node, ["env", "PYTHONNOUSERSITE=1", "PYTHONPATH=", "/opt/pbs/bin/pbs_python", "-c", VERSIONS],
                        check=True)
    return tuple(proc.stdout.split()[-2:])


def audit_moms(cluster, tmp_path):
    """The role's audit_mom entry point on every mom: {mom: (cray_atom_audit_mom, rows)}."""
    playbook = tmp_path / "audit_mom.yml"
    playbook.write_text(
        "- hosts: pbs_mom\n  gather_facts: false\n  check_mode: true\n  tasks:\n"
        "    - ansible.builtin.include_role:\n        name: hpc.pbs.cray_atom\n        tasks_from: audit_mom\n"
        "    - ansible.builtin.debug:\n"
        "        msg: \"AUDIT {{ {'mom': cray_atom_audit_mom, 'rows': cray_atom_audit_mom_rows} | to_json }}\"\n")
    rc, output, recap = play(cluster, str(playbook), {})
    assert rc == 0 and all(r["changed"] == 0 and r["failed"] == 0 for r in recap.values()), output[-3000:]
    found = {}
    for line in output.splitlines():
        match = re.match(r'^\s*"msg": "AUDIT (.*)"$', line)
        if match:
            result = json.loads(json.loads('"%s"' % match.group(1)))
            found[result["mom"]["host"]] = (result["mom"], result["rows"])
    return found


def test_a_pair_that_imports_but_cannot_request_is_refused_before_the_server_changes(cluster, wheels, tmp_path):
    good_requests, urllib3 = versions(cluster, GOOD)
    break_pair(cluster, BROKEN, wheels)
    assert versions(cluster, BROKEN) == ("2.32.3", urllib3)
    assert versions(cluster, GOOD) == (good_requests, urllib3)  # the other node keeps its own

    rc, output, recap = play(cluster, "playbooks/cray_atom.yml", VARIABLES)
    assert rc != 0
    message = failures(output)[BROKEN]
    assert message == (
        "cray_atom on mom2: /opt/pbs/bin/pbs_python, the Python of PBS hooks, imports requests 2.32.3, "
        "requests_unixsocket 0.3.0, urllib3 %s, but this pair cannot make the ATOM hook's request over a UNIX "
        "socket (GET http+unix://<socket>/rm/v1/jobs/probe with requests_unixsocket.Session, to a server the "
        "check ran itself): %s. Every registration of a job with ATOM would fail and offline the node. "
        "Install requests-unixsocket 0.4 or later, or requests-unixsocket2 (it provides the same "
        "requests_unixsocket module), for that interpreter; with requests-unixsocket 0.3.0 only requests before "
        "2.32 with urllib3 before 2 work. Then run the role again. Nothing was installed or enabled on the PBS "
        "server." % (urllib3, ERROR))
    assert set(failures(output)) == {BROKEN}
    assert all(r["changed"] == 0 for r in recap.values()), recap
    assert not site_hook_exists(cluster)

    # The role's main entry point in one play: the server's part refuses by itself.
    playbook = tmp_path / "main.yml"
    playbook.write_text("- hosts: pbs_server:pbs_mom\n  gather_facts: false\n  roles:\n    - hpc.pbs.cray_atom\n")
    rc, output, recap = play(cluster, str(playbook), VARIABLES)
    assert rc != 0
    assert failures(output)[SERVER] == (
        "cray_atom: the hook was not installed or enabled on the server: the Python of PBS hooks on mom2 failed "
        "the checks of this run (see that host's failure above); fix it there and run the role again.")
    assert set(failures(output)) == {BROKEN, SERVER}
    assert all(r["changed"] == 0 for r in recap.values()), recap
    assert not site_hook_exists(cluster)


def test_the_hook_itself_fails_on_that_mom(cluster):
    # Installed without mom2's check (it is left out of the run): the ATOM hook on mom2 fails
    # its registration with the same error and PBS offlines the node.
    rc, output, _unused = play(cluster, "playbooks/cray_atom.yml", VARIABLES, limit="%s,%s" % (SERVER, GOOD))
    assert rc == 0, output[-3000:]
    assert site_hook_exists(cluster)
    jobid = cluster.exec(SERVER, ["qsub", "-l", "select=2:ncpus=1", "-l", "place=scatter"], user="pbsuser",
                         input="sleep 2\n", check=True).stdout.strip()
    try:
        rjs_demo.wait_for(lambda: "state = offline" in cluster.exec(SERVER, ["pbsnodes", BROKEN]).stdout, 60,
                          "mom2 offlined by the hook")
        assert OFFLINE_COMMENT in cluster.exec(SERVER, ["pbsnodes", BROKEN]).stdout
        log = cluster.exec(BROKEN, ["sh", "-c", "cat /var/spool/pbs/mom_logs/*"]).stdout
        assert "Not supported URL scheme http+unix" in log
    finally:
        cluster.exec(SERVER, ["qdel", jobid])
        cluster.exec(SERVER, ["qmgr", "-c", "delete hook cray_atom"], check=True)
        cluster.exec(SERVER, ["pbsnodes", "-r", BROKEN], check=True)


def test_the_audit_entry_point_names_the_mom_and_its_versions(cluster, tmp_path):
    _good_requests, urllib3 = versions(cluster, GOOD)
    found = audit_moms(cluster, tmp_path)
    assert found[GOOD][0]["ok"] is True and found[GOOD][1] == []
    mom, rows = found[BROKEN]
    assert mom["ok"] is False and mom["interpreter"] == "/opt/pbs/bin/pbs_python"
    assert mom["versions"] == {"requests": "2.32.3", "requests_unixsocket": "0.3.0", "urllib3": urllib3}
    assert mom["error"] == ERROR
    assert rows == [{"host": BROKEN, "object": "hook python", "item": "ATOM request", "desired": "works",
                     "actual": "fails: %s (requests 2.32.3, requests_unixsocket 0.3.0, urllib3 %s)" % (ERROR, urllib3)}]
    # audit.yml reports that mom, and only it, in its table and its JSON.
    report = tmp_path / "audit.json"
    rc, out, _recap = play(cluster, os.path.join(rjs_demo.REPO, "playbooks", "audit.yml"),
                           {"site_cray_atom": True, "audit_report_path": str(report)})
    assert rc == 0, out[-3000:]
    assert [row for row in json.loads(report.read_text())["drift"] if row["object"] == "hook python"] == rows, out[-3000:]
    assert "%s hook python ATOM request" % BROKEN in re.sub(r" +", " ", out), out[-3000:]


def test_with_the_pair_restored_the_audit_is_clean_and_the_role_goes_through(cluster, tmp_path):
    restore_pair(cluster, BROKEN)
    assert versions(cluster, BROKEN) == versions(cluster, GOOD)
    found = audit_moms(cluster, tmp_path)
    assert {mom: (result["ok"], rows) for mom, (result, rows) in found.items()} == {GOOD: (True, []),
                                                                                    BROKEN: (True, [])}
    rc, output, recap = play(cluster, "playbooks/cray_atom.yml", VARIABLES)
    assert rc == 0, output[-3000:]
    assert recap[SERVER]["changed"] > 0 and all(r["failed"] == 0 for r in recap.values()), recap
    assert site_hook_exists(cluster)


# --- The distribution packages per OS family (the mom made to look like RHEL 9 or SLES 15). ---

OS_RELEASE = {
    "RedHat": ('NAME="Red Hat Enterprise Linux"\nVERSION="9.4 (Plow)"\nID="rhel"\nID_LIKE="fedora"\n'
               'VERSION_ID="9.4"\nPRETTY_NAME="Red Hat Enterprise Linux 9.4 (Plow)"\n',
               {"redhat-release": "Red Hat Enterprise Linux release 9.4 (Plow)\n"}),
    "Suse": ('NAME="SLES"\nVERSION="15-SP5"\nVERSION_ID="15.5"\nPRETTY_NAME="SUSE Linux Enterprise Server 15 SP5"\n'
             'ID="sles"\nID_LIKE="suse"\n', {}),
}
PACKAGE_MANAGER_LOG = "/root/package-manager.log"
FAKE_SBIN = "/root/fake-sbin"
# A stand-in dnf / zypper: records its argv, then "installs" the modules by giving the hooks'
# interpreter its own site-packages back (what the real packages would provide).
FAKE_PACKAGE_MANAGER = """#!/bin/sh
echo "$(basename "$0") $*" >> %(log)s
umount %(site)s && umount %(view)s
"""


@pytest.fixture
def looks_like(cluster):
    """``looks_like(family)``: mom1's /etc says RHEL 9 or SLES 15 (its own /etc: nothing else
    sees it), and dnf and zypper on its PATH are stand-ins; undone afterwards."""
    etc = os.path.join(cluster.workdir, "nodes", GOOD, "etc")
    saved = os.path.join(cluster.workdir, "etc-saved")
    os.makedirs(saved, exist_ok=True)
    moved = []

    def make(family):
        site_dir = break_pair(cluster, GOOD)
        os_release, extra = OS_RELEASE[family]
        for name in ("os-release", "debian_version"):
            if os.path.lexists(os.path.join(etc, name)):
                shutil.move(os.path.join(etc, name), os.path.join(saved, name))
                moved.append(name)
        with open(os.path.join(etc, "os-release"), "w") as handle:
            handle.write(os_release)
        for name, text in extra.items():
            with open(os.path.join(etc, name), "w") as handle:
                handle.write(text)
        fake = os.path.join(node_root(cluster, GOOD), os.path.basename(FAKE_SBIN))
        os.makedirs(fake, exist_ok=True)
        for tool in ("dnf", "zypper"):
            with open(os.path.join(fake, tool), "w") as handle:
                handle.write(FAKE_PACKAGE_MANAGER % {"log": PACKAGE_MANAGER_LOG, "site": site_dir, "view": ORIGINAL_VIEW})
            os.chmod(os.path.join(fake, tool), 0o755)
        cluster.exec(GOOD, ["mount", "--bind", FAKE_SBIN, "/usr/local/sbin"], check=True)
        cluster.exec(GOOD, ["rm", "-f", PACKAGE_MANAGER_LOG], check=True)
        return extra

    made = []
    yield lambda family: made.append(make(family))
    cluster.exec(GOOD, ["umount", "/usr/local/sbin"])
    restore_pair(cluster, GOOD)
    for extra in made:
        for name in extra:
            os.unlink(os.path.join(etc, name))
    os.unlink(os.path.join(etc, "os-release"))
    for name in moved:
        shutil.move(os.path.join(saved, name), os.path.join(etc, name))


@pytest.mark.parametrize("family,argv", [
    ("RedHat", "dnf install --assumeyes python3-requests python3-requests-unixsocket"),
    ("Suse", "zypper --non-interactive install --no-recommends python3-requests python3-requests-unixsocket"),
])
def test_the_os_familys_packages_are_installed_with_its_package_manager(cluster, looks_like, family, argv):
    looks_like(family)
    assert "requests (" in json.dumps(audit_moms_result(cluster, GOOD)["missing"])
    # auto takes the distribution's packages only for the distribution's own Python (pbs_python
    # linked to /usr's on the real backend); the mock's interpreter is a venv: package says so.
    method = "auto" if cluster.backend.startswith("openpbs") else "package"
    rc, output, recap = play(cluster, "playbooks/cray_atom.yml", dict(VARIABLES, cray_atom_install_method=method),
                             limit=GOOD)
    assert rc == 0, output[-3000:]
    assert recap[GOOD]["changed"] == 1 and recap[GOOD]["failed"] == 0, recap
    assert cluster.exec(GOOD, ["cat", PACKAGE_MANAGER_LOG], check=True).stdout.splitlines() == [argv]
    assert audit_moms_result(cluster, GOOD)["ok"] is True


def audit_moms_result(cluster, node):
    """cray_atom_audit_mom of ``node`` (the role's audit_mom entry point, limited to it)."""
    playbook = os.path.join(cluster.workdir, "audit_one.yml")
    with open(playbook, "w") as handle:
        handle.write("- hosts: pbs_mom\n  gather_facts: false\n  check_mode: true\n  tasks:\n"
                     "    - ansible.builtin.include_role:\n        name: hpc.pbs.cray_atom\n        tasks_from: audit_mom\n"
                     "    - ansible.builtin.debug:\n        msg: \"AUDIT {{ cray_atom_audit_mom | to_json }}\"\n")
    rc, output, _unused = play(cluster, playbook, {}, limit=node)
    assert rc == 0, output[-3000:]
    match = re.search(r'^\s*"msg": "AUDIT (.*)"$', output, re.M)
    return json.loads(json.loads('"%s"' % match.group(1)))


# --- pip from a wheel directory on the controller, with no index (air-gapped moms). ---

@contextlib.contextmanager
def counting_index(cluster, node):
    """``node``'s own pip.conf names an index that counts who connects and answers nobody
    (the mock's nodes share the host's loopback); yields the list of connections seen."""
    index = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    index.bind((os.environ.get("HPC_PBS_CLUSTER_NET", "127.0.1").rstrip(".") + ".250", 0))
    index.listen(8)
    index.settimeout(0.2)
    connections = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            try:
                connections.append(index.accept()[0].close())
            except OSError:
                pass
    counter = threading.Thread(target=count, daemon=True)
    counter.start()
    pip_conf = os.path.join(cluster.workdir, "nodes", node, "etc", "pip.conf")
    with open(pip_conf, "w") as handle:
        handle.write("[global]\nindex-url = http://%s:%d/simple\nretries = 0\ntimeout = 2\n" % index.getsockname())
    try:
        yield connections
    finally:
        stop.set()
        counter.join()
        index.close()
        os.unlink(pip_conf)


def test_pip_installs_from_the_controllers_wheels_and_fetches_nothing(cluster):
    if cluster.backend.startswith("openpbs"):
        pytest.skip("pbs_python of the real backend is Debian's externally managed Python 3.11: pip may not "
                    "install into it (the role refuses; unit-tested), so the offline pip path runs on the mock, "
                    "whose hooks' Python is a venv")
    wheel_dir = cached_wheels(ROLE_PINS_CACHE, ROLE_PINS)
    site_dir = break_pair(cluster, GOOD)  # no requests at all for mom1's hooks' Python
    try:
        with counting_index(cluster, GOOD) as connections:  # pip may only use the wheels
            assert audit_moms_result(cluster, GOOD)["missing"] != []
            rc, output, recap = play(cluster, "playbooks/cray_atom.yml",
                                     dict(VARIABLES, cray_atom_pip_wheels_src=wheel_dir), limit=GOOD)
            assert rc == 0, output[-3000:]
            assert recap[GOOD]["failed"] == 0 and recap[GOOD]["changed"] >= 1, recap
            result = audit_moms_result(cluster, GOOD)
            assert result["ok"] is True
            assert result["versions"]["requests"] == "2.34.2" and result["versions"]["requests_unixsocket"] == "0.4.1"
            # Into the hooks' interpreter's own site-packages (here mom1's private one), and the
            # copied wheels are gone from the mom.
            installed = os.listdir(os.path.join(node_root(cluster, GOOD), os.path.basename(BROKEN_SITE)))
            assert "requests-2.34.2.dist-info" in installed and "requests_unixsocket-0.4.1.dist-info" in installed
            assert cluster.exec(GOOD, ["sh", "-c", "ls -d /tmp/cray_atom_wheels.* 2>/dev/null"]).stdout == ""
        assert connections == []
    finally:
        restore_pair(cluster, GOOD)
    assert hooks_site_dir(cluster, GOOD) == site_dir


OFFLINE_VARIABLES = ("cray_atom_pip_wheels_src (a directory of wheels on the controller, copied to each mom), "
                     "cray_atom_pip_find_links (a directory or page of wheels the moms can read) or "
                     "cray_atom_pip_index_url (the index of the site).")


def test_without_a_wheel_source_pip_is_refused_and_nothing_is_fetched(cluster):
    if cluster.backend.startswith("openpbs"):
        pytest.skip("as above: pip may not install into the real backend's externally managed pbs_python")
    break_pair(cluster, GOOD)
    try:
        with counting_index(cluster, GOOD) as connections:
            rc, output, recap = play(cluster, "playbooks/cray_atom.yml", VARIABLES, limit=GOOD)
            assert rc != 0
            assert recap[GOOD]["changed"] == 0, recap
            message = failures(output)[GOOD]
            assert ("pip may not (no source of wheels is set (cray_atom_pip_wheels_src, cray_atom_pip_find_links or "
                    "cray_atom_pip_index_url), and cray_atom_pip_configured_index is false: pip may not fetch from "
                    "its own configured index (pip.conf, PIP_INDEX_URL, else PyPI))") in message
        assert connections == []
    finally:
        restore_pair(cluster, GOOD)


def test_pip_uses_its_own_index_only_when_the_site_says_so(cluster):
    if cluster.backend.startswith("openpbs"):
        pytest.skip("as above: pip may not install into the real backend's externally managed pbs_python")
    break_pair(cluster, GOOD)
    try:
        with counting_index(cluster, GOOD) as connections:
            rc, output, _unused = play(cluster, "playbooks/cray_atom.yml",
                                       dict(VARIABLES, cray_atom_pip_configured_index=True), limit=GOOD)
            assert rc != 0
            message = failures(output)[GOOD]
            assert "and installing requests==2.34.2 requests-unixsocket==0.4.1 with " in message
            assert message.endswith("pip used its own configuration (pip.conf, else PyPI): on nodes without that "
                                    "index give it the wheels with " + OFFLINE_VARIABLES)
        assert len(connections) >= 1  # pip asked the index of the mom's pip.conf
    finally:
        restore_pair(cluster, GOOD)
