"""Pure parts of ``bench_rollout.py``: statistics, the markdown report and the replacement
of the report's section in a document. No cluster, no subprocess (the machine description
reads ``/proc`` and ``ansible.cfg`` only).

The results the report is made from (``bench_rollout.py --json`` writes the same)::

    {"date": "2026-11-24 20:30 UTC", "command": "bench_rollout.py ...",
     "machine": {"nproc": 2, "cpu_model": "...", "memory_gib": 7.8},
     "ansible_core": "2.19.14", "ansible_cfg": {"forks": "10", "pipelining": "True"},
     "backends": [{"name": "mock", "skipped": None or "why",
                   "clusters": [{"moms": 8, "error": None or "why",
                                 "phases": {"cluster up": 12.3, ...},   # seconds
                                 "runs": {RUN: {"seconds": [5.1, 5.3, 5.2],
                                                "qmgr_invocations": 2,
                                                "round_trips": {"server": 2, "mom": 1.0},
                                                "cpu_seconds": [4.1, 4.0, 4.2],
                                                "main_cpu_seconds": [1.2, 1.1, 1.2],
                                                "changed": 0}}}]}]}

RUN is one of RUNS; ``seconds`` are wall times in seconds, ``round_trips`` SSH round trips
per host (server: on the one server; mom: total over the moms / number of moms),
``changed`` the largest changed count over the runs of that kind (summed over hosts);
``cpu_seconds`` the controller's CPU (user + system of ansible and every process it started,
ssh clients included) and ``main_cpu_seconds`` that of Ansible's main process alone, one
value per timed run (optional: older results have none).
"""
import configparser
import os
import statistics

# The projection's sizes, controllers and forks (docs/performance.md, "Projection").
PROJECTED_MOMS = (2500, 10000)
PROJECTED_CORES = (8, 32)
PROJECTED_FORKS = (25, 50, 100)
# AWX job slicing as it would be if the collection's playbooks could be sliced: slices, each on
# its own execution node of PROJECTED_CORES[0] cores at forks 50.
PROJECTED_SLICES = 4
# Wall seconds one SSH round trip holds a fork on a real cluster: the remote execution over
# the kept connection, the node's Python starting and the module running. An assumption, not
# a measure: on the test cluster the nodes share the controller's cores.
ASSUMED_TRIP_SECONDS = 1.0
# The runs whose cost is per mom (the report runs on the server only).
PER_MOM_RUNS = ("first run", "idempotent re-run", "rollout with work", "audit")

RUNS = ("first run", "idempotent re-run", "rollout re-run", "audit", "report", "rollout with work", "ping")
MUST_NOT_CHANGE = ("idempotent re-run", "rollout re-run", "audit", "ping")
DOC_START = "<!-- bench:start -->"
DOC_END = "<!-- bench:end -->"


def median(values):
    """Median of a non-empty list of numbers; None for an empty one."""
    return statistics.median(values) if values else None


def slope(points):
    """Least-squares slope of ``[(x, y), ...]`` (y per unit of x); None with fewer than two
    distinct x. For the growth: x = moms, y = seconds, slope = seconds per extra mom."""
    points = [(x, y) for x, y in points if y is not None]
    if len(set(x for x, y in points)) < 2:
        return None
    return statistics.linear_regression([x for x, y in points], [y for x, y in points]).slope


def intercept(points):
    """Least-squares intercept of ``[(x, y), ...]``: the fixed part (y at x = 0); None with
    fewer than two distinct x."""
    points = [(x, y) for x, y in points if y is not None]
    if len(set(x for x, y in points)) < 2:
        return None
    return statistics.linear_regression([x for x, y in points], [y for x, y in points]).intercept


def ratio(value, reference):
    """``value / reference``, None when either is missing or the reference is 0."""
    if value is None or not reference:
        return None
    return value / reference


def change_flags(cluster):
    """``["idempotent re-run: changed=3", ...]``: the runs of ``cluster`` that must change
    nothing and did."""
    runs = cluster.get("runs", {})
    return ["%s: changed=%d" % (name, runs[name]["changed"]) for name in MUST_NOT_CHANGE
            if name in runs and runs[name].get("changed")]


def machine_info(cpuinfo="/proc/cpuinfo", meminfo="/proc/meminfo"):
    """``{"nproc": int, "cpu_model": str, "memory_gib": float}`` of this machine."""
    model = "unknown"
    with open(cpuinfo) as handle:
        for line in handle:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    memory_gib = None
    with open(meminfo) as handle:
        for line in handle:
            if line.startswith("MemTotal:"):
                memory_gib = round(int(line.split()[1]) / 1024.0 / 1024.0, 1)
    return dict(nproc=os.cpu_count(), cpu_model=model, memory_gib=memory_gib)


