"""Hostile and mistaken input through ``ansible-playbook`` (issue 12 item 8), and faults.

Inputs: the cases of ``hostile/cases.yml`` (a table: module task, role with bad variables, or
playbook with bad extra vars). Every case must be refused (the task fails, reports nothing
changed), with a message naming what is wrong and what is accepted (the case's ``expect``
texts), and the cluster must be unchanged: a snapshot before and after (server attributes
``qmgr -c 'print server'``, the scheduler, ``list hook``/``list pbshook`` and every hook's
exported body and config, node states, every mom's config file and pid with the pid alive,
and whether ``qsub`` still works) must be identical.

Cost: the task cases of a backend run as blocks of generated playbooks (one per host, run
at the same time) between one snapshot before and one after; a refused case that changed
something shows in that snapshot's diff, and every test of the run names the cases it
shared the run with. Playbook cases run one ``ansible-playbook`` each, three at a time,
between one pair of snapshots (a case of a known bug alone). Module cases of ``hpc.pbs.qmgr``/``hook``/``mom_config`` also run
on the real OpenPBS backend; the roles' and playbooks' own checks run on the mock only.

Faults (mock backend, ``playbooks/site.yml``): an interrupt between mom_config's write and
the handler's reload (a callback plugin of ``hostile/`` freezes the controller right after
the write, then the test sends SIGINT), a mom frozen, a mom stopped and a node's sshd stopped
in one run, then two runs at once as its re-run. Each asserts what was done, that nothing
was lost, and that a re-run converges.
"""
import concurrent.futures
import functools
import json
import os
import re
import shlex
import sys

import pytest
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pbsjobs  # noqa: E402
from test_rollout import (QMGR, REPO, SERVER, BackgroundPlaybook, ansible_env,  # noqa: E402
                          mom_log_count, playbook_argv, run_playbook, wait_until)

pytestmark = [pytest.mark.integration, pytest.mark.cluster_moms(4)]

HERE = os.path.dirname(os.path.abspath(__file__))
CASE_DIR = os.path.join(HERE, "hostile")
# Each table file runs as its own playbook (a table of work in progress apart from the rest).
CASE_FILES = ("cases.yml",)
MOMS = ("mom1", "mom2", "mom3", "mom4")
PBS_HOME = "/var/spool/pbs"
PBS_BIN = os.path.dirname(QMGR)
SITE = os.path.join(REPO, "playbooks", "site.yml")
MOM_TASK = "Set $job_launch_delay and $sister_join_job_alarm in mom_priv/config"
# Lines of a qmgr/pbsnodes listing that change on their own (job counts, times, licenses).
VOLATILE = re.compile(r"^\s*(state_count|total_jobs|last_state_change_time|last_used_time|"
                      r"resources_assigned\.\w+|license_count|jobs|pcpus|server_state|"
                      r"sched_cycle_length) = ")


# ------------------------------------------------------------------ the case table

def load_cases():
    """Every case of the table files present: ``[{id, file, expect, backends, host,
    task|playbook, extra_vars}]`` (``backends`` default ``["mock"]``, ``host`` default the
    server, ``file`` the table it came from)."""
    cases = []
    for name in CASE_FILES:
        path = os.path.join(CASE_DIR, name)
        if os.path.exists(path):
            with open(path) as handle:
                cases.extend(yaml.safe_load(handle) or [])
            for case in cases:
                case.setdefault("file", name)
    for case in cases:
        case.setdefault("backends", ["mock"])
        case.setdefault("host", SERVER)
    ids = [case["id"] for case in cases]
    assert len(ids) == len(set(ids)), "duplicate case ids in %s" % CASE_DIR
    return cases


CASES = load_cases()
TASK_CASES = [case for case in CASES if "task" in case]
PLAYBOOK_CASES = [case for case in CASES if "playbook" in case]


def case_param(case):
    """The case as a pytest param: its id; a ``known_bug`` (text) makes it a strict xfail,
    so the suite shows the bug and turns red the day it is fixed."""
    marks = [pytest.mark.xfail(strict=True, reason=case["known_bug"])] if case.get("known_bug") else []
    return pytest.param(case, id=case["id"], marks=marks)


def on_backend(case, backend):
    if backend not in case["backends"]:
        pytest.skip("case %s runs on %s only" % (case["id"], ", ".join(case["backends"])))


# ------------------------------------------------------------------ snapshots

