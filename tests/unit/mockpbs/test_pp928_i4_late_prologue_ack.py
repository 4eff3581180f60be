"""PP-928 interface 4: a sister whose positive prologue acknowledgement arrives after
$job_launch_delay is failed, unless the acknowledgement arrives before the launch hooks run."""
import time

LAUNCH_HOOK = '''import pbs
e = pbs.event()
for vn in e.vnode_list_fail:
    pbs.logjobmsg(e.job.id, "launch: found vnode_list_fail[%s]" % vn)
e.accept()
'''
SLOW_PROLOGUE_ON_MOMB = '''import pbs, time
if pbs.get_local_nodename() == "momb":
    time.sleep({seconds})
pbs.event().accept()
'''


def start(c, seconds):
    c.config("moma", "$job_launch_delay 1\n")
    c.hook("prolo", "execjob_prologue", SLOW_PROLOGUE_ON_MOMB.format(seconds=seconds), alarm=60)
    c.hook("launch", "execjob_launch", LAUNCH_HOOK)
    c.start()
    c.run_job(c.job())


def test_pp928_i4_ack_after_delay_but_before_launch_makes_sister_healthy_again(mom_cluster):
    c = mom_cluster()
    starter = c.moms["moma"].jobs
    original = starter.reclaim_late_prologue_acks

    def reclaim_once_momb_answered(record):
        # Hold the primary just before its launch hooks until momb's late ack is in.
        deadline = time.monotonic() + 30
        while "momb" not in record.prologue_replies and time.monotonic() < deadline:
            time.sleep(0.05)
        return original(record)

    starter.reclaim_late_prologue_acks = reclaim_once_momb_answered
    start(c, seconds=3)
    c.server.wait_for("mom_job_obit")
    log = c.log("moma")
    late = log.index("0100;pbs_mom;Job;17.srv;"
                     "not all prologue hooks to sister moms completed, but job will proceed to execute")
    assert late < log.index(next(line for line in log if line.startswith("0008;pbs_mom;Job;17.srv;Started")))
    assert not any("vnode_list_fail" in line for line in log)
    assert c.nodefile() == ["moma", "momb", "momc"]


def test_pp928_i4_ack_after_launch_leaves_sister_failed(mom_cluster):
    c = mom_cluster()
    start(c, seconds=8)
    c.server.wait_for("mom_job_obit")
    log = c.log("moma")
    assert "0008;pbs_python;Job;17.srv;launch: found vnode_list_fail[momb]" in log
    assert "0400;pbs_mom;Job;17.srv;received from parent mom that node's host momb is not healthy" in log
    assert "0008;pbs_python;Job;17.srv;launch: found vnode_list_fail[momc]" not in log
