"""Verify of scenario "cray_atom": after playbooks/cray_atom.yml (bundled hook) the hook is
installed and enabled on the server and copied to every mom, the hook Python imports
requests and requests_unixsocket on every mom, and a job start registers the job with the
ATOM mock of each of its moms while its end removes it (testinfra, paramiko backend)."""
import hashlib
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared"))
import verify_helpers as vh  # noqa: E402

MOMS = ["mom1", "mom2", "mom3"]
HOOK = "cray_atom"
ATOM_SOCKET = "/var/run/atomd/atomd.sock"
# The mock ATOM service runs from the host's mockpbs install, which every node sees.
MOCK_PYTHON = os.environ.get("HPC_PBS_CLUSTER_PYTHON") or sys.executable
HOOKS_DIR = os.path.join(os.environ.get("MOLECULE_PROJECT_DIRECTORY", ""), "files", "hooks")
CONFIG = {"post_timeout": 10, "delete_timeout": 10}  # molecule.yml's cray_atom_config


@pytest.fixture(scope="module")
def server():
    return vh.host("pbs-server")


def registered(node):
    """Job ids the mom's ATOM mock holds (``GET /rm/v1/jobs`` through its socket)."""
    out = node.check_output("%s -m mockpbs atomd --socket %s --jobs" % (MOCK_PYTHON, ATOM_SOCKET))
    return [record["jobid"] for record in json.loads(out)]


def atom_requests(node, jobid):
    """``[(method, status)]`` the mom's ATOM mock logged for ``jobid``, in order."""
    out = node.check_output("cat %s.log" % ATOM_SOCKET)
    return [(e["method"], e["status"]) for e in map(json.loads, out.splitlines()) if e.get("jobid") == jobid]


def test_hook_installed_and_enabled_on_the_server(server):
    attrs = vh.qmgr_attributes(server, "list hook %s" % HOOK)
    assert attrs["type"] == "site" and attrs["enabled"] == "true", attrs
    assert sorted(attrs["event"].split(",")) == ["execjob_begin", "execjob_end"]
    assert (attrs["order"], attrs["alarm"], attrs["fail_action"], attrs["user"]) == \
        ("100", "300", "offline_vnodes", "pbsadmin")
    with open(os.path.join(HOOKS_DIR, "cray_atom.py"), "rb") as handle:
        bundled = hashlib.sha256(handle.read()).hexdigest()
    assert server.file("%s/server_priv/hooks/%s.PY" % (vh.PBS_HOME, HOOK)).sha256sum == bundled
    exported = server.check_output("%s/bin/qmgr -c 'export hook %s application/x-config default'"
                                   % (vh.PBS_EXEC, HOOK))
    with open(os.path.join(HOOKS_DIR, "cray_atom.json")) as handle:
        assert json.loads(exported) == dict(json.load(handle), **CONFIG)


def test_builtin_pbshook_left_disabled(server):
    # Both enabled would register every job twice.
    assert vh.qmgr_attributes(server, "list pbshook PBS_cray_atom")["enabled"] == "false"


@pytest.mark.parametrize("mom", MOMS)
def test_hook_copied_to_every_mom(server, mom):
    node = vh.host(mom)
    for ext in ("PY", "CF", "HK"):
        original = server.file("%s/server_priv/hooks/%s.%s" % (vh.PBS_HOME, HOOK, ext))
        copy = node.file("%s/mom_priv/hooks/%s.%s" % (vh.PBS_HOME, HOOK, ext))
        assert copy.exists, copy.path
        assert copy.sha256sum == original.sha256sum, copy.path


@pytest.mark.parametrize("mom", MOMS)
def test_hook_python_imports_the_modules(mom):
    node = vh.host(mom)
    result = node.run("%s/bin/pbs_python -c 'import requests, requests_unixsocket'" % vh.PBS_EXEC)
    assert result.rc == 0, result.stderr


def test_job_registered_with_every_mom_while_running_and_removed_at_end(server):
    moms = {name: vh.host(name) for name in MOMS}
    user = vh.host("pbs-server", user="pbsuser")
    jobid = user.check_output("echo 'sleep 6' | %s/bin/qsub -l select=3:ncpus=1 -l place=scatter"
                              % vh.PBS_EXEC).strip()
    for name, node in moms.items():
        vh.wait_for(lambda: jobid in registered(node), "%s registered with the ATOM service of %s" % (jobid, name))
    vh.wait_for(lambda: [t for t, _unused in vh.accounting(server, jobid) if t == "E"], "the end of %s" % jobid)
    for name, node in moms.items():
        vh.wait_for(lambda: jobid not in registered(node), "%s removed from the ATOM service of %s" % (jobid, name))
        assert atom_requests(node, jobid) == [("POST", 200), ("DELETE", 204)], name
    started = [f for t, f in vh.accounting(server, jobid) if t == "S"][0]
    assert sorted(h.split("/")[0] for h in started["exec_host"].split("+")) == MOMS
