# -*- coding: utf-8 -*-
"""PBS accounting records and the effectiveness figures of reliable job startup (PP-928).

Standard library only, Python 3.6+: runs on the PBS server host inside
``hpc.pbs.accounting_report``.

An accounting file is ``$PBS_HOME/server_priv/accounting/YYYYMMDD`` (the server's local
day); each line is ``MM/DD/YYYY HH:MM:SS;<type>;<id>;<key=value ...>``. Values are
separated by spaces; a value holding spaces is quoted (``project="a b"``), and
``accounting_id`` is always quoted (``accounting_id="..."``).

The records read: ``Q`` (queued), ``S`` (a run starts, with the padded exec_vnode), ``s``
(the run was pruned by ``release_nodes()``: the kept exec_vnode), ``e`` (end of the pruned
phase), ``E`` (end), ``R`` (requeued), ``D`` (deleted) and ``A`` (aborted). Subjobs
(``12[3].server``) count as jobs; an array's own records (``12[].server``) do not.

Which sister moms failed at a run's start comes from the bundled reliable_job_startup hook:
after pruning it writes ``accounting_id="rjs_failed=<hosts>/released=<hosts>/chunks=<n>/at=<epoch>"``
(comma-separated host lists, empty when none) to the job; the mom returns ``accounting_id`` to the server, which writes
it into the run's later records (``e``, ``E``, ``R``; not the ``s`` record, written just
before the server applies the mom's other attributes). A job that ends within a few
seconds of its prune gets no ``s`` record from real OpenPBS (the mom's update with the
pruned exec_vnode reaches the server with the obit, after the job left substate 41); the
hook's value still tells that the run was pruned, what it released, and when.
"""

import math
import os
import re
import time
from typing import Any, Dict, List, Optional, Tuple

FAILED_PREFIX = "rjs_failed="
DEFAULT_KEEP_SELECT_RESOURCE = "site"
TIME_FORMAT = "%m/%d/%Y %H:%M:%S"
# Job-size bands of the recommendation: (label, smallest, largest) sister node counts.
SIZE_BANDS = (("1", 1, 1), ("2-4", 2, 4), ("5-16", 5, 16), ("17-64", 17, 64),
              ("65-256", 65, 256), ("257+", 257, None))
JOB_RECORD_TYPES = "QSseERDA"
HELD_RUN_COUNT = 20   # the server holds a job (s) whose run_count goes above this
# Exit statuses of R (requeue) records PBS writes for a failed start (include/job.h).
EXIT_CAUSES = {
    "-1": "exec failed before files (JOB_EXEC_FAIL1)",
    "-2": "exec failed after files (JOB_EXEC_FAIL2)",
    "-3": "exec failed, retry (JOB_EXEC_RETRY)",
    "-4": "aborted at mom initialization (JOB_EXEC_INITABT)",
    "-10": "invalid uid or gid (JOB_EXEC_FAILUID)",
    "-11": "rerun (JOB_EXEC_RERUN)",
    "-14": "rerun, a sister failed (JOB_EXEC_RERUN_SIS_FAIL)",
    "-15": "requeued for restart (JOB_EXEC_QUERST)",
    "-16": "a hook rejected the start and asked for a rerun (JOB_EXEC_FAILHOOK_RERUN)",
    "-17": "a hook rejected the start and deleted the job (JOB_EXEC_FAILHOOK_DELETE)",
    "-18": "a hook requeued the job (JOB_EXEC_HOOK_RERUN)",
    "-19": "a hook deleted the job (JOB_EXEC_HOOK_DELETE)",
    "-20": "the primary mom's connection failed (JOB_EXEC_RERUN_MS_FAIL)",
    "-21": "security breach in a PBS directory (JOB_EXEC_FAIL_SECURITY)",
    "-22": "a hook errored (JOB_EXEC_HOOKERROR)",
    "-30": "a sister failed to join the job (JOB_EXEC_JOINJOB)",
}
_FIELD_RE = re.compile(r'([A-Za-z_][A-Za-z0-9_.\-]*)=("[^"]*"|\S*)')
_DAY_RE = re.compile(r"^[0-9]{8}$")