def server_snapshot_script():
    """Shell text printing the server's state: attributes, scheduler, hooks with their
    exported body and config, nodes (volatile lines are dropped by the caller)."""
    qmgr = shlex.quote(QMGR)
    return "\n".join([
        "for c in 'print server' 'list sched default' 'list hook' 'list pbshook'; do",
        "  echo \"\\$ $c\"; %s -c \"$c\" 2>&1; echo \"rc $?\"; done" % qmgr,
        "for h in $(%s -c 'list hook' 2>/dev/null | sed -n 's/^Hook //p'); do" % qmgr,
        "  for t in application/x-python application/x-config; do",
        "    echo \"\\$ export hook $h $t\"; %s -c \"export hook $h $t default\" 2>&1;" % qmgr,
        "    echo \"rc $?\"; done; done",
        "echo '$ pbsnodes -av'; %s/pbsnodes -av 2>&1" % PBS_BIN,
    ])


def mom_snapshot_script():
    lock = "%s/mom_priv/mom.lock" % PBS_HOME
    return ("cat %s/mom_priv/config; echo '$ pid'; pid=$(cat %s | head -n1); echo \"$pid\"; "
            "kill -0 \"$pid\" && echo alive" % (PBS_HOME, lock))


def qsub_works(cluster):
    """Whether pbsuser can submit a job; ``(ok, qsub's stderr)``. The job is deleted and
    waited for until the server forgets it (so no later listing shows it)."""
    job = cluster.exec(SERVER, ["%s/qsub" % PBS_BIN, "--", "/bin/true"], user="pbsuser")
    if job.returncode == 0:
        jobid = job.stdout.strip()
        cluster.exec(SERVER, ["%s/qdel" % PBS_BIN, "-W", "force", jobid])
        wait_until(lambda: cluster.exec(SERVER, ["%s/qstat" % PBS_BIN, jobid]).returncode != 0,
                   "job %s to leave the server" % jobid)
    return job.returncode == 0, job.stderr.strip()


def snapshot(cluster):
    """``{part: text}`` of the server and every mom, read in parallel (one ``cluster exec``
    each), then the qsub check (its job, deleted at once, must not be in the listings)."""
    reads = {SERVER: lambda: cluster.exec(SERVER, ["sh", "-c", server_snapshot_script()]).stdout}
    for mom in MOMS:
        reads[mom] = functools.partial(
            lambda node: cluster.exec(node, ["sh", "-c", mom_snapshot_script()]).stdout, mom)
    with concurrent.futures.ThreadPoolExecutor(len(reads)) as pool:
        futures = {part: pool.submit(read) for part, read in reads.items()}
        parts = {part: future.result() for part, future in futures.items()}
    parts = {part: "".join(line for line in text.replace(",\n\t", ",").splitlines(True)
                           if not VOLATILE.match(line)) for part, text in parts.items()}
    parts["qsub"] = "qsub works: %s (%s)" % qsub_works(cluster)
    return parts


def snapshot_diff(before, after):
    """Text naming each part that changed, with the lines that differ; empty when equal."""
    out = []
    for part in sorted(before):
        if before[part] != after.get(part):
            old, new = before[part].splitlines(), after.get(part, "").splitlines()
            out.append("%s changed:\n  - %s\n  + %s" % (
                part, "\n  - ".join(l for l in old if l not in new),
                "\n  + ".join(l for l in new if l not in old)))
    return "\n".join(out)


# ------------------------------------------------------------------ running the cases

def case_block(case, results_var="hostile_results"):
    """The block running ``case``'s task on its host and recording how it ended in the
    fact ``hostile_results[id]``: ``{failed, changed, msg}``."""
    record = "{{ %s | default({}) | combine({%r: %%s}) }}" % (results_var, case["id"])
    task = dict(case["task"], name="case %s" % case["id"], register="hostile_case_result")
    return {
        "name": "block %s" % case["id"],
        "block": [
            task,
            {"ansible.builtin.set_fact": {results_var: record % (
                "{'failed': false, 'changed': hostile_case_result.changed | default(false),"
                " 'msg': hostile_case_result.msg | default('')}")}},
        ],
        "rescue": [
            {"ansible.builtin.set_fact": {results_var: record % (
                "{'failed': true, 'changed': ansible_failed_result.changed | default(false),"
                " 'msg': ansible_failed_result.msg | default(ansible_failed_result | to_json)}")}},
        ],
    }


