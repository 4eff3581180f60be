#!/usr/bin/env python
"""What a queuejob hook costs where it runs: inside pbs_server, on every qsub.
Not a test: it measures and reports; it exits 1 only when a run fails or a hook did not do
its work.

Usage::

    bench_qsub.py [--jobs 2000] [--array-size 1000] [--arrays 3] [--rounds 3]
                  [--pbs-version 23.06.06] [--hook FILE] [--config FILE]
                  [--workdir DIR] [--keep] [--reuse] [--json FILE]

It starts a real OpenPBS test cluster of one mom (``tests/integration/cluster up --pbs
openpbs --moms 1``; ``HPC_PBS_CLUSTER_NET`` is honoured as by the launcher), makes two
queuejob hooks on its server, both disabled (an empty one, ``import pbs;
pbs.event().accept()``, and the bundled ``files/hooks/reliable_job_startup.py`` with its
bundled config ``reliable_job_startup.json``, or ``--hook`` / ``--config``), and then
runs ``--rounds`` rounds. Each round measures three settings of the server, in an order
that rotates from one round to the next (so that a change of the machine's load hits every
setting alike):

- ``no hook``: both hooks disabled;
- ``empty hook``: only the empty hook enabled;
- ``bundled hook``: only the bundled hook enabled, with its default config; the jobs have
  a select (``ncpus=1+ncpus=1``), so the hook does all its queuejob work: it sets
  ``tolerate_node_failures=job_start``, keeps the select in ``Resource_List.site`` and pads
  it to ``1:ncpus=1+2:ncpus=1``.

In each setting: ``--jobs`` held jobs (``qsub -h -l select=ncpus=1+ncpus=1 --
/bin/true``), one qsub process after the other, as the node's user ``pbsuser``, timed
inside the server's node (no launcher, no SSH in the figure); then ``--arrays`` job arrays
of ``--array-size`` subjobs each (``qsub -h -J 1-N ...``: one queuejob event per array).
After each setting's jobs, one job of each kind is read with ``qstat -f`` to check that the
hook in place did its work (the select padded with the bundled hook, untouched
otherwise); then every job is deleted (untimed), so that each setting starts from an empty
server.

Figures, per setting and round: milliseconds per qsub (wall time of the whole batch over
the number of jobs: the inverse of the throughput), milliseconds per array qsub, and the
CPU pbs_server used per qsub (user + system, from its ``/proc/PID/stat`` before and after
the batch; clock ticks of 10 ms over 2,000 jobs: 0.005 ms). pbs_server answers a qsub
before the client exits, so its CPU is the part of the wall time a hook can change, without
the qsub process's start and waits: in a 6-round run on the idle machine the bundled hook's
own cost was 0.05-0.13 ms of pbs_server CPU where the wall times gave 0.04-0.24 ms. What
PostgreSQL spends storing the job (pbs_dataservice) is not in it. Then the paired
differences of each round: what any queuejob hook costs (empty - no hook) and what the
bundled hook adds to it (bundled - empty), with their median, min and max over the rounds;
and the throughput of the bundled hook over the empty hook's (empty ms / bundled ms per
round, wall times; target >= 0.95).

The report (markdown) goes to stdout, ``--json`` writes the figures. The cluster is taken
down at the end unless ``--keep``; ``--reuse`` uses the cluster already running in
``--workdir`` (its hooks are made again).
"""
import argparse
import datetime
import json
import os
import shlex
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CLUSTER = os.path.join(REPO, "tests", "integration", "cluster")
HOOKS = os.path.join(REPO, "files", "hooks")
SERVER = "pbs-server"
USER = "pbsuser"
PBS_BIN = "/opt/pbs/bin"
SETTINGS = ("no hook", "empty hook", "bundled hook")
CANDIDATE = "candidate hook"  # --candidate: another body of the bundled hook, same config
EMPTY_HOOK = "import pbs\npbs.event().accept()\n"
EMPTY_NAME = "bench_empty"
BUNDLED_NAME = "reliable_job_startup"
CANDIDATE_NAME = "bench_candidate"
HOOK_NAMES = {"no hook": None, "empty hook": EMPTY_NAME, "bundled hook": BUNDLED_NAME,
              CANDIDATE: CANDIDATE_NAME}
SELECT = "ncpus=1+ncpus=1"
PADDED = "1:ncpus=1+2:ncpus=1"  # what the bundled hook's default config makes of SELECT
THROUGHPUT_TARGET = 0.95

