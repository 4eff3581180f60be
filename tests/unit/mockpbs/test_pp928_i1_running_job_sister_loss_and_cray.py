"""PP-928 interface 1 on the mom: a sister lost while the job runs is ignored with
tolerate_node_failures=all; with job_start (or none) it kills (requeues) the job only once
it has stayed lost for more than $max_poll_downtime seconds and the mom's connection is
older than COMM_MATURITY_TIME, with OpenPBS's im_eof() log lines (src/resmom/mom_comm.c,
seen on the openpbs backend); a Cray primary mom ($alps_client) ignores
tolerate_node_failures (its hooks see "none")."""
import time

import pytest

from mockpbs.testing.mom import WAITING_SCRIPT

SHOW_TOLERATE = '''import pbs
e = pbs.event()
pbs.logjobmsg(e.job.id, "%s sees tolerate_node_failures=%s" % (pbs.get_local_nodename(), e.job.tolerate_node_failures))
if pbs.get_local_nodename() == "momb":
    e.reject("simulated execjob_begin failure on momb")
e.accept()
'''


def run_and_lose_momc(c, tolerate, comm_maturity=0):
    c.start()
    c.moms["moma"].jobs.poll_interval = 0.3
    c.moms["moma"].jobs.comm_maturity = comm_maturity
    c.run_job(c.job(tolerate_node_failures=tolerate, script=WAITING_SCRIPT))
    c.server.wait_for("mom_job_started")
    c.moms["momc"].stop()


def test_pp928_i1_all_ignores_sister_lost_while_running(mom_cluster):
    c = mom_cluster()
    run_and_lose_momc(c, "all")
    c.wait_log("moma", "0400;pbs_mom;Job;17.srv;"
                       "ignoring lost communication with momc as job is tolerant of node failures")
    c.release_jobs()
    obit = c.server.wait_for("mom_job_obit")
    assert obit["exit_status"] == 0
    assert "mom_job_requeue" not in c.server.ops()
    assert not any("killing job now" in line for line in c.log("moma"))


NOT_YET = "0001;pbs_mom;Job;17.srv;im_eof, lost communication with momc, not killing job yet"


@pytest.mark.parametrize("tolerate", ["job_start", "none"])
def test_pp928_i1_job_start_or_none_kills_and_requeues_job_after_max_poll_downtime(mom_cluster, tolerate):
    c = mom_cluster()
    c.config("moma", "$max_poll_downtime 1\n")
    run_and_lose_momc(c, tolerate)
    requeue = c.server.wait_for("mom_job_requeue")
    assert requeue["reason"] == "lost communication with sister mom momc" and requeue["rerun"] is True
    assert "mom_job_obit" not in c.server.ops()
    log = c.log("moma")
    killed = log.index("0001;pbs_mom;Job;17.srv;im_eof, lost communication with momc for > 1 secs, killing job now")
    assert NOT_YET in log[:killed]
    assert log[killed + 1:killed + 4] == ["0001;pbs_mom;Job;17.srv;node_bailout, POLL failed from node 2",
                                          "0008;pbs_mom;Job;17.srv;node EOF 2 (momc)",
                                          "0008;pbs_mom;Job;17.srv;kill_job"]
    assert not any("ignoring lost communication" in line for line in log)
    c.wait_log("momb", "0008;pbs_mom;Job;17.srv;DELETE_JOB received")


def test_pp928_i1_job_start_job_kept_running_within_max_poll_downtime(mom_cluster):
    """The default $max_poll_downtime (300 s): a lost sister only logs, at every poll."""
    c = mom_cluster()
    run_and_lose_momc(c, "job_start")
    c.wait_log("moma", NOT_YET)
    deadline = time.monotonic() + 10
    while c.log("moma").count(NOT_YET) < 2:
        assert time.monotonic() < deadline, c.log("moma")
        time.sleep(0.1)
    assert not any("killing job now" in line for line in c.log("moma"))
    assert "mom_job_requeue" not in c.server.ops() and "mom_job_obit" not in c.server.ops()


def test_pp928_i1_young_connection_does_not_kill_job(mom_cluster):
    """Past $max_poll_downtime, but the mom's connection is younger than
    COMM_MATURITY_TIME: not killed (is_comm_up())."""
    c = mom_cluster()
    c.config("moma", "$max_poll_downtime 1\n")
    run_and_lose_momc(c, "job_start", comm_maturity=3600)
    c.wait_log("moma", "0001;pbs_mom;Job;17.srv;im_eof, lost connection to momc due to pbs_comm "
                       "down/recently established, not killing job")
    assert not any("killing job now" in line for line in c.log("moma"))
    assert "mom_job_requeue" not in c.server.ops()


def test_pp928_i1_max_poll_downtime_outlives_its_config_line(mom_cluster):
    """300 s by default; a reload without the line keeps the value last set (mom_main.c
    never resets it)."""
    c = mom_cluster(names=("moma",))
    mom = c.moms["moma"]
    assert mom.max_poll_downtime == 300
    c.config("moma", "$max_poll_downtime 7\n")
    c.start()
    assert mom.max_poll_downtime == 7
    assert "0002;pbs_mom;Svr;max_poll_downtime;7" in c.log("moma")
    c.config("moma", "")
    assert mom.hangup()
    assert mom.max_poll_downtime == 7


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