def hostile_playbook(host, cases, results_dir):
    """The play running ``host``'s cases and writing ``<results_dir>/<host>.json``."""
    tasks = [case_block(case) for case in cases if case["host"] == host]
    tasks.append({"name": "Write the results", "delegate_to": "localhost",
                  "ansible.builtin.copy": {
                      "content": "{{ hostile_results | default({}) | to_json }}",
                      "dest": os.path.join(str(results_dir), "%s.json" % host)}})
    return [{"name": "Hostile inputs on %s" % host, "hosts": host, "gather_facts": False,
             "tasks": tasks}]


def failure_messages(output):
    """The ``msg`` of every ``fatal:``/``failed:`` result in ansible-playbook's output."""
    messages = []
    for match in re.finditer(r"^(?:fatal|failed): \[[^\]]+\].*?=> (\{.*\})$", output, re.M):
        try:
            messages.append(str(json.loads(match.group(1)).get("msg", match.group(1))))
        except ValueError:
            messages.append(match.group(1))
    return messages


def missing_texts(message, expect):
    return [text for text in expect if text not in message]


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return ansible_env(tmp_path_factory.mktemp("ansible"))


@pytest.fixture(scope="module")
def prepared(pbs_cluster):
    """The cluster with the targets the injections aim at: the bundled hook installed."""
    pbsjobs.install_bundled_hook(pbs_cluster)
    return pbs_cluster


def run_task_cases(cluster, env, cases, work):
    """``cases`` between two snapshots, one ansible-playbook per host run at the same time
    (a playbook per host also keeps a role's ``run_once`` failure with its host):
    ``{"results": {id: {failed, changed, msg}}, "diff", "rcs": {host: rc}, "ids", "before",
    "outputs": {host: path}}``."""
    hosts = sorted({case["host"] for case in cases})
    for host in hosts:
        (work / ("%s.yml" % host)).write_text(json.dumps(hostile_playbook(host, cases, work), indent=1))
    before = snapshot(cluster)

    def run(host):
        rc, output, _unused = run_playbook(cluster, env, str(work / ("%s.yml" % host)), {})
        (work / ("%s.out" % host)).write_text(output)
        return rc
    with concurrent.futures.ThreadPoolExecutor(len(hosts)) as pool:
        rcs = dict(zip(hosts, pool.map(run, hosts)))
    after = snapshot(cluster)
    results = {}
    for host in hosts:
        result_file = work / ("%s.json" % host)
        if result_file.exists():
            results.update(json.loads(result_file.read_text()))
    return {"results": results, "diff": snapshot_diff(before, after), "rcs": rcs, "before": before,
            "ids": [case["id"] for case in cases],
            "outputs": {host: str(work / ("%s.out" % host)) for host in hosts}}


@pytest.fixture(scope="module")
def task_run(prepared, pbs_backend, env, tmp_path_factory):
    """``task_run(case)``: the run of the task cases of ``case``'s table file on this
    backend (made on first use, one per file, so cases of work in progress never share a
    snapshot with the others)."""
    runs = {}

    def get(case):
        name = case["file"]
        if name not in runs:
            cases = [c for c in TASK_CASES if c["file"] == name and pbs_backend in c["backends"]]
            work = tmp_path_factory.mktemp("hostile-%s-%s" % (pbs_backend, name.split(".")[0]))
            runs[name] = run_task_cases(prepared, env, cases, work)
        return runs[name]
    return get


def run_playbook_cases(cluster, env, cases, workers=3):
    """``cases`` (playbook cases) run ``workers`` at a time between two snapshots (each is
    refused before it changes anything, so they cannot disturb one another; one that changed
    something shows in the diff): ``{"runs": {id: (rc, output, counts)}, "diff", "ids",
    "before"}``."""
    before = snapshot(cluster)

    def run(case):
        return run_playbook(cluster, env, os.path.join(REPO, "playbooks", case["playbook"]),
                            case.get("extra_vars", {}))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        runs = dict(zip([case["id"] for case in cases], pool.map(run, cases)))
    return {"runs": runs, "diff": snapshot_diff(before, snapshot(cluster)), "before": before,
            "ids": [case["id"] for case in cases]}


