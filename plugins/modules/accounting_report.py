#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hpc.pbs developers
# Apache License 2.0 (https://www.apache.org/licenses/LICENSE-2.0), as galaxy.yml says

DOCUMENTATION = r'''
---
module: accounting_report
short_description: Report how well reliable job startup (PP-928) worked, from the PBS accounting records
description:
  - >-
    Reads the accounting files of the PBS server (C(PBS_HOME/server_priv/accounting/YYYYMMDD),
    one per local day, C(PBS_HOME) from the pbs.conf of O(pbs_conf_file)) over a time
    window and reports, per queue and for the whole cluster, the effect of reliable job
    startup (PP-928) and of the bundled reliable_job_startup hook. Read-only; run it on the
    PBS server host.
  - >-
    Records read - C(S) (a run starts, on the padded C(exec_vnode)), C(s) (the run was
    pruned by C(release_nodes()), PP-928 interface 8; the kept C(exec_vnode)), C(e) and
    C(E) (end), C(R) (requeued), for jobs and subjobs (C(12[3].server)); the records of a
    job array itself (C(12[].server)) are not counted. A run counts when its C(S) record
    is in the window.
  - >-
    Which sister moms failed at a run's start is known to the primary mom only. The bundled
    hook (with its config key C(record_failed_moms), default true) writes them after
    pruning to the job's C(accounting_id) as C(rjs_failed=<host>,<host>) (C(rjs_failed=)
    when none failed); the mom returns C(accounting_id) to the server with the pruned
    C(exec_vnode), and the server writes it in the run's C(e), C(E) and C(R) records (not in
    the C(s) record, which it writes just before). A released host named there is a failed
    sister; any other released host was a healthy padding chunk. A pruned run with no such
    value (still running at the end of the window, or a hook without C(record_failed_moms))
    is counted in C(pruned_runs_failed_unknown). No mom is contacted.
  - >-
    Figures (per queue in RV(report.queues), in total in RV(report.totals)) - C(jobs) (jobs
    and subjobs with a start in the window), C(padded_jobs) (the hook saved their select in
    C(Resource_List.<keep_select_resource>)), C(tolerate_node_failures_jobs) (padded or
    pruned; C(tolerate_node_failures) itself is in no accounting record), C(pruned_jobs) and
    C(pruned_runs) (an C(s) record), C(saved_jobs) and C(saved_runs) (started pruned
    although a sister failed - did not join, rejected a hook, was lost before the launch),
    C(chunks_released), C(nodes_released), C(healthy_nodes_released), C(failed_sisters),
    C(failed_starts) and C(failed_start_jobs) (runs that ended requeued, C(R), before
    being pruned, or were followed by another start with no end record),
    C(failed_start_causes) (the C(Exit_status) of the C(R) record, named as PBS's
    C(JOB_EXEC_*) codes, e.g. C(-16) a hook rejected the start and asked for a rerun),
    C(requeued_jobs), C(held_after_failed_starts) (a C(run_count) above 20 and no end:
    the server holds such a job), C(padding_node_seconds) (node-seconds held by the
    released hosts from the job's start to its prune).
  - >-
    Per node, RV(report.nodes) - how often a host was a sister at a recorded pruned start
    and how often it was the failed sister there, worst first; RV(report.worst_nodes) names
    the worst O(worst_nodes) for repair.
  - >-
    Recommendation, RV(report.recommendation) - a binomial model - each sister node of a
    start fails independently with the observed rate p (failed sister starts divided by
    sister starts, over the pruned runs whose failed sisters are recorded). A job needing n
    sister nodes padded by k more fails to start when more than k of its n+k sisters fail,
    with chance 1 - sum over i=0..k of C(n+k, i) p^i (1-p)^(n+k-i). For each job-size band
    (1, 2-4, 5-16, 17-64, 65-256, 257+ sister nodes of the original select; n the largest
    size seen in the band) it gives the smallest k with that chance at or under
    O(failure_target), next to the chance with the hook's C(increment) now (read from the
    hook's config with qmgr; C(N%) is rounded up). The model takes the increment as the
    extra sister nodes of a job, which is exact for a select with one chunk spec beside the
    primary's (C(1:ncpus=X+N:ncpus=X)); the hook adds the increment to every chunk spec but
    the primary's, so a job with m such specs gets m times the increment.
  - >-
    A line that is not an accounting record, or a day file that cannot be read or is not
    UTF-8, is reported in RV(report.problems) with its file and line, and in a warning; its
    other lines are still read.
version_added: "0.2.0"
author: hpc.pbs developers (@hpc-pbs)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - hpc.pbs.pbs
options:
  window_days:
    description:
      - Length of the window in days (whole or decimal, above 0) when O(window_start) is
        not given; it ends at O(window_end).
    type: float
    default: 7
  window_start:
    description:
      - Start of the window, the server's local time, as C(YYYY-MM-DD), C(YYYY-MM-DD HH:MM),
        C(YYYY-MM-DD HH:MM:SS) (a C(T) may replace the space) or epoch seconds. Default
        O(window_end) less O(window_days).
    type: str
  window_end:
    description:
      - End of the window (not included), in the forms of O(window_start). Default now.
    type: str
  hook_name:
    description:
      - Name of the reliable job startup hook whose config (C(increment),
        C(keep_select_resource)) is read with C(qmgr -c "export hook <name>
        application/x-config default"). A hook that does not exist or has no config gives
        the hook's defaults.
    type: str
    default: reliable_job_startup
  keep_select_resource:
    description:
      - The resource in which the hook keeps a job's original select (its
        C(keep_select_resource), PP-928 interface 8); a job whose records carry
        C(Resource_List.<resource>) is a padded job. Default - the hook config's value, else
        C(site).
    type: str
  failure_target:
    description:
      - The chance of a failed start per job (a fraction above 0 and below 1, 0.01 is 1%)
        the recommended C(increment) stays under.
    type: float
    default: 0.01
  worst_nodes:
    description:
      - How many nodes RV(report.worst_nodes) names (those that failed at least once,
        worst first); 0 or more.
    type: int
    default: 10
notes:
  - Runs C(PBS_EXEC/bin/qstat --version) and C(PBS_EXEC/bin/qmgr) (export of the hook
    config) once each, and reads the accounting files; changes nothing.
  - The accounting files are the server's local days; the window is in the server's local
    time.
attributes:
  check_mode:
    support: full
    details: Reads only; the same in check mode.
  diff_mode:
    support: none
  platform:
    platforms: posix
seealso:
  - module: hpc.pbs.tolerate_node_failures
  - module: hpc.pbs.held_jobs
  - name: OpenPBS source and design documents
    description: The PBS code this module reads the records of and the design it reports on (PP-928 reliable job startup).
    link: https://github.com/openpbs/openpbs
'''

