"""The run loop of the server's scheduler: one scheduling cycle places the queued jobs
on the vnodes and sends each to its primary mom with the run request ``job_run_wait``
asks for (Scheduling Job Run Wait: ``execjob_hook`` waits for the mom's verdict,
``runjob_hook`` and ``none`` do not).

:func:`schedule_cycle` is what :class:`mockpbs.server.scheduler.Scheduler` calls.
"""
import copy
import threading

from mockpbs import pbslog, selectspec, wire
from mockpbs.server import array_jobs, context, hooks, lifecycle, nodes, scheduler
from mockpbs.server.errors import ERROR_TEXT, PBSE_MOMREJECT

# job_run_wait=execjob_hook: seconds the scheduler waits for the mom's verdict on one job
# (requeue = rejected, mom_job_started = accepted); pbs_runjob's own limit is 600 s.
RUN_ACK_TIMEOUT = 600.0
MOM_REJECT_COMMENT = "Not Running: PBS Error: Execution server rejected request"
# Batch request numbers of the three run requests (src/include/libpbs.h) and the IFL call
# the scheduler makes for each job_run_wait value (sched send_run_job()).
RUN_REQUESTS = {
    "execjob_hook": (15, "pbs_runjob"),
    "runjob_hook": (97, "pbs_asyrunjob_ack"),
    "none": (23, "pbs_asyrunjob"),
}


def run_mode(ctx):
    """The run request the scheduler uses now (``job_run_wait``, from the OpenPBS design "New
    sched attribute to control runjob wait"): ``execjob_hook``, ``runjob_hook`` (only while
    an enabled runjob hook exists) or ``none``."""
    mode = ctx.state.sched.get("job_run_wait", "runjob_hook")
    if mode == "runjob_hook" and not hooks.sorted_hooks(ctx, "runjob"):
        return "none"
    return mode if mode in RUN_REQUESTS else "none"


def runnable(ctx):
    """Queued jobs and subjobs in queue order (array parents, subjobs of a held array
    and jobs of stopped queues left out)."""
    out = []
    for job in ctx.state.jobs.values():
        if job.get("job_state") != "Q" or job.get("array") == "True":
            continue
        if ctx.state.queues.get(job["queue"], {}).get("started", "True") != "True":
            continue
        parent = array_jobs.parent_of(ctx, job)
        if parent is not None and parent.get("job_state") in ("H", "F"):
            continue
        out.append(job)
    return sorted(out, key=lambda j: (int(j.get("queue_rank", "0")), int(j.get("array_index", "0"))))


def _next_job(ctx, considered, view):
    """``(job, (exec_vnode, exec_host))``: the first runnable job not yet in
    ``considered`` (a set of ids, updated) that fits on ``view`` (the cycle's vnodes);
    ``(None, None)`` when none is left. A job that does not fit is logged."""
    for candidate in runnable(ctx):
        if candidate["id"] in considered:
            continue
        considered.add(candidate["id"])
        try:
            placed = scheduler.place_job(candidate["schedselect"],
                                         candidate["Resource_List"].get("place"), view,
                                         nodes.job_slots_in_use(ctx, candidate["id"]))
        except selectspec.SelectSpecError:
            placed = None
        if placed is None:
            ctx.sched_log.job(pbslog.PBSEVENT_DEBUG2, candidate["id"],
                              "Insufficient amount of resource: ncpus")
            continue
        return candidate, placed
    return None, None