@pytest.fixture(scope="module")
def playbook_run(prepared, pbs_backend, env):
    """``playbook_run(case)``: the run of the playbook cases of this backend sharing
    ``case``'s group (cases of a known bug change the cluster, so each runs alone)."""
    groups = {}

    def get(case):
        key = case["id"] if case.get("known_bug") else ""
        if key not in groups:
            cases = [c for c in PLAYBOOK_CASES if pbs_backend in c["backends"]
                     and (c["id"] if c.get("known_bug") else "") == key]
            groups[key] = run_playbook_cases(prepared, env, cases)
        return groups[key]
    return get


@pytest.mark.parametrize("case", [case_param(c) for c in PLAYBOOK_CASES])
def test_playbook_case_is_refused_saying_why_and_changes_nothing(playbook_run, pbs_backend, case):
    on_backend(case, pbs_backend)
    group = playbook_run(case)
    rc, output, counts = group["runs"][case["id"]]
    assert "qsub works: True" in group["before"]["qsub"], group["before"]["qsub"]
    assert rc != 0, "case %s was not refused:\n%s" % (case["id"], output[-4000:])
    messages = failure_messages(output)
    assert any(not missing_texts(m, case["expect"]) for m in messages), (
        "case %s: no failure message holds %s: %s" % (case["id"], case["expect"], messages))
    assert all(c["changed"] == 0 for c in counts.values()), "case %s changed: %s" % (case["id"], counts)
    assert not group["diff"], ("case %s ran with %s; the cluster changed:\n%s"
                               % (case["id"], ", ".join(group["ids"]), group["diff"]))


@pytest.mark.parametrize("case", [case_param(c) for c in TASK_CASES])
def test_task_case_is_refused_saying_why_and_changes_nothing(task_run, pbs_backend, case):
    on_backend(case, pbs_backend)
    run = task_run(case)
    output = run["outputs"][case["host"]]
    assert run["rcs"][case["host"]] == 0, "the hostile playbook itself failed, see %s" % output
    result = run["results"].get(case["id"])
    assert result is not None, "case %s left no result; see %s" % (case["id"], output)
    assert result["failed"], "case %s was not refused: %s" % (case["id"], result)
    assert not result["changed"], "case %s reported a change: %s" % (case["id"], result)
    missing = missing_texts(result["msg"], case["expect"])
    assert not missing, "case %s: the message lacks %s: %s" % (case["id"], missing, result["msg"])
    assert "qsub works: True" in run["before"]["qsub"], run["before"]["qsub"]
    assert not run["diff"], ("case %s ran with %s; the cluster changed:\n%s"
                             % (case["id"], ", ".join(run["ids"]), run["diff"]))


# ------------------------------------------------------------------ faults (mock backend)

def site_vars(seconds):
    return {"reliable_job_startup_job_launch_delay": seconds,
            "reliable_job_startup_sister_join_job_alarm": seconds}


def mock_only(backend):
    if backend != "mock":
        pytest.skip("faults are injected on the mock backend (frozen, stopped moms, sshd, controller)")


def mom_has_file(cluster, mom, seconds):
    text = cluster.exec(mom, ["cat", "%s/mom_priv/config" % PBS_HOME], check=True).stdout
    return all("$%s %d" % (option, seconds) in text.splitlines()
               for option in ("job_launch_delay", "sister_join_job_alarm"))


def mom_runs(cluster, mom, seconds):
    """Whether ``mom``'s pbs_mom logged both values (it loaded them at a start or reload)."""
    return all(mom_log_count(cluster, mom, option, seconds) >= 1
               for option in ("job_launch_delay", "sister_join_job_alarm"))


def assert_converged(cluster, seconds, moms=MOMS):
    """Every mom of ``moms`` has the values in its file and has loaded them."""
    wrong = [mom for mom in moms if not (mom_has_file(cluster, mom, seconds) and mom_runs(cluster, mom, seconds))]
    assert not wrong, "moms without $job_launch_delay/$sister_join_job_alarm %d in effect: %s" % (seconds, wrong)


def host_failures(output, host):
    """The failure messages ansible-playbook printed for ``host``."""
    return [m for line, m in zip(re.findall(r"^(?:fatal|failed): \[([^\]]+)\]", output, re.M),
                                 failure_messages(output)) if line.startswith(host)]


