"""PP-928 interface 9, mom side: after pruning every mom still in the job (primary too)
runs its execjob_resize hooks; a reject, exception or alarm logs the seed's DEBUG2 lines,
aborts the job on that mom and the server is asked to requeue it."""
import os
import pwd

import pytest

from mockpbs import wire
from mockpbs.mom.inprocess import MomCluster

LAUNCH_HOOK = '''import pbs
e = pbs.event()
j = e.job
if "PBS_NODEFILE" in e.env and j.in_ms_mom():
    if j.release_nodes(keep_select=j.Resource_List["site"]) is None:
        e.reject("unsuccessful at LAUNCH")
e.accept()
'''
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
VNODES = {name: {"host": name, "resources_available": {"ncpus": "2", "host": name, "vnode": name}}
          for name in ("moma", "momb", "momc")}


def make_job(workdir):
    user = pwd.getpwuid(os.getuid())
    return {
        "id": "17.srv", "Job_Name": "STDIN", "Job_Owner": "%s@srv" % user.pw_name,
        "euser": user.pw_name, "egroup": user.pw_name, "queue": "workq",
        "Resource_List": {"select": "1:ncpus=1+2:ncpus=1", "ncpus": "3", "nodect": "3",
                          "place": "scatter", "site": "1:ncpus=1+1:ncpus=1"},
        "schedselect": "1:ncpus=1+2:ncpus=1",
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


def start_job(c, tmp_path, resize_body, alarm=30):
    c.hook("launch", "execjob_launch", LAUNCH_HOOK)
    c.hook("resize", "execjob_resize", resize_body, alarm=alarm)
    c.start()
    reply = wire.request(c.addresses["moma"], wire.MOM_PORT,
                         {"op": "run_job", "job": make_job(tmp_path), "vnodes": VNODES})
    assert reply == {"ok": True}


def test_pp928_i9_primary_and_kept_sister_run_resize_with_pruned_job(cluster, tmp_path):
    c = cluster()
    start_job(c, tmp_path, LOGGING_RESIZE)
    c.server.wait_for("mom_job_obit")
    assert "mom_job_requeue" not in c.server.ops()
    pruned = "exec_vnode=(moma:ncpus=1)+(momb:ncpus=1) vnodes=moma,momb"
    assert "0008;pbs_python;Job;17.srv;resize on moma: %s" % pruned in c.log("moma")
    c.wait_log("momb", "0008;pbs_python;Job;17.srv;resize on momb: %s" % pruned)
    assert not any("resize on" in line for line in c.log("momc"))


def test_pp928_i9_sister_resize_reject_aborts_job_there_and_requeues(cluster, tmp_path):
    c = cluster()
    start_job(c, tmp_path, REJECT_ON_MOMB)
    requeue = c.server.wait_for("mom_job_requeue")
    assert requeue["reason"] == "execjob_resize hook rejected"
    assert requeue["rerun"] is True
    assert requeue["comment"] == "cgroup limits could not be updated"
    assert "mom_job_started" not in c.server.ops()
    log = c.log("momb")
    first = log.index("0100;pbs_mom;Hook;resize;\"execjob_resize\" request rejected by 'resize'")
    assert log[first + 1] == "0100;pbs_mom;Job;17.srv;cgroup limits could not be updated"
    assert "0100;pbs_mom;Job;17.srv;execjob_resize hook rejected request: cgroup limits could not be updated" in log
    assert "0008;pbs_mom;Job;17.srv;updated nodes info" not in log
    assert not os.path.exists(tmp_path / "STDIN.o17")


def test_pp928_i9_primary_resize_exception_requeues(cluster, tmp_path):
    c = cluster()
    start_job(c, tmp_path, RAISE_ON_MOMA)
    requeue = c.server.wait_for("mom_job_requeue")
    message = "execjob_resize hook 'resize' encountered an exception, request rejected"
    assert requeue["comment"] == message and requeue["reason"] == "execjob_resize hook rejected"
    log = c.log("moma")
    first = log.index("0100;pbs_mom;Hook;resize;\"execjob_resize\" request rejected by 'resize'")
    assert log[first + 1] == "0100;pbs_mom;Job;17.srv;" + message
    assert "mom_job_started" not in c.server.ops()


def test_pp928_i9_primary_resize_alarm_requeues(cluster, tmp_path):
    c = cluster()
    start_job(c, tmp_path, ALARM_ON_MOMA, alarm=2)
    requeue = c.server.wait_for("mom_job_requeue")
    message = "alarm call while running execjob_resize hook 'resize', request rejected"
    assert requeue["comment"] == message
    assert "0100;pbs_mom;Job;17.srv;" + message in c.log("moma")
