"""The life cycle of a job run on the server: start (``S`` record), the mom's reports
(``mom_job_started``, ``mom_job_update`` after release_nodes(), ``mom_job_obit``,
``mom_job_requeue``), requeue, failed run attempts (system hold above 20) and the end.

A run is numbered by the job's ``run_version`` (``run_count`` when it started); a mom
reports the ``run_count`` of its copy of the job, and an obit or requeue of an earlier
run is ignored (:func:`reported_run`). Callers hold ``ctx.lock`` (the ``op_*`` handlers
take it).
"""
import collections
import time

from mockpbs import pbslog, selectspec
from mockpbs.server import accounting, array_jobs, context, nodes, scheduler
from mockpbs.server.errors import PBSE_BADATVAL, PBSE_IVALREQ, PBSE_UNKJOBID, PbsError

# The exiting substates (EXITING, STAGEOUT, STAGEDEL, EXITED) a job passes after its obit,
# each logged as "Updated job state to 69 and substate to N" (transcript g).
OBIT_SUBSTATES = ("50", "51", "52", "53")
REQUEUE_EXIT_STATUS = -16   # what PBS wrote in the R record of a hook-requested rerun (transcript g)
MAX_FAILED_RUNS = 20        # PBS_MAX_HOPCOUNT: run_count above it -> system hold
HELD_FAILED_RUNS_COMMENT = "job held, too many failed attempts to run"
ARRAY_HELD_COMMENT = "Job Array Held, too many failed attempts to run subjob %s"
JOB_EXEC_FAILHOOK_DELETE = -17   # include/job.h: a mom hook rejected the job, which is to be deleted
IGNORED = {"ignored": True}


def sum_kb(values):
    """A size total (``values``: sizes in kb) as the server shows it: the largest unit
    that keeps it whole (6gb)."""
    return selectspec.format_kb(sum(values))


class RunReport(collections.namedtuple("RunReport", "job mom_run server_run")):
    """A mom's report on the running ``job``: ``mom_run`` (the run it is about) and
    ``server_run`` (the job's current run), both integers."""

    @property
    def stale(self):
        """True if the report is about an earlier run of the job than the current one."""
        return self.mom_run < self.server_run


def reported_run(ctx, message, request):
    """The :class:`RunReport` of a mom's obit or requeue ``message`` (``jobid``,
    ``run_count``: a mom that sends none is taken to report the current run), or None
    when the job is gone or not running, logged as ``<request> for a job not running,
    ignored``. Raises PbsError (PBSE_IVALREQ) for a run_count that is not a non-negative
    integer."""
    job = ctx.state.jobs.get(message.get("jobid"))
    if job is None or job.get("job_state") != "R":
        ctx.log.job(pbslog.PBSEVENT_DEBUG, message.get("jobid", ""),
                    "%s for a job not running, ignored" % request)
        return None
    server_run = int(job.get("run_version") or job.get("run_count") or "0")
    reported = message.get("run_count")
    if reported is None:
        return RunReport(job, server_run, server_run)
    if not str(reported).isdigit():
        raise PbsError(PBSE_IVALREQ)
    return RunReport(job, int(reported), server_run)


def check_failed_attempts(ctx, job):
    """The OpenPBS design "Changes to run_count attribute, hold and release operation of
    subjob(s) in a Job Array", interfaces 1 and 2: a job whose ``run_count`` went
    above 20 gets a system hold and PBS's comment; a subjob's array is held too."""
    if int(job.get("run_count", "0")) <= MAX_FAILED_RUNS:
        return False
    current = "" if job.get("Hold_Types", "n") == "n" else job["Hold_Types"]
    job["Hold_Types"] = "".join(t for t in "uos" if t in current or t == "s")
    job["job_state"], job["substate"] = "H", "20"
    job["comment"] = HELD_FAILED_RUNS_COMMENT
    ctx.log.job(pbslog.PBSEVENT_JOB, job["id"], HELD_FAILED_RUNS_COMMENT)
    parent = array_jobs.parent_of(ctx, job)
    if parent is not None:
        held = "" if parent.get("Hold_Types", "n") == "n" else parent["Hold_Types"]
        parent["Hold_Types"] = "".join(t for t in "uos" if t in held or t == "s")
        parent["comment"] = ARRAY_HELD_COMMENT % job["id"]
        ctx.log.job(pbslog.PBSEVENT_JOB, parent["id"], parent["comment"])
        array_jobs.refresh_array(ctx, parent)
    return True


