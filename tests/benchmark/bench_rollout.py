#!/usr/bin/env python
"""Cost of the playbooks on test clusters of several sizes and backends (issue 16 point 3).
Not a test: it measures and reports, it asserts nothing.

Usage::

    bench_rollout.py [--moms 8,32,64] [--mock-moms 128,256] [--backend mock,openpbs] [--repeat 3]
                     [--mock-repeat 1] [--workdir DIR] [--keep] [--json FILE] [--write-doc FILE]
                     [--scenario playbooks|rollout] [--tree DIR]

For each backend and each number of moms (``--moms``; on the mock also ``--mock-moms``: the
sizes the real backend's memory does not allow) it starts one cluster (``tests/integration/cluster
up --pbs BACKEND --moms N``; ``HPC_PBS_CLUSTER_NET`` / ``HPC_PBS_CLUSTER_DIR`` are honoured
as by the launcher), measures, and tears it down (unless ``--keep``: then only the last one
is left running, each next size reuses the work dir). The ``openpbs`` backend (a real
OpenPBS 23.06.06) is skipped, and the report says so, when its build is missing
(``tests/openpbs/build --where`` exits non-zero).

Runs, on each cluster, in this order:

- ``first run``: ``playbooks/site.yml`` on the fresh cluster;
- ``idempotent re-run``: site.yml again;
- ``rollout re-run``: ``playbooks/rollout.yml`` after site.yml, with no extra variables:
  its tunables default to the reliable-job-startup defaults site.yml applied, so there is
  nothing left to do;
- ``audit``: ``playbooks/audit.yml`` with ``audit_report_path`` in a temporary directory
  of the cluster (the same file every time, so an unchanged report is not a change);
- ``report``: ``playbooks/report.yml`` (the effectiveness report, on the server only) with
  ``report_json_path`` in the same directory;
- ``ping``: ``ansible all -m ansible.builtin.ping``;
- last, as it leaves the moms changed: ``rollout with work``: ``rollout.yml`` changing
  ``$sister_join_job_alarm`` on every mom (a new value each run; canary 1, batches of 25%).

Every timed run also records the controller's CPU: user + system of the whole process tree
(``getrusage`` of the finished children: ansible, its workers, the ssh clients) and of
Ansible's main process alone (its ``/proc/PID/stat`` sampled every 0.1 s; the main process
is the serial part: the strategy, the results, the callbacks).

With ``--scenario rollout`` (the rollout at scale) the runs are those of
``bench_report.ROLLOUT_RUNS`` instead, after one uncounted ``site.yml`` on the fresh cluster:
``ping``; ``rollout with work``: ``rollout.yml`` changing ``$sister_join_job_alarm`` on every
mom (a new value each run; canary 1, batches of 25%); ``rollout re-run``: the same again
(nothing to do); ``rollout with failures``: a new value with the first mom of every batch
stopped (``cluster stop-mom``), ``rollout_max_fail_percentage=100`` and a health gate that
lets the stopped moms pass, so every batch runs and fails one host (its moms are started
again after it). Each is run once counted (``-vvv``, which also gives the number of batches
and the controller's CPU time: user + system of ansible-playbook and its children, ssh
included) and ``--repeat`` times timed (work, ping, re-run, ping). ``--tree DIR`` runs the
playbooks and the collection of another checkout (for example a ``git worktree`` of the
commit before a change), so that before and after are measured by the same script.

Each run kind is run once counted (``-vvv``) and then, except the first run, ``--repeat``
times timed (without ``-v``; ``--mock-repeat`` times at the ``--mock-moms`` sizes, where a
run takes half a minute or more), each timed run followed by a ping (the pings' median is the
reference of the ratios). Every run gets a fresh ``ANSIBLE_SSH_CONTROL_PATH_DIR``, so each
pays for its connections. The first run's wall time is its counted run.

- **qmgr invocations**: in each node's own mount namespace (``cluster exec``), the real
  ``/opt/pbs/bin/qmgr`` is bind-mounted on ``/var/spool/hpc-pbs-bench/qmgr.real`` and a
  counting wrapper (one line per invocation into ``/var/spool/hpc-pbs-bench/qmgr-calls.log``,
  then ``exec qmgr.real``) is bind-mounted over ``/opt/pbs/bin/qmgr``. Both backends the
  same way: on ``openpbs`` the node's ``/opt/pbs`` is the cached OpenPBS build bind-mounted
  read-only, which must never be written; the node's ``/var/spool`` is its own copy under
  the cluster's work dir, and mounts made in a node's namespace are not seen outside it and
  end with the node. The server's log was not used: it records client requests, not qmgr
  processes, so a qmgr that only reads and a module's own batch requests would mix. A
  run's count is the number of lines it added, over all nodes (read on the host, from
  ``<workdir>/nodes/<node>/spool/``, which is the node's ``/var/spool``).
- **SSH round trips**: ``-vvv`` prints one ``<address> SSH: EXEC ssh ...`` line per ssh
  command the controller runs: one remote execution over the host's multiplexed
  connection, i.e. one round trip. Reported per host: on the server, and the moms' total
  divided by the number of moms.
- **changed**: the largest recap ``changed=`` sum over a kind's runs; the report flags the
  kinds that must change nothing (all but the first run) when it is not 0.

The report (markdown: machine, date, ansible-core, forks/pipelining, a table per backend,
the per-mom growth: least-squares slope of each median over the sizes) goes to stdout;
``--json`` writes everything, ``--write-doc`` replaces the section between
``<!-- bench:start -->`` and ``<!-- bench:end -->`` of that file (appended when absent).
Exit code 0 when every run succeeded, 1 otherwise.
"""
import argparse
import atexit
import datetime
import json
import os
import re
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_report  # noqa: E402  (the pure parts, unit-tested)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CLUSTER = os.path.join(REPO, "tests", "integration", "cluster")
OPENPBS_BUILD = os.path.join(REPO, "tests", "openpbs", "build")
ANSIBLE_CFG = os.path.join(REPO, "ansible.cfg")
PLAYBOOKS = dict((name, os.path.join(REPO, "playbooks", name))
                 for name in ("site.yml", "rollout.yml", "audit.yml"))
