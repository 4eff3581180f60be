"""Mock pbs_mom: tolerant job start over three in-process moms (PP-928 interfaces 1, 3, 4, 5, 8).

Mom ``moma`` is the primary; ``momb`` and ``momc`` are sisters (fixture ``mom_cluster``,
:mod:`mockpbs.testing.mom`). A recording server keeps what the moms report. A "frozen"
sister is a socket that listens on the sister's IM port and never answers, as a
SIGSTOPped mom does.
"""
LAUNCH_HOOK = '''import pbs
e = pbs.event()
j = e.job
for vn in e.vnode_list:
    pbs.logjobmsg(j.id, "launch: found vnode_list[%s]" % vn)
for vn in e.vnode_list_fail:
    pbs.logjobmsg(j.id, "launch: found vnode_list_fail[%s]" % vn)
if "PBS_NODEFILE" in e.env and j.in_ms_mom():
    if j.release_nodes(keep_select=j.Resource_List["site"]) is None:
        j.Hold_Types = pbs.hold_types("s")
        j.rerun()
        e.reject("unsuccessful at LAUNCH")
e.accept()
'''
FAIL_BEGIN_ON_MOMB = '''import pbs
e = pbs.event()
if pbs.get_local_nodename() == "momb":
    e.reject("simulated execjob_begin failure on momb")
e.accept()
'''
REJECT_LAUNCH = '''import pbs
e = pbs.event()
e.job.Hold_Types = pbs.hold_types("s")
e.job.rerun()
e.reject("unsuccessful at LAUNCH")
'''
JOB_SCRIPT = 'echo "job $PBS_JOBID on $(cat $PBS_NODEFILE | tr "\\n" " ")"\n'


def test_pp928_i3_join_timeout_logs_alarm_exceeded_and_tolerant_job_runs_pruned(mom_cluster):
    c = mom_cluster(frozen=("momc",))
    c.config("moma", "$sister_join_job_alarm 2\n$job_launch_delay 5\n")
    c.hook("launch", "execjob_launch", LAUNCH_HOOK)
    c.start()
    c.run_job(c.job(script=JOB_SCRIPT))
    update = c.server.wait_for("mom_job_update")
    assert update["exec_vnode"] == "(moma:ncpus=1)+(momb:ncpus=1)"
    assert update["exec_host"] == "moma/0+momb/0"
    assert update["schedselect"] == "1:ncpus=1+1:ncpus=1"
    obit = c.server.wait_for("mom_job_obit")
    assert obit["exit_status"] == 0
    ops = c.server.ops()
    assert ops.index("mom_job_update") < ops.index("mom_job_started") < ops.index("mom_job_obit")
    log = c.log("moma")
    # As a real OpenPBS 23.06 logs a sister that never answers (the openpbs backend's demo):
    # the alarm line only, no error to ignore, and the silent sister in no hook list
    # (vnode_list_fail stays empty), yet pruned away for not having joined.
    expected = [
        "0004;pbs_mom;Job;17.srv;sister_join_job_alarm wait time 2 secs exceeded",
        "0008;pbs_mom;Job;17.srv;pruned from exec_vnode=(moma:ncpus=1)+(momb:ncpus=1)+(momc:ncpus=1)",
        "0008;pbs_mom;Job;17.srv;pruned to exec_vnode=(moma:ncpus=1)+(momb:ncpus=1)",
    ]
    positions = [log.index(line) for line in expected]
    assert positions == sorted(positions)
    assert not [line for line in log if "job_start_error" in line or "ignoring error" in line], log
    assert not [line for line in log if "found vnode_list_fail" in line], log
    assert any(line.startswith("0008;pbs_mom;Job;17.srv;Started, pid = ") for line in log)
    assert c.nodefile() == ["moma", "momb"]
    assert c.output() == "job 17.srv on moma momb \n"
    assert "0008;pbs_mom;Job;17.srv;JOIN_JOB as node 1" in c.log("momb")
    c.wait_log("momb", "0008;pbs_mom;Job;17.srv;updated nodes info")


def test_pp928_i5_sister_begin_reject_tolerated_and_host_in_vnode_list_fail(mom_cluster):
    c = mom_cluster()
    c.hook("failbegin", "execjob_begin", FAIL_BEGIN_ON_MOMB)
    c.hook("launch", "execjob_launch", LAUNCH_HOOK)
    c.start()
    c.run_job(c.job(tolerate_node_failures="all"))
    update = c.server.wait_for("mom_job_update")
    assert update["exec_vnode"] == "(moma:ncpus=1)+(momc:ncpus=1)"
    c.server.wait_for("mom_job_obit")
    log = c.log("moma")
    expected = [
        "0008;pbs_mom;Job;17.srv;job_start_error 15169 from node momb could not JOIN_JOB successfully",
        "0008;pbs_mom;Job;17.srv;ignoring error from momb as job is tolerant of node failures",
        "0008;pbs_mom;Job;17.srv;simulated execjob_begin failure on momb",
        "0008;pbs_python;Job;17.srv;launch: found vnode_list_fail[momb]",
    ]
    positions = [log.index(line) for line in expected]
    assert positions == sorted(positions)
    assert not any("sister_join_job_alarm wait time" in line for line in log)
    sister = c.log("momb")
    assert "0100;pbs_mom;Hook;failbegin;execjob_begin request rejected by 'failbegin'" in sister
    assert "0008;pbs_mom;Job;17.srv;simulated execjob_begin failure on momb" in sister
    assert c.nodefile() == ["moma", "momc"]


def test_pp928_i1_non_tolerant_job_with_rejecting_sister_is_requeued(mom_cluster):
    c = mom_cluster()
    c.hook("failbegin", "execjob_begin", FAIL_BEGIN_ON_MOMB)
    c.start()
    c.run_job(c.job(tolerate_node_failures="none"))
    requeue = c.server.wait_for("mom_job_requeue")
    assert requeue["jobid"] == "17.srv"
    assert "mom_job_started" not in c.server.ops()
    log = c.log("moma")
    assert "0008;pbs_mom;Job;17.srv;job_start_error 15169 from node momb could not JOIN_JOB successfully" in log
    assert not any("ignoring error from" in line for line in log)
    assert c.output() is None


def test_pp928_i6_launch_reject_requeues_with_hook_hold_and_logs_reject(mom_cluster):
    c = mom_cluster()
    c.hook("launch", "execjob_launch", REJECT_LAUNCH)
    c.start()
    c.run_job(c.job(script=JOB_SCRIPT))
    requeue = c.server.wait_for("mom_job_requeue")
    assert requeue["hold"] == "s"
    assert requeue["rerun"] is True
    assert requeue["comment"] == "unsuccessful at LAUNCH"
    log = c.log("moma")
    reject = log.index("0100;pbs_mom;Hook;launch;execjob_launch request rejected by 'launch'")
    assert log[reject + 1] == "0008;pbs_mom;Job;17.srv;unsuccessful at LAUNCH"
    assert "mom_job_started" not in c.server.ops()