class AccountingError(ValueError):
    """A line of an accounting file that is not an accounting record."""


def parse_fields(text: str) -> Dict[str, str]:
    """``'user=a project="x y" Resource_List.select=2:ncpus=1'`` -> dict of strings (quotes
    removed). Text between fields that is not ``key=value`` raises AccountingError."""
    fields = {}
    position = 0
    for match in _FIELD_RE.finditer(text):
        if text[position:match.start()].strip():
            raise AccountingError("unexpected text %r" % text[position:match.start()].strip())
        value = match.group(2)
        if len(value) >= 2 and value.startswith('"') and value.endswith('"'):
            value = value[1:-1]
        fields[match.group(1)] = value
        position = match.end()
    if text[position:].strip():
        raise AccountingError("unexpected text %r" % text[position:].strip())
    return fields


def parse_line(line: str) -> Dict[str, Any]:
    """One record line -> dict ``time`` (epoch seconds, server local time), ``type``,
    ``id``, ``fields``. Raises AccountingError saying what is wrong."""
    parts = line.rstrip("\n").split(";", 3)
    if len(parts) != 4:
        raise AccountingError("not 4 fields separated by ';'")
    stamp, kind, ident, rest = parts
    try:
        when = time.mktime(time.strptime(stamp, TIME_FORMAT))
    except ValueError:
        raise AccountingError("time %r is not MM/DD/YYYY HH:MM:SS" % stamp)
    if len(kind) != 1 or not kind.isalpha():
        raise AccountingError("record type %r is not one letter" % kind)
    if not ident:
        raise AccountingError("no id")
    # Only the job records are read field by field; the others (the server's L license
    # record, "floating license hour:0 day:0 month:0 max:0", reservations' B, F, ...) keep
    # their own layouts.
    fields = parse_fields(rest) if kind in JOB_RECORD_TYPES else {}
    return {"time": when, "type": kind, "id": ident, "fields": fields}


def day_names(start: float, end: float) -> List[str]:
    """Names ``YYYYMMDD`` of the local days from epoch ``start`` to ``end``, both in."""
    names = []
    day = time.localtime(start)
    cursor = time.mktime((day.tm_year, day.tm_mon, day.tm_mday, 12, 0, 0, 0, 0, -1))
    last = time.strftime("%Y%m%d", time.localtime(end))
    while True:
        name = time.strftime("%Y%m%d", time.localtime(cursor))
        names.append(name)
        if name >= last:
            return names
        cursor += 86400


def read_records(acct_dir: str, start: float,
                 end: float) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]], List[str]]:
    """Records of the files of the days of [start, end] whose time is in [start, end).

    Returns ``(records, problems, files)``: ``problems`` is a list of ``{"file", "line",
    "error"}`` (a line that does not parse, or a file that cannot be read or is not
    UTF-8); ``files`` the day files read. A day without a file is no problem (no job
    record that day)."""
    records, problems, files = [], [], []
    for name in day_names(start, end):
        path = os.path.join(acct_dir, name)
        if not os.path.exists(path):
            continue
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except (IOError, OSError) as err:
            problems.append({"file": path, "line": 0, "error": "cannot read: %s" % err})
            continue
        files.append(path)
        for number, raw in enumerate(data.split(b"\n"), 1):
            if not raw.strip():
                continue
            try:
                record = parse_line(raw.decode("utf-8"))
            except UnicodeDecodeError:
                problems.append({"file": path, "line": number, "error": "not UTF-8"})
                continue
            except AccountingError as err:
                problems.append({"file": path, "line": number, "error": str(err)})
                continue
            if start <= record["time"] < end:
                records.append(record)
    records.sort(key=lambda r: r["time"])
    return records, problems, files


