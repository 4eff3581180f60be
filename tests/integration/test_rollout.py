"""playbooks/rollout.yml on the mock cluster, with the faults of issue 8 point 4.

Every test runs the real ``ansible-playbook`` over SSH against one 4-mom cluster (module
scope) and then looks at the cluster itself: node state and comment on the server
(``qmgr list node``), ``mom_priv/config`` and the mom logs. Each test rolls out its own
tunable values, so that the mom log lines it counts are its own.

The tests before the health gate's run without a canary batch (``rollout_canary_hosts=0``)
and without the gate (``--skip-tags health_gate``, through ``ANSIBLE_SKIP_TAGS``): the
gate costs a few module calls per batch, which CI's time budget cannot give to every
rollout here; the health gate tests at the end run the playbook as a site runs it.
"""
import json
import os
import re
import signal
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import polling  # noqa: E402  pylint: disable=wrong-import-position

pytestmark = [pytest.mark.integration, pytest.mark.cluster_moms(4)]

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROLLOUT = os.path.join(REPO, "playbooks", "rollout.yml")
QMGR = "/opt/pbs/bin/qmgr"
PBS_HOME = "/var/spool/pbs"
SERVER = "pbs-server"
MOMS = ["mom1", "mom2", "mom3", "mom4"]
RECAP_RE = re.compile(r"^(\S+)\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M)
WAIT_LIMIT = 90  # seconds a test waits for the cluster to reach a state before giving up


# ------------------------------------------------------------------ helpers (also used by test_audit)

def ansible_env(tmp_root):
    """Environment for ansible-playbook: the repo's ansible.cfg, and the collection importable
    as hpc.pbs (``make collection``'s link, else a link made under ``tmp_root``)."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_FORCE_COLOR="0",
               ANSIBLE_NOCOLOR="1", PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    if not os.path.isdir(os.path.join(REPO, "build", "collections", "ansible_collections", "hpc", "pbs")):
        link_dir = os.path.join(str(tmp_root), "collections", "ansible_collections", "hpc")
        os.makedirs(link_dir, exist_ok=True)
        link = os.path.join(link_dir, "pbs")
        if not os.path.islink(link):
            os.symlink(REPO, link)
        env["ANSIBLE_COLLECTIONS_PATH"] = os.path.join(str(tmp_root), "collections")
    return env


def playbook_argv(inventory, playbook, extra_vars, *more):
    return [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", inventory, playbook,
            "-e", json.dumps(extra_vars)] + list(more)


def run_playbook(cluster, env, playbook, extra_vars, *more):
    """Run a playbook to its end: ``(rc, output, {host: recap counts})``."""
    proc = subprocess.run(playbook_argv(cluster.inventory, playbook, extra_vars, *more), cwd=REPO, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL,
                          timeout=600, check=False)
    return proc.returncode, proc.stdout, recap(proc.stdout)


def recap(output):
    return {m.group(1): {"ok": int(m.group(2)), "changed": int(m.group(3)), "unreachable": int(m.group(4)),
                         "failed": int(m.group(5))} for m in RECAP_RE.finditer(output)}


def node_attributes(cluster, node):
    """``qmgr list node`` on the server as a dict (attribute -> text).

    qmgr wraps a long value after a comma as ``,`` + newline + tab and drops the blanks
    that followed that comma; a wrapped line is joined back with the one blank PBS puts
    after a comma (``jobs = 1.s/0, 1.s/1``, and the rollout's comments)."""
    out = cluster.exec(SERVER, [QMGR, "-c", "list node %s" % node], check=True).stdout
    joined = re.sub(r",\n\t", ", ", out)
    return dict(line.strip().split(" = ", 1) for line in joined.splitlines()[1:] if " = " in line)


def mom_log_count(cluster, mom, option, value):
    """How often ``mom`` logged ``option;value`` (one line per load of the config)."""
    out = cluster.exec(mom, ["sh", "-c", "cat %s/mom_logs/*" % PBS_HOME], check=True).stdout
    return sum(1 for line in out.splitlines() if line.endswith(";%s;%s" % (option, value)))


def mom_config_lines(cluster, mom, option):
    out = cluster.exec(mom, ["cat", "%s/mom_priv/config" % PBS_HOME], check=True).stdout
    return [line for line in out.splitlines() if line.split()[:1] == ["$" + option]]


def wait_until(predicate, what, limit=WAIT_LIMIT):
    """:func:`polling.wait_for` with this module's limit."""
    return polling.wait_for(predicate, limit, what)


class BackgroundPlaybook:
    """ansible-playbook running in its own session, its output collected line by line."""

    def __init__(self, argv, env):
        self.proc = subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, text=True, start_new_session=True)
        self.lines = []

    def read_until(self, pattern):
        """Read output until a line matches ``pattern``; fail if the playbook ends first."""
        for line in self.proc.stdout:
            self.lines.append(line)
            if re.search(pattern, line):
                return line
        raise AssertionError("playbook ended before %r:\n%s" % (pattern, "".join(self.lines)))

    def interrupt(self, presses=3, grace=10):
        """Ctrl-C, as an admin would, pressed again while ansible-playbook has not stopped after
        ``grace`` seconds: ansible-core drops a SIGINT that arrives while it forks a worker (its
        handler's KeyboardInterrupt is raised in logging's at-fork hook, where Python ignores it)."""
        for _press in range(presses):
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.lines.append(self.proc.communicate(timeout=grace)[0])
                return
            except subprocess.TimeoutExpired:
                continue
        os.killpg(self.proc.pid, signal.SIGTERM)  # ansible-core passes it on to its workers
        try:
            self.proc.communicate(timeout=grace)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
        raise AssertionError("ansible-playbook still ran after %d Ctrl-C:\n%s" % (presses, "".join(self.lines)))

    def finish(self):
        if self.proc.returncode is None:
            self.lines.append(self.proc.communicate(timeout=600)[0])
        output = "".join(self.lines)
        return self.proc.returncode, output, recap(output)


def rollout_vars(value, **more):
    extra = {"mom_tunables_job_launch_delay": value, "mom_tunables_sister_join_job_alarm": value,
             "rollout_batch_size": 2, "rollout_drain_poll": 1, "rollout_reload_timeout": 20,
             "rollout_canary_hosts": 0}
    extra.update(more)
    return extra


SCHEMA = os.path.join(REPO, "roles", "rollout", "files", "report.schema.json")


def read_report(path):
    """The rollout's JSON report at ``path``, checked against the schema the role ships."""
    import jsonschema  # the controller's dependency (hpc.pbs.json_schema_errors)
    with open(path) as handle:
        report = json.load(handle)
    with open(SCHEMA) as handle:
        jsonschema.Draft202012Validator(json.load(handle)).validate(report)
    return report


def assert_report_run(report, cluster, check_mode=False):
    """The run metadata of ``report``: this controller, this inventory, ended after it started."""
    run = report["run"]
    assert run["inventory"] == [os.path.abspath(cluster.inventory)], run
    assert run["check_mode"] is check_mode and run["user"] and run["controller_host"], run
    assert run["ansible_core_version"][:1].isdigit() and run["collection_version"][:1].isdigit(), run
    assert run["started"] <= run["ended"], run
    assert report["rollout_id"].startswith("rjs-"), report["rollout_id"]


def assert_done(cluster, mom, value):
    attrs = node_attributes(cluster, mom)
    assert "offline" not in attrs["state"].split(","), (mom, attrs)
    assert "comment" not in attrs, (mom, attrs)
    assert mom_config_lines(cluster, mom, "job_launch_delay") == ["$job_launch_delay %d" % value]
    assert mom_config_lines(cluster, mom, "sister_join_job_alarm") == ["$sister_join_job_alarm %d" % value]
    assert mom_log_count(cluster, mom, "job_launch_delay", value) >= 1
    assert mom_log_count(cluster, mom, "sister_join_job_alarm", value) >= 1


@pytest.fixture(scope="module")
def gate_env(tmp_path_factory):
    """The environment of a site's run: every part of the playbook, the health gate too."""
    return ansible_env(tmp_path_factory.mktemp("ansible"))


@pytest.fixture(scope="module")
def env(gate_env):
    """The environment of the tests that do not look at the health gate: without it."""
    return dict(gate_env, ANSIBLE_SKIP_TAGS="health_gate")


# ------------------------------------------------------------------ tests

def test_qmgr_failure_on_server_stops_before_any_mom_is_touched(pbs_cluster, env):
    rc, out, counts = run_playbook(pbs_cluster, env, ROLLOUT,
                                   rollout_vars(11, pbs_sched_attributes={"no_such_attribute": 1}))
    assert rc != 0, out
    assert counts["pbs-server"]["failed"] == 1, out
    assert "Undefined attribute" in out   # PBS error 15002, as real OpenPBS answers
    assert "PLAY [Roll out to the moms batch by batch]" not in out
    for mom in MOMS:
        assert mom not in counts, out  # not one task ran on a mom
        attrs = node_attributes(pbs_cluster, mom)
        assert attrs["state"] == "free" and "comment" not in attrs, (mom, attrs)
        assert mom_config_lines(pbs_cluster, mom, "job_launch_delay") == []
        assert mom_log_count(pbs_cluster, mom, "job_launch_delay", 11) == 0


def test_ssh_connection_dropped_mid_task(pbs_cluster, env):
    cluster = pbs_cluster
    # A frozen mom never logs its values, so mom_config waits on mom2 (up to the reload
    # timeout) after writing the file: the task is then mid-way for certain.
    cluster.stop_mom("mom2", freeze=True)
    try:
        run = BackgroundPlaybook(playbook_argv(cluster.inventory, ROLLOUT,
                                               rollout_vars(13, rollout_reload_timeout=60,
                                                            rollout_max_fail_percentage=50)), env)
        wait_until(lambda: mom_config_lines(cluster, "mom2", "job_launch_delay") == ["$job_launch_delay 13"],
                   "mom_config to write mom2's config")
        listener = cluster.exec("mom2", ["cat", "/run/sshd.pid"], check=True).stdout.strip()
        killed = cluster.exec("mom2", ["pkill", "-KILL", "-P", listener])
        assert killed.returncode == 0, "no SSH session to mom2 to drop: %s" % killed.stderr
    finally:
        cluster.start_mom("mom2")
    rc, out, counts = run.finish()

    assert rc != 0, out
    assert "Batch 1 summary: done 1 (mom1), failed 1 (mom2)" in out, out
    mom2 = node_attributes(cluster, "mom2")
    assert "offline" in mom2["state"].split(","), mom2
    assert "SSH connection to mom2 dropped" in mom2["comment"], (mom2, out)
    for mom in ("mom1", "mom3", "mom4"):
        assert_done(cluster, mom, 13)

    rc, out, counts = run_playbook(cluster, env, ROLLOUT, rollout_vars(13))
    assert rc == 0, out
    assert_done(cluster, "mom2", 13)
    assert "mom2: done" in out


def test_mom_killed_mid_batch_fails_only_that_host(pbs_cluster, env, tmp_path):
    cluster = pbs_cluster
    # Runs after test_ssh_connection_dropped_mid_task: the mock server only knows a node's
    # ncpus (and schedules jobs there) once its mom has been reloaded.
    release = "/home/pbsuser/release-drain-%d" % os.getpid()
    # A job on mom4 holds batch 2 (mom3, mom4) in its drain wait, with mom3 already offline
    # and not yet changed: the moment to kill mom3's pbs_mom.
    script = "while [ ! -e %s ]; do sleep 0.2; done\n" % release
    jobid = cluster.exec(SERVER, ["/opt/pbs/bin/qsub", "-l", "select=1:ncpus=1:host=mom4"], user="pbsuser",
                         input=script, check=True).stdout.strip()
    wait_until(lambda: "jobs" in node_attributes(cluster, "mom4"), "job %s running on mom4" % jobid)

    # This run writes its report and, as for a large site, a recap without one line per mom.
    report_path = str(tmp_path / "rollout-report.json")
    run = BackgroundPlaybook(playbook_argv(cluster.inventory, ROLLOUT,
                                           rollout_vars(12, rollout_drain=True, rollout_max_fail_percentage=50,
                                                        rollout_report_path=report_path,
                                                        rollout_recap_list_moms=0)), env)
    run.read_until(r'"Batch 2: mom3, mom4')
    wait_until(lambda: node_attributes(cluster, "mom3").get("comment", "").startswith("hpc.pbs rollout ")
               and "offline" in node_attributes(cluster, "mom3")["state"], "mom3 offline by the rollout")
    cluster.stop_mom("mom3")
    cluster.exec(SERVER, ["touch", release], user="pbsuser", check=True)
    rc, out, counts = run.finish()

    assert rc != 0, out
    assert "Batch 2 summary: done 1 (mom4), failed 1 (mom3), skipped 0" in out
    assert re.search(r"mom3 \(Check that pbs_mom took the new values: pbs_mom is not running on mom3", out), out
    mom3 = node_attributes(cluster, "mom3")
    assert "offline" in mom3["state"].split(","), mom3
    assert mom3["comment"].startswith("hpc.pbs rollout rjs-"), mom3
    assert "failed: Check that pbs_mom took the new values: pbs_mom is not running" in mom3["comment"]
    for mom in ("mom1", "mom2", "mom4"):
        assert_done(cluster, mom, 12)
    # The recap: the totals and only mom3, the mom that needs a person; the report: every mom.
    assert re.search(r"Rollout rjs-[0-9a-f]+: 4 moms: done 3, already done 0, failed 1, left offline 0, "
                     r"not reached 0", out), out
    assert "mom3: failed, still offline: Check that pbs_mom took the new values: pbs_mom is not running" in out, out
    for mom in ("mom1", "mom2", "mom4"):
        assert "%s: done" % mom not in out, out
    report = read_report(report_path)
    assert_report_run(report, cluster)
    assert report["totals"] == {"moms": 4, "done": 3, "already_done": 0, "failed": 1, "left_offline": 0,
                                "not_reached": 0}, report["totals"]
    assert report["settings"]["drain"] is True and report["settings"]["sister_join_job_alarm"] == 12, report
    assert report["stopped"] is None and report["health_gate"] == [], report  # the gate's tag is skipped
    assert report["moms"]["mom3"]["outcome"] == "failed" and report["moms"]["mom3"]["batch"] == 2, report
    assert "pbs_mom is not running" in report["moms"]["mom3"]["reason"], report
    assert [report["moms"][mom]["batch"] for mom in MOMS] == [1, 1, 2, 2], report
    for mom in MOMS:
        entry = report["moms"][mom]
        assert entry["node"] == mom and entry["started"] <= entry["ended"] and entry["seconds"] >= 0, entry
        assert entry["outcome"] == ("failed" if mom == "mom3" else "done"), entry

    # The site fixes mom3 and runs the same rollout again: only mom3 is done this time.
    cluster.start_mom("mom3")
    wait_until(lambda: "down" not in node_attributes(cluster, "mom3")["state"], "mom3 up again")
    rc, out, counts = run_playbook(cluster, env, ROLLOUT, rollout_vars(12, rollout_drain=True))
    assert rc == 0, out
    assert_done(cluster, "mom3", 12)
    for mom in ("mom1", "mom2", "mom4"):
        assert counts[mom]["changed"] == 0, (mom, counts)
        assert "%s: skipped already done" % mom in out
        assert mom_log_count(cluster, mom, "job_launch_delay", 12) == 1


def test_interrupted_rollout_resumes_without_applying_twice(pbs_cluster, env):
    cluster = pbs_cluster
    # A job on mom3 holds batch 3 in its drain wait, mom3 offline: the moment of the Ctrl-C,
    # however long ansible-playbook takes to stop.
    release = "/home/pbsuser/release-interrupt-%d" % os.getpid()
    submit_held_job(cluster, "mom3", release, "interrupted")
    settings = rollout_vars(14, rollout_batch_size=1, rollout_drain=True)
    run = BackgroundPlaybook(playbook_argv(cluster.inventory, ROLLOUT, settings), env)
    run.read_until(r'"Batch 3: mom3')
    wait_until(lambda: node_attributes(cluster, "mom3").get("comment", "").startswith("hpc.pbs rollout ")
               and "offline" in node_attributes(cluster, "mom3")["state"], "mom3 offline by the rollout")
    run.interrupt()
    rc, out, _unused = run.finish()
    assert rc != 0, out
    assert "Batch 4" not in out
    assert mom_config_lines(cluster, "mom4", "job_launch_delay") != ["$job_launch_delay 14"]

    cluster.exec(SERVER, ["touch", release], user="pbsuser", check=True)
    wait_until(lambda: "jobs" not in node_attributes(cluster, "mom3"), "the job on mom3 ended")
    rc, out, counts = run_playbook(cluster, env, ROLLOUT, settings)
    assert rc == 0, out
    for mom in MOMS:
        assert_done(cluster, mom, 14)
    for mom in ("mom1", "mom2"):
        assert "%s: skipped already done" % mom in out
        assert counts[mom]["changed"] == 0, (mom, counts)
        assert mom_log_count(cluster, mom, "job_launch_delay", 14) == 1
        assert mom_log_count(cluster, mom, "sister_join_job_alarm", 14) == 1
    assert "mom3: done" in out and "mom4: done" in out
    assert mom_log_count(cluster, "mom4", "job_launch_delay", 14) == 1


def test_warns_below_hook_alarm_sum_and_second_run_changes_nothing(pbs_cluster, env):
    cluster = pbs_cluster
    cluster.exec(SERVER, [QMGR], input="create hook slow_begin\nset hook slow_begin event = execjob_begin\n"
                                       "set hook slow_begin alarm = 45\nset hook slow_begin enabled = true\n",
                 check=True)
    try:
        rc, out, counts = run_playbook(cluster, env, ROLLOUT, rollout_vars(15))
        assert rc == 0, out
        assert "WARNING: $sister_join_job_alarm = 15s is below 45s" in out
        assert "$job_launch_delay = 15s" not in out  # no execjob_prologue hook: nothing to warn
        rc, out, counts = run_playbook(cluster, env, ROLLOUT, rollout_vars(15))
        assert rc == 0, out
        assert all(c["changed"] == 0 for c in counts.values()), counts
    finally:
        cluster.exec(SERVER, [QMGR, "-c", "delete hook slow_begin"])


# ------------------------------------------------------------------ batches, jobs, drain, hook files
# These run after the tests above, on the same cluster (one rollout value each: 21, 22).

def hook_file(cluster, node, ext, priv):
    proc = cluster.exec(node, ["cat", "%s/%s/hooks/reliable_job_startup.%s" % (PBS_HOME, priv, ext)])
    return proc.stdout if proc.returncode == 0 else None


def wait_mom_up(cluster, mom):
    wait_until(lambda: "down" not in node_attributes(cluster, mom)["state"], "%s up on the server" % mom)


def submit_held_job(cluster, mom, release, output):
    """A job on ``mom`` that runs until ``release`` exists, then prints ``output``; its id once running."""
    script = "while [ ! -e %s ]; do sleep 0.2; done\necho %s\n" % (release, output)
    jobid = cluster.exec(SERVER, ["/opt/pbs/bin/qsub", "-l", "select=1:ncpus=1:host=%s" % mom], user="pbsuser",
                         input=script, check=True).stdout.strip()
    wait_until(lambda: jobid in node_attributes(cluster, mom).get("jobs", ""), "job %s running on %s" % (jobid, mom))
    return jobid


def job_output(cluster, jobid):
    proc = cluster.exec(SERVER, ["cat", "/home/pbsuser/STDIN.o%s" % jobid.split(".")[0]])
    return proc.stdout if proc.returncode == 0 else None


def test_max_fail_percentage_leaves_later_batches_untouched(pbs_cluster, env):
    cluster = pbs_cluster
    before = {mom: mom_config_lines(cluster, mom, "job_launch_delay") for mom in MOMS}
    cluster.stop_mom("mom1")
    try:
        rc, out, counts = run_playbook(cluster, env, ROLLOUT,
                                       rollout_vars(21, rollout_batch_size=1, rollout_max_fail_percentage=0))
    finally:
        cluster.start_mom("mom1")
    assert rc != 0, out
    assert "Batch 1 summary: done 0, failed 1 (mom1), skipped 0" in out, out
    stop = "1 of 1 hosts of batch 1 failed, more than rollout_max_fail_percentage=0%"
    assert "Stopped: %s" % stop in out, out
    mom1 = node_attributes(cluster, "mom1")
    assert "offline" in mom1["state"].split(","), mom1
    assert "failed: Check that pbs_mom took the new values: pbs_mom is not running" in mom1["comment"], mom1
    for number, mom in enumerate(MOMS[1:], start=2):
        assert '"Batch %d: %s (not started: %s)' % (number, mom, stop) in out, out
        assert "%s: skipped rollout stopped: %s" % (mom, stop) in out, out
        assert counts[mom]["changed"] == 0, (mom, counts)
        attrs = node_attributes(cluster, mom)
        assert attrs["state"] == "free" and "comment" not in attrs, (mom, attrs)  # never offlined
        assert mom_config_lines(cluster, mom, "job_launch_delay") == before[mom]
        assert mom_log_count(cluster, mom, "job_launch_delay", 21) == 0


def test_percentage_batches_and_a_running_job_survives_without_drain(pbs_cluster, env):
    cluster = pbs_cluster
    wait_mom_up(cluster, "mom1")  # left offline by the test above: this rollout resumes it
    release = "/home/pbsuser/release-nodrain-%d" % os.getpid()
    jobid = submit_held_job(cluster, "mom2", release, "survived-the-rollout")

    rc, out, counts = run_playbook(cluster, env, ROLLOUT, rollout_vars(22, rollout_batch_size="50%"))
    assert rc == 0, out
    assert '"Batch 1: mom1, mom2' in out and '"Batch 2: mom3, mom4' in out, out
    assert "Batch 3" not in out, out
    assert "Batch 1 summary: done 2 (mom1, mom2), failed 0, skipped 0" in out, out
    assert "Batch 2 summary: done 2 (mom3, mom4), failed 0, skipped 0" in out, out
    for mom in MOMS:
        assert_done(cluster, mom, 22)
    # mom2 reloaded (SIGHUP) while the job ran, and the job is still there ...
    assert jobid in node_attributes(cluster, "mom2").get("jobs", ""), node_attributes(cluster, "mom2")
    cluster.exec(SERVER, ["touch", release], user="pbsuser", check=True)
    # ... and completes with its output.
    output = wait_until(lambda: job_output(cluster, jobid), "output of job %s" % jobid)
    assert output.splitlines()[-1:] == ["survived-the-rollout"], output


def test_drain_timeout_and_hook_config_verified_on_every_mom(pbs_cluster, env):
    cluster = pbs_cluster
    release = "/home/pbsuser/release-drain-timeout-%d" % os.getpid()
    jobid = submit_held_job(cluster, "mom4", release, "drained-late")
    # mom3 misses the server's push of the new hook config while its pbs_mom is down; its
    # tunables are already 22, so only the hook files can tell that it is not done.
    cluster.stop_mom("mom3")
    # mom4's config drifted: it needs work, so the rollout drains it.
    cluster.exec("mom4", ["sed", "-i", "s/^\\$job_launch_delay 22$/$job_launch_delay 7/",
                          "%s/mom_priv/config" % PBS_HOME], check=True)
    settings = rollout_vars(22, rollout_drain=True, rollout_drain_timeout=2, rollout_hook_sync_timeout=3,
                            rollout_max_fail_percentage=100, reliable_job_startup_config={"increment": 2})
    try:
        rc, out, counts = run_playbook(cluster, env, ROLLOUT, settings)
    finally:
        cluster.start_mom("mom3")
    assert rc != 0, out
    server_cf = hook_file(cluster, SERVER, "CF", "server_priv")
    assert json.loads(server_cf)["increment"] == 2, server_cf
    # mom1 and mom2 got the new .CF from the server at once: the first look finds them
    # already done (checked file by file), so the batches take only mom3 and mom4.
    assert ("To roll out: mom3 (hook files differ: reliable_job_startup.CF); "
            "mom4 (mom config differs or is not loaded); already done: 2") in out, out
    assert "mom1: skipped already done" in out and "mom2: skipped already done" in out, out
    assert "Batch 1 summary: done 0, failed 2 (mom3, mom4), skipped 0" in out, out
    assert "Batch 2" not in out, out
    for mom in ("mom1", "mom2"):
        assert hook_file(cluster, mom, "CF", "mom_priv") == server_cf, mom
        assert_done(cluster, mom, 22)
    mom3 = node_attributes(cluster, "mom3")
    assert "offline" in mom3["state"].split(","), mom3
    assert ("failed: Check that the mom holds the server's hook files: hook files differ from the server's "
            "after 3s: reliable_job_startup.CF") in mom3["comment"], mom3
    mom4 = node_attributes(cluster, "mom4")
    assert "offline" in mom4["state"].split(","), mom4
    assert "failed: Check that the node drained: drain timed out after 2s, jobs still running: %s" % jobid \
        in mom4["comment"], mom4
    assert jobid in mom4.get("jobs", ""), mom4
    assert re.search(r"mom4: failed Check that the node drained: drain timed out after 2s", out), out

    # The job ends, mom3 is back (and gets the hooks in its hello): the re-run finishes both,
    # each only after its hook files match the server's.
    cluster.exec(SERVER, ["touch", release], user="pbsuser", check=True)
    wait_until(lambda: job_output(cluster, jobid), "output of job %s" % jobid)
    wait_mom_up(cluster, "mom3")
    rc, out, counts = run_playbook(cluster, env, ROLLOUT, settings)
    assert rc == 0, out
    assert "mom1: skipped already done" in out and "mom2: skipped already done" in out, out
    assert "mom3: done" in out and "mom4: done" in out, out
    for mom in MOMS:
        assert hook_file(cluster, mom, "CF", "mom_priv") == server_cf, mom
        assert hook_file(cluster, mom, "PY", "mom_priv") == hook_file(cluster, SERVER, "PY", "server_priv"), mom
        assert_done(cluster, mom, 22)


# ------------------------------------------------------------------ idempotence whichever variables set the values
# Runs last, on the same cluster (values 23, 24).

def rjs_vars(value, **more):
    """Rollout settings with the tunables given as reliable_job_startup_* (site.yml's variables)."""
    extra = {"reliable_job_startup_job_launch_delay": value, "reliable_job_startup_sister_join_job_alarm": value,
             "rollout_batch_size": 2, "rollout_drain_poll": 1, "rollout_reload_timeout": 20,
             "rollout_canary_hosts": 0}
    extra.update(more)
    return extra


def test_rerun_with_reliable_job_startup_vars_touches_no_host(pbs_cluster, env):
    cluster = pbs_cluster
    for mom in MOMS:
        wait_mom_up(cluster, mom)
    rc, out, counts = run_playbook(cluster, env, ROLLOUT, rjs_vars(23))
    assert rc == 0, out
    for mom in MOMS:
        assert_done(cluster, mom, 23)

    rc, out, counts = run_playbook(cluster, env, ROLLOUT, rjs_vars(23))
    assert rc == 0, out
    for mom in MOMS:
        assert counts[mom]["changed"] == 0, (mom, counts, out)
        assert "%s: skipped already done" % mom in out, out
        assert mom_log_count(cluster, mom, "job_launch_delay", 23) == 1  # not reloaded again
    # The offline/online tasks run delegated to the server but count for the mom: none changed.
    assert counts[SERVER]["changed"] == 0, (counts, out)
    # The server's read planned the hook: nothing to change, so its task did not run.
    hook_task = out.split("TASK [hpc.pbs.reliable_job_startup : Install the reliable_job_startup hook", 1)[1]
    assert hook_task.split("TASK [", 1)[0].count("skipping: [%s]" % SERVER) == 1, out


def test_check_mode_recap_says_would_be_done(pbs_cluster, env, tmp_path):
    cluster = pbs_cluster
    report_path = str(tmp_path / "check-report.json")
    rc, out, counts = run_playbook(cluster, env, ROLLOUT, rjs_vars(24, rollout_report_path=report_path), "--check")
    assert rc == 0, out
    report = read_report(report_path)  # the report is written in check mode too, and says so
    assert_report_run(report, cluster, check_mode=True)
    assert report["totals"]["done"] == 4 and report["settings"]["job_launch_delay"] == 24, report
    for mom in MOMS:
        assert "%s: would be done" % mom in out, out
        assert "%s: done" % mom not in out, out
        attrs = node_attributes(cluster, mom)
        assert attrs["state"] == "free" and "comment" not in attrs, (mom, attrs)
        assert mom_config_lines(cluster, mom, "job_launch_delay") == ["$job_launch_delay 23"]
    assert "Batch 1 summary: would be done 2 (mom1, mom2)" in out, out


def test_converged_cluster_runs_no_batch_and_only_a_stale_mom_is_rolled_out(pbs_cluster, gate_env):
    """The first look: after the two tests above every mom holds 23 and the server's hook
    files, so a site's run (canary batch, health gate) starts no batch at all; then one mom
    whose config drifted is the only one rolled out, as the canary, alone."""
    cluster = pbs_cluster
    settings = rjs_vars(23, rollout_canary_hosts=1)
    rc, out, counts = run_playbook(cluster, gate_env, ROLLOUT, settings)
    assert rc == 0, out
    assert "nothing to roll out, every mom is already done" in out, out
    assert "Count the batch]" not in out and '"Batch ' not in out, out  # no batch task ran
    for mom in MOMS:
        assert "%s: skipped already done" % mom in out, out
        assert counts[mom]["changed"] == 0, (mom, counts, out)
        assert mom_log_count(cluster, mom, "job_launch_delay", 23) == 1  # not reloaded

    cluster.exec("mom2", ["sed", "-i", "s/^\\$job_launch_delay 23$/$job_launch_delay 7/",
                          "%s/mom_priv/config" % PBS_HOME], check=True)
    rc, out, counts = run_playbook(cluster, gate_env, ROLLOUT, settings)
    assert rc == 0, out
    assert "To roll out: mom2 (mom config differs or is not loaded); already done: 3" in out, out
    order = [m.group(1) for m in re.finditer(r'"Batch (\d+ \(canary\)|\d+): ', out)]
    assert order == ["1 (canary)"], out
    assert '"Batch 1 (canary): mom2 ' in out, out
    assert "Batch 1 summary: done 1 (mom2), failed 0, skipped 0" in out, out
    assert "mom2: done" in out, out
    assert_done(cluster, "mom2", 23)
    for mom in ("mom1", "mom3", "mom4"):
        assert "%s: skipped already done" % mom in out, out
        assert counts[mom]["changed"] == 0, (mom, counts, out)
        assert mom_log_count(cluster, mom, "job_launch_delay", 23) == 1


# ------------------------------------------------------------------ health gate and canary batch

def test_pbsnodes_json_is_shaped_as_real_openpbs_prints_it(pbs_cluster):
    """What the health gate reads: ``pbsnodes -a -F json`` (and named, with an unknown
    name) on both backends, as OpenPBS 23.06's encode_to_json builds it."""
    cluster = pbs_cluster
    document = json.loads(cluster.exec(SERVER, ["/opt/pbs/bin/pbsnodes", "-a", "-F", "json"], check=True).stdout)
    assert list(document) == ["timestamp", "pbs_version", "pbs_server", "nodes"]
    assert isinstance(document["timestamp"], int) and document["pbs_server"] == SERVER
    assert sorted(document["nodes"]) == MOMS
    for name, node in document["nodes"].items():
        text = node_attributes(cluster, name)
        assert node["state"] == text["state"] and node.get("comment") == text.get("comment"), (node, text)
        assert node["Port"] == 15002 and isinstance(node["resources_available"]["ncpus"], int)
        assert all(value not in (0, "0", "0kb") for value in node["resources_assigned"].values()), node
        assert isinstance(node["last_state_change_time"], int)
    named = cluster.exec(SERVER, ["/opt/pbs/bin/pbsnodes", "-F", "json", "mom1", "nosuch"])
    assert named.returncode == 0, named.stderr
    assert json.loads(named.stdout)["nodes"]["nosuch"] == {"nosuch": "Unknown node "}
    assert list(json.loads(named.stdout)["nodes"]) == ["mom1", "nosuch"]


# Run last, on the same cluster (values 25, 26), as a site runs the playbook: canary batch
# and health gate by default. The problem appears while the canary batch drains mom1 (a
# job holds it, after the gate's first look and before its second): deterministic.

def node_problem_during_canary(cluster, gate_env, settings, make_problem, tag):
    """Run the rollout with ``settings`` (drain on, canary mom1 holding a job) and call
    ``make_problem()`` while the canary batch waits for mom1 to drain; ``(rc, output)``."""
    release = "/home/pbsuser/release-gate-%s-%d" % (tag, os.getpid())
    jobid = submit_held_job(cluster, "mom1", release, "gate-%s" % tag)
    run = BackgroundPlaybook(playbook_argv(cluster.inventory, ROLLOUT, settings), gate_env)
    try:
        run.read_until(r'"Batch 1 \(canary\): mom1')
        wait_until(lambda: node_attributes(cluster, "mom1").get("comment", "").startswith("hpc.pbs rollout ")
                   and "offline" in node_attributes(cluster, "mom1")["state"], "mom1 offline by the rollout")
        make_problem()
    finally:
        cluster.exec(SERVER, ["touch", release], user="pbsuser", check=True)
    rc, out, _unused = run.finish()
    wait_until(lambda: job_output(cluster, jobid), "output of job %s" % jobid)
    return rc, out


def test_health_gate_stops_before_the_next_batch_and_names_the_vnode(pbs_cluster, gate_env, tmp_path):
    cluster = pbs_cluster
    before = {mom: mom_config_lines(cluster, mom, "job_launch_delay") for mom in MOMS}

    def stop_mom3():
        cluster.stop_mom("mom3")
        wait_until(lambda: "down" in node_attributes(cluster, "mom3")["state"], "mom3 down on the server")

    report_path = str(tmp_path / "gate-report.json")
    settings = rollout_vars(25, rollout_canary_hosts=1, rollout_drain=True, rollout_report_path=report_path)
    try:
        rc, out = node_problem_during_canary(cluster, gate_env, settings, stop_mom3, "stop")
    finally:
        cluster.start_mom("mom3")
    assert rc != 0, out
    assert "Batch 1 summary: done 1 (mom1), failed 0, skipped 0" in out, out
    seen = re.search(r"Health gate after batch 1: 1 new problem\(s\) \(at most 0 allowed\): (vnode mom3 is [^\"]*)",
                     out)
    assert seen and "down" in seen.group(1), out
    stop = "health gate after batch 1: 1 new problem(s), more than rollout_health_max_new_problems=0: vnode mom3 is"
    assert '"Batch 2: mom2, mom3 (not started: %s' % stop in out, out
    assert re.search(r"Rollout rjs-[0-9a-f]+: Stopped: %s" % re.escape(stop), out), out  # no host failed
    assert_done(cluster, "mom1", 25)
    for mom in ("mom2", "mom4"):  # never touched
        assert "%s: skipped rollout stopped: %s" % (mom, stop) in out, out
        attrs = node_attributes(cluster, mom)
        assert attrs["state"] == "free" and "comment" not in attrs, (mom, attrs)
        assert mom_config_lines(cluster, mom, "job_launch_delay") == before[mom]
        assert mom_log_count(cluster, mom, "job_launch_delay", 25) == 0
    # The report holds the gate's finding and the stop; the moms not reached are said so.
    report = read_report(report_path)
    assert_report_run(report, cluster)
    assert report["stopped"].startswith(stop), report["stopped"]
    assert [(f["batch"], f["allowed"], [p["name"] for p in f["new_problems"]]) for f in report["health_gate"]] \
        == [(1, 0, ["mom3"])], report["health_gate"]
    assert "down" in report["health_gate"][0]["new_problems"][0]["detail"], report["health_gate"]
    assert report["moms"]["mom1"]["outcome"] == "done" and report["moms"]["mom1"]["batch"] == 1, report
    for mom in ("mom2", "mom3", "mom4"):
        assert report["moms"][mom]["outcome"] == "not reached", report["moms"][mom]
        assert report["moms"][mom]["reason"].startswith("rollout stopped: "), report["moms"][mom]
    assert re.search(r"Rollout rjs-[0-9a-f]+: 4 moms: done 1, already done 0, failed 0, left offline 0, "
                     r"not reached 3", out), out
    wait_mom_up(cluster, "mom3")


def test_health_gate_threshold_lets_one_new_problem_pass(pbs_cluster, gate_env, pbs_backend):
    if pbs_backend != "mock":
        pytest.skip("CI time: the gate's stop is checked on real OpenPBS, its threshold on the mock")
    cluster = pbs_cluster
    mark = [QMGR, "-c", "set node mom3 comment = 'disk check by ops'"]
    settings = rollout_vars(26, rollout_canary_hosts=1, rollout_batch_size=3, rollout_drain=True,
                            rollout_health_max_new_problems=1)
    try:
        rc, out = node_problem_during_canary(
            cluster, gate_env, settings,
            lambda: [cluster.exec(SERVER, argv, check=True) for argv in (
                mark, [QMGR, "-c", "set node mom3 state += offline"])], "threshold")
    finally:
        cluster.exec(SERVER, [QMGR, "-c", "set node mom3 state -= offline"], check=True)
        cluster.exec(SERVER, [QMGR, "-c", "unset node mom3 comment"], check=True)
    assert rc == 0, out
    order = [m.group(1) for m in re.finditer(r'"Batch (\d+ \(canary\)|\d+): ', out)]
    assert order == ["1 (canary)", "2"], out
    assert '"Batch 1 (canary): mom1 ' in out and '"Batch 2: mom2, mom3, mom4 ' in out, out
    assert ("Health gate after batch 1: 1 new problem(s) (at most 1 allowed): vnode mom3 is offline "
            "(comment: disk check by ops)") in out, out
    assert "Health gate after batch 2: 0 new problem(s)" in out, out
    assert "mom3: done left offline: it was offline before the rollout" in out, out
    for mom in ("mom1", "mom2", "mom4"):
        assert_done(cluster, mom, 26)
    # The recap's totals count mom3 as left offline, and name it as a mom that needs a person.
    assert re.search(r"Rollout rjs-[0-9a-f]+: 4 moms: done 3, already done 0, failed 0, left offline 1, "
                     r"not reached 0", out), out
    assert "mom3: left offline: it was offline before the rollout" in out, out