# Runs inside the server's node as USER (python3 of the node, standard library only): the
# qsub argument list of argv[1] (JSON) argv[2] times, one after the other; prints JSON
# {"seconds": wall time of the whole batch, "each": seconds of each qsub, "ids": the job
# ids, "server_cpu_seconds": the user + system CPU pbs_server used meanwhile, from its
# /proc/PID/stat (world-readable), in clock ticks of 1/SC_CLK_TCK s}. Exits 1 at the first
# qsub that fails, 2 when no pbs_server runs in the node.
DRIVER = r"""
import json, os, subprocess, sys, time
argv, count = json.loads(sys.argv[1]), int(sys.argv[2])
def server_stat():
    for pid in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % pid) as handle:
                stat = handle.read()
        except (OSError, ValueError):
            continue
        if stat[stat.index("(") + 1:stat.rindex(")")] in ("pbs_server.bin", "pbs_server"):
            return "/proc/%s/stat" % pid
    sys.stderr.write("no pbs_server in /proc\n")
    sys.exit(2)
def server_cpu(path):
    fields = open(path).read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / float(os.sysconf("SC_CLK_TCK"))
stat_path = server_stat()
each, ids = [], []
cpu_before = server_cpu(stat_path)
started = time.perf_counter()
for _unused in range(count):
    before = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    each.append(time.perf_counter() - before)
    if proc.returncode != 0 or not proc.stdout.strip():
        sys.stderr.write("%s: rc %d: %s%s" % (argv, proc.returncode, proc.stdout, proc.stderr))
        sys.exit(1)
    ids.append(proc.stdout.strip())
seconds = time.perf_counter() - started
print(json.dumps({"seconds": seconds, "each": each, "ids": ids,
                  "server_cpu_seconds": server_cpu(stat_path) - cpu_before}))
"""


class BenchError(Exception):
    """A cluster operation or a qsub failed, or a hook did not do its work."""


# ------------------------------------------------------------------ pure parts

def setting_order(round_number, settings=SETTINGS):
    """The ``settings`` of round ``round_number`` (0-based), rotated by the round."""
    settings = tuple(settings)
    shift = round_number % len(settings)
    return settings[shift:] + settings[:shift]


def qsub_argv(array_size=None):
    """One held job (or a held array of ``array_size`` subjobs) with the bench's select."""
    argv = [PBS_BIN + "/qsub", "-h", "-l", "select=" + SELECT]
    if array_size:
        argv += ["-J", "1-%d" % array_size]
    return argv + ["--", "/bin/true"]


def spread(values):
    """``{"median", "min", "max"}`` of ``values`` (None for each when there are none)."""
    values = list(values)
    if not values:
        return dict(median=None, min=None, max=None)
    return dict(median=statistics.median(values), min=min(values), max=max(values))


# The figures of a setting in a round, and the prefix of their paired differences' names.
KINDS = ("job_ms", "array_ms", "server_cpu_ms")
PAIRED = (("", "job_ms"), ("array_", "array_ms"), ("server_cpu_", "server_cpu_ms"))


def summarize(rounds):
    """Figures of ``rounds``: a list (one per round) of ``{setting: {"job_ms": ms per qsub,
    "array_ms": ms per array qsub, "server_cpu_ms": pbs_server's CPU ms per qsub}}``
    (SETTINGS, and CANDIDATE when measured). Returns ``{"settings": {setting: {"job_ms":
    spread, "array_ms": spread, "server_cpu_ms": spread}}, "any_hook_ms": spread of (empty -
    no hook) per round, "bundled_adds_ms": spread of (bundled - empty), "array_any_hook_ms",
    "array_bundled_adds_ms": the same for array qsubs, "server_cpu_any_hook_ms",
    "server_cpu_bundled_adds_ms": the same for pbs_server's CPU per qsub,
    "throughput_vs_empty": spread of empty / bundled, "throughput_vs_none": spread of no
    hook / bundled, "met": the throughput median >= THROUGHPUT_TARGET}``; with CANDIDATE
    also ``"candidate_adds_ms"``, ``"array_candidate_adds_ms"``,
    ``"server_cpu_candidate_adds_ms"`` (candidate - empty),
    ``"candidate_throughput_vs_empty"`` and ``"candidate_met"``."""
    figures = {"settings": {}}
    with_candidate = bool(rounds) and all(CANDIDATE in r for r in rounds)
    for setting in SETTINGS + ((CANDIDATE,) if with_candidate else ()):
        figures["settings"][setting] = dict(
            (kind, spread(r[setting][kind] for r in rounds)) for kind in KINDS)
    for prefix, kind in PAIRED:
        figures[prefix + "any_hook_ms"] = spread(
            r["empty hook"][kind] - r["no hook"][kind] for r in rounds)
        figures[prefix + "bundled_adds_ms"] = spread(
            r["bundled hook"][kind] - r["empty hook"][kind] for r in rounds)
    figures["throughput_vs_empty"] = spread(
        r["empty hook"]["job_ms"] / r["bundled hook"]["job_ms"] for r in rounds)
    figures["throughput_vs_none"] = spread(
        r["no hook"]["job_ms"] / r["bundled hook"]["job_ms"] for r in rounds)
    median = figures["throughput_vs_empty"]["median"]
    figures["met"] = median is not None and median >= THROUGHPUT_TARGET
    if with_candidate:
        for prefix, kind in PAIRED:
            figures[prefix + "candidate_adds_ms"] = spread(
                r[CANDIDATE][kind] - r["empty hook"][kind] for r in rounds)
        figures["candidate_throughput_vs_empty"] = spread(
            r["empty hook"]["job_ms"] / r[CANDIDATE]["job_ms"] for r in rounds)
        figures["candidate_met"] = figures["candidate_throughput_vs_empty"]["median"] >= THROUGHPUT_TARGET
    return figures


