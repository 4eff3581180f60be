"""Scheduler tuning of playbooks/site.yml (issue 7 point 4) on the mock cluster.

The real ``ansible-playbook`` runs site.yml over SSH; the tests then read the scheduler
with ``qmgr list sched default`` on the server. The fallback path needs a PBS whose
scheduler does not know ``job_run_wait``: the test installs, next to the mock's PBS, a
second ``PBS_EXEC`` whose ``bin/qmgr`` answers as OpenPBS answers a named object's
attribute its server does not know (``qmgr obj=default svr=default: Undefined attribute``,
``qmgr: Error (15002) returned from server``; exit 154 under ``-c``, 2 under ``-a``, as
measured on the openpbs backend) and hands everything else to the mock's qmgr. Only the role under
test is pointed at it (``sched_tuning_pbs_conf_file``).
"""
import json
import os
import re
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.cluster_moms(2)]

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SITE = os.path.join(REPO, "playbooks", "site.yml")
SERVER = "pbs-server"
QMGR = "/opt/pbs/bin/qmgr"
OLD_PBS = "/var/spool/old-pbs-exec"
OLD_QMGR = r'''#!/usr/bin/python3
import os, subprocess, sys
REAL = "/opt/pbs/bin/qmgr"
UNKNOWN = "job_run_wait"

def refuse(command):
    name = command.split()[2]
    sys.stderr.write("qmgr obj=%s svr=default: Undefined attribute \n"
                     "qmgr: Error (15002) returned from server\n" % name)

args = sys.argv[1:]
if "-c" in args:
    command = args[args.index("-c") + 1]
    if command.split()[:1] in (["set"], ["unset"]) and UNKNOWN in command:
        refuse(command)
        sys.exit(154)
    proc = subprocess.run([REAL] + args, capture_output=True, text=True)
    sys.stdout.write("".join(l + "\n" for l in proc.stdout.splitlines()
                             if l.split()[:1] != [UNKNOWN]))
    sys.stderr.write(proc.stderr)
    sys.exit(proc.returncode)
commands = sys.stdin.read().splitlines()
for number, command in enumerate(commands):
    if command.split()[:1] in (["set"], ["unset"]) and UNKNOWN in command:
        proc = subprocess.run([REAL] + args, input="".join(c + "\n" for c in commands[:number]),
                              capture_output=True, text=True)
        sys.stdout.write(proc.stdout)
        sys.stderr.write(proc.stderr)
        if proc.returncode:
            sys.exit(proc.returncode)
        refuse(command)
        sys.exit(2)
proc = subprocess.run([REAL] + args, input="".join(c + "\n" for c in commands),
                      capture_output=True, text=True)
sys.stdout.write(proc.stdout)
sys.stderr.write(proc.stderr)
sys.exit(proc.returncode)
'''


RECAP_RE = re.compile(r"^(\S+)\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+"
                      r"failed=(\d+)", re.M)


def ansible_env(tmp_root):
    """Environment for ansible-playbook: the repo's ansible.cfg and the checkout importable
    as hpc.pbs through a link under ``tmp_root``."""
    link_dir = os.path.join(str(tmp_root), "collections", "ansible_collections", "hpc")
    os.makedirs(link_dir, exist_ok=True)
    if not os.path.islink(os.path.join(link_dir, "pbs")):
        os.symlink(REPO, os.path.join(link_dir, "pbs"))
    return dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
                ANSIBLE_COLLECTIONS_PATH=os.path.join(str(tmp_root), "collections"),
                PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))


def run_playbook(cluster, env, playbook, extra_vars, *more, bindir=None):
    """Run a playbook to its end: ``(rc, output, {host: recap counts})``. ``bindir``: where
    the ``ansible-playbook`` to run lives (default: this Python's, the pinned ansible-core)."""
    argv = [os.path.join(bindir or os.path.dirname(sys.executable), "ansible-playbook"), "-i",
            cluster.inventory, playbook, "-e", json.dumps(extra_vars)] + list(more)
    proc = subprocess.run(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, text=True,
                          stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=600,
                          check=False)
    recap = dict((m.group(1), dict(ok=int(m.group(2)), changed=int(m.group(3)),
                                   unreachable=int(m.group(4)), failed=int(m.group(5))))
                 for m in RECAP_RE.finditer(proc.stdout))
    return proc.returncode, proc.stdout, recap


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return ansible_env(tmp_path_factory.mktemp("ansible"))