EXAMPLES = r'''
- name: Report the last 7 days of reliable job startup
  hpc.pbs.accounting_report:
  register: rjs

- name: One day, with a 0.1% target
  hpc.pbs.accounting_report:
    window_start: "2026-11-20"
    window_end: "2026-11-21"
    failure_target: 0.001

- name: Show the table
  ansible.builtin.debug:
    msg: "{{ rjs.table }}"
'''

RETURN = r'''
report:
  description: Every figure, the JSON document the playbook hpc.pbs.report writes
    (its shape is files/schemas/accounting_report.schema.json).
  returned: always
  type: dict
  sample:
    report_version: 1
    generated_at: "2026-11-28T06:30:00+00:00"
    server: pbs-server
    pbs_version: 23.06.06
    totals: {jobs: 9, padded_jobs: 9, pruned_jobs: 8, saved_jobs: 5, failed_sisters: 5}
  contains:
    window:
      description: C(start) and C(end) (ISO 8601, the server's local time, with offset),
        C(start_epoch), C(end_epoch), and C(files), the day files read.
      type: dict
      sample:
        start: "2026-11-21T06:30:00+00:00"
        end: "2026-11-28T06:30:00+00:00"
        start_epoch: 1795242600
        end_epoch: 1795847400
        files: ["20261127", "20261128"]
    generated_at:
      description: When the report was made (ISO 8601).
      type: str
      sample: "2026-11-28T06:30:00+00:00"
    server:
      description: The PBS server (C(PBS_SERVER) of pbs.conf, else the host name).
      type: str
      sample: pbs-server
    pbs_version:
      description: What C(qstat --version) says, e.g. C(23.06.06); null when it fails.
      type: str
      sample: 23.06.06
    totals:
      description: The figures of the description for the whole cluster.
      type: dict
      sample:
        jobs: 9
        tolerate_node_failures_jobs: 9
        padded_jobs: 9
        pruned_jobs: 8
        saved_jobs: 5
        saved_runs: 5
        pruned_runs: 11
        pruned_runs_failed_unknown: 5
        chunks_released: 11
        nodes_released: 11
        healthy_nodes_released: 1
        failed_sisters: 5
        failed_start_jobs: 1
        failed_starts: 2
        requeued_jobs: 1
        held_after_failed_starts: 0
        padding_node_seconds: 59
        failed_start_causes:
          "a hook rejected the start and asked for a rerun (JOB_EXEC_FAILHOOK_RERUN)": 2
    queues:
      description: The same figures per queue name.
      type: dict
      sample:
        workq: {jobs: 9, padded_jobs: 9, pruned_jobs: 8, saved_jobs: 5, failed_sisters: 5}
    nodes:
      description: Per sister host, C(node), C(sister_starts), C(failed_starts),
        C(failure_rate), worst first.
      type: list
      elements: dict
      sample:
        - {node: mom2, sister_starts: 6, failed_starts: 4, failure_rate: 0.666667}
        - {node: mom3, sister_starts: 6, failed_starts: 1, failure_rate: 0.166667}
    worst_nodes:
      description: Names of the worst nodes.
      type: list
      elements: str
      sample: [mom2, mom3]
    jobs:
      description: Per job that was pruned or failed to start - C(job), C(queue),
        C(padded), C(starts), C(pruned_runs), C(saved_runs), C(chunks_released),
        C(nodes_released), C(failed_sisters), C(healthy_released), C(failed_unknown_runs),
        C(padding_node_seconds), C(failed_starts), C(failed_start_causes), C(requeued),
        C(held_after_failed_starts), C(run_count), C(size) (sister nodes of the original
        select).
      type: list
      elements: dict
      sample:
        - job: 3.pbs-server
          queue: workq
          padded: true
          starts: 1
          pruned_runs: 1
          saved_runs: 1
          chunks_released: 1
          nodes_released: 1
          failed_sisters: [mom2]
          healthy_released: []
          failed_unknown_runs: 0
          padding_node_seconds: 4
          failed_starts: 0
          failed_start_causes: {}
          requeued: false
          held_after_failed_starts: false
          run_count: 1
          size: 1
    recommendation:
      description: C(model) (binomial), C(target), C(sister_starts),
        C(failed_sister_starts), C(sister_failure_rate), C(current_increment) and
        C(bands) - per band C(band), C(jobs), C(sisters), C(current_increment),
        C(current_failure_chance), C(recommended_increment),
        C(recommended_failure_chance).
      type: dict
      sample:
        model: binomial
        target: 0.01
        sister_starts: 12
        failed_sister_starts: 5
        sister_failure_rate: 0.416667
        current_increment: 1
        bands:
          - {band: "1", jobs: 9, sisters: 1, current_increment: 1, current_failure_chance: 0.173611,
             recommended_increment: 5, recommended_failure_chance: 0.005233}
    problems:
      description: Lines or files that could not be read - C(file), C(line) (0 for the
        whole file), C(error).
      type: list
      elements: dict
      sample:
        - {file: /var/spool/pbs/server_priv/accounting/20261127, line: 42, error: "not 4 fields separated by ';'"}
    hook_config:
      description: The hook's config as read with qmgr (null when none could be read).
      type: dict
      sample: {tolerate: job_start, increment: 1, keep_select_resource: site, queues: [], offline_failed_vnodes: true,
               record_failed_moms: true}
prometheus:
  description: The figures in Prometheus' text exposition format (metrics C(pbs_rjs_*)),
    for node_exporter's textfile collector.
  returned: always
  type: str
  sample: |
    # HELP pbs_rjs_saved_jobs reliable job startup report: saved jobs over the window, per queue and in total
    # TYPE pbs_rjs_saved_jobs gauge
    pbs_rjs_saved_jobs{queue="_all"} 5
    pbs_rjs_saved_jobs{queue="workq"} 5
table:
  description: The report as lines of text for a person.
  returned: always
  type: list
  elements: str
  sample:
    - "reliable job startup report: 2026-11-21T06:30:00+00:00 to 2026-11-28T06:30:00+00:00, server pbs-server, PBS 23.06.06"
    - "worst nodes: mom2 (failed 4 of 6 starts), mom3 (failed 1 of 6 starts)"
'''

