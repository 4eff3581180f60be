"""Verify of scenario "rollout": after playbooks/rollout.yml every mom is back online without
a rollout comment, holds and logged its tunables and the server's hook, and the server
and scheduler attributes are set (testinfra, paramiko backend over SSH)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared"))
import verify_helpers as vh  # noqa: E402

MOMS = ["mom1", "mom2", "mom3"]
HOOK = "reliable_job_startup"


@pytest.fixture(scope="module")
def server():
    return vh.host("pbs-server")


def test_server_and_sched_attributes(server):
    assert vh.qmgr_attributes(server, "list sched default")["job_run_wait"] == "execjob_hook"
    assert vh.qmgr_attributes(server, "list server")["comment"] == "hpc.pbs molecule rollout"
    assert vh.qmgr_attributes(server, "list hook %s" % HOOK)["enabled"] == "true"


@pytest.mark.parametrize("mom", MOMS)
def test_mom_back_online_with_its_values(server, mom):
    node_attrs = vh.qmgr_attributes(server, "list node %s" % mom)
    assert node_attrs["state"] == "free", node_attrs
    assert "comment" not in node_attrs, node_attrs
    node = vh.host(mom)
    config = node.file("%s/mom_priv/config" % vh.PBS_HOME).content_string.splitlines()
    assert "$job_launch_delay 12" in config and "$sister_join_job_alarm 12" in config
    log = node.check_output("cat %s/mom_logs/*" % vh.PBS_HOME).splitlines()
    # Loaded once: the idempotence run skipped the host instead of reloading it.
    assert sum(line.endswith(";pbs_mom;Svr;job_launch_delay;12") for line in log) == 1
    original = server.file("%s/server_priv/hooks/%s.PY" % (vh.PBS_HOME, HOOK))
    assert node.file("%s/mom_priv/hooks/%s.PY" % (vh.PBS_HOME, HOOK)).sha256sum == original.sha256sum
