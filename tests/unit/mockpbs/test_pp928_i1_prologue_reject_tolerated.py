"""PP-928 interface 1, the execjob_prologue case: a sister whose execjob_prologue hook
rejects the job. With ``tolerate_node_failures=job_start`` the primary mom logs (texts
and class per tests/reference/log_messages.json, src/resmom/mom_comm.c
``job_start_error()``, PBSEVENT_JOB = 0008)::

    Job;<jid>;job_start_error <code> from node <host> could not IM_EXEC_PROLOGUE successfully
    Job;<jid>;ignoring error from <host> as job is tolerant of node failures

in that order, the sister's vnode is in ``pbs.event().vnode_list_fail`` of the launch
hook, and a ``release_nodes()`` launch hook starts the job pruned to the healthy moms.
With ``tolerate_node_failures=none`` the same reject requeues the job."""
import re

from mockpbs.testing.mom import PRUNING_LAUNCH_HOOK

REJECT_PROLOGUE_ON_MOMC = '''import pbs
e = pbs.event()
if pbs.get_local_nodename() == "momc":
    e.reject("prologue refused on momc")
e.accept()
'''
LOG_FAIL_LIST = '''import pbs
e = pbs.event()
for vn in sorted(e.vnode_list_fail):
    pbs.logjobmsg(e.job.id, "launch: found vnode_list_fail[%s]" % vn)
e.accept()
'''
START_ERROR = re.compile(r"^0008;pbs_mom;Job;17\.srv;job_start_error (\d+) from node momc "
                         r"could not IM_EXEC_PROLOGUE successfully$")
IGNORING = "0008;pbs_mom;Job;17.srv;ignoring error from momc as job is tolerant of node failures"


def start(c, tolerate):
    c.hook("prolo", "execjob_prologue", REJECT_PROLOGUE_ON_MOMC)
    c.hook("alist", "execjob_launch", LOG_FAIL_LIST)
    c.hook("launch", "execjob_launch", PRUNING_LAUNCH_HOOK)
    c.start()
    c.run_job(c.job(tolerate_node_failures=tolerate))


def test_pp928_i1_tolerant_job_ignores_sister_prologue_reject_and_starts_pruned(mom_cluster):
    c = mom_cluster()
    start(c, "job_start")
    update = c.server.wait_for("mom_job_update")
    c.server.wait_for("mom_job_started")
    assert update["exec_vnode"] == "(moma:ncpus=1)+(momb:ncpus=1)"
    assert update["exec_host"] == "moma/0+momb/0"
    log = c.log("moma")
    errors = [i for i, line in enumerate(log) if START_ERROR.match(line)]
    assert len(errors) == 1
    assert log.index(IGNORING) == errors[0] + 1
    assert "0008;pbs_python;Job;17.srv;launch: found vnode_list_fail[momc]" in log
    assert "0008;pbs_python;Job;17.srv;launch: found vnode_list_fail[momb]" not in log
    assert c.nodefile() == ["moma", "momb"]
    assert "mom_job_requeue" not in c.server.ops()
    c.server.wait_for("mom_job_obit")


def test_pp928_i1_not_tolerant_job_is_requeued_on_sister_prologue_reject(mom_cluster):
    c = mom_cluster()
    start(c, "none")
    requeue = c.server.wait_for("mom_job_requeue")
    assert requeue["jobid"] == "17.srv"
    log = c.log("moma")
    assert any(START_ERROR.match(line) for line in log)
    assert IGNORING not in log
    assert not any("vnode_list_fail" in line for line in log)
    assert "mom_job_started" not in c.server.ops()