def schedule_cycle(ctx):
    """One scheduling cycle; returns the ids of the jobs the moms accepted (with
    ``none``/``runjob_hook``: the jobs sent). Jobs are taken one at a time in queue
    order, each considered once per cycle; with ``job_run_wait = execjob_hook`` the
    cycle waits for the mom's verdict on a job before it places the next one, so the
    vnodes of a rejected job serve later jobs of the same cycle.

    As the PBS scheduler, which queries the server's state once per cycle, the cycle
    places jobs on a view of the vnodes taken at its start, minus what the jobs it ran
    took: vnodes freed during the cycle (a job requeued or ended meanwhile) serve the
    next cycle, which their release wakes."""
    with ctx.lock:
        state = ctx.state
        if state.server.get("scheduling") != "True" or state.sched.get("scheduling", "True") != "True":
            return []
        mode = run_mode(ctx)
        ctx.sched_log.record(pbslog.PBSEVENT_DEBUG, pbslog.OBJ_REQ, "", "Starting Scheduling Cycle")
        view = copy.deepcopy(state.nodes)
    considered = set()
    started = []
    while True:
        with ctx.lock:
            job, placed = _next_job(ctx, considered, view)
            if job is None:
                break
            jobid = job["id"]
            number, call = RUN_REQUESTS[mode]
            ctx.sched_log.job(pbslog.PBSEVENT_DEBUG2, jobid, "run request %s (job_run_wait=%s)"
                              % (call, ctx.state.sched.get("job_run_wait", "runjob_hook")))
            ctx.log.record(pbslog.PBSEVENT_DEBUG2, pbslog.OBJ_REQ, "",
                           "Type %d request received from Scheduler@%s, sock=0" % (number, ctx.host))
            if mode == "runjob_hook" and not hooks.runjob_hooks_accept(ctx, job):
                continue
            lifecycle.start_job(ctx, job, placed[0], placed[1])
            payload = (nodes.primary_mom(ctx, job), context.public_job(job), nodes.vnodes_payload(ctx, job),
                       job["run_count"])
            ctx.state.save()
            taken = {"id": jobid, "exec_vnode": placed[0]}
            if mode != "execjob_hook":
                nodes.assign(ctx, taken, 1, nodes=view)
        if mode == "execjob_hook":
            if run_and_wait(ctx, jobid, payload):
                started.append(jobid)
                with ctx.lock:
                    nodes.assign(ctx, taken, 1, nodes=view)
        else:
            threading.Thread(target=send_run_job, args=(ctx, jobid, payload),
                             name="run-%s" % jobid, daemon=True).start()
            started.append(jobid)
    with ctx.lock:
        ctx.sched_log.record(pbslog.PBSEVENT_DEBUG, pbslog.OBJ_REQ, "", "Leaving Scheduling Cycle")
        ctx.state.save()
    return started


def deliver(ctx, jobid, payload):
    """Send ``run_job`` to the job's primary mom; an unreachable mom or a refusal
    requeues the job (run_count kept, hold above 20 failed runs). True if delivered."""
    (host, port), job, vnodes, _unused = payload
    try:
        reply = wire.request(host, port, {"op": "run_job", "job": job, "vnodes": vnodes},
                             timeout=context.RUN_JOB_TIMEOUT)
        if reply.get("ok"):
            return True
    except wire.WireError:
        pass
    with ctx.lock:
        lifecycle.requeue_undelivered(ctx, jobid, payload[3], host)
    ctx.wake_scheduler()
    return False


def send_run_job(ctx, jobid, payload):
    """:func:`deliver` without a result (the body of a ``run-<jobid>`` thread)."""
    deliver(ctx, jobid, payload)


def run_and_wait(ctx, jobid, payload):
    """``pbs_runjob``: deliver, then wait until the mom accepted the job (its program
    started) or gave it back; a rejection is logged by the scheduler as PBS does."""
    run_count = payload[3]
    accepted = deliver(ctx, jobid, payload)

    def settled():
        job = ctx.state.jobs.get(jobid)
        return (job is None or job.get("run_count") != run_count or job.get("job_state") != "R"
                or job.get("substate") != "41")

    with ctx.lock:
        if accepted:
            ctx.job_changed.wait_for(settled, timeout=RUN_ACK_TIMEOUT)
        job = ctx.state.jobs.get(jobid)
        if job is not None and job.get("run_count") == run_count and job.get("job_state") == "R":
            return True
        if job is not None and job.get("job_state") == "Q":
            job["comment"] = MOM_REJECT_COMMENT
        ctx.sched_log.job(pbslog.PBSEVENT_SCHED, jobid, "Failed to run: %s (%d)"
                          % (ERROR_TEXT[PBSE_MOMREJECT], PBSE_MOMREJECT))
        return False
