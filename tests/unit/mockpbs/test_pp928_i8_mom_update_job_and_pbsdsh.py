"""PP-928 interface 8, mom side: after release_nodes() the primary updates the kept sisters
(``update_job``, 5 s wait), released sisters drop the job, PBS_NODEFILE is rewritten, and
``pbsdsh -n I`` runs on the I-th node of the pruned job (in-process moms)."""
import io
import os
import time

from mockpbs import wire
from mockpbs.mom import tm
from mockpbs.testing.mom import PRUNING_LAUNCH_HOOK

# momb's execjob_resize hook answers only once the test creates the release file (%s), so
# the primary's 5 s wait for the sister updates runs out first, whatever the machine's load.
SLOW_RESIZE_ON_MOMB = '''import os, pbs, time
if pbs.get_local_nodename() == "momb":
    deadline = time.time() + 60
    while not os.path.exists(%r) and time.time() < deadline:
        time.sleep(0.05)
pbs.event().accept()
'''
# The job saves its environment, then waits until the test is done with it.
WAITING_SCRIPT = 'env > "$PBS_O_WORKDIR/job.env"\nwhile [ ! -e "$PBS_O_WORKDIR/done" ]; do sleep 0.1; done\n'


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


def test_pp928_i8_kept_sister_updated_released_sister_drops_job_and_nodefile_rewritten(mom_cluster, tmp_path):
    c = mom_cluster()
    c.hook("launch", "execjob_launch", PRUNING_LAUNCH_HOOK)
    c.start()
    c.run_job(c.job(script=WAITING_SCRIPT))
    update = c.server.wait_for("mom_job_update")
    assert update["exec_vnode"] == "(moma:ncpus=1)+(momb:ncpus=1)"
    env = job_env(tmp_path, c)
    c.wait_log("momb", "0008;pbs_mom;Job;17.srv;updated nodes info")
    c.wait_log("momc", "0008;pbs_mom;Job;17.srv;DELETE_JOB2 received")
    assert "0008;pbs_mom;Job;17.srv;updated nodes info" not in c.log("momc")
    assert c.nodefile() == ["moma", "momb"]
    assert "0100;pbs_mom;Job;17.srv;not all job updates to sister moms completed" not in c.log("moma")
    # The released sister no longer runs tasks of the job; the kept one does.
    spawn = {"op": "spawn_task", "jobid": "17.srv", "cookie": env["PBS_JOBCOOKIE"], "argv": ["true"], "node": 2}
    assert wire.request(c.addresses["momc"], wire.IM_PORT, spawn)["ok"] is False
    assert wire.request(c.addresses["momb"], wire.IM_PORT, dict(spawn, node=1))["ok"] is True


def test_pp928_i8_pbsdsh_runs_on_the_nth_node_of_the_pruned_job(mom_cluster, tmp_path):
    c = mom_cluster()
    c.hook("launch", "execjob_launch", PRUNING_LAUNCH_HOOK)
    c.start()
    c.run_job(c.job(script=WAITING_SCRIPT))
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


def test_pp928_i8_pbsdsh_usage_and_environment_errors(mom_cluster, tmp_path):
    c = mom_cluster(names=("moma",))
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


def test_pp928_i8_slow_sister_update_logs_not_all_job_updates_completed(mom_cluster, tmp_path):
    c = mom_cluster()
    c.hook("launch", "execjob_launch", PRUNING_LAUNCH_HOOK)
    release = tmp_path / "release-resize"
    c.hook("slowresize", "execjob_resize", SLOW_RESIZE_ON_MOMB % str(release))
    c.start()
    c.run_job(c.job())
    c.wait_log("moma", "0100;pbs_mom;Job;17.srv;not all job updates to sister moms completed")
    release.touch()
    c.server.wait_for("mom_job_obit")
    log = c.log("moma")
    assert log.index("0100;pbs_mom;Job;17.srv;not all job updates to sister moms completed") < \
        log.index(next(line for line in log if line.startswith("0008;pbs_mom;Job;17.srv;Started, pid = ")))
    c.wait_log("momb", "0008;pbs_mom;Job;17.srv;updated nodes info")


TASK_LAUNCH = '''import pbs
e = pbs.event()
pbs.logjobmsg(e.job.id, "launch on %s: PBS_NODEFILE %s, progname %s" % (
    pbs.get_local_nodename(), "in env" if "PBS_NODEFILE" in e.env else "not in env", e.progname))
if e.progname == "false":
    e.reject("no false tasks")
'''


def test_pp928_i8_tasks_run_execjob_launch_hooks_without_pbs_nodefile(mom_cluster, tmp_path):
    c = mom_cluster()
    c.hook("launch", "execjob_launch", TASK_LAUNCH)
    c.start()
    c.run_job(c.job(script=WAITING_SCRIPT))
    env = job_env(tmp_path, c)
    assert any(line.startswith("0008;pbs_python;Job;17.srv;launch on moma: PBS_NODEFILE in env, progname /")
               for line in c.log("moma"))
    assert pbsdsh(c, env, "-n", "1", "echo", "task") == (0, "task\n", "")
    assert "0008;pbs_python;Job;17.srv;launch on momb: PBS_NODEFILE not in env, progname echo" in c.log("momb")
    assert pbsdsh(c, env, "-n", "0", "env")[1].count("PBS_NODEFILE=") == 0
    assert pbsdsh(c, env, "-n", "0", "false") == (0, "", "pbsdsh: spawn failed on node 0 err TM_ESYSTEM\n")
    assert "0100;pbs_mom;Hook;launch;execjob_launch request rejected by 'launch'" in c.log("moma")
