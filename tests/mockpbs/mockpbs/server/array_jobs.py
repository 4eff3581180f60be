"""Job arrays on the server: a parent (``array = True``, its subjob ids in the private
``_subjobs``) and its subjobs (``_subjob``, ``array_id``, ``array_index``), the parent's
state and array attributes derived from its subjobs, its ``S`` and ``E`` records.

Pure helpers shared with qsub (index ranges, subjob ids) are in :mod:`mockpbs.arrays`.
Callers hold ``ctx.lock``.
"""
import copy
import time

from mockpbs import arrays
from mockpbs.server import accounting, context, nodes


def create_subjobs(ctx, parent, indices, submitted):
    """Give ``parent`` its array attributes and add one queued subjob per index."""
    parent["array"] = "True"
    parent["array_indices_submitted"] = submitted
    parent["_array_step"] = indices[1] - indices[0] if len(indices) > 1 else 1
    parent["_subjobs"] = [arrays.subjob_id(parent["id"], i) for i in indices]
    parent.pop("hashname", None)
    for index in indices:
        sub = {k: copy.deepcopy(v) for k, v in parent.items()
               if k not in ("array", "array_indices_submitted", "array_indices_remaining",
                            "array_state_count", "Submit_arguments", "_subjobs", "_array_step")}
        sub["id"] = sub["hashname"] = arrays.subjob_id(parent["id"], index)
        sub["array_id"] = parent["id"]
        sub["array_index"] = str(index)
        sub["_subjob"] = True
        sub["Hold_Types"], sub["job_state"], sub["substate"] = "n", "Q", "10"
        for key in ("Output_Path", "Error_Path"):
            sub[key] = arrays.subjob_path(sub[key], index)
        ctx.state.jobs[sub["id"]] = sub
    refresh_array(ctx, parent)


def subjobs_of(ctx, parent):
    """The subjobs of array ``parent`` that still exist, in index order."""
    return [ctx.state.jobs[i] for i in parent.get("_subjobs", []) if i in ctx.state.jobs]


def parent_of(ctx, job):
    """The array of subjob ``job``; None for any other job."""
    return ctx.state.jobs.get(job.get("array_id", "")) if job.get("_subjob") else None


def refresh_array(ctx, parent):
    """Recompute the parent's array attributes and state from its subjobs; finish the
    array when no subjob is left to run."""
    subjobs = subjobs_of(ctx, parent)
    waiting = [s for s in subjobs if s.get("job_state") in ("Q", "H")]
    parent["array_indices_remaining"] = arrays.format_indices(
        [int(s["array_index"]) for s in waiting], parent.get("_array_step", 1))
    parent["array_state_count"] = arrays.state_count(subjobs)
    if parent.get("job_state") == "F":
        return
    if subjobs and all(s.get("job_state") in ("X", "F") for s in subjobs):
        finish_array(ctx, parent)
        return
    if parent.get("Hold_Types", "n") != "n":
        parent["job_state"], parent["substate"] = "H", "20"
    elif parent.get("stime"):
        parent["job_state"], parent["substate"] = "B", arrays.ARRAY_BEGUN_SUBSTATE
    else:
        parent["job_state"], parent["substate"] = "Q", "10"


def array_began(ctx, parent):
    """The first subjob of ``parent`` runs: stime, comment and the array's ``S`` record."""
    if parent.get("stime"):
        return
    now = context.now()
    parent["stime"] = str(now)
    parent["comment"] = "Job Array Began at %s" % time.strftime("%a %b %d at %H:%M", time.localtime(now))
    ctx.acct.record("S", parent["id"], accounting.array_start_record(parent))


def finish_array(ctx, parent):
    """No subjob of ``parent`` is left to run: its ``E`` record, then parent and
    subjobs finished (history enabled) or gone."""
    parent["array_state_count"] = arrays.state_count([])
    parent["array_indices_remaining"] = "-"
    ctx.acct.record("E", parent["id"], accounting.array_end_record(parent, context.now()))
    history = ctx.state.server.get("job_history_enable") == "True"
    for sub in subjobs_of(ctx, parent):
        if history:
            sub["job_state"], sub["substate"] = "F", "92"
        else:
            ctx.state.jobs.pop(sub["id"], None)
    if history:
        parent["job_state"], parent["substate"] = "F", "92"
        parent["Exit_status"] = "0"
    else:
        ctx.state.jobs.pop(parent["id"], None)


def subjob_done(ctx, job, exit_status):
    """A subjob ended (or was deleted): it stays as ``X`` while its array lives."""
    if job.get("exec_vnode"):
        nodes.release_nodes(ctx, job)
    job["job_state"], job["substate"] = "X", "91"
    if exit_status is not None:
        job["Exit_status"] = str(exit_status)
    parent = parent_of(ctx, job)
    if parent is not None:
        refresh_array(ctx, parent)


def after_requeue(ctx, job):
    """A requeued subjob waits again: its array's attributes follow."""
    parent = parent_of(ctx, job)
    if parent is not None:
        refresh_array(ctx, parent)