def sched(cluster):
    out = cluster.exec(SERVER, [QMGR, "-c", "list sched default"], check=True).stdout
    return dict(line.strip().split(" = ", 1) for line in out.splitlines()[1:] if " = " in line)


def server_task_outcome(output, task):
    """``changed``, ``ok``, ``skipping`` or ``failed`` of pbs-server under TASK [task]; None
    when the task did not run (the server left the play before it)."""
    if "TASK [%s]" % task not in output:
        return None
    block = output.split("TASK [%s]" % task, 1)[1].split("TASK [", 1)[0]
    return re.search(r"^(\w+): \[pbs-server\]", block, re.M).group(1)


def sched_task_changed(output, task):
    """Whether pbs-server is ``changed`` under TASK [hpc.pbs.sched_tuning : task]."""
    return server_task_outcome(output, "hpc.pbs.sched_tuning : " + task) == "changed"


HOOK_TASK = "hpc.pbs.reliable_job_startup : Install the reliable_job_startup hook with its config"
SCHED_TASK = "hpc.pbs.sched_tuning : Set job_run_wait of the scheduler"
PLAN_TASK = "Plan the hook and job_run_wait on the server, changing nothing"


def qmgr_value(cluster, object_name, attribute):
    out = cluster.exec(SERVER, [QMGR, "-c", "list %s %s" % (object_name, attribute)], check=True).stdout
    return out.split(" = ", 1)[1].strip()


def test_idempotent_run_plans_the_server_part_and_a_drift_is_put_back(pbs_cluster, env):
    """The server's part is planned in one read; its tasks run only for what drifted."""
    rc, out, recap = run_playbook(pbs_cluster, env, SITE, {})
    assert rc == 0, out
    rc, out, recap = run_playbook(pbs_cluster, env, SITE, {})
    assert rc == 0, out
    # Nothing planned: the server leaves the play after its plan, its tasks not even skipped.
    assert server_task_outcome(out, PLAN_TASK) == "ok", out
    assert server_task_outcome(out, HOOK_TASK) is None, out
    assert server_task_outcome(out, SCHED_TASK) is None, out
    assert recap[SERVER]["changed"] == 0, out

    # (drift, the task that must run, the other task's outcome, the object and attribute put back)
    for drift, fixed_by, other, (object_name, attribute, wanted) in (
            ("set sched default job_run_wait = none", SCHED_TASK, HOOK_TASK,
             ("sched default", "job_run_wait", "runjob_hook")),
            ("set hook reliable_job_startup order = 5", HOOK_TASK, SCHED_TASK,
             ("hook reliable_job_startup", "order", "1"))):
        pbs_cluster.exec(SERVER, [QMGR, "-c", drift], check=True)
        rc, out, recap = run_playbook(pbs_cluster, env, SITE, {})
        assert rc == 0, out
        assert server_task_outcome(out, fixed_by) == "changed", (drift, out)
        assert server_task_outcome(out, other) == "skipping", (drift, out)
        assert qmgr_value(pbs_cluster, object_name, attribute) == wanted, drift