def _fmt(value, digits=2):
    return "-" if value is None else "%.*f" % (digits, value)


def _range(item, digits=2):
    return "%s (%s-%s)" % (_fmt(item["median"], digits), _fmt(item["min"], digits),
                           _fmt(item["max"], digits))


def markdown(results):
    """The report of ``results`` (``main``'s dict, with ``summary`` = summarize())."""
    summary, args = results["summary"], results["args"]
    lines = ["- Machine: %s; %s" % (results["machine"], results["date"]),
             "- OpenPBS %s (real pbs_server), 1 mom; %d rounds; per setting and round %d held "
             "jobs (`qsub -h -l select=%s`) then %d arrays of %d subjobs"
             % (args["pbs_version"], args["rounds"], args["jobs"], SELECT, args["arrays"],
                args["array_size"]),
             "- Command: `%s`" % results["command"], "",
             "| setting | ms per qsub, median (min-max) over rounds | ms per array qsub "
             "| pbs_server CPU ms per qsub |",
             "| --- | ---: | ---: | ---: |"]
    for setting in summary["settings"]:
        item = summary["settings"][setting]
        lines.append("| %s | %s | %s | %s |" % (setting, _range(item["job_ms"]), _range(item["array_ms"]),
                                                _range(item["server_cpu_ms"], 3)))
    lines += ["", "| paired per round | median (min-max) |", "| --- | ---: |",
              "| any queuejob hook (empty - no hook), ms per qsub | %s |" % _range(summary["any_hook_ms"]),
              "| the bundled hook's own cost (bundled - empty), ms per qsub | %s |"
              % _range(summary["bundled_adds_ms"]),
              "| any queuejob hook, ms per array qsub | %s |" % _range(summary["array_any_hook_ms"]),
              "| the bundled hook's own cost, ms per array qsub | %s |" % _range(summary["array_bundled_adds_ms"]),
              "| any queuejob hook, pbs_server CPU ms per qsub | %s |" % _range(summary["server_cpu_any_hook_ms"], 3),
              "| the bundled hook's own cost, pbs_server CPU ms per qsub | %s |"
              % _range(summary["server_cpu_bundled_adds_ms"], 3),
              "| qsub throughput, bundled ÷ empty hook (target >= %.2f) | %s |"
              % (THROUGHPUT_TARGET, _range(summary["throughput_vs_empty"], 3)),
              "| qsub throughput, bundled ÷ no hook | %s |" % _range(summary["throughput_vs_none"], 3),
              "", "Target bundled ÷ empty >= %.2f: %s." % (THROUGHPUT_TARGET, "met" if summary["met"] else "NOT met")]
    if "candidate_met" in summary:
        lines[-2:-2] = ["| the candidate hook's own cost (candidate - empty), ms per qsub | %s |"
                        % _range(summary["candidate_adds_ms"]),
                        "| the candidate hook's own cost, ms per array qsub | %s |"
                        % _range(summary["array_candidate_adds_ms"]),
                        "| the candidate hook's own cost, pbs_server CPU ms per qsub | %s |"
                        % _range(summary["server_cpu_candidate_adds_ms"], 3),
                        "| qsub throughput, candidate ÷ empty hook | %s |"
                        % _range(summary["candidate_throughput_vs_empty"], 3)]
        lines.append("Candidate (`%s`) ÷ empty >= %.2f: %s." % (
            args.get("candidate"), THROUGHPUT_TARGET, "met" if summary["candidate_met"] else "NOT met"))
    return "\n".join(lines)