import json
import os
import re
import socket
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpc.pbs.plugins.module_utils.jobs import accounting
from ansible_collections.hpc.pbs.plugins.module_utils.common.module_error import ModuleError
from ansible_collections.hpc.pbs.plugins.module_utils.pbs.pbs_command import PbsRunner
from ansible_collections.hpc.pbs.plugins.module_utils.pbs.pbs_conf import (
    pbs_conf_argument_spec, task_pbs_paths)

TIME_FORMATS = ("%Y-%m-%d", "%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M",
                "%Y-%m-%dT%H:%M:%S")
REPORT_VERSION = 1


def parse_when(value):
    """An option's time text -> epoch seconds, or None when it is none of the forms."""
    text = str(value).strip()
    try:
        return float(text)
    except ValueError:
        pass
    for form in TIME_FORMATS:
        try:
            return time.mktime(time.strptime(text, form))
        except ValueError:
            continue
    return None


def iso(epoch):
    offset = time.strftime("%z", time.localtime(epoch))
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(epoch)) + offset[:3] + ":" + offset[3:]


def check_inputs(module, now):
    """The window (start, end) from the options; raises ModuleError on bad input."""
    params = module.params
    problems = []
    end = now
    if params["window_end"] is not None:
        end = parse_when(params["window_end"])
        if end is None:
            problems.append("window_end %r is not YYYY-MM-DD[ HH:MM[:SS]] nor epoch seconds"
                            % params["window_end"])
    if not params["window_days"] > 0:
        problems.append("window_days must be above 0, not %r" % params["window_days"])
    start = None
    if params["window_start"] is not None:
        start = parse_when(params["window_start"])
        if start is None:
            problems.append("window_start %r is not YYYY-MM-DD[ HH:MM[:SS]] nor epoch seconds"
                            % params["window_start"])
    if not 0 < params["failure_target"] < 1:
        problems.append("failure_target must be a fraction above 0 and below 1 (0.01 is 1%%), not %r"
                        % params["failure_target"])
    if params["worst_nodes"] < 0:
        problems.append("worst_nodes must be 0 or more, not %r" % params["worst_nodes"])
    resource = params["keep_select_resource"]
    if resource is not None and not accounting_resource_name(resource):
        problems.append("keep_select_resource %r is not a resource name (a letter, then letters, "
                        "digits, _ or -)" % resource)
    if not problems and end is not None:
        if start is None:
            start = end - params["window_days"] * 86400
        if start >= end:
            problems.append("window_start must be before window_end")
    if problems:
        raise ModuleError("; ".join(problems) + ". Nothing was read.")
    return start, end