def exec_chunks(exec_vnode: str) -> List[List[str]]:
    """``(mom1:ncpus=1)+(mom2:ncpus=1:mem=1gb+mom2b:ncpus=1)`` -> list of chunks, each the
    list of its vnode names."""
    chunks = []
    for chunk in re.findall(r"\(([^()]*)\)", exec_vnode or ""):
        chunks.append([piece.split(":", 1)[0] for piece in chunk.split("+") if piece])
    return chunks


def exec_hosts(exec_host: str) -> List[str]:
    """``mom1/0*2+mom2/0`` -> ``["mom1", "mom2"]`` (order kept, no repeats)."""
    hosts = []
    for entry in (exec_host or "").split("+"):
        host = entry.split("/", 1)[0]
        if host and host not in hosts:
            hosts.append(host)
    return hosts


def select_node_count(select: str) -> int:
    """Chunks (nodes under place=scatter) of a select: ``1:ncpus=1+3:ncpus=2`` -> 4."""
    total = 0
    for chunk in (select or "").split("+"):
        head = chunk.split(":", 1)[0]
        if chunk:
            total += int(head) if head.isdigit() else 1
    return total


def hook_record(fields: Dict[str, str]) -> Optional[Dict[str, Any]]:
    """What the bundled hook wrote to ``accounting_id`` at a pruned launch:
    ``{"failed": [hosts], "released": [hosts] or None, "chunks": int or None, "at": epoch
    or None}``, or None when the record carries none of its values."""
    value = fields.get("accounting_id")
    if value is None or not value.startswith(FAILED_PREFIX):
        return None
    parts = value[len(FAILED_PREFIX):].split("/")
    found = {"failed": [h for h in parts[0].split(",") if h], "released": None, "chunks": None, "at": None}
    for part in parts[1:]:
        key, _sep, text = part.partition("=")
        if key == "released":
            found["released"] = [h for h in text.split(",") if h]
        elif key in ("chunks", "at") and text.isdigit():
            found[key] = int(text)
    return found


def is_array_parent(ident: str) -> bool:
    return "[]" in ident


def short(host: str) -> str:
    return host.split(".", 1)[0]


class Run:
    """One start of a job: its ``S`` record and what followed until the next start."""

    def __init__(self, record: Dict[str, Any]) -> None:
        self.start = record
        self.pruned = None      # the s record
        self.end = None         # the E or R record ending the run
        self.hook = None        # what the hook recorded at this run's prune (hook_record)

    @property
    def failed(self) -> Optional[List[str]]:
        """Failed sister hosts (list), or None when the hook recorded none for this run."""
        return self.hook["failed"] if self.hook else None

    @property
    def was_pruned(self) -> bool:
        return self.pruned is not None or self.hook is not None

    @property
    def ended_kind(self) -> Optional[str]:
        return self.end["type"] if self.end else None


