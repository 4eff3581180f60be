"""PP-928 interface 9, mom side: after pruning every mom still in the job (primary too)
runs its execjob_resize hooks; a reject, exception or alarm logs the seed's DEBUG2 lines,
aborts the job on that mom and the server is asked to requeue it."""
from mockpbs.testing.mom import PRUNING_LAUNCH_HOOK

LOGGING_RESIZE = '''import pbs
e = pbs.event()
pbs.logjobmsg(e.job.id, "resize on %s: exec_vnode=%s vnodes=%s" % (
    pbs.get_local_nodename(), e.job.exec_vnode, ",".join(sorted(e.vnode_list.keys()))))
e.accept()
'''
REJECT_ON_MOMB = '''import pbs
if pbs.get_local_nodename() == "momb":
    pbs.event().reject("cgroup limits could not be updated")
pbs.event().accept()
'''
RAISE_ON_MOMA = '''import pbs
if pbs.get_local_nodename() == "moma":
    pbs.event().job.Resource_List["ncpus"] = 5
pbs.event().accept()
'''
ALARM_ON_MOMA = '''import pbs, time
if pbs.get_local_nodename() == "moma":
    time.sleep(30)
pbs.event().accept()
'''


def start_job(c, resize_body, alarm=30):
    c.hook("launch", "execjob_launch", PRUNING_LAUNCH_HOOK)
    c.hook("resize", "execjob_resize", resize_body, alarm=alarm)
    c.start()
    c.run_job(c.job())


def test_pp928_i9_primary_and_kept_sister_run_resize_with_pruned_job(mom_cluster):
    c = mom_cluster()
    start_job(c, LOGGING_RESIZE)
    c.server.wait_for("mom_job_obit")
    assert "mom_job_requeue" not in c.server.ops()
    pruned = "exec_vnode=(moma:ncpus=1)+(momb:ncpus=1) vnodes=moma,momb"
    assert "0008;pbs_python;Job;17.srv;resize on moma: %s" % pruned in c.log("moma")
    c.wait_log("momb", "0008;pbs_python;Job;17.srv;resize on momb: %s" % pruned)
    assert not any("resize on" in line for line in c.log("momc"))


def test_pp928_i9_sister_resize_reject_aborts_job_there_and_requeues(mom_cluster):
    c = mom_cluster()
    start_job(c, REJECT_ON_MOMB)
    requeue = c.server.wait_for("mom_job_requeue")
    assert requeue["reason"] == "execjob_resize hook rejected"
    assert requeue["rerun"] is True
    assert requeue["comment"] == "cgroup limits could not be updated"
    assert "mom_job_started" not in c.server.ops()
    log = c.log("momb")
    first = log.index("0100;pbs_mom;Hook;resize;execjob_resize request rejected by 'resize'")
    assert log[first + 1] == "0100;pbs_mom;Job;17.srv;cgroup limits could not be updated"
    assert "0100;pbs_mom;Job;17.srv;execjob_resize hook rejected request: cgroup limits could not be updated" in log
    assert "0008;pbs_mom;Job;17.srv;updated nodes info" not in log
    assert c.output() is None


def test_pp928_i9_primary_resize_exception_requeues(mom_cluster):
    c = mom_cluster()
    start_job(c, RAISE_ON_MOMA)
    requeue = c.server.wait_for("mom_job_requeue")
    message = "execjob_resize hook 'resize' encountered an exception, request rejected"
    assert requeue["comment"] == message and requeue["reason"] == "execjob_resize hook rejected"
    log = c.log("moma")
    first = log.index("0100;pbs_mom;Hook;resize;execjob_resize request rejected by 'resize'")
    assert log[first + 1] == "0100;pbs_mom;Job;17.srv;" + message
    assert "mom_job_started" not in c.server.ops()


def test_pp928_i9_primary_resize_alarm_requeues(mom_cluster):
    c = mom_cluster()
    start_job(c, ALARM_ON_MOMA, alarm=2)
    requeue = c.server.wait_for("mom_job_requeue")
    message = "alarm call while running execjob_resize hook 'resize', request rejected"
    assert requeue["comment"] == message
    assert "0100;pbs_mom;Job;17.srv;" + message in c.log("moma")