BIN = os.path.dirname(sys.executable)
BACKENDS = ("mock", "openpbs")
SERVER = "pbs-server"
QMGR = "/opt/pbs/bin/qmgr"
COUNT_DIR = "/var/spool/hpc-pbs-bench"
QMGR_LOG = COUNT_DIR + "/qmgr-calls.log"
COUNTING_QMGR = """#!/bin/sh
# hpc.pbs benchmark: count qmgr invocations, then run the real qmgr.
echo "$(date +%s.%N) $*" >> {log}
exec {dir}/qmgr.real "$@"
""".format(log=QMGR_LOG, dir=COUNT_DIR)
# Idempotent: a node already counting keeps its mounts and its log.
INSTALL_COUNTER = """set -e
mountpoint -q {dir}/qmgr.real 2>/dev/null && exit 0
mkdir -p {dir} && chmod 755 {dir}
cat > {dir}/qmgr.counting && chmod 755 {dir}/qmgr.counting
: > {log} && chmod 666 {log}
touch {dir}/qmgr.real
mount --bind {qmgr} {dir}/qmgr.real
mount --bind {dir}/qmgr.counting {qmgr}
""".format(dir=COUNT_DIR, log=QMGR_LOG, qmgr=QMGR)
EXEC_LINE = re.compile(r"^<([^>]+)> SSH: EXEC ", re.M)
RECAP_LINE = re.compile(r"^(\S+)\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+"
                        r"failed=(\d+)", re.M)


class BenchError(Exception):
    """A run or a cluster operation failed; the message says which and shows its output."""


# ------------------------------------------------------------------ cluster

def launcher(workdir, *args):
    """Run ``cluster ARGS --workdir WORKDIR``: its stdout. Raises BenchError."""
    proc = subprocess.run([sys.executable, CLUSTER] + list(args) + ["--workdir", workdir],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False)
    if proc.returncode != 0:
        raise BenchError("cluster %s failed (rc %d): %s"
                         % (" ".join(args), proc.returncode, proc.stderr[-3000:]))
    return proc.stdout