def accounting_resource_name(text):
    return bool(re.match(r"^[A-Za-z][A-Za-z0-9_-]*$", text))


def read_hook_config(runner, qmgr, hook_name):
    """The hook's config (dict) exported by qmgr, or None (no hook, no config, not JSON)."""
    rc, out, _err = runner.run_command([qmgr, "-c", "export hook %s application/x-config default" % hook_name])
    if rc != 0 or not out.strip():
        return None
    try:
        config = json.loads(out)
    except ValueError:
        return None
    return config if isinstance(config, dict) else None


def read_version(runner, qstat):
    rc, out, _err = runner.run_command([qstat, "--version"])
    if rc != 0:
        return None
    text = out.strip()
    return text.split("=", 1)[1].strip() if "=" in text else (text or None)


def percent(value):
    return "-" if value is None else "%.2f%%" % (value * 100)


def table_lines(report):
    """The report as text lines for a person."""
    window = report["window"]
    lines = ["reliable job startup report: %s to %s, server %s, PBS %s"
             % (window["start"], window["end"], report["server"], report["pbs_version"] or "unknown")]
    columns = (("jobs", "jobs"), ("padded", "padded_jobs"), ("pruned", "pruned_jobs"),
               ("saved", "saved_jobs"), ("failed_sisters", "failed_sisters"),
               ("chunks_rel", "chunks_released"), ("nodes_rel", "nodes_released"),
               ("healthy_rel", "healthy_nodes_released"), ("failed_start", "failed_start_jobs"),
               ("requeued", "requeued_jobs"), ("held", "held_after_failed_starts"),
               ("pad_node_s", "padding_node_seconds"), ("unknown", "pruned_runs_failed_unknown"))
    rows = [("queue",) + tuple(title for title, _key in columns)]
    for name in sorted(report["queues"]):
        rows.append((name,) + tuple(str(report["queues"][name][key]) for _t, key in columns))
    rows.append(("(all)",) + tuple(str(report["totals"][key]) for _t, key in columns))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        lines.append("  ".join(cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i])
                               for i, cell in enumerate(row)))
    for cause, count in sorted(report["totals"]["failed_start_causes"].items()):
        lines.append("failed start: %d x %s" % (count, cause))
    worst = [r for r in report["nodes"] if r["failed_starts"]][:len(report["worst_nodes"])]
    lines.append("worst nodes: " + (", ".join("%s (failed %d of %d starts)" % (r["node"], r["failed_starts"], r["sister_starts"])
                                              for r in worst) or "none"))
    rec = report["recommendation"]
    lines.append("recommendation (binomial, target %s per job, sister failure rate %s, increment now %s):"
                 % (percent(rec["target"]), percent(rec["sister_failure_rate"]),
                    json.dumps(rec["current_increment"])))
    for band in rec["bands"]:
        lines.append("  %s sister nodes (%d jobs, up to %d): increment %s (%s); now %s (%s)"
                     % (band["band"], band["jobs"], band["sisters"],
                        "-" if band["recommended_increment"] is None else band["recommended_increment"],
                        percent(band["recommended_failure_chance"]),
                        "-" if band["current_increment"] is None else band["current_increment"],
                        percent(band["current_failure_chance"])))
    for problem in report["problems"]:
        lines.append("unreadable accounting: %s line %d: %s" % (problem["file"], problem["line"], problem["error"]))
    return lines