def check_job(setting, attributes):
    """Raise BenchError unless the job's ``qstat -f`` ``attributes`` show the work of
    ``setting``: padded select, tolerate_node_failures and Resource_List.site with the
    bundled hook; the submitted select and no Resource_List.site otherwise."""
    select = attributes.get("Resource_List.select")
    if setting in ("bundled hook", CANDIDATE):
        wanted = {"Resource_List.select": PADDED, "tolerate_node_failures": "job_start",
                  "Resource_List.site": "1:" + SELECT.replace("+", "+1:")}
    else:
        wanted = {"Resource_List.select": SELECT, "Resource_List.site": None}
    wrong = dict((k, attributes.get(k)) for k, v in wanted.items() if attributes.get(k) != v)
    if wrong:
        raise BenchError("%s: the job has %s, wanted %s (select %s)" % (
            setting, wrong, dict((k, wanted[k]) for k in wrong), select))


def parse_qstat_f(text):
    """``{attribute: value}`` of the first job of ``qstat -f`` output (continuation lines,
    indented by a tab, joined)."""
    attributes, last = {}, None
    for line in text.splitlines():
        if line.startswith("\t") and last:
            attributes[last] += line.strip()
        elif " = " in line:
            key, value = line.strip().split(" = ", 1)
            attributes[key], last = value, key
        elif line.startswith("Job Id:") and attributes:
            break
    return attributes


# ------------------------------------------------------------------ cluster

def launcher(workdir, *args):
    proc = subprocess.run([sys.executable, CLUSTER] + list(args) + ["--workdir", workdir],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False)
    if proc.returncode != 0:
        raise BenchError("cluster %s failed (rc %d): %s" % (" ".join(args), proc.returncode,
                                                            proc.stderr[-3000:]))
    return proc.stdout


def node_run(workdir, argv, user=None, stdin=None):
    """``argv`` inside the server's node: its stdout. Raises BenchError."""
    command = [sys.executable, CLUSTER, "exec", SERVER, "--workdir", workdir]
    if user:
        command += ["--user", user]
    proc = subprocess.run(command + ["--"] + list(argv), input=stdin, capture_output=True,
                          text=True, check=False,
                          stdin=None if stdin is not None else subprocess.DEVNULL)
    if proc.returncode != 0:
        raise BenchError("%s failed (rc %d): %s%s"
                         % (shlex.join(argv), proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:]))
    return proc.stdout


def qmgr(workdir, *commands):
    for command in commands:
        node_run(workdir, [PBS_BIN + "/qmgr", "-c", command])


def make_hook(workdir, name, body, config=None):
    """(Re)create queuejob hook ``name`` with ``body`` (text) and ``config`` (text), disabled."""
    node_run(workdir, ["sh", "-c", "%s/qmgr -c 'delete hook %s' >/dev/null 2>&1; true" % (PBS_BIN, name)])
    qmgr(workdir, "create hook %s" % name)
    node_run(workdir, ["sh", "-c", "cat > /tmp/%s.py" % name], stdin=body)
    qmgr(workdir, "import hook %s application/x-python default /tmp/%s.py" % (name, name))
    if config is not None:
        node_run(workdir, ["sh", "-c", "cat > /tmp/%s.json" % name], stdin=config)
        qmgr(workdir, "import hook %s application/x-config default /tmp/%s.json" % (name, name))
    qmgr(workdir, "set hook %s event = queuejob" % name, "set hook %s enabled = false" % name)


def use_setting(workdir, setting):
    """Enable the hook of ``setting`` only."""
    for name in (EMPTY_NAME, BUNDLED_NAME, CANDIDATE_NAME):
        qmgr(workdir, "set hook %s enabled = %s" % (name, "true" if HOOK_NAMES[setting] == name else "false"))


def submit(workdir, argv, count):
    """Run the qsub ``argv`` ``count`` times in the node (DRIVER): its JSON result."""
    out = node_run(workdir, ["python3", "-c", DRIVER, json.dumps(argv), str(count)], user=USER)
    return json.loads(out)


def delete_all(workdir):
    node_run(workdir, ["sh", "-c", "%s/qselect -u %s | xargs -r -n 1000 %s/qdel"
                       % (PBS_BIN, USER, PBS_BIN)])


