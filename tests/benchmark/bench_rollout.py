#!/usr/bin/env python
"""Cost of the playbooks on test clusters of several sizes and backends (issue 16 point 3).
Not a test: it measures and reports, it asserts nothing.

Usage::

    bench_rollout.py [--moms 8,32,64] [--backend mock,openpbs] [--repeat 3]
                     [--workdir DIR] [--keep] [--json FILE] [--write-doc FILE]

For each backend and each number of moms it starts one cluster (``tests/integration/cluster
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
- ``ping``: ``ansible all -m ansible.builtin.ping``.

Each run kind is run once counted (``-vvv``) and then, except the first run, ``--repeat``
times timed (without ``-v``), each timed run followed by a ping (the pings' median is the
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
import datetime
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
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

def ansible_env(control_dir):
    env = dict(os.environ, ANSIBLE_CONFIG=ANSIBLE_CFG, ANSIBLE_NOCOLOR="1",
               ANSIBLE_FORCE_COLOR="0", ANSIBLE_SSH_CONTROL_PATH_DIR=control_dir,
               PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    link = os.path.join(REPO, "build", "collections", "ansible_collections", "hpc", "pbs")
    if not os.path.isdir(link):
        root = tempfile.mkdtemp(prefix="hpc-pbs-bench-collections-")
        os.makedirs(os.path.join(root, "ansible_collections", "hpc"))
        os.symlink(REPO, os.path.join(root, "ansible_collections", "hpc", "pbs"))
        env["ANSIBLE_COLLECTIONS_PATH"] = root
    return env


def run_argv(name, inventory, audit_dir):
    """The command line of run kind ``name`` (bench_report.RUNS)."""
    if name == "ping":
        return [os.path.join(BIN, "ansible"), "-i", inventory, "all", "-m",
                "ansible.builtin.ping"]
    playbook = {"first run": "site.yml", "idempotent re-run": "site.yml",
                "rollout re-run": "rollout.yml", "audit": "audit.yml"}[name]
    argv = [os.path.join(BIN, "ansible-playbook"), "-i", inventory, PLAYBOOKS[playbook]]
    if name == "audit":
        argv += ["-e", "audit_report_path=%s" % os.path.join(audit_dir, "audit-report.json")]
    return argv


def timed_run(argv):
    """Run argv with a fresh control directory: ``(output, seconds, changed)``.
    ``changed``: the recap's changed counts summed over the hosts (0 for ping). Raises
    BenchError when it fails or a host is unreachable."""
    with tempfile.TemporaryDirectory(prefix="hpc-pbs-bench-cp-") as control_dir:
        start = time.monotonic()
        proc = subprocess.run(argv, cwd=REPO, env=ansible_env(control_dir), text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, check=False)
        seconds = time.monotonic() - start
    if proc.returncode != 0:
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
    output, seconds, changed = timed_run(run_argv(name, inventory, audit_dir) + ["-vvv"])
    return dict(counted_seconds=round(seconds, 2),
                qmgr_invocations=qmgr_calls(workdir, nodes) - before,
                round_trips=round_trips_per_host(output, roles), changed=changed)


def measure_cluster(workdir, inventory, moms, repeat, phases):
    """All runs on the running cluster of ``moms`` moms (``inventory``: its inventory
    file): ``{run name: run}`` (the shape of bench_report's module docstring). ``phases``
    gets the seconds each phase took."""
    nodes = [SERVER] + ["mom%d" % i for i in range(1, moms + 1)]
    install_qmgr_counters(workdir, nodes)
    roles = host_addresses(inventory)
    runs = {}
    with tempfile.TemporaryDirectory(prefix="hpc-pbs-bench-audit-") as audit_dir:
        for name in bench_report.RUNS:
            start = time.monotonic()
            runs[name] = counted_run(name, workdir, nodes, inventory, audit_dir, roles)
            runs[name]["seconds"] = []
            phases["%s (-vvv)" % name] = round(time.monotonic() - start, 1)
        runs["first run"]["seconds"] = [runs["first run"]["counted_seconds"]]
        for name in bench_report.RUNS[1:-1]:
            start = time.monotonic()
            for _round in range(repeat):
                for kind in (name, "ping"):
                    _out, seconds, changed = timed_run(run_argv(kind, inventory, audit_dir))
                    runs[kind]["seconds"].append(round(seconds, 2))
                    runs[kind]["changed"] = max(runs[kind]["changed"], changed)
            phases["%s + ping x%d" % (name, repeat)] = round(time.monotonic() - start, 1)
    return runs


def bench_cluster(backend, moms, args, keep):
    """Start, measure and (unless ``keep``) stop one cluster: its entry of the results."""
    cluster = dict(moms=moms, error=None, phases={}, runs={})
    try:
        start = time.monotonic()
        inventory = launcher(args.workdir, "up", "--pbs", backend, "--moms", str(moms)).strip()
        cluster["phases"]["cluster up"] = round(time.monotonic() - start, 1)
        cluster["runs"] = measure_cluster(args.workdir, inventory, moms, args.repeat,
                                          cluster["phases"])
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
    parser.add_argument("--backend", type=backend_list, default=["mock"],
                        help="mock, openpbs or both: mock,openpbs")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each kind")
    parser.add_argument("--workdir", default=os.environ.get("HPC_PBS_CLUSTER_DIR")
                        or os.path.join(REPO, ".cluster"))
    parser.add_argument("--keep", action="store_true", help="leave the last cluster running")
    parser.add_argument("--json", help="also write the results as JSON to this file")
    parser.add_argument("--write-doc", help="replace the bench section of this markdown file")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    return args


def ansible_core_version():
    out = subprocess.run([os.path.join(BIN, "ansible"), "--version"], capture_output=True,
                         text=True, check=False).stdout
    match = re.search(r"core ([0-9][^\]\s]*)", out)
    return match.group(1) if match else "unknown"


def main(argv=None):
    args = parse_args(argv)
    results = dict(
        date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        command="bench_rollout.py " + shlex.join(sys.argv[1:] if argv is None else argv),
        machine=bench_report.machine_info(), ansible_core=ansible_core_version(),
        ansible_cfg=bench_report.ansible_cfg_settings(ANSIBLE_CFG), backends=[])
    last = (args.backend[-1], args.moms[-1])
    for backend in args.backend:
        entry = dict(name=backend, skipped=None, clusters=[])
        results["backends"].append(entry)
        if backend == "openpbs":
            entry["skipped"] = openpbs_missing()
        if entry["skipped"]:
            sys.stderr.write("%s: skipped: %s\n" % (backend, entry["skipped"]))
            continue
        for moms in args.moms:
            keep = args.keep and (backend, moms) == last
            entry["clusters"].append(bench_cluster(backend, moms, args, keep))
    report = bench_report.markdown(results)
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
