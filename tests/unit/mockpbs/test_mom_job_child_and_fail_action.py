"""The mom's job child and hook failure handling (issues 4 and 5, mom side).

- execjob_launch hooks run in the forked job child, which then becomes the job's program:
  a hook's parent process is the job (OpenPBS ``finish_exec()``), never the mom.
- fail_action=offline_vnodes: an execjob_begin hook failing by exception or alarm offlines
  the mom's vnodes (``offlined by hook '<name>' due to hook error``); a plain reject does not.
- Released sisters (``delete_job2``) run execjob_end; an execjob_resize reject runs
  execjob_abort then execjob_end where the job was aborted.
"""
import os

import mockpbs.pbs as pbsmod
from mockpbs.testing.mom import PRUNING_LAUNCH_HOOK

REJECT_ON_MOMB = '''import pbs
if pbs.get_local_nodename() == "momb":
    pbs.event().reject("cgroup limits could not be updated")
pbs.event().accept()
'''
PARENT_PID_LAUNCH = '''import os, pbs
e = pbs.event()
pbs.logjobmsg(e.job.id, "launch hook parent pid %d" % os.getppid())
e.accept()
'''
RAISE_ON_MOMB = '''import pbs
if pbs.get_local_nodename() == "momb":
    raise RuntimeError("ATOM registration failed")
pbs.event().accept()
'''
REJECT_PLAIN_ON_MOMB = '''import pbs
if pbs.get_local_nodename() == "momb":
    pbs.event().reject("not here")
pbs.event().accept()
'''


def test_launch_hook_runs_in_the_process_that_becomes_the_job(mom_cluster, tmp_path):
    c = mom_cluster()
    c.hook("parent", "execjob_launch", PARENT_PID_LAUNCH)
    c.start()
    pid_file = tmp_path / "job.pid"
    c.run_job(c.job(tolerate_node_failures="none", script="echo $$ > %s\n" % pid_file))
    c.server.wait_for("mom_job_obit")
    lines = [l for l in c.log("moma") if "launch hook parent pid" in l]
    assert len(lines) == 1
    hook_parent = int(lines[0].rsplit(" ", 1)[1])
    assert hook_parent != os.getpid()          # not the mom
    assert hook_parent == int(pid_file.read_text())   # the job's shell itself
    started = c.server.wait_for("mom_job_started")
    assert started["session"] == hook_parent


def test_begin_exception_with_offline_vnodes_offlines_the_sister_and_requeues(mom_cluster):
    c = mom_cluster()
    c.hook("atom", "execjob_begin", RAISE_ON_MOMB, fail_action="offline_vnodes")
    c.start()
    c.run_job(c.job(tolerate_node_failures="none"))
    requeue = c.server.wait_for("mom_job_requeue")
    assert requeue["reason"] == "sister mom failed to join job"
    update = c.server.wait_for("mom_node_update")
    assert update == {"op": "mom_node_update", "vnode": "momb", "state": "offline",
                      "comment": "offlined by hook 'atom' due to hook error"}
    assert [m["vnode"] for m in c.server.requests if m.get("op") == "mom_node_update"] == ["momb"]


def test_begin_alarm_with_offline_vnodes_offlines_too(mom_cluster):
    c = mom_cluster()
    body = 'import pbs, time\nif pbs.get_local_nodename() == "momb":\n    time.sleep(30)\npbs.event().accept()\n'
    c.hook("slow", "execjob_begin", body, fail_action="offline_vnodes", alarm=2)
    c.start()
    c.run_job(c.job(tolerate_node_failures="none"))
    update = c.server.wait_for("mom_node_update")
    assert update["vnode"] == "momb" and update["comment"] == "offlined by hook 'slow' due to hook error"


def test_plain_reject_with_offline_vnodes_offlines_nothing(mom_cluster):
    c = mom_cluster()
    c.hook("atom", "execjob_begin", REJECT_PLAIN_ON_MOMB, fail_action="offline_vnodes")
    c.start()
    c.run_job(c.job(tolerate_node_failures="none"))
    c.server.wait_for("mom_job_requeue")
    assert "mom_node_update" not in c.server.ops()


def test_released_sister_runs_execjob_end(mom_cluster):
    c = mom_cluster()
    c.hook("launch", "execjob_launch", PRUNING_LAUNCH_HOOK)
    c.hook("ender", "execjob_end", 'import pbs\npbs.logjobmsg(pbs.event().job.id, "end hook")\n')
    c.start()
    c.run_job(c.job())
    c.server.wait_for("mom_job_obit")
    c.wait_log("momc", "0008;pbs_mom;Job;17.srv;DELETE_JOB2 received")
    c.wait_log("momc", "0008;pbs_python;Job;17.srv;end hook")


def test_resize_reject_runs_abort_then_end_hooks_where_the_job_is_aborted(mom_cluster):
    c = mom_cluster()
    c.hook("launch", "execjob_launch", PRUNING_LAUNCH_HOOK)
    c.hook("resize", "execjob_resize", REJECT_ON_MOMB)
    body = 'import pbs\ne = pbs.event()\npbs.logjobmsg(e.job.id, "cleanup %d" % e.type)\n'
    c.hook("cleanup", "execjob_abort,execjob_end", body)
    c.start()
    c.run_job(c.job())
    c.server.wait_for("mom_job_requeue")
    abort = "0008;pbs_python;Job;17.srv;cleanup %d" % pbsmod.EXECJOB_ABORT
    end = "0008;pbs_python;Job;17.srv;cleanup %d" % pbsmod.EXECJOB_END
    for mom in ("momb", "moma"):
        c.wait_log(mom, end)
        log = c.log(mom)
        assert log.index(abort) < log.index(end)