def measure_setting(workdir, setting, args):
    """``{"job_ms", "array_ms", "job_median_ms", "server_cpu_ms", "array_server_cpu_ms"}``
    of ``setting`` (module docstring)."""
    use_setting(workdir, setting)
    jobs = submit(workdir, qsub_argv(), args.jobs)
    arrays = submit(workdir, qsub_argv(args.array_size), args.arrays) if args.arrays else None
    for job_id in [jobs["ids"][-1]] + ([arrays["ids"][-1]] if arrays else []):
        check_job(setting, parse_qstat_f(node_run(workdir, [PBS_BIN + "/qstat", "-f", job_id])))
    delete_all(workdir)
    return dict(job_ms=1000.0 * jobs["seconds"] / args.jobs,
                job_median_ms=1000.0 * statistics.median(jobs["each"]),
                server_cpu_ms=1000.0 * jobs["server_cpu_seconds"] / args.jobs,
                array_ms=1000.0 * arrays["seconds"] / args.arrays if arrays else 0.0,
                array_server_cpu_ms=1000.0 * arrays["server_cpu_seconds"] / args.arrays if arrays else 0.0)


# ------------------------------------------------------------------ main

def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1, not %d" % value)
    return value


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--jobs", type=positive_int, default=2000, help="held jobs per setting and round")
    parser.add_argument("--array-size", type=positive_int, default=1000, help="subjobs per array")
    parser.add_argument("--arrays", type=int, default=3, help="arrays per setting and round (0: none)")
    parser.add_argument("--rounds", type=positive_int, default=3, help="alternating rounds")
    parser.add_argument("--pbs-version", default="23.06.06", choices=("23.06.06", "22.05.11"))
    parser.add_argument("--hook", default=os.path.join(HOOKS, "reliable_job_startup.py"),
                        help="the queuejob hook body measured as 'bundled hook'")
    parser.add_argument("--config", default=os.path.join(HOOKS, "reliable_job_startup.json"),
                        help="its config file")
    parser.add_argument("--candidate", help="another body of the bundled hook, measured beside it "
                        "(with the same config) as 'candidate hook'")
    parser.add_argument("--workdir", default=os.environ.get("HPC_PBS_CLUSTER_DIR")
                        or os.path.join(REPO, ".cluster"))
    parser.add_argument("--keep", action="store_true", help="leave the cluster running")
    parser.add_argument("--reuse", action="store_true", help="use the cluster running in --workdir")
    parser.add_argument("--json", help="also write the figures as JSON to this file")
    args = parser.parse_args(argv)
    if args.arrays < 0:
        parser.error("--arrays must be 0 or more")
    return args


def machine():
    model = "unknown"
    with open("/proc/cpuinfo") as handle:
        model = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), model)
    return "%d cores (nproc), %s" % (os.cpu_count(), model)


def main(argv=None):
    args = parse_args(argv)
    with open(args.hook) as handle:
        body = handle.read()
    with open(args.config) as handle:
        config = handle.read()
    candidate = None
    if args.candidate:
        with open(args.candidate) as handle:
            candidate = handle.read()
    settings = SETTINGS + ((CANDIDATE,) if candidate else ())
    results = dict(date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                   command="bench_qsub.py " + shlex.join(sys.argv[1:] if argv is None else argv),
                   machine=machine(), args=vars(args), rounds=[])
    try:
        if not args.reuse:
            launcher(args.workdir, "up", "--pbs", "openpbs", "--pbs-version", args.pbs_version,
                     "--moms", "1", "--no-atom")
        make_hook(args.workdir, EMPTY_NAME, EMPTY_HOOK)
        make_hook(args.workdir, BUNDLED_NAME, body, config)
        make_hook(args.workdir, CANDIDATE_NAME, candidate or EMPTY_HOOK, config)
        delete_all(args.workdir)
        for round_number in range(args.rounds):
            figures = {}
            for setting in setting_order(round_number, settings):
                start = time.monotonic()
                figures[setting] = measure_setting(args.workdir, setting, args)
                sys.stderr.write("round %d, %s: %.2f ms per qsub (pbs_server CPU %.3f ms), %.1f ms per array "
                                 "qsub (%.0f s)\n" % (round_number + 1, setting, figures[setting]["job_ms"],
                                                      figures[setting]["server_cpu_ms"],
                                                      figures[setting]["array_ms"], time.monotonic() - start))
            results["rounds"].append(figures)
    except BenchError as exc:
        sys.stderr.write("bench_qsub: %s\n" % exc)
        return 1
    finally:
        if not args.keep:
            try:
                launcher(args.workdir, "down")
            except BenchError as exc:
                sys.stderr.write("bench_qsub: %s\n" % exc)
    results["summary"] = summarize(results["rounds"])
    print(markdown(results))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