def test_site_sets_job_run_wait_and_is_idempotent(pbs_cluster, env):
    rc, out, recap = run_playbook(pbs_cluster, env, SITE,
                                  {"sched_tuning_job_run_wait": "execjob_hook"})
    assert rc == 0, out
    attrs = sched(pbs_cluster)
    assert attrs["job_run_wait"] == "execjob_hook"
    assert attrs.get("throughput_mode") == "False"  # PBS's own link (transcript e)
    assert sched_task_changed(out, "Set job_run_wait of the scheduler")
    assert "WARNING: the scheduler of this PBS does not know" not in out

    rc, out, recap = run_playbook(pbs_cluster, env, SITE,
                                  {"sched_tuning_job_run_wait": "execjob_hook"})
    assert rc == 0, out
    assert not sched_task_changed(out, "Set job_run_wait of the scheduler")
    assert recap[SERVER]["changed"] == 0, out

    rc, out, recap = run_playbook(pbs_cluster, env, SITE, {"sched_tuning_job_run_wait": "none"})
    assert rc == 0, out
    attrs = sched(pbs_cluster)
    assert attrs["job_run_wait"] == "none" and "throughput_mode" not in attrs


def test_skipping_one_part_still_checks_and_runs_the_others(pbs_cluster, env):
    """--skip-tags of one part: the other parts' checks still know which hosts check them, so
    a bad value of theirs is refused and good values run to the end."""
    rc, out, recap = run_playbook(pbs_cluster, env, SITE, {"reliable_job_startup_job_launch_delay": 0},
                                  "--skip-tags", "scheduler")
    assert rc != 0, out
    assert "reliable_job_startup_job_launch_delay must be null or whole seconds >= 1" in out, out
    rc, out, recap = run_playbook(pbs_cluster, env, SITE, {}, "--skip-tags", "scheduler")
    assert rc == 0, out
    assert not any(counts["failed"] for counts in recap.values()), out
    assert SCHED_TASK not in out, out


def test_bad_value_is_refused_before_qmgr_runs(pbs_cluster, env):
    before = sched(pbs_cluster)
    rc, out, recap = run_playbook(pbs_cluster, env, SITE, {"sched_tuning_job_run_wait": "bogus"})
    assert rc != 0
    assert "sched_tuning_job_run_wait" in out and "bogus" in out
    assert sched(pbs_cluster) == before


def test_falls_back_to_throughput_mode_where_job_run_wait_is_unknown(pbs_cluster, env):
    cluster = pbs_cluster
    cluster.exec(SERVER, ["mkdir", "-p", OLD_PBS + "/bin"], check=True)
    # A whole installation: a real client authenticates with PBS_EXEC/sbin/pbs_iff of the
    # pbs.conf it is given.
    cluster.exec(SERVER, ["ln", "-sfn", "/opt/pbs/sbin", OLD_PBS + "/sbin"], check=True)
    cluster.exec(SERVER, ["sh", "-c", "cat > %s/bin/qmgr && chmod 755 %s/bin/qmgr"
                          % (OLD_PBS, OLD_PBS)], input=OLD_QMGR, check=True)
    cluster.exec(SERVER, ["sh", "-c", "sed 's|^PBS_EXEC=.*|PBS_EXEC=%s|' /etc/pbs.conf > "
                          "%s/pbs.conf" % (OLD_PBS, OLD_PBS)], check=True)
    cluster.exec(SERVER, [QMGR, "-c", "set sched throughput_mode = True"], check=True)
    rc, out, recap = run_playbook(cluster, env, SITE,
                                  {"sched_tuning_job_run_wait": "execjob_hook",
                                   "sched_tuning_pbs_conf_file": OLD_PBS + "/pbs.conf"})
    assert rc == 0, out
    assert "WARNING: the scheduler of this PBS does not know job_run_wait" in out
    assert "Undefined attribute" in out
    assert sched(cluster)["throughput_mode"] == "False"
    assert sched_task_changed(out, "Set throughput_mode of the scheduler instead")


def test_other_qmgr_errors_are_not_taken_for_an_old_pbs(pbs_cluster, env):
    rc, out, recap = run_playbook(pbs_cluster, env, SITE,
                                  {"sched_tuning_job_run_wait": "runjob_hook",
                                   "sched_tuning_sched_name": "nosuchsched"})
    assert rc != 0
    assert "does not exist" in out
    assert "TASK [hpc.pbs.sched_tuning : Set throughput_mode of the scheduler instead]" not in out
    assert recap[SERVER]["failed"] == 1