def node_exec(workdir, node, script, stdin=None):
    """``sh -c SCRIPT`` as root inside ``node``: its stdout. Raises BenchError."""
    proc = subprocess.run([sys.executable, CLUSTER, "exec", node, "--workdir", workdir, "--",
                           "sh", "-c", script], input=stdin, capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        raise BenchError("%s on %s failed: %s" % (script, node, proc.stderr))
    return proc.stdout


def install_qmgr_counters(workdir, nodes):
    """Put the counting qmgr in place on every node (module docstring)."""
    for node in nodes:
        node_exec(workdir, node, INSTALL_COUNTER, stdin=COUNTING_QMGR)


def qmgr_calls(workdir, nodes):
    """Number of qmgr invocations so far, summed over ``nodes``. Read from the host side:
    a node's ``/var/spool`` is ``<workdir>/nodes/<node>/spool`` (no ``cluster exec`` per
    node and count). Raises BenchError when a node has no counter."""
    total = 0
    for node in nodes:
        path = os.path.join(workdir, "nodes", node, "spool",
                            os.path.relpath(QMGR_LOG, "/var/spool"))
        try:
            with open(path) as handle:
                total += sum(1 for _line in handle)
        except OSError as exc:
            raise BenchError("no qmgr counter on %s: %s" % (node, exc))
    return total


def openpbs_missing():
    """None when the OpenPBS build is there, else why not (the build script's words)."""
    proc = subprocess.run([OPENPBS_BUILD, "--where"], capture_output=True, text=True,
                          check=False)
    if proc.returncode == 0:
        return None
    words = proc.stderr.strip().splitlines()
    return "the OpenPBS build is missing (tests/openpbs/build --where exited %d%s)" % (
        proc.returncode, ": " + words[-1] if words else "")


# ------------------------------------------------------------------ ansible runs

# The collection checkout whose playbooks and collection run (--tree; default this one).
TREE = {"root": REPO}


def ansible_env(control_dir):
    tree = TREE["root"]
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(tree, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_FORCE_COLOR="0", ANSIBLE_SSH_CONTROL_PATH_DIR=control_dir,
               PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    link = os.path.join(tree, "build", "collections", "ansible_collections", "hpc", "pbs")
    if tree != REPO or not os.path.isdir(link):
        env["ANSIBLE_COLLECTIONS_PATH"] = collections_path(tree)
    return env


def collections_path(tree):
    """A collections path whose hpc.pbs is ``tree``: made once per run, removed at exit."""
    if tree not in TREE_COLLECTIONS:
        root = tempfile.mkdtemp(prefix="hpc-pbs-bench-collections-")
        atexit.register(shutil.rmtree, root, True)
        os.makedirs(os.path.join(root, "ansible_collections", "hpc"))
        os.symlink(tree, os.path.join(root, "ansible_collections", "hpc", "pbs"))
        TREE_COLLECTIONS[tree] = root
    return TREE_COLLECTIONS[tree]


TREE_COLLECTIONS = {}


def playbook_path(name):
    """A playbook of the checkout that runs (``--tree``)."""
    return os.path.join(TREE["root"], "playbooks", name)


# The $sister_join_job_alarm of every "rollout with work": a new value each run.
WORK_VALUES = {"last": 100}


def run_argv(name, inventory, audit_dir):
    """The command line of run kind ``name`` (bench_report.RUNS). ``rollout with work`` takes
    the next value of WORK_VALUES at each call."""
    if name == "ping":
        return [os.path.join(BIN, "ansible"), "-i", inventory, "all", "-m",
                "ansible.builtin.ping"]
    if name == "rollout with work":
        WORK_VALUES["last"] += 1
        return rollout_argv(inventory, WORK_VALUES["last"])
    playbook = {"first run": "site.yml", "idempotent re-run": "site.yml",
                "rollout re-run": "rollout.yml", "audit": "audit.yml", "report": "report.yml"}[name]
    argv = [os.path.join(BIN, "ansible-playbook"), "-i", inventory, playbook_path(playbook)]
    if name == "audit":
        argv += ["-e", "audit_report_path=%s" % os.path.join(audit_dir, "audit-report.json")]
    if name == "report":
        argv += ["-e", "report_json_path=%s" % os.path.join(audit_dir, "report.json")]
    return argv


def children_cpu():
    """User + system CPU seconds of the finished children of this process so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def own_cpu(pid):
    """User + system CPU seconds of process ``pid`` itself (not its children), from
    ``/proc/PID/stat``; None once it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    # After the command's ")": state is field 3 of stat(5), utime 14 and stime 15.
    return (int(fields[11]) + int(fields[12])) / float(os.sysconf("SC_CLK_TCK"))


def run_sampling_main_cpu(argv, env):
    """``(CompletedProcess, main_cpu)``: run ``argv``, sampling the CPU of its own process
    (Ansible's main process: the strategy, the results, the callbacks, all serial) every
    0.1 s; ``main_cpu`` is the last sample (at most 0.1 s short)."""
    proc = subprocess.Popen(argv, cwd=TREE["root"], env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    samples = [0.0]
    done = threading.Event()

    def sample():
        while not done.wait(0.1):
            value = own_cpu(proc.pid)
            if value is not None:
                samples.append(value)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    output = proc.communicate()[0]
    done.set()
    sampler.join()
    return subprocess.CompletedProcess(argv, proc.returncode, output), samples[-1]


def timed_run(argv, may_fail=False, cpu=None, main_cpu=None):
    """Run argv with a fresh control directory: ``(output, seconds, changed)``.
    ``changed``: the recap's changed counts summed over the hosts (0 for ping). Raises
    BenchError when it fails (unless ``may_fail``: a rollout with failed hosts exits 2) or
    a host is unreachable. ``cpu``: a list that gets the run's controller CPU seconds (the
    whole process tree, ssh clients included); ``main_cpu``: one that gets the CPU seconds
    of Ansible's main process alone."""
    with tempfile.TemporaryDirectory(prefix="hpc-pbs-bench-cp-") as control_dir:
        start = time.monotonic()
        cpu_start = children_cpu()
        proc, main_seconds = run_sampling_main_cpu(argv, ansible_env(control_dir))
        seconds = time.monotonic() - start
        if cpu is not None:
            cpu.append(round(children_cpu() - cpu_start, 2))
        if main_cpu is not None:
            main_cpu.append(round(main_seconds, 2))
    if proc.returncode != 0 and not (may_fail and proc.returncode == 2):
        raise BenchError("%s failed (rc %d):\n%s" % (shlex.join(argv[1:]), proc.returncode,
                                                     proc.stdout[-3000:]))
    changed = sum(int(m.group(3)) for m in RECAP_LINE.finditer(proc.stdout))
    return proc.stdout, seconds, changed


def host_addresses(inventory):
    """``{address: "server" | "mom"}`` of the inventory's hosts (groups pbs_server,
    pbs_mom; the address is ansible_host, else the host name)."""
    proc = subprocess.run([os.path.join(BIN, "ansible-inventory"), "-i", inventory, "--list"],
                          env=ansible_env(tempfile.gettempdir()), capture_output=True,
                          text=True, check=True)
    data = json.loads(proc.stdout)
    hostvars = data.get("_meta", {}).get("hostvars", {})
    roles = {}
    for group, role in (("pbs_server", "server"), ("pbs_mom", "mom")):
        for host in data.get(group, {}).get("hosts", []):
            roles[hostvars.get(host, {}).get("ansible_host", host)] = role
    return roles


def round_trips_per_host(output, roles):
    """``{"server": trips per server, "mom": trips per mom}`` from a -vvv output."""
    trips = dict(server=0, mom=0)
    for address in EXEC_LINE.findall(output):
        if address in roles:
            trips[roles[address]] += 1
    hosts = dict((role, max(1, list(roles.values()).count(role))) for role in trips)
    return dict((role, trips[role] / hosts[role]) for role in trips)


def counted_run(name, workdir, nodes, inventory, audit_dir, roles):
    """One ``-vvv`` run of kind ``name``: ``{"seconds", "qmgr_invocations", "round_trips",
    "changed"}`` (seconds: the -vvv run's wall time)."""
    before = qmgr_calls(workdir, nodes)
    cpu, main_cpu = [], []
    output, seconds, changed = timed_run(run_argv(name, inventory, audit_dir) + ["-vvv"],
                                         cpu=cpu, main_cpu=main_cpu)
    return dict(counted_seconds=round(seconds, 2), counted_cpu_seconds=cpu[0],
                counted_main_cpu_seconds=main_cpu[0],
                qmgr_invocations=qmgr_calls(workdir, nodes) - before,
                round_trips=round_trips_per_host(output, roles), changed=changed)


def measure_cluster(workdir, inventory, moms, repeat, phases):
    """All runs on the running cluster of ``moms`` moms (``inventory``: its inventory
    file): ``{run name: run}`` (the shape of bench_report's module docstring). ``phases``
    gets the seconds each phase took. The kinds that must change nothing are counted and
    timed first; the rollout with work (which leaves the moms' alarm changed) comes last."""
    nodes = [SERVER] + ["mom%d" % i for i in range(1, moms + 1)]
    install_qmgr_counters(workdir, nodes)
    roles = host_addresses(inventory)
    runs = {}
    work = "rollout with work"
    with tempfile.TemporaryDirectory(prefix="hpc-pbs-bench-audit-") as audit_dir:

        def counted(name):
            start = time.monotonic()
            runs[name] = counted_run(name, workdir, nodes, inventory, audit_dir, roles)
            runs[name].update(seconds=[], cpu_seconds=[], main_cpu_seconds=[])
            phases["%s (-vvv)" % name] = round(time.monotonic() - start, 1)

        def timed(name):
            start = time.monotonic()
            for _round in range(repeat):
                for kind in (name, "ping"):
                    _out, seconds, changed = timed_run(run_argv(kind, inventory, audit_dir),
                                                       cpu=runs[kind]["cpu_seconds"],
                                                       main_cpu=runs[kind]["main_cpu_seconds"])
                    runs[kind]["seconds"].append(round(seconds, 2))
                    runs[kind]["changed"] = max(runs[kind]["changed"], changed)
            phases["%s + ping x%d" % (name, repeat)] = round(time.monotonic() - start, 1)

        for name in bench_report.RUNS:
            if name != work:
                counted(name)
        first = runs["first run"]
        first.update(seconds=[first["counted_seconds"]], cpu_seconds=[first["counted_cpu_seconds"]],
                     main_cpu_seconds=[first["counted_main_cpu_seconds"]])
        for name in bench_report.RUNS[1:-1]:
            if name != work:
                timed(name)
        counted(work)
        timed(work)
    return runs


# ------------------------------------------------------------------ the rollout at scale

BATCH_LINE = re.compile(r'"Batch (\d+)(?: \(canary\))?: ')


def rollout_argv(inventory, value, *extra):
    """rollout.yml changing $sister_join_job_alarm to ``value`` on every mom (canary 1,
    batches of 25%), with ``extra`` -e values."""
    extra_vars = dict(mom_tunables_sister_join_job_alarm=value, rollout_canary_hosts=1,
                      rollout_batch_size="25%")
    for item in extra:
        extra_vars.update(item)
    return [os.path.join(BIN, "ansible-playbook"), "-i", inventory, playbook_path("rollout.yml"),
            "-e", json.dumps(extra_vars)]


def failing_moms(moms):
    """The first mom of every batch of a rollout of all ``moms`` moms (canary 1, then
    batches of 25% of them, as Ansible's serial counts a percentage: at least 1)."""
    size = max(1, int(moms * 25 / 100.0))
    return ["mom1"] + ["mom%d" % first for first in range(2, moms + 1, size)]


def rollout_counted(argv, workdir, nodes, roles, may_fail=False):
    """One ``-vvv`` run: its measures (``bench_report.ROLLOUT_RUNS``' shape)."""
    before = qmgr_calls(workdir, nodes)
    cpu = []
    output, seconds, changed = timed_run(argv + ["-vvv"], may_fail=may_fail, cpu=cpu)
    return dict(counted_seconds=round(seconds, 2), seconds=[],
                qmgr_invocations=qmgr_calls(workdir, nodes) - before,
                round_trips=dict((role, round(value, 2)) if role == "mom" else (role, value)
                                 for role, value in round_trips_per_host(output, roles).items()),
                batches=len(set(BATCH_LINE.findall(output))), cpu_seconds=round(cpu[0], 2),
                changed=changed)


def measure_rollout(workdir, inventory, moms, repeat, phases):
    """The runs of ``--scenario rollout`` on the running cluster: ``{run name: run}``."""
    nodes = [SERVER] + ["mom%d" % i for i in range(1, moms + 1)]
    install_qmgr_counters(workdir, nodes)
    roles = host_addresses(inventory)
    start = time.monotonic()
    timed_run(run_argv("first run", inventory, None))
    phases["site.yml (set-up)"] = round(time.monotonic() - start, 1)
    value = [100]

    def next_value():
        value[0] += 1
        return value[0]

    runs = {}
    start = time.monotonic()
    runs["ping"] = rollout_counted(run_argv("ping", inventory, None), workdir, nodes, roles)
    work_value = next_value()
    runs["rollout with work"] = rollout_counted(rollout_argv(inventory, work_value), workdir, nodes, roles)
    runs["rollout re-run"] = rollout_counted(rollout_argv(inventory, work_value), workdir, nodes, roles)
    stopped = failing_moms(moms)
    for mom in stopped:
        launcher(workdir, "stop-mom", mom)
    try:
        runs["rollout with failures"] = rollout_counted(
            rollout_argv(inventory, next_value(), dict(rollout_max_fail_percentage=100,
                                                       rollout_health_max_new_problems=10 * moms)),
            workdir, nodes, roles, may_fail=True)
    finally:
        for mom in stopped:
            launcher(workdir, "start-mom", mom)
    phases["counted runs (-vvv)"] = round(time.monotonic() - start, 1)
    start = time.monotonic()
    for _round in range(repeat):
        work_value = next_value()
        for name, argv in (("rollout with work", rollout_argv(inventory, work_value)),
                           ("ping", run_argv("ping", inventory, None)),
                           ("rollout re-run", rollout_argv(inventory, work_value)),
                           ("ping", run_argv("ping", inventory, None))):
            _out, seconds, _changed = timed_run(argv)
            runs[name]["seconds"].append(round(seconds, 2))
    phases["timed runs x%d" % repeat] = round(time.monotonic() - start, 1)
    return runs


def repeat_for(args, moms):
    """The timed runs of each kind at ``moms``: ``--repeat`` at the ``--moms`` sizes,
    ``--mock-repeat`` at the mock-only ones."""
    return args.repeat if moms in args.moms else args.mock_repeat


def bench_cluster(backend, moms, args, keep):
    """Start, measure and (unless ``keep``) stop one cluster: its entry of the results."""
    cluster = dict(moms=moms, error=None, phases={}, runs={})
    try:
        start = time.monotonic()
        inventory = launcher(args.workdir, "up", "--pbs", backend, "--moms", str(moms)).strip()
        cluster["phases"]["cluster up"] = round(time.monotonic() - start, 1)
        measure = measure_rollout if args.scenario == "rollout" else measure_cluster
        cluster["runs"] = measure(args.workdir, inventory, moms, repeat_for(args, moms), cluster["phases"])
    except (BenchError, subprocess.CalledProcessError) as exc:
        cluster["error"] = str(exc)
        sys.stderr.write("%s, %d moms: %s\n" % (backend, moms, exc))
    finally:
        if not keep:
            start = time.monotonic()
            try:
                launcher(args.workdir, "down")
            except BenchError as exc:
                cluster["error"] = (cluster["error"] or "") + "\n" + str(exc)
            cluster["phases"]["cluster down"] = round(time.monotonic() - start, 1)
    return cluster


# ------------------------------------------------------------------ main

def int_list(text):
    values = [int(v) for v in text.split(",") if v.strip()]
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("a comma-separated list of numbers >= 1: %r" % text)
    return values


def backend_list(text):
    values = [v.strip() for v in text.split(",") if v.strip()]
    unknown = [v for v in values if v not in BACKENDS]
    if not values or unknown:
        raise argparse.ArgumentTypeError("backends are %s: %r" % (", ".join(BACKENDS), text))
    return values


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--moms", type=int_list, default=[8], help="e.g. 8,32,64")
    parser.add_argument("--mock-moms", type=int_list, default=[],
                        help="sizes measured on the mock backend only, after --moms (e.g. 128,256)")
    parser.add_argument("--backend", type=backend_list, default=["mock"],
                        help="mock, openpbs or both: mock,openpbs")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each kind")
    parser.add_argument("--mock-repeat", type=int, default=None,
                        help="timed runs of each kind at the --mock-moms sizes (default: --repeat)")
    parser.add_argument("--workdir", default=os.environ.get("HPC_PBS_CLUSTER_DIR")
                        or os.path.join(REPO, ".cluster"))
    parser.add_argument("--keep", action="store_true", help="leave the last cluster running")
    parser.add_argument("--json", help="also write the results as JSON to this file")
    parser.add_argument("--write-doc", help="replace the bench section of this markdown file")
    parser.add_argument("--scenario", choices=["playbooks", "rollout"], default="playbooks",
                        help="playbooks: site/rollout re-run/audit/ping (default); rollout: the "
                             "rollout at scale (with work, re-run, with failures, ping)")
    parser.add_argument("--tree", default=REPO,
                        help="the collection checkout whose playbooks run (default: this one)")
    args = parser.parse_args(argv)
    args.tree = os.path.abspath(args.tree)
    if not os.path.isfile(os.path.join(args.tree, "playbooks", "rollout.yml")):
        parser.error("--tree %s holds no playbooks/rollout.yml" % args.tree)
    if args.mock_repeat is None:
        args.mock_repeat = args.repeat
    if args.repeat < 1 or args.mock_repeat < 1:
        parser.error("--repeat and --mock-repeat must be at least 1")
    return args


def ansible_core_version():
    out = subprocess.run([os.path.join(BIN, "ansible"), "--version"], capture_output=True,
                         text=True, check=False).stdout
    match = re.search(r"core ([0-9][^\]\s]*)", out)
    return match.group(1) if match else "unknown"


def main(argv=None):
    args = parse_args(argv)
    TREE["root"] = args.tree
    results = dict(
        date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        command="bench_rollout.py " + shlex.join(sys.argv[1:] if argv is None else argv),
        machine=bench_report.machine_info(), ansible_core=ansible_core_version(),
        ansible_cfg=bench_report.ansible_cfg_settings(ANSIBLE_CFG), backends=[])

    def sizes(backend):
        return args.moms + ([m for m in args.mock_moms if m not in args.moms] if backend == "mock" else [])

    last = (args.backend[-1], sizes(args.backend[-1])[-1])
    for backend in args.backend:
        entry = dict(name=backend, skipped=None, clusters=[])
        if args.tree != REPO:
            entry["tree"] = args.tree
        results["backends"].append(entry)
        if backend == "openpbs":
            entry["skipped"] = openpbs_missing()
        if entry["skipped"]:
            sys.stderr.write("%s: skipped: %s\n" % (backend, entry["skipped"]))
            continue
        for moms in sizes(backend):
            keep = args.keep and (backend, moms) == last
            entry["clusters"].append(bench_cluster(backend, moms, args, keep))
    report = (bench_report.rollout_markdown if args.scenario == "rollout" else bench_report.markdown)(results)
    print(report)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2, sort_keys=True)
    if args.write_doc:
        with open(args.write_doc) as handle:
            text = handle.read()
        with open(args.write_doc, "w") as handle:
            handle.write(bench_report.replace_doc_section(text, report))
    failed = [c for b in results["backends"] for c in b["clusters"] if c["error"]]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