def run(module):
    """The task: the result (dict); raises ModuleError where it fails."""
    now = time.time()
    start, end = check_inputs(module, now)
    paths = task_pbs_paths(module.params)
    bin_dir = paths.exec_dir.rstrip("/") + "/bin/"
    runner = PbsRunner.for_module(module, paths)
    hook_config = read_hook_config(runner, bin_dir + "qmgr", module.params["hook_name"])
    resource = module.params["keep_select_resource"] or (hook_config or {}).get(
        "keep_select_resource") or accounting.DEFAULT_KEEP_SELECT_RESOURCE
    increment = (hook_config or {}).get("increment", 1)
    acct_dir = os.path.join(paths.home, "server_priv", "accounting")
    records, problems, files = accounting.read_records(acct_dir, start, end)
    report = accounting.build_report(records, keep_select_resource=str(resource),
                                     target=module.params["failure_target"],
                                     current_increment=increment,
                                     worst=module.params["worst_nodes"])
    report.update({
        "report_version": REPORT_VERSION,
        "generated_at": iso(now), "generated_epoch": int(now),
        "window": {"start": iso(start), "end": iso(end), "start_epoch": int(start),
                   "end_epoch": int(end), "files": files},
        "server": paths.conf.get("PBS_SERVER") or socket.gethostname(),
        "pbs_version": read_version(runner, bin_dir + "qstat"),
        "accounting_dir": acct_dir,
        "keep_select_resource": str(resource),
        "hook_config": hook_config,
        "problems": problems,
    })
    for problem in problems:
        module.warn("accounting %s line %d could not be read: %s" % (problem["file"], problem["line"], problem["error"]))
    return dict(changed=False, report=report, prometheus=accounting.metric_lines(report),
                table=table_lines(report))


def main():
    argument_spec = dict(
        window_days=dict(type="float", default=7),
        window_start=dict(type="str"),
        window_end=dict(type="str"),
        hook_name=dict(type="str", default="reliable_job_startup"),
        keep_select_resource=dict(type="str"),
        failure_target=dict(type="float", default=0.01),
        worst_nodes=dict(type="int", default=10),
    )
    argument_spec.update(pbs_conf_argument_spec())
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    try:
        result = run(module)
    except ModuleError as exc:
        module.fail_json(**exc.fail_kwargs())
    module.exit_json(**result)


if __name__ == "__main__":
    main()