def job_runs(records: List[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """``{job id: {"queue", "runs": [Run], "records": [record]}}`` (array parents left
    out)."""
    jobs = {}
    for record in records:
        ident = record["id"]
        if record["type"] not in JOB_RECORD_TYPES or is_array_parent(ident):
            continue
        job = jobs.setdefault(ident, {"queue": "", "runs": [], "records": []})
        job["records"].append(record)
        queue = record["fields"].get("queue")
        if queue:
            job["queue"] = queue
        kind = record["type"]
        current = job["runs"][-1] if job["runs"] else None
        if kind == "S":
            job["runs"].append(Run(record))
        elif current is None:
            continue
        elif kind == "s":
            current.pruned = record
        elif kind in "eER" and current.end is None:
            if kind != "e":
                current.end = record
            found = hook_record(record["fields"])
            began = float(current.start["fields"].get("start") or current.start["time"])
            # A value written at an earlier run's prune is carried by the job into later
            # records: it belongs to this run only when written at or after its start
            # (or, an older hook without the time, when this run was pruned).
            if found is not None and ((found["at"] is not None and found["at"] >= began)
                                      or (found["at"] is None and current.pruned is not None)):
                current.hook = found
    return jobs


def empty_figures() -> Dict[str, Any]:
    return {
        "jobs": 0, "tolerate_node_failures_jobs": 0, "padded_jobs": 0, "pruned_jobs": 0,
        "saved_jobs": 0, "saved_runs": 0, "pruned_runs": 0, "pruned_runs_failed_unknown": 0,
        "chunks_released": 0, "nodes_released": 0, "healthy_nodes_released": 0,
        "failed_sisters": 0, "failed_start_jobs": 0, "failed_starts": 0,
        "requeued_jobs": 0, "held_after_failed_starts": 0, "padding_node_seconds": 0,
        "failed_start_causes": {},
    }


def job_summary(ident: str, job: Dict[str, Any],
                keep_select_resource: str) -> Optional[Dict[str, Any]]:
    """Figures of one job from its runs (dict), or None when no run started."""
    runs = job["runs"]
    if not runs:
        return None
    padded = any(("Resource_List." + keep_select_resource) in r.start["fields"] for r in runs)
    summary = {"job": ident, "queue": job["queue"], "padded": padded, "starts": len(runs),
               "pruned_runs": 0, "saved_runs": 0, "chunks_released": 0, "nodes_released": 0,
               "failed_sisters": [], "healthy_released": [], "failed_unknown_runs": 0,
               "padding_node_seconds": 0, "failed_starts": 0, "failed_start_causes": [],
               "requeued": False, "held_after_failed_starts": False, "run_count": None}
    original = runs[0].start["fields"].get("Resource_List." + keep_select_resource)
    summary["size"] = max(select_node_count(original) - 1, 0) if original else None
    for run in runs:
        start_fields = run.start["fields"]
        if run.was_pruned:
            summary["pruned_runs"] += 1
            hosts_before = exec_hosts(start_fields.get("exec_host"))
            if run.hook is not None and run.hook["released"] is not None:
                released = list(run.hook["released"])
            else:
                kept = set(short(h) for h in exec_hosts(run.pruned["fields"].get("exec_host")))
                released = [short(h) for h in hosts_before if short(h) not in kept]
            if run.hook is not None and run.hook["chunks"] is not None:
                chunks = run.hook["chunks"]
            else:
                chunks = max(len(exec_chunks(start_fields.get("exec_vnode")))
                             - len(exec_chunks(run.pruned["fields"].get("exec_vnode"))), 0)
            summary["chunks_released"] += chunks
            summary["nodes_released"] += len(released)
            began = float(start_fields.get("start") or run.start["time"])
            if run.hook is not None and run.hook["at"] is not None:
                pruned_at = run.hook["at"]
            else:
                pruned_at = run.pruned["time"]
            summary["padding_node_seconds"] += int(round(len(released) * max(pruned_at - began, 0)))
            if run.failed is None:
                summary["failed_unknown_runs"] += 1
            else:
                failed = sorted(set(short(f) for f in run.failed))
                summary["failed_sisters"] += failed
                summary["healthy_released"] += [h for h in released if short(h) not in failed]
                if failed:
                    summary["saved_runs"] += 1
        elif run.ended_kind == "R" or (run is not runs[-1] and run.end is None):
            summary["failed_starts"] += 1
            status = run.end["fields"].get("Exit_status") if run.end else None
            cause = EXIT_CAUSES.get(status, "exit status %s" % status) if status else "started again with no end record"
            summary["failed_start_causes"].append(cause)
        if run.ended_kind == "R":
            summary["requeued"] = True
    counts = [int(r["fields"]["run_count"]) for r in job["records"]
              if r["fields"].get("run_count", "").isdigit()]
    if counts:
        summary["run_count"] = max(counts)
        summary["held_after_failed_starts"] = (summary["run_count"] > HELD_RUN_COUNT
                                               and runs[-1].ended_kind != "E")
    return summary


def add_job(figures: Dict[str, Any], summary: Dict[str, Any]) -> None:
    figures["jobs"] += 1
    if summary["padded"] or summary["pruned_runs"]:
        figures["tolerate_node_failures_jobs"] += 1
    figures["padded_jobs"] += int(bool(summary["padded"]))
    figures["pruned_jobs"] += int(bool(summary["pruned_runs"]))
    figures["pruned_runs"] += summary["pruned_runs"]
    figures["saved_jobs"] += int(bool(summary["saved_runs"]))
    figures["saved_runs"] += summary["saved_runs"]
    figures["pruned_runs_failed_unknown"] += summary["failed_unknown_runs"]
    figures["chunks_released"] += summary["chunks_released"]
    figures["nodes_released"] += summary["nodes_released"]
    figures["healthy_nodes_released"] += len(summary["healthy_released"])
    figures["failed_sisters"] += len(summary["failed_sisters"])
    figures["failed_start_jobs"] += int(bool(summary["failed_starts"]))
    figures["failed_starts"] += summary["failed_starts"]
    figures["requeued_jobs"] += int(summary["requeued"])
    figures["held_after_failed_starts"] += int(summary["held_after_failed_starts"])
    figures["padding_node_seconds"] += summary["padding_node_seconds"]
    for cause in summary["failed_start_causes"]:
        figures["failed_start_causes"][cause] = figures["failed_start_causes"].get(cause, 0) + 1


def failure_probability(sisters: int, increment: int, rate: float) -> float:
    """Binomial chance that more than ``increment`` of ``sisters + increment`` sister
    nodes fail, each independently with probability ``rate``."""
    total = sisters + increment
    kept = 0.0
    for failures in range(0, increment + 1):
        kept += _comb(total, failures) * rate ** failures * (1 - rate) ** (total - failures)
    return max(0.0, 1.0 - kept)


def _comb(n, k):
    """n choose k (math.comb is Python 3.8+)."""
    if k < 0 or k > n:
        return 0
    k = min(k, n - k)
    value = 1
    for i in range(k):
        value = value * (n - i) // (i + 1)
    return value


def increment_for(sisters: int, setting: Any) -> Optional[int]:
    """Extra sister nodes a hook ``increment`` setting gives a job of ``sisters`` sister
    nodes in one chunk: an int, ``"N"``, or ``"N%"`` (rounded up); None for a map."""
    if isinstance(setting, bool) or setting is None or isinstance(setting, dict):
        return None
    text = str(setting)
    if text.endswith("%") and text[:-1].isdigit():
        return int(math.ceil(sisters * int(text[:-1]) / 100.0))
    if text.isdigit():
        return int(text)
    return None


def recommendation(summaries: List[Dict[str, Any]], node_rows: List[Dict[str, Any]], target: float,
                   current_increment: Any, max_increment: int = 64) -> Dict[str, Any]:
    """Per job-size band, the smallest ``increment`` whose binomial chance of a failed
    start stays at or under ``target``, next to the chance under ``current_increment``."""
    trials = sum(row["sister_starts"] for row in node_rows)
    failures = sum(row["failed_starts"] for row in node_rows)
    rate = (float(failures) / trials) if trials else None
    bands = []
    for label, low, high in SIZE_BANDS:
        sizes = [s["size"] for s in summaries
                 if s["size"] and s["size"] >= low and (high is None or s["size"] <= high)]
        if not sizes:
            continue
        sisters = max(sizes)
        row = {"band": label, "jobs": len(sizes), "sisters": sisters,
               "current_increment": increment_for(sisters, current_increment),
               "current_failure_chance": None, "recommended_increment": None,
               "recommended_failure_chance": None}
        if rate is not None:
            if row["current_increment"] is not None:
                row["current_failure_chance"] = round(failure_probability(sisters, row["current_increment"], rate), 6)
            for increment in range(0, max_increment + 1):
                chance = failure_probability(sisters, increment, rate)
                if chance <= target:
                    row["recommended_increment"] = increment
                    row["recommended_failure_chance"] = round(chance, 6)
                    break
        bands.append(row)
    return {"model": "binomial", "target": target, "sister_starts": trials, "failed_sister_starts": failures,
            "sister_failure_rate": round(rate, 6) if rate is not None else None,
            "current_increment": current_increment, "bands": bands}


def node_table(summaries: List[Dict[str, Any]],
               jobs: Dict[str, Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Per sister host: how often it was a sister at a recorded start and how often it
    failed there, worst first."""
    rows = {}
    for summary in summaries:
        job = jobs[summary["job"]]
        for run in job["runs"]:
            if run.failed is None:
                continue
            hosts = exec_hosts(run.start["fields"].get("exec_host"))[1:]
            failed = set(short(h) for h in run.failed)
            for host in hosts:
                row = rows.setdefault(short(host), {"node": short(host), "sister_starts": 0, "failed_starts": 0})
                row["sister_starts"] += 1
                row["failed_starts"] += int(short(host) in failed)
    out = sorted(rows.values(), key=lambda r: (-r["failed_starts"], r["node"]))
    for row in out:
        row["failure_rate"] = round(float(row["failed_starts"]) / row["sister_starts"], 6) if row["sister_starts"] else 0.0
    return out


def build_report(records: List[Dict[str, Any]],
                 keep_select_resource: str = DEFAULT_KEEP_SELECT_RESOURCE, target: float = 0.01,
                 current_increment: Any = None, worst: int = 10) -> Dict[str, Any]:
    """Every figure of the report from parsed records (see the module documentation)."""
    jobs = job_runs(records)
    summaries = []
    totals = empty_figures()
    queues = {}
    for ident in sorted(jobs):
        summary = job_summary(ident, jobs[ident], keep_select_resource)
        if summary is None:
            continue
        summaries.append(summary)
        add_job(totals, summary)
        add_job(queues.setdefault(summary["queue"], empty_figures()), summary)
    nodes = node_table(summaries, jobs)
    detail = [s for s in summaries if s["pruned_runs"] or s["failed_starts"] or s["held_after_failed_starts"]]
    return {
        "totals": totals,
        "queues": queues,
        "nodes": nodes,
        "worst_nodes": [r["node"] for r in nodes if r["failed_starts"]][:worst],
        "jobs": detail,
        "recommendation": recommendation(summaries, nodes, target, current_increment),
    }


def metric_lines(report: Dict[str, Any]) -> List[str]:
    """The report's figures in Prometheus' text exposition format (node_exporter's
    textfile collector)."""
    lines = []

    def family(name, help_text, kind="gauge"):
        lines.append("# HELP %s %s" % (name, help_text))
        lines.append("# TYPE %s %s" % (name, kind))

    def label(value):
        return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')

    figures = sorted(k for k in empty_figures() if k != "failed_start_causes")
    for key in figures:
        name = "pbs_rjs_%s" % key
        family(name, "reliable job startup report: %s over the window, per queue and in total"
               % key.replace("_", " "))
        lines.append('%s{queue="_all"} %s' % (name, report["totals"][key]))
        for queue in sorted(report["queues"]):
            lines.append('%s{queue="%s"} %s' % (name, label(queue), report["queues"][queue][key]))
    family("pbs_rjs_node_failed_starts", "starts of a job at which this sister mom failed")
    for row in report["nodes"]:
        lines.append('pbs_rjs_node_failed_starts{node="%s"} %d' % (label(row["node"]), row["failed_starts"]))
    family("pbs_rjs_node_sister_starts", "recorded starts of a padded job with this mom as a sister")
    for row in report["nodes"]:
        lines.append('pbs_rjs_node_sister_starts{node="%s"} %d' % (label(row["node"]), row["sister_starts"]))
    family("pbs_rjs_recommended_increment", "increment that keeps the chance of a failed start under the target")
    for band in report["recommendation"]["bands"]:
        if band["recommended_increment"] is not None:
            lines.append('pbs_rjs_recommended_increment{band="%s"} %d' % (band["band"], band["recommended_increment"]))
    family("pbs_rjs_accounting_problems", "accounting lines or files that could not be read")
    lines.append("pbs_rjs_accounting_problems %d" % len(report.get("problems", [])))
    family("pbs_rjs_report_time_seconds", "when the report was made (epoch seconds)")
    lines.append("pbs_rjs_report_time_seconds %d" % int(report.get("generated_epoch", 0)))
    return "\n".join(lines) + "\n"
