"""Verify of scenario "default": what site.yml left on every node, read over SSH with
testinfra's paramiko backend, and a padded job that starts pruned with a frozen sister."""
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


def test_hook_installed_on_the_server(server):
    attrs = vh.qmgr_attributes(server, "list hook %s" % HOOK)
    assert attrs["enabled"] == "true"
    assert sorted(attrs["event"].split(",")) == ["execjob_launch", "queuejob"]
    assert attrs["alarm"] == "30" and attrs["order"] == "1"


def test_server_and_sched_attributes(server):
    # job_run_wait from site.yml (sched_tuning), comment from the converge (molecule.yml vars).
    assert vh.qmgr_attributes(server, "list sched default")["job_run_wait"] == "execjob_hook"
    assert vh.qmgr_attributes(server, "list server")["comment"] == "hpc.pbs molecule default"


@pytest.mark.parametrize("mom", MOMS)
def test_hook_files_on_every_mom(server, mom):
    node = vh.host(mom)
    for ext in ("PY", "CF", "HK"):
        copy = node.file("%s/mom_priv/hooks/%s.%s" % (vh.PBS_HOME, HOOK, ext))
        assert copy.exists, copy.path
    original = server.file("%s/server_priv/hooks/%s.PY" % (vh.PBS_HOME, HOOK))
    assert node.file("%s/mom_priv/hooks/%s.PY" % (vh.PBS_HOME, HOOK)).sha256sum == original.sha256sum


@pytest.mark.parametrize("mom", MOMS)
def test_mom_config_values_and_log_lines(mom):
    node = vh.host(mom)
    config = node.file("%s/mom_priv/config" % vh.PBS_HOME).content_string.splitlines()
    assert "$job_launch_delay 10" in config
    assert "$sister_join_job_alarm 10" in config
    log = node.check_output("cat %s/mom_logs/*" % vh.PBS_HOME).splitlines()
    assert any(line.endswith(";pbs_mom;Svr;job_launch_delay;10") for line in log)
    assert any(line.endswith(";pbs_mom;Svr;sister_join_job_alarm;10") for line in log)
    pid = node.file("%s/mom_priv/mom.lock" % vh.PBS_HOME).content_string.split()[0]
    assert node.run("kill -0 %s" % pid).rc == 0, "pbs_mom %s is not running after the reload" % pid


def test_padded_job_with_dead_sister_starts_pruned(server):
    vh.launcher("stop-mom", "mom2", "--freeze")
    try:
        user = vh.host("pbs-server", user="pbsuser")
        jobid = user.check_output("echo 'sleep 5' | %s/bin/qsub -l select=ncpus=1+ncpus=1 -l place=scatter"
                                  % vh.PBS_EXEC).strip()
        pruned = vh.wait_for(lambda: [f for t, f in vh.accounting(server, jobid) if t == "s"],
                             "the s record of %s" % jobid)[0]
        started = [f for t, f in vh.accounting(server, jobid) if t == "S"][0]
    finally:
        vh.launcher("start-mom", "mom2")
    assert started["Resource_List.select"] == "1:ncpus=1+2:ncpus=1"
    assert started["Resource_List.site"] == "1:ncpus=1+1:ncpus=1"
    assert [h.split("/")[0] for h in started["exec_host"].split("+")] == ["mom1", "mom2", "mom3"]
    assert [h.split("/")[0] for h in pruned["exec_host"].split("+")] == ["mom1", "mom3"]
    assert pruned["Resource_List.select"] == "1:ncpus=1+1:ncpus=1"