def ansible_cfg_settings(path):
    """``{"forks": "10", "pipelining": "True"}`` from ``[defaults] forks`` and
    ``[ssh_connection] pipelining`` of ``path`` (Ansible's defaults, 5 and False, when
    unset)."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(path)
    return dict(forks=parser.get("defaults", "forks", fallback="5"),
                pipelining=parser.get("ssh_connection", "pipelining", fallback="False"))


def _number(value, digits=2):
    return "-" if value is None else "%.*f" % (digits, value)


def _round_trips(run):
    trips = run.get("round_trips")
    if not trips:
        return "-"
    return "%s / %s" % (_number(trips.get("server"), 1), _number(trips.get("mom"), 1))


def backend_table(backend):
    """Markdown table of one backend: one row per (moms, run)."""
    lines = ["| moms | run | median s | all runs s | ÷ ping | qmgr calls | "
             "round trips per host (server / mom) | changed |",
             "| ---: | --- | ---: | --- | ---: | ---: | ---: | ---: |"]
    for cluster in backend["clusters"]:
        runs = cluster.get("runs", {})
        ping = median(runs.get("ping", {}).get("seconds", []))
        for name in RUNS:
            if name not in runs:
                continue
            run = runs[name]
            run_median = median(run["seconds"])
            lines.append("| %d | %s | %s | %s | %s | %s | %s | %s |" % (
                cluster["moms"], name, _number(run_median),
                ", ".join(_number(s) for s in run["seconds"]),
                _number(ratio(run_median, ping)), run.get("qmgr_invocations", "-"),
                _round_trips(run), run.get("changed", "-")))
    return lines


def growth_lines(backend):
    """Per-mom cost of each run: the least-squares slope of its median over the sizes
    measured, in seconds per extra mom; empty with fewer than two sizes."""
    sizes = [c["moms"] for c in backend["clusters"] if c.get("runs")]
    if len(set(sizes)) < 2:
        return []
    cells = []
    for name in RUNS:
        points = [(c["moms"], median(c["runs"][name]["seconds"]))
                  for c in backend["clusters"] if name in c.get("runs", {})]
        cells.append("%s %s s" % (name, _number(slope(points), 3)))
    return ["", "Growth (seconds per extra mom, least squares over %s moms): %s."
            % (" -> ".join(str(s) for s in sizes), "; ".join(cells))]


def cluster_notes(backend):
    """Errors, change flags and phase times of each cluster of ``backend``."""
    lines = []
    for cluster in backend["clusters"]:
        head = "%d moms" % cluster["moms"]
        if cluster.get("error"):
            error = cluster["error"].strip()
            lines.append("- %s: **failed**: %s" % (head, error.splitlines()[-1] if error else "error"))
        for flag in change_flags(cluster):
            lines.append("- %s: **changed** where nothing should change: %s" % (head, flag))
        phases = cluster.get("phases", {})
        if phases:
            lines.append("- %s: phases %s." % (head, ", ".join(
                "%s %.0f s" % (name, seconds) for name, seconds in phases.items())))
    return [""] + lines if lines else []


def _points(backend, name, key):
    """``[(moms, median of run[key]), ...]`` of run ``name`` over the clusters of ``backend``."""
    return [(c["moms"], median(c["runs"][name].get(key) or []))
            for c in backend["clusters"] if name in c.get("runs", {})]


def run_costs(backend, name):
    """What one run kind costs on ``backend``, fitted over the sizes measured:
    ``{"fixed": s, "wall": s per mom, "cpu": controller CPU s per mom, "main": main-process
    CPU s per mom, "trips": SSH round trips per mom}``; a value is None where the results
    lack it (fewer than two sizes, or no CPU measured)."""
    trips = [c["runs"][name].get("round_trips", {}).get("mom") for c in backend["clusters"]
             if name in c.get("runs", {})]
    trips = [t for t in trips if t is not None]
    return dict(fixed=intercept(_points(backend, name, "seconds")),
                wall=slope(_points(backend, name, "seconds")),
                cpu=slope(_points(backend, name, "cpu_seconds")),
                main=slope(_points(backend, name, "main_cpu_seconds")),
                trips=max(trips) if trips else None)


def throughput_lines(backend, forks):
    """Moms handled per minute at each size, the marginal rate (60 / seconds per extra mom),
    and the controller CPU per mom (the whole tree and Ansible's main process)."""
    sizes = [c["moms"] for c in backend["clusters"] if c.get("runs")]
    if not sizes:
        return []
    lines = ["", "Moms per minute (forks %s; moms / median wall time; marginal: 60 / seconds per "
             "extra mom) and controller CPU per extra mom (least-squares slopes):" % forks, "",
             "| run | %s | marginal moms/min | CPU s per mom | main-process CPU s per mom |"
             % " | ".join("%d moms" % m for m in sizes),
             "| --- | %s | ---: | ---: | ---: |" % " | ".join("---:" for _m in sizes)]
    for name in RUNS:
        cells = []
        for cluster in backend["clusters"]:
            run = cluster.get("runs", {}).get(name)
            wall = median(run["seconds"]) if run else None
            cells.append(_number(60.0 * cluster["moms"] / wall, 0) if wall else "-")
        if all(cell == "-" for cell in cells):
            continue
        costs = run_costs(backend, name)
        marginal = 60.0 / costs["wall"] if costs["wall"] and costs["wall"] > 0 else None
        lines.append("| %s | %s | %s | %s | %s |" % (
            name, " | ".join(cells), _number(marginal, 0), _number(costs["cpu"], 3),
            _number(costs["main"], 3)))
    return lines


def projected_seconds(costs, moms, cores, forks, trip_seconds=ASSUMED_TRIP_SECONDS):
    """Wall seconds of one run on ``moms`` moms from a controller of ``cores`` cores at
    ``forks`` forks, by the model of docs/performance.md: the fixed part plus, per mom, the
    largest of three bounds: Ansible's main process (serial, one core), the whole tree's CPU
    spread over min(cores, forks) processes, and the forks each held ``trips`` round trips of
    ``trip_seconds`` per mom. None when a cost is missing."""
    if None in (costs.get("fixed"), costs.get("cpu"), costs.get("main"), costs.get("trips")):
        return None
    per_mom = max(costs["main"], costs["cpu"] / min(cores, forks),
                  costs["trips"] * trip_seconds / forks)
    return max(0.0, costs["fixed"]) + moms * per_mom


def _duration(seconds):
    if seconds is None:
        return "-"
    return "%.0f s" % seconds if seconds < 90 else "%.0f min" % (seconds / 60.0) if seconds < 5400 \
        else "%.1f h" % (seconds / 3600.0)


def projection_lines(backend):
    """Projected wall time of each per-mom run at PROJECTED_MOMS (one row per run and size)
    on PROJECTED_CORES at PROJECTED_FORKS (one column each; the model of projected_seconds)."""
    setups = [(cores, forks) for cores in PROJECTED_CORES for forks in PROJECTED_FORKS]
    rows = []
    for name in PER_MOM_RUNS:
        costs = run_costs(backend, name)
        for moms in PROJECTED_MOMS:
            cells = [_duration(projected_seconds(costs, moms, cores, forks)) for cores, forks in setups]
            cells.append(_duration(projected_seconds(costs, moms / float(PROJECTED_SLICES), PROJECTED_CORES[0], 50)))
            if any(cell != "-" for cell in cells):
                rows.append("| %s | %d | %s |" % (name, moms, " | ".join(cells)))
    if not rows:
        return []
    return ["", "Projection (the model under \"Projection to 2,500 and 10,000 moms\"; %.1f s per round trip "
            "assumed):" % ASSUMED_TRIP_SECONDS, "",
            "| run | moms | %s | %d slices of %d cores, forks 50 (not supported) |" % (
                " | ".join("%d cores, forks %d" % setup for setup in setups), PROJECTED_SLICES, PROJECTED_CORES[0]),
            "| --- | ---: | %s | ---: |" % " | ".join("---:" for _s in setups)] + rows


def markdown(results):
    """The whole report (markdown text, no trailing newline) of ``results`` (module
    docstring)."""
    machine = results["machine"]
    cfg = results["ansible_cfg"]
    lines = ["## Measured: `make bench`", "",
             "- Machine: %s cores (nproc), %s, %s GiB memory" % (
                 machine["nproc"], machine["cpu_model"], _number(machine["memory_gib"], 1)),
             "- Date: %s" % results["date"],
             "- ansible-core %s; ansible.cfg: forks %s, pipelining %s" % (
                 results["ansible_core"], cfg["forks"], cfg["pipelining"]),
             "- Command: `%s`" % results["command"],
             "- Wall time: median of the runs listed, each with a fresh SSH control "
             "directory (first run: its one run, with `-vvv`; ping: `ansible all -m "
             "ansible.builtin.ping`, once after each timed run); ÷ ping: the median divided "
             "by ping's median at the same size; qmgr calls and round trips: one counted run "
             "with `-vvv`; changed: the largest recap `changed` over the kind's runs."]
    for backend in results["backends"]:
        lines += ["", "### Backend %s" % backend["name"], ""]
        if backend.get("skipped"):
            lines.append("Not measured: %s" % backend["skipped"])
            continue
        lines += backend_table(backend)
        lines += growth_lines(backend)
        lines += throughput_lines(backend, results["ansible_cfg"]["forks"])
        lines += projection_lines(backend)
        lines += cluster_notes(backend)
    return "\n".join(lines)


def replace_doc_section(text, section):
    """``text`` with everything between the DOC_START and DOC_END lines replaced by
    ``section`` (markers kept); with no such pair, the markers and the section appended at
    the end. Raises ValueError when only one marker, or the end before the start, is there."""
    block = "%s\n%s\n%s\n" % (DOC_START, section.rstrip("\n"), DOC_END)
    lines = text.splitlines(True)
    starts = [i for i, line in enumerate(lines) if line.strip() == DOC_START]
    ends = [i for i, line in enumerate(lines) if line.strip() == DOC_END]
    if not starts and not ends:
        separator = ("" if not text or text.endswith("\n\n")
                     else "\n" if text.endswith("\n") else "\n\n")
        return text + separator + block
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise ValueError("expected one %s line before one %s line" % (DOC_START, DOC_END))
    return "".join(lines[:starts[0]]) + block + "".join(lines[ends[0] + 1:])


# ------------------------------------------------------------------ the rollout at scale (--scenario rollout)
# Results of ``bench_rollout.py --scenario rollout`` (``--json`` writes the same): as above,
# but each cluster's ``runs`` are ROLLOUT_RUNS, each {"seconds": [...], "counted_seconds",
# "qmgr_invocations", "round_trips": {"server": trips on the server, "mom": per mom},
# "batches": batches the run announced, "cpu_seconds": controller CPU (user + system of
# ansible and its children) of the counted run, "changed"}; and each backend entry may have
# "tree": the collection checkout that ran (e.g. "HEAD" for the code before a change).

ROLLOUT_RUNS = ("ping", "rollout with work", "rollout re-run", "rollout with failures")


def rollout_row(moms, name, run, ping_seconds):
    """One markdown table row of the rollout scenario."""
    batches = run.get("batches") or 0
    trips = run.get("round_trips") or {}
    seconds = median(run.get("seconds") or []) or run.get("counted_seconds")
    per_batch = trips.get("server") / batches if batches and trips.get("server") is not None else None
    qmgr_per_batch = run.get("qmgr_invocations") / batches if batches and run.get("qmgr_invocations") is not None \
        else None
    return "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        moms, name, _number(seconds, 1), _number(ratio(seconds, ping_seconds), 1), batches,
        run.get("qmgr_invocations", "-"), _number(qmgr_per_batch, 1), _number(trips.get("server"), 0),
        _number(per_batch, 1), _number(trips.get("mom"), 1), _number(run.get("cpu_seconds"), 1))


