"""PP-928 interface 4: a sister whose positive prologue acknowledgement arrives after
$job_launch_delay is failed, unless the acknowledgement arrives before the launch hooks run."""
import os
import pwd
import time

import pytest

from mockpbs import wire
from mockpbs.mom.inprocess import MomCluster

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
VNODES = {name: {"host": name, "resources_available": {"ncpus": "2", "host": name, "vnode": name}}
          for name in ("moma", "momb", "momc")}


def make_job(workdir):
    user = pwd.getpwuid(os.getuid())
    return {
        "id": "17.srv", "Job_Name": "STDIN", "Job_Owner": "%s@srv" % user.pw_name,
        "euser": user.pw_name, "egroup": user.pw_name, "queue": "workq",
        "Resource_List": {"select": "3:ncpus=1", "ncpus": "3", "nodect": "3", "place": "scatter"},
        "schedselect": "3:ncpus=1",
        "exec_vnode": "(moma:ncpus=1)+(momb:ncpus=1)+(momc:ncpus=1)",
        "exec_host": "moma/0+momb/0+momc/0",
        "tolerate_node_failures": "job_start", "Hold_Types": "n", "run_count": "1",
        "Variable_List": {"PBS_O_HOME": user.pw_dir, "PBS_O_WORKDIR": str(workdir)},
        "script": "true\n",
        "Output_Path": "srv:%s" % (workdir / "STDIN.o17"), "Error_Path": "srv:%s" % (workdir / "STDIN.e17"),
        "Join_Path": "n",
    }


@pytest.fixture
def cluster(tmp_path):
    made = []

    def make(**kwargs):
        c = MomCluster(tmp_path, **kwargs)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


def start(c, tmp_path, seconds):
    c.config("moma", "$job_launch_delay 1\n")
    c.hook("prolo", "execjob_prologue", SLOW_PROLOGUE_ON_MOMB.format(seconds=seconds), alarm=60)
    c.hook("launch", "execjob_launch", LAUNCH_HOOK)
    c.start()
    assert wire.request(c.addresses["moma"], wire.MOM_PORT,
                        {"op": "run_job", "job": make_job(tmp_path), "vnodes": VNODES}) == {"ok": True}


def test_pp928_i4_ack_after_delay_but_before_launch_makes_sister_healthy_again(cluster, tmp_path):
    c = cluster()
    starter = c.moms["moma"].jobs
    original = starter.reclaim_late_prologue_acks

    def reclaim_once_momb_answered(record):
        # Hold the primary just before its launch hooks until momb's late ack is in.
        deadline = time.monotonic() + 30
        while "momb" not in record.prologue_replies and time.monotonic() < deadline:
            time.sleep(0.05)
        return original(record)

    starter.reclaim_late_prologue_acks = reclaim_once_momb_answered
    start(c, tmp_path, seconds=3)
    c.server.wait_for("mom_job_obit")
    log = c.log("moma")
    late = log.index("0100;pbs_mom;Job;17.srv;"
                     "not all prologue hooks to sister moms completed, but job will proceed to execute")
    assert late < log.index(next(line for line in log if line.startswith("0008;pbs_mom;Job;17.srv;Started")))
    assert not any("vnode_list_fail" in line for line in log)
    with open(os.path.join(c.moms["moma"].pbs_home, "aux", "17.srv")) as handle:
        assert handle.read() == "moma\nmomb\nmomc\n"


def test_pp928_i4_ack_after_launch_leaves_sister_failed(cluster, tmp_path):
    c = cluster()
    start(c, tmp_path, seconds=8)
    c.server.wait_for("mom_job_obit")
    log = c.log("moma")
    assert "0008;pbs_python;Job;17.srv;launch: found vnode_list_fail[momb]" in log
    assert "0400;pbs_mom;Job;17.srv;received from parent mom that node's host momb is not healthy" in log
    assert "0008;pbs_python;Job;17.srv;launch: found vnode_list_fail[momc]" not in log
