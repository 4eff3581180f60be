"""PP-928 interface 1 on the mom: a sister lost while the job runs is ignored with
tolerate_node_failures=all and kills (requeues) the job with job_start; a Cray primary mom
($alps_client) ignores tolerate_node_failures (its hooks see "none")."""
import pytest

from mockpbs.mom.inprocess import WAITING_SCRIPT

SHOW_TOLERATE = '''import pbs
e = pbs.event()
pbs.logjobmsg(e.job.id, "%s sees tolerate_node_failures=%s" % (pbs.get_local_nodename(), e.job.tolerate_node_failures))
if pbs.get_local_nodename() == "momb":
    e.reject("simulated execjob_begin failure on momb")
e.accept()
'''


def run_and_lose_momc(c, tolerate):
    c.start()
    c.moms["moma"].jobs.poll_interval = 0.3
    c.run_job(c.job(tolerate_node_failures=tolerate, script=WAITING_SCRIPT))
    c.server.wait_for("mom_job_started")
    c.moms["momc"].stop()


def test_pp928_i1_all_ignores_sister_lost_while_running(mom_cluster):
    c = mom_cluster()
    run_and_lose_momc(c, "all")
    c.wait_log("moma", "0008;pbs_mom;Job;17.srv;"
                       "ignoring lost communication with momc as job is tolerant of node failures")
    c.release_jobs()
    obit = c.server.wait_for("mom_job_obit")
    assert obit["exit_status"] == 0
    assert "mom_job_requeue" not in c.server.ops()
    assert not any("killing job now" in line for line in c.log("moma"))


@pytest.mark.parametrize("tolerate", ["job_start", "none"])
def test_pp928_i1_job_start_or_none_kills_and_requeues_job_on_sister_loss(mom_cluster, tolerate):
    c = mom_cluster()
    run_and_lose_momc(c, tolerate)
    requeue = c.server.wait_for("mom_job_requeue")
    assert requeue["reason"] == "lost communication with sister mom momc" and requeue["rerun"] is True
    assert "mom_job_obit" not in c.server.ops()
    log = c.log("moma")
    killed = log.index("000d;pbs_mom;Job;17.srv;im_eof, lost communication with momc, killing job now")
    assert log[killed + 1] == "0008;pbs_mom;Job;17.srv;kill_job"
    assert not any("ignoring lost communication" in line for line in log)
    c.wait_log("momb", "0008;pbs_mom;Job;17.srv;DELETE_JOB received")


def test_pp928_i1_cray_primary_ignores_tolerate_node_failures(mom_cluster):
    c = mom_cluster()
    c.config("moma", "$alps_client /opt/cray/alps/default/bin/apbasil\n")
    c.hook("begin", "execjob_begin", SHOW_TOLERATE)
    c.start()
    assert c.moms["moma"].is_cray() and not c.moms["momb"].is_cray()
    c.run_job(c.job())
    c.server.wait_for("mom_job_requeue")
    assert "mom_job_started" not in c.server.ops()
    log = c.log("moma")
    assert "0008;pbs_python;Job;17.srv;moma sees tolerate_node_failures=none" in log
    assert "0008;pbs_mom;Job;17.srv;job_start_error 15169 from node momb could not JOIN_JOB successfully" in log
    assert not any("ignoring error from" in line for line in log)
    assert "0008;pbs_python;Job;17.srv;momb sees tolerate_node_failures=none" in c.log("momb")