def rollout_target(run, ping_seconds):
    """The target of the rollout with work - wall time at most 2 x (ping x batches + the
    reload waits); the reload waits are not measured apart, so this is the bound without
    them (stricter): ``(seconds, bound)`` or None when a number is missing."""
    seconds = median(run.get("seconds") or []) or run.get("counted_seconds")
    if seconds is None or not ping_seconds or not run.get("batches"):
        return None
    return seconds, 2 * ping_seconds * run["batches"]


def rollout_markdown(results):
    """The report of ``--scenario rollout``: one table per backend (and tree)."""
    lines = ["## Rollout at scale (%s, %s)" % (results.get("date", "?"), results.get("command", "")), "",
             "Machine: %s. ansible-core %s; ansible.cfg: %s." % (
                 results.get("machine"), results.get("ansible_core"), results.get("ansible_cfg")), ""]
    for backend in results.get("backends", []):
        title = backend["name"] + (" (tree %s)" % backend["tree"] if backend.get("tree") else "")
        lines.append("### %s" % title)
        lines.append("")
        if backend.get("skipped"):
            lines += ["Skipped: %s" % backend["skipped"], ""]
            continue
        lines.append("| moms | run | wall s | x ping | batches | qmgr calls | qmgr / batch | server trips | "
                     "server trips / batch | trips / mom | controller CPU s |")
        lines.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        notes = []
        for cluster in backend.get("clusters", []):
            runs = cluster.get("runs", {})
            ping = median((runs.get("ping") or {}).get("seconds") or [])
            for name in ROLLOUT_RUNS:
                if name in runs:
                    lines.append(rollout_row(cluster["moms"], name, runs[name], ping))
            target = rollout_target(runs.get("rollout with work") or {}, ping)
            if target:
                notes.append("%d moms: rollout with work %.1f s, target 2 x ping x batches = %.1f s (%s)" % (
                    cluster["moms"], target[0], target[1], "met" if target[0] <= target[1] else "not met"))
            if cluster.get("error"):
                notes.append("%d moms: error: %s" % (cluster["moms"], cluster["error"].strip()[-500:]))
        lines.append("")
        lines += ["- %s" % note for note in notes]
        lines.append("")
    return "\n".join(lines) + "\n"