@pytest.fixture(scope="module")
def freeze_env(env, tmp_path_factory):
    """``env`` plus the callback that freezes the controller after mom_config's write."""
    marker = str(tmp_path_factory.mktemp("freeze") / "frozen")
    return dict(env, ANSIBLE_CALLBACK_PLUGINS=os.path.join(CASE_DIR, "callback_plugins"),
                ANSIBLE_CALLBACKS_ENABLED="freeze_after_task", HOSTILE_FREEZE_TASK=MOM_TASK,
                HOSTILE_FREEZE_MARKER=marker), marker


def test_fault_interrupt_between_write_and_reload_converges_on_rerun(prepared, pbs_backend, env, freeze_env):
    mock_only(pbs_backend)
    cluster, (frozen_env, marker) = prepared, freeze_env
    run = BackgroundPlaybook(playbook_argv(cluster.inventory, SITE, site_vars(17)), frozen_env)
    wait_until(lambda: os.path.exists(marker), "the run to reach %r" % MOM_TASK)
    wait_until(lambda: all(mom_has_file(cluster, mom, 17) for mom in MOMS), "mom_config to write every mom")
    run.interrupt()
    rc, out, _unused = run.finish()
    assert rc != 0, out
    assert "RUNNING HANDLER" not in out, out
    assert not any(mom_runs(cluster, mom, 17) for mom in MOMS), "a mom was reloaded before the interrupt"

    rc, out, counts = run_playbook(cluster, env, SITE, site_vars(17))
    assert rc == 0, out
    assert_converged(cluster, 17)
    assert all(counts[mom]["changed"] >= 1 for mom in MOMS), ("the reload is a change", counts)


def restart_sshd(cluster, node):
    proc = cluster.exec(node, ["/usr/sbin/sshd", "-f", "/etc/ssh/sshd_config", "-E", "/tmp/sshd-restarted.log"])
    assert proc.returncode == 0, proc.stderr
    wait_until(lambda: cluster.ssh(node, "true").returncode == 0, "sshd of %s to answer" % node)


def stop_sshd(cluster, node):
    """Stop the sshd of ``node``: its listener and every session it started (by pid)."""
    listener = cluster.exec(node, ["cat", "/run/sshd.pid"], check=True).stdout.strip()
    cluster.exec(node, ["pkill", "-TERM", "-P", listener])
    cluster.exec(node, ["kill", "-TERM", listener], check=True)
    wait_until(lambda: cluster.ssh(node, "true").returncode != 0, "sshd of %s to stop" % node)


def test_fault_frozen_stopped_unreachable_moms_then_two_runs_at_once_converge(prepared, pbs_backend, env):
    """site.yml with mom1 frozen (SIGSTOP), mom2's pbs_mom stopped, mom3's sshd stopped and
    mom4 healthy fails for the three saying why and does mom4; once they are back, two
    site.yml started at once both succeed and every mom runs the values."""
    mock_only(pbs_backend)
    cluster = prepared
    cluster.stop_mom("mom1", freeze=True)
    cluster.stop_mom("mom2")
    stop_sshd(cluster, "mom3")
    try:
        rc, out, counts = run_playbook(cluster, env, SITE, site_vars(18))
    finally:
        cluster.start_mom("mom1")
        cluster.start_mom("mom2")
        restart_sshd(cluster, "mom3")
    assert rc != 0, out
    assert_converged(cluster, 18, moms=["mom4"])
    assert counts["mom3"]["unreachable"] == 1, counts
    frozen, stopped = host_failures(out, "mom1"), host_failures(out, "mom2")
    # The handler found the file already written (by the run's earlier task) and says so.
    assert any("did not log job_launch_delay;18" in m and "was not changed by this task: it already held"
               in m for m in frozen), frozen
    assert any("pbs_mom is not running" in m and "take effect at its next start" in m for m in stopped), stopped
    assert not mom_has_file(cluster, "mom3", 18), "mom3 was unreachable, yet its file changed"

    # The re-run: two site.yml at once (an admin and a cron job); both succeed, nothing is lost.
    runs = [BackgroundPlaybook(playbook_argv(cluster.inventory, SITE, site_vars(18)), env) for _unused in range(2)]
    for rc, out, _unused in [run.finish() for run in runs]:
        assert rc == 0, out
    assert_converged(cluster, 18)
    hook = cluster.exec(SERVER, [QMGR, "-c", "list hook reliable_job_startup"], check=True).stdout
    assert "enabled = true" in hook and "queuejob" in hook and "execjob_launch" in hook, hook
    ok, error = qsub_works(cluster)
    assert ok, error