def start_job(ctx, job, exec_vnode, exec_host):
    """Start a new run of ``job`` on ``exec_vnode`` (its ``exec_host``): state R, run
    counted, vnodes taken, the run logged and its ``S`` record written."""
    now = context.now()
    job["exec_vnode"] = exec_vnode
    job["exec_host"] = exec_host
    job["job_state"], job["substate"] = "R", "41"
    job["stime"] = str(now)
    job["run_count"] = str(int(job.get("run_count", "0")) + 1)
    job["run_version"] = job["run_count"]
    job["comment"] = "Job run at %s on %s" % (time.strftime("%a %b %d at %H:%M", time.localtime(now)), exec_vnode)
    job["_resource_acct"] = dict(job["Resource_List"])
    job.pop("_pruned", None)
    job.pop("session_id", None)
    nodes.assign(ctx, job, 1)
    parent = array_jobs.parent_of(ctx, job)
    if parent is not None:
        array_jobs.array_began(ctx, parent)
        array_jobs.refresh_array(ctx, parent)
    ctx.sched_log.job(pbslog.PBSEVENT_SCHED, job["id"], "Job run")
    ctx.log.job(pbslog.PBSEVENT_JOB, job["id"],
                "Job Run at request of Scheduler@%s on exec_vnode %s" % (ctx.host, exec_vnode))
    ctx.log.job(pbslog.PBSEVENT_DEBUG3, job["id"], "Updated job state to 82 and substate to 41")
    ctx.acct.record("S", job["id"], accounting.start_record(job))


def back_to_queue(job, hold, comment=None):
    """``job`` waits again: Q, or H with the hold types ``hold``; its run attributes go."""
    for key in ("exec_vnode", "exec_host", "session_id"):
        job.pop(key, None)
    if hold:
        current = "" if job.get("Hold_Types", "n") == "n" else job["Hold_Types"]
        job["Hold_Types"] = "".join(t for t in "uos" if t in current or t in hold)
        job["job_state"], job["substate"] = "H", "20"
    else:
        job["job_state"], job["substate"] = "Q", "10"
    if comment:
        job["comment"] = comment


def finish_job(ctx, job, exit_status):
    """``job`` ended with ``exit_status`` (None: deleted before it ran): its vnodes are
    freed, then it is kept as finished (job history enabled) or removed."""
    if job.get("_subjob"):
        array_jobs.subjob_done(ctx, job, exit_status)
        return
    if job.get("exec_vnode"):
        nodes.release_nodes(ctx, job)
    if ctx.state.server.get("job_history_enable") == "True":
        # OpenPBS svr_setjob_histinfo(): FAILED (93) for a non-zero Exit_status, else
        # FINISHED (92); update_job_finish_comment() words the comment after it.
        failed = bool(exit_status)
        job["job_state"], job["substate"] = "F", "93" if failed else "92"
        if job.get("comment"):
            job["comment"] += " and failed" if failed else " and finished"
        if exit_status is not None:
            job["Exit_status"] = str(exit_status)
    else:
        ctx.state.jobs.pop(job["id"], None)


def requeue_undelivered(ctx, jobid, run_count, host):
    """The run ``run_count`` of job ``jobid`` never reached its mom on ``host``: if the
    job is still in that run, its nodes are freed and it waits again (a failed run
    attempt). Waiters on ``ctx.job_changed`` are woken in any case."""
    current = ctx.state.jobs.get(jobid)
    if current is not None and current.get("job_state") == "R" \
            and current.get("run_count") == run_count:
        nodes.release_nodes(ctx, current)
        back_to_queue(current, hold=None)
        ctx.log.job(pbslog.PBSEVENT_JOB, jobid, "Job requeued, execution node %s down" % host)
        check_failed_attempts(ctx, current)
        array_jobs.after_requeue(ctx, current)
        ctx.state.save()
    ctx.job_changed.notify_all()


