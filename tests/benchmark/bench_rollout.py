#!/usr/bin/env python
"""Cost of playbooks/site.yml on the mock cluster (issue 6 point 7). Not a test: it
measures and reports, it asserts nothing.

Usage::

    bench_rollout.py [--moms 8] [--repeat 3] [--workdir DIR] [--keep] [--json FILE]

Starts the mock cluster (``tests/integration/cluster up``, 1 server + ``--moms`` moms;
``HPC_PBS_CLUSTER_NET`` / ``HPC_PBS_CLUSTER_DIR`` are honoured as by the launcher), then:

1. **qmgr invocations**: on every node ``PBS_EXEC/bin/qmgr`` is replaced by a wrapper
   that appends one line per invocation to ``PBS_HOME/qmgr-calls.log`` and then executes
   the real qmgr (kept as ``qmgr.uncounted``); the count of a run is the number of lines
   the run added, summed over the nodes.
2. **SSH round trips**: ``ansible-playbook -vvv`` prints one ``<address> SSH: EXEC ssh ...``
   line per ssh command the controller runs; each such command is one remote execution
   (a session over the host's multiplexed connection: send, run, wait for the answer), so
   the count of those lines is the number of round trips. **SSH connections**: every run
   gets an empty ``ANSIBLE_SSH_CONTROL_PATH_DIR``; the control sockets in it after the
   run are the connections the run opened (ControlPersist 60 s outlives the run).
3. **Wall time**: the idempotent re-run of site.yml and ``ansible all -m ping``, each
   ``--repeat`` times without ``-v`` and with a fresh control directory (so both pay for
   their connections), same inventory, same ``ansible.cfg`` (forks, pipelining); the
   medians and their ratio are reported.

The first run is the first site.yml on the freshly started cluster, the re-run the one
after it (which should change nothing: its recap is reported). The cluster is torn down
at the end unless ``--keep``. Exit code 0 when every run succeeded, 1 otherwise.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CLUSTER = os.path.join(REPO, "tests", "integration", "cluster")
SITE = os.path.join(REPO, "playbooks", "site.yml")
BIN = os.path.dirname(sys.executable)
QMGR = "/opt/pbs/bin/qmgr"
QMGR_LOG = "/var/spool/pbs/qmgr-calls.log"
COUNTING_QMGR = """#!/bin/sh
# hpc.pbs benchmark: count qmgr invocations, then run the real qmgr.
echo "$(date +%s.%N) $*" >> {log}
exec {qmgr}.uncounted "$@"
""".format(log=QMGR_LOG, qmgr=QMGR)
EXEC_LINE = re.compile(r"^<([^>]+)> SSH: EXEC ", re.M)
RECAP_LINE = re.compile(r"^(\S+)\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+"
                        r"failed=(\d+)", re.M)


def launcher(workdir, *args, **kwargs):
    stdin = kwargs.pop("stdin", None) or subprocess.DEVNULL
    proc = subprocess.run([sys.executable, CLUSTER] + list(args) + ["--workdir", workdir],
                          capture_output=True, text=True, stdin=stdin, check=False, **kwargs)
    if proc.returncode != 0:
        raise RuntimeError("cluster %s failed (rc %d): %s"
                           % (" ".join(args), proc.returncode, proc.stderr))
    return proc.stdout


def node_exec(workdir, node, script, stdin=None):
    """``sh -c SCRIPT`` as root inside ``node``; its stdout."""
    proc = subprocess.run([sys.executable, CLUSTER, "exec", node, "--workdir", workdir, "--",
                           "sh", "-c", script], input=stdin, capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        raise RuntimeError("%s on %s failed: %s" % (script, node, proc.stderr))
    return proc.stdout


def install_qmgr_counters(workdir, nodes):
    for node in nodes:
        node_exec(workdir, node, "test -e {q}.uncounted || mv {q} {q}.uncounted; "
                                 "cat > {q} && chmod 755 {q}".format(q=QMGR),
                  stdin=COUNTING_QMGR)


def qmgr_calls(workdir, nodes):
    """``{node: number of qmgr invocations so far}``."""
    return dict((node, int(node_exec(workdir, node, "cat %s 2>/dev/null | wc -l" % QMGR_LOG)))
                for node in nodes)


def ansible_env(control_dir):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"),
               ANSIBLE_NOCOLOR="1", ANSIBLE_SSH_CONTROL_PATH_DIR=control_dir,
               PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    link = os.path.join(REPO, "build", "collections", "ansible_collections", "hpc", "pbs")
    if not os.path.isdir(link):
        root = tempfile.mkdtemp(prefix="hpc-pbs-bench-collections-")
        os.makedirs(os.path.join(root, "ansible_collections", "hpc"))
        os.symlink(REPO, os.path.join(root, "ansible_collections", "hpc", "pbs"))
        env["ANSIBLE_COLLECTIONS_PATH"] = root
    return env


def timed_run(argv):
    """Run argv with a fresh control directory: ``(rc, output, seconds, connections)``."""
    with tempfile.TemporaryDirectory(prefix="hpc-pbs-bench-cp-") as control_dir:
        start = time.monotonic()
        proc = subprocess.run(argv, cwd=REPO, env=ansible_env(control_dir), text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, check=False)
        seconds = time.monotonic() - start
        connections = len(os.listdir(control_dir))
    return proc.returncode, proc.stdout, seconds, connections


def counted_site_run(workdir, nodes, inventory, label):
    before = qmgr_calls(workdir, nodes)
    rc, out, seconds, connections = timed_run(
        [os.path.join(BIN, "ansible-playbook"), "-i", inventory, SITE, "-vvv"])
    after = qmgr_calls(workdir, nodes)
    execs = EXEC_LINE.findall(out)
    recap = dict((m.group(1), dict(ok=int(m.group(2)), changed=int(m.group(3)),
                                   unreachable=int(m.group(4)), failed=int(m.group(5))))
                 for m in RECAP_LINE.finditer(out))
    return dict(label=label, rc=rc, seconds_with_vvv=round(seconds, 2),
                qmgr_invocations=sum(after[n] - before[n] for n in nodes),
                ssh_round_trips=len(execs),
                ssh_round_trips_per_host=dict((h, execs.count(h)) for h in sorted(set(execs))),
                ssh_connections=connections,
                changed=sum(r["changed"] for r in recap.values()),
                failed=sum(r["failed"] + r["unreachable"] for r in recap.values()),
                output_tail=out[-3000:] if rc else "")


def measure(inventory, repeat):
    site, ping = [], []
    for _round in range(repeat):
        rc, out, seconds, _conn = timed_run([os.path.join(BIN, "ansible-playbook"), "-i",
                                             inventory, SITE])
        if rc:
            raise RuntimeError("timed site.yml run failed:\n" + out[-3000:])
        site.append(seconds)
        rc, out, seconds, _conn = timed_run([os.path.join(BIN, "ansible"), "-i", inventory,
                                             "all", "-m", "ansible.builtin.ping"])
        if rc:
            raise RuntimeError("ansible -m ping failed:\n" + out[-3000:])
        ping.append(seconds)
    return dict(site_rerun_seconds=[round(s, 2) for s in site],
                ping_seconds=[round(s, 2) for s in ping],
                site_rerun_median=round(statistics.median(site), 2),
                ping_median=round(statistics.median(ping), 2),
                ratio=round(statistics.median(site) / statistics.median(ping), 2))


def markdown(report):
    lines = ["| run | qmgr invocations | SSH round trips | SSH connections | changed |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for run in report["runs"]:
        row = (run["label"], run["qmgr_invocations"], run["ssh_round_trips"],
               run["ssh_connections"], run["changed"])
        lines.append("| %s | %d | %d | %d | %d |" % row)
    timing = report.get("timing")
    if timing:
        figures = (timing["site_rerun_median"], timing["site_rerun_seconds"],
                   timing["ping_median"], timing["ping_seconds"], timing["ratio"])
        lines += ["", "re-run of site.yml: median %.2f s %s; ansible -m ping: median %.2f s "
                  "%s; ratio %.2f" % figures]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--moms", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir", default=os.environ.get("HPC_PBS_CLUSTER_DIR")
                        or os.path.join(REPO, ".cluster"))
    parser.add_argument("--keep", action="store_true", help="leave the cluster running")
    parser.add_argument("--json", help="also write the report as JSON to this file")
    args = parser.parse_args(argv)

    inventory = launcher(args.workdir, "up", "--moms", str(args.moms)).strip()
    nodes = ["pbs-server"] + ["mom%d" % i for i in range(1, args.moms + 1)]
    report = dict(moms=args.moms, runs=[])
    try:
        install_qmgr_counters(args.workdir, nodes)
        for label in ("first run", "idempotent re-run"):
            run = counted_site_run(args.workdir, nodes, inventory, label)
            report["runs"].append(run)
            if run["rc"]:
                raise RuntimeError("%s of site.yml failed:\n%s" % (label, run["output_tail"]))
        report["timing"] = measure(inventory, args.repeat)
    except RuntimeError as exc:
        report["error"] = str(exc)
    finally:
        if not args.keep:
            launcher(args.workdir, "down")
    print(markdown(report))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(report, handle, indent=2, sort_keys=True)
    if report.get("error"):
        sys.stderr.write(report["error"] + "\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
