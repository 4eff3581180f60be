"""Accounting record bodies (``Q``, ``S``, ``s``, ``e``, ``E``, ``R``), in the field order
and spacing of reference/openpbs/g_reliable_job_startup_2nodes.txt and of the PP-928 design's
``s`` example (interface 2).

Every function takes a job dict (PROTOCOL.md shape) and returns the text after
``<date>;<type>;<jobid>;``; :class:`mockpbs.pbslog.AccountingLog` writes it.
"""
from mockpbs import selectspec


def _resource_list(resources):
    return ["Resource_List.%s=%s" % (k, resources[k]) for k in sorted(resources)]


def _head(job, with_start):
    fields = [
        "user=%s" % job.get("euser", ""), "group=%s" % job.get("egroup", ""),
        "project=%s" % job.get("project", "_pbs_project_default"),
    ]
    if job.get("accounting_id") is not None:
        # accounting.c ACCOUNTING_ID_FMT: always quoted, after the project.
        fields.append('accounting_id="%s"' % job["accounting_id"])
    fields += [
        "jobname=%s" % job.get("Job_Name", ""), "queue=%s" % job.get("queue", ""),
        "ctime=%s" % job.get("ctime", ""), "qtime=%s" % job.get("qtime", ""),
        "etime=%s" % job.get("etime", ""),
    ]
    if with_start:
        fields.append("start=%s" % job.get("stime", ""))
        fields.append("exec_host=%s" % job.get("exec_host", ""))
        fields.append("exec_vnode=%s" % job.get("exec_vnode", ""))
    return fields


def resource_assigned(exec_vnode):
    """``[("mem", "1gb"), ("ncpus", "3")]``: totals of the consumable resources of an
    exec_vnode (sizes formatted as PBS does, e.g. ``24gb``)."""
    totals = {}
    for chunk in selectspec.parse_exec_vnode(exec_vnode or ""):
        for _unused, resources in chunk:
            for key, value in resources:
                if key in selectspec.SIZE_RESOURCES:
                    totals[key] = totals.get(key, 0) + selectspec.size_to_kb(value)
                else:
                    try:
                        totals[key] = totals.get(key, 0) + int(value)
                    except ValueError:
                        continue
    out = []
    for key in sorted(totals):
        value = totals[key]
        out.append((key, selectspec.format_kb(value) if key in selectspec.SIZE_RESOURCES else str(value)))
    return out


def _array_indices(job):
    if job.get("array") == "True":
        return ["array_indices=%s" % job.get("array_indices_submitted", "")]
    return []


def queued_record(job):
    """``Q``: job queued (an array adds ``array_indices=``, transcript h)."""
    return " ".join(_head(job, False) + _array_indices(job) + _resource_list(job.get("Resource_List", {}))) + " "


def array_start_record(job):
    """``S`` of a job array when its first subjob starts: no exec_host/exec_vnode."""
    fields = _head(job, False) + ["start=%s" % job.get("stime", "")] + _array_indices(job)
    return " ".join(fields + _resource_list(job.get("Resource_List", {}))) + " "


def array_end_record(job, end_time):
    """``E`` of a job array after its last subjob."""
    fields = _head(job, False) + ["start=%s" % job.get("stime", "")]
    fields += _resource_list(job.get("Resource_List", {}))
    fields += ["session=0", "end=%d" % int(end_time), "Exit_status=0", "run_count=0"]
    return " ".join(fields)


def start_record(job):
    """``S`` (and ``s`` after pruning): head, exec_host/vnode, Resource_List, totals."""
    assigned = ["resource_assigned.%s=%s" % kv for kv in resource_assigned(job.get("exec_vnode"))]
    return " ".join(_head(job, True) + _resource_list(job.get("Resource_List", {})) + assigned) + " "


def _used(resources_used):
    return ["resources_used.%s=%s" % (k, resources_used[k]) for k in sorted(resources_used)]


def phase_end_record(job):
    """``e``: end of the pruned phase of a job (written before ``E`` when pruning happened)."""
    fields = _head(job, True) + _resource_list(job.get("Resource_List", {}))
    fields += ["session=%s" % job.get("session_id", "0"), "run_count=%s" % job.get("run_count", "0")]
    return " ".join(fields) + "  " + " ".join(_used(job.get("resources_used", {})))


def end_record(job, end_time, exit_status, resource_list=None):
    """``E`` (and ``R`` for a requeue): ``resource_list`` defaults to the job's; PBS writes
    the values saved at start when the job was pruned."""
    resources = resource_list if resource_list is not None else job.get("Resource_List", {})
    fields = _head(job, True) + _resource_list(resources)
    fields += ["session=%s" % job.get("session_id", "0"), "end=%d" % int(end_time),
               "Exit_status=%s" % exit_status]
    fields += _used(job.get("resources_used", {}))
    fields.append("run_count=%s" % job.get("run_count", "0"))
    return " ".join(fields)