# ----------------------------------------------------------------------------
# the mom's reports (PROTOCOL.md)

def running_job(ctx, jobid):
    """Job ``jobid``; PbsError (PBSE_UNKJOBID) when the server does not know it."""
    job = ctx.state.jobs.get(jobid)
    if job is None:
        raise PbsError(PBSE_UNKJOBID, "Unknown Job Id %s" % jobid)
    return job


def op_mom_job_started(ctx, message):
    """The job's program started under session ``session`` (substate 42)."""
    with ctx.lock:
        job = running_job(ctx, message["jobid"])
        if job.get("session_id") == str(message.get("session")):
            ctx.log.job(pbslog.PBSEVENT_DEBUG3, job["id"], "Received the same SID as before: %s" % message.get("session"))
            return {}
        job["session_id"] = str(message.get("session"))
        job["substate"] = "42"
        ctx.log.job(pbslog.PBSEVENT_DEBUG3, job["id"], "Received session ID for job: %s" % message.get("session"))
        ctx.log.job(pbslog.PBSEVENT_DEBUG3, job["id"], "Updated job state to 82 and substate to 42")
        ctx.state.save()
        ctx.job_changed.notify_all()
    return {}


def op_mom_job_update(ctx, message):
    """After release_nodes(): applied only if both exec_vnode and schedselect differ
    (release_nodes_semantics.md section 4); frees every vnode, reassigns the kept
    ones, regenerates exec_host, rebuilds Resource_List (site/place untouched) and
    writes the ``s`` record."""
    with ctx.lock:
        job = running_job(ctx, message["jobid"])
        new_vnode = message.get("exec_vnode")
        new_select = message.get("schedselect")
        if not new_vnode or not new_select or new_vnode == job.get("exec_vnode") \
                or new_select == job.get("schedselect"):
            ctx.log.job(pbslog.PBSEVENT_DEBUG3, job["id"], "update from Mom without session id")
            return {"applied": False}
        try:
            chunks = selectspec.parse_exec_vnode(new_vnode)
            selectspec.parse_select(new_select)
        except selectspec.SelectSpecError as exc:
            raise PbsError(PBSE_BADATVAL, str(exc))
        job["exec_vnode_acct"] = job.get("exec_vnode")
        job["exec_host_acct"] = job.get("exec_host")
        nodes.release_nodes(ctx, job, log_clearing=True)
        job["exec_vnode"] = new_vnode

        job["exec_host"] = scheduler.exec_host_from_exec_vnode(
            new_vnode, scheduler.natural_vnode_of(ctx.state.nodes), nodes.job_slots_in_use(ctx, job["id"]))
        job["schedselect"] = new_select
        resources = job["Resource_List"]
        resources["select"] = new_select
        resources["nodect"] = str(sum(c.count for c in selectspec.parse_select(new_select)))
        ncpus = 0
        mem = []
        for chunk in chunks:
            for _unused, res in chunk:
                values = dict(res)
                ncpus += int(values.get("ncpus", "0"))
                if "mem" in values:
                    mem.append(selectspec.size_to_kb(values["mem"]))
        resources["ncpus"] = str(ncpus)
        if mem:
            resources["mem"] = sum_kb(mem)
        else:
            resources.pop("mem", None)
        job["_pruned"] = True
        nodes.assign(ctx, job, 1)
        ctx.log.job(pbslog.PBSEVENT_DEBUG3, job["id"], "update from Mom without session id")
        ctx.acct.record("s", job["id"], accounting.start_record(job))
        if message.get("accounting_id") is not None:
            # As stat_update(): the s record is written before the mom's other
            # attributes (accounting_id among them) are applied to the job.
            job["accounting_id"] = message["accounting_id"]
        ctx.state.save()
    ctx.wake_scheduler()
    return {"applied": True, "exec_host": job["exec_host"]}


