"""An execjob_launch hook that rejects a job without ``e.job.rerun()``: real OpenPBS
deletes the job. The mom logs ``job not started, Failure -17`` and sends an obit with
exit status -17 (JOB_EXEC_FAILHOOK_DELETE); the server logs ``hook rejected request,
requiring job to be deleted`` and ends the job (history: F, substate 93, ``Exit_status =
-17``, comment ``... and failed``), as a real OpenPBS 23.06 does."""
import re

import pytest

from mockpbs import testaddr
from mockpbs.cli import pbsnodes, qmgr, qstat, qsub
from mockpbs.testing import server as testing

REJECT_WITHOUT_RERUN = '''import pbs
pbs.event().reject("no launch")
'''


def test_mom_sends_an_obit_with_exit_status_minus_17_not_a_requeue(mom_cluster):
    c = mom_cluster(names=("moma", "momb"))
    c.hook("launch", "execjob_launch", REJECT_WITHOUT_RERUN)
    c.start()
    c.run_job(c.job(exec_vnode="(moma:ncpus=1)+(momb:ncpus=1)", exec_host="moma/0+momb/0",
                    schedselect="1:ncpus=1+1:ncpus=1",
                    Resource_List={"select": "1:ncpus=1+1:ncpus=1", "ncpus": "2", "nodect": "2"}))
    obit = c.server.wait_for("mom_job_obit")
    assert (obit["jobid"], obit["exit_status"]) == ("17.srv", -17)
    assert obit["resources_used"] == {"walltime": "00:00:00"}
    assert "mom_job_requeue" not in c.server.ops() and "mom_job_started" not in c.server.ops()
    log = testing.wait_for(lambda: [line for line in c.log("moma") if "Obit sent" in line] and c.log("moma"),
                           "Obit sent logged")
    failure = log.index("0001;pbs_mom;Job;17.srv;job not started, Failure -17")
    assert log[failure - 1] == "0008;pbs_mom;Job;17.srv;no launch"
    assert "0100;pbs_mom;Job;17.srv;Obit sent" in log[failure:]


@pytest.fixture
def server(tmp_path, monkeypatch):
    with testaddr.reserved_addresses(1) as (mom_address,):
        daemon = testing.start_server(tmp_path, monkeypatch, sched_interval=0.2)
        mom = testing.FakeMom(mom_address, "mom1", server_address=daemon.address,
                              verdict=lambda job: None)
        try:
            assert testing.run_cli(qmgr.main, ["-c", "create node mom1 Mom=%s" % mom_address])[0] == 0
            assert testing.run_cli(qmgr.main, ["-c", "set server job_history_enable = True"])[0] == 0
            testing.wait_for(lambda: "state = free" in testing.run_cli(pbsnodes.main, ["mom1"])[1], "mom1 free")
            yield daemon, mom
        finally:
            mom.close()
            daemon.stop()


def _attrs(jobid):
    out = testing.run_cli(qstat.main, ["-x", "-f", jobid])[1]
    return dict(re.findall(r"^    (\S+) = (.*)$", out.replace("\n\t", ""), re.M))


def test_server_ends_the_job_on_an_obit_with_exit_status_minus_17(server):
    daemon, mom = server
    jobid = testing.run_cli(qsub.main, ["--", "/bin/true"])[1].strip()
    testing.wait_for(lambda: mom.ops("run_job"), "run_job sent")
    mom.report({"op": "mom_job_obit", "jobid": jobid, "exit_status": -17,
                "resources_used": {"walltime": "00:00:00"}, "run_count": "1"})
    attrs = _attrs(jobid)
    assert (attrs["job_state"], attrs["substate"], attrs["Exit_status"]) == ("F", "93", "-17")
    assert attrs["comment"].endswith(" and failed")
    with open(daemon.core.log.path()) as handle:
        lines = [line.split(";", 1)[1] for line in handle.read().splitlines() if ";%s;" % jobid in line]
    rejected = lines.index("0009;Server@vm;Job;%s;hook rejected request, requiring job to be deleted" % jobid)
    assert lines[rejected + 1] == "0010;Server@vm;Job;%s;Exit_status=-17 resources_used.walltime=00:00:00" % jobid
    assert "state = free" in testing.run_cli(pbsnodes.main, ["mom1"])[1]
