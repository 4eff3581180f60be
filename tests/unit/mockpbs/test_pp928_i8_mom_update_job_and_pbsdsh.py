"""PP-928 interface 8, mom side: after release_nodes() the primary updates the kept sisters
(``update_job``, 5 s wait), released sisters drop the job, PBS_NODEFILE is rewritten, and
``pbsdsh -n I`` runs on the I-th node of the pruned job (in-process moms)."""
import io
import os
import pwd
import time

import pytest

from mockpbs import wire
from mockpbs.mom import tm
from mockpbs.mom.inprocess import MomCluster

LAUNCH_HOOK = '''import pbs
e = pbs.event()
j = e.job
if "PBS_NODEFILE" in e.env and j.in_ms_mom():
    if j.release_nodes(keep_select=j.Resource_List["site"]) is None:
        e.reject("unsuccessful at LAUNCH")
e.accept()
'''
SLOW_RESIZE_ON_MOMB = '''import pbs, time
if pbs.get_local_nodename() == "momb":
    time.sleep(8)
pbs.event().accept()
'''
VNODES = {name: {"host": name, "resources_available": {"ncpus": "2", "host": name, "vnode": name}}
          for name in ("moma", "momb", "momc")}


def make_job(workdir, script):
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
        "script": script,
        "Output_Path": "srv:%s" % (workdir / "STDIN.o17"), "Error_Path": "srv:%s" % (workdir / "STDIN.e17"),
        "Join_Path": "n",
    }


# The job saves its environment, then waits until the test is done with it.
WAITING_SCRIPT = 'env > "$PBS_O_WORKDIR/job.env"\nwhile [ ! -e "$PBS_O_WORKDIR/done" ]; do sleep 0.1; done\n'


@pytest.fixture
def cluster(tmp_path):
    made = []

    def make(**kwargs):
        c = MomCluster(tmp_path, **kwargs)
        made.append(c)
        return c

    yield make
    (tmp_path / "done").write_text("")
    for c in made:
        c.close()


def run(c, job):
    assert wire.request(c.addresses["moma"], wire.MOM_PORT,
                        {"op": "run_job", "job": job, "vnodes": VNODES}) == {"ok": True}


def job_env(tmp_path, c):
    c.server.wait_for("mom_job_started")
    path = tmp_path / "job.env"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if path.exists() and "PBS_JOBCOOKIE=" in path.read_text():
            break
        time.sleep(0.1)
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def pbsdsh(c, env, *argv):
    out, err = io.StringIO(), io.StringIO()
    code = tm.pbsdsh_main(list(argv), env=env, resolve=c.resolve, prog="pbsdsh", out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_pp928_i8_kept_sister_updated_released_sister_drops_job_and_nodefile_rewritten(cluster, tmp_path):
    c = cluster()
    c.hook("launch", "execjob_launch", LAUNCH_HOOK)
    c.start()
    run(c, make_job(tmp_path, WAITING_SCRIPT))
    update = c.server.wait_for("mom_job_update")
    assert update["exec_vnode"] == "(moma:ncpus=1)+(momb:ncpus=1)"
    env = job_env(tmp_path, c)
    c.wait_log("momb", "0008;pbs_mom;Job;17.srv;updated nodes info")
    c.wait_log("momc", "0008;pbs_mom;Job;17.srv;DELETE_JOB2 received")
    assert "0008;pbs_mom;Job;17.srv;updated nodes info" not in c.log("momc")
    with open(env["PBS_NODEFILE"]) as handle:
        assert handle.read() == "moma\nmomb\n"
    assert "0100;pbs_mom;Job;17.srv;not all job updates to sister moms completed" not in c.log("moma")
    # The released sister no longer runs tasks of the job; the kept one does.
    spawn = {"op": "spawn_task", "jobid": "17.srv", "cookie": env["PBS_JOBCOOKIE"], "argv": ["true"], "node": 2}
    assert wire.request(c.addresses["momc"], wire.IM_PORT, spawn)["ok"] is False
    assert wire.request(c.addresses["momb"], wire.IM_PORT, dict(spawn, node=1))["ok"] is True


def test_pp928_i8_pbsdsh_runs_on_the_nth_node_of_the_pruned_job(cluster, tmp_path):
    c = cluster()
    c.hook("launch", "execjob_launch", LAUNCH_HOOK)
    c.start()
    run(c, make_job(tmp_path, WAITING_SCRIPT))
    env = job_env(tmp_path, c)
    c.wait_log("momb", "0008;pbs_mom;Job;17.srv;updated nodes info")

    assert pbsdsh(c, env, "-n", "0", "echo", "on-zero") == (0, "on-zero\n", "")
    assert "0080;pbs_mom;Job;17.srv;task spawn: echo on-zero" in c.log("moma")

    code, out, err = pbsdsh(c, env, "-n", "1", "--", "sh", "-c", "echo out; echo err >&2; exit 3")
    assert (code, out, err) == (0, "out\npbsdsh: task 0x00000000 exit status 3\n", "err\n")
    assert "0080;pbs_mom;Job;17.srv;task spawn: sh -c echo out; echo err >&2; exit 3" in c.log("momb")
    assert not any("task spawn" in line for line in c.log("momc"))

    # pbsdsh.c: node = index % number of nodes, so -n past the end wraps around.
    assert pbsdsh(c, env, "-n", "2", "echo", "wrapped") == (0, "wrapped\n", "")
    assert "0080;pbs_mom;Job;17.srv;task spawn: echo wrapped" in c.log("moma")
    assert pbsdsh(c, env, "echo", "all") == (0, "all\nall\n", "")


def test_pp928_i8_pbsdsh_usage_and_environment_errors(cluster, tmp_path):
    c = cluster(names=("moma",))
    code, out, err = pbsdsh(c, {}, "-n", "-1", "hostname")
    assert code == 1 and out == ""
    assert err.startswith("Usage: pbsdsh [-c copies][-s][-v][-o] -- program [args...]\n")
    assert pbsdsh(c, {}, "-n", "1", "-c", "2", "hostname")[0] == 1
    assert pbsdsh(c, {}, "hostname") == (1, "", "pbsdsh: not executing under PBS\n")
    assert pbsdsh(c, {"PBS_ENVIRONMENT": "PBS_BATCH"}, "hostname") == (
        1, "", "pbsdsh: tm_init failed, rc = TM_EBADENVIRONMENT (17005)\n")
    c.start()
    env = {"PBS_ENVIRONMENT": "PBS_BATCH", "PBS_JOBID": "99.srv", "PBS_JOBCOOKIE": "x",
           "PBS_NODEFILE": str(tmp_path / "none")}
    c.addresses[os.uname().nodename.split(".")[0]] = c.addresses["moma"]
    assert pbsdsh(c, env, "hostname") == (1, "", "pbsdsh: tm_init failed, rc = TM_ESYSTEM (17000)\n")


def test_pp928_i8_slow_sister_update_logs_not_all_job_updates_completed(cluster, tmp_path):
    c = cluster()
    c.hook("launch", "execjob_launch", LAUNCH_HOOK)
    c.hook("slowresize", "execjob_resize", SLOW_RESIZE_ON_MOMB)
    c.start()
    run(c, make_job(tmp_path, "true\n"))
    c.server.wait_for("mom_job_obit")
    log = c.log("moma")
    assert log.index("0100;pbs_mom;Job;17.srv;not all job updates to sister moms completed") < \
        log.index(next(line for line in log if line.startswith("0008;pbs_mom;Job;17.srv;Started, pid = ")))
    c.wait_log("momb", "0008;pbs_mom;Job;17.srv;updated nodes info")