def op_mom_job_obit(ctx, message):
    """Job done. An obit for a job that is gone or not running (already requeued) is
    ignored, and so is one whose ``run_count`` (the mom's copy of the job's) is below
    the job's current run: a late obit of an earlier run (OpenPBS job_obit: "Obit is
    for an older run version"). Reply ``{"ignored": true}`` then."""
    with ctx.lock:
        report = reported_run(ctx, message, "obit")
        if report is None:
            return dict(IGNORED)
        job = report.job
        jobid = job["id"]
        ctx.log.job(pbslog.PBSEVENT_DEBUG, jobid, "Obit received momhop:%d serverhop:%d state:%s substate:%s"
                    % (report.mom_run, report.server_run, job.get("job_state"), job.get("substate")))
        if report.stale:
            return dict(IGNORED)
        for substate in OBIT_SUBSTATES:
            ctx.log.job(pbslog.PBSEVENT_DEBUG3, jobid, "Updated job state to %d and substate to %s"
                        % (ord("E"), substate))
        exit_status = message.get("exit_status", 0)
        if exit_status == JOB_EXEC_FAILHOOK_DELETE:
            ctx.log.job(pbslog.PBSEVENT_ERROR | pbslog.PBSEVENT_JOB, jobid,
                        "hook rejected request, requiring job to be deleted")
        job["resources_used"] = {k: str(v) for k, v in (message.get("resources_used") or {}).items()}
        end = context.now()
        if job.get("_pruned"):
            ctx.acct.record("e", jobid, accounting.phase_end_record(job))
        ctx.acct.record("E", jobid, accounting.end_record(
            job, end, exit_status, job.get("_resource_acct") if job.get("_pruned") else None))
        used = " ".join("resources_used.%s=%s" % (k, job["resources_used"][k]) for k in sorted(job["resources_used"]))
        ctx.log.job(pbslog.PBSEVENT_JOB_USAGE, jobid, ("Exit_status=%s %s" % (exit_status, used)).strip())
        finish_job(ctx, job, exit_status)
        ctx.state.save()
        ctx.job_changed.notify_all()
    ctx.wake_scheduler()
    return {}


def op_mom_job_requeue(ctx, message):
    """The mom gives a job back: its start failed (``reason`` says why), a hook asked
    for a rerun, or it lost a sister while running (``rerun: true``). The job returns
    to Q (H with ``hold``), its nodes are freed and no obit follows. A job whose program
    never started counts as a failed run attempt (system hold above 20). A requeue for
    a job that is not running any more, or from an earlier run of it (``run_count``
    below the job's), is ignored (reply ``{"ignored": true}``)."""
    with ctx.lock:
        report = reported_run(ctx, message, "requeue request")
        if report is None:
            return dict(IGNORED)
        job = report.job
        jobid = job["id"]
        if report.stale:
            ctx.log.job(pbslog.PBSEVENT_DEBUG, jobid, "requeue request of run %d while the job is in run %d, "
                        "ignored" % (report.mom_run, report.server_run))
            return dict(IGNORED)
        never_started = job.get("substate") == "41"
        if message.get("reason"):
            ctx.log.job(pbslog.PBSEVENT_JOB, jobid, message["reason"])
        ctx.acct.record("R", jobid, accounting.end_record(
            job, context.now(), message.get("exit_status", REQUEUE_EXIT_STATUS)))
        nodes.release_nodes(ctx, job)
        hold = message.get("hold")
        back_to_queue(job, hold, message.get("comment"))
        ctx.log.job(pbslog.PBSEVENT_JOB, jobid, "Job requeued, execution node  down")
        if never_started:
            check_failed_attempts(ctx, job)
        ctx.log.job(pbslog.PBSEVENT_DEBUG3, jobid, "Updated job state to %d and substate to %s"
                    % (72 if job["job_state"] == "H" else 81, job["substate"]))
        array_jobs.after_requeue(ctx, job)
        ctx.state.save()
        ctx.job_changed.notify_all()
    ctx.wake_scheduler()
    return {}
