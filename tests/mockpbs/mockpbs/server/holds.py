"""Holds on jobs and job arrays: ``hold`` (qhold, OpenPBS req_holdjob()) and ``release``
(qrls, req_releasejob()), with the privileges each hold type needs."""
import time

from mockpbs import pbslog
from mockpbs.server import array_jobs, context, jobs
from mockpbs.server.errors import PBSE_BADSTATE, PBSE_IVALREQ, PBSE_PERM, PbsError


def check_hold_privilege(ctx, types, message):
    """``chk_hold_priv()``: a system hold needs a manager, an operator hold an operator."""
    if "s" in types and not ctx.is_manager(message):
        raise PbsError(PBSE_PERM)
    if "o" in types and not (ctx.is_manager(message) or ctx.is_operator(message)):
        raise PbsError(PBSE_PERM)


def hold_types(message):
    """The hold types of a qhold/qrls ``message`` (``u`` by default); PbsError
    (PBSE_IVALREQ) for a letter outside ``uosn``."""
    types = message.get("hold_types") or "u"
    if any(t not in "uosn" for t in types):
        raise PbsError(PBSE_IVALREQ)
    return types


def op_hold(ctx, message):
    """``req_holdjob()``: jobs and job arrays (a subjob: 15004 Invalid request); the
    comment becomes ``Job held by <user> on <date>``; a running job keeps running."""
    with ctx.lock:
        job = jobs.job_for_owner(ctx, message, message["jobid"])
        if job.get("_subjob"):
            raise PbsError(PBSE_IVALREQ)
        types = hold_types(message)
        check_hold_privilege(ctx, types, message)
        if job["job_state"] in ("E", "X"):
            raise PbsError(PBSE_BADSTATE)
        current = "" if job["Hold_Types"] == "n" else job["Hold_Types"]
        job["Hold_Types"] = "".join(t for t in "uos" if t in current or t in types) or "n"
        job["comment"] = "Job held by %s on %s" % (message.get("user", ""), time.ctime(context.now())[:24])
        ctx.log.job(pbslog.PBSEVENT_JOB, job["id"], "Holds %s set at request of %s"
                    % (types, ctx.requestor(message)))
        if job.get("array") == "True":
            array_jobs.refresh_array(ctx, job)
        elif job["job_state"] == "Q" and job["Hold_Types"] != "n":
            job["job_state"], job["substate"] = "H", "20"
        ctx.state.save()
    return {}


def release_types(job, types):
    """Remove hold ``types`` from ``job``; True when no hold is left."""
    left = "".join(t for t in job.get("Hold_Types", "n") if t not in types and t != "n")
    job["Hold_Types"] = left or "n"
    return not left


def op_release(ctx, message):
    """``req_releasejob()``: jobs and job arrays (a subjob: 15004). Releasing an array
    first releases the same holds on its held subjobs (interface 3 of the OpenPBS design
    "Changes to run_count attribute, hold and release operation of subjob(s) in a Job
    Array"): their comment goes; then the array, whose comment becomes ``Job Array Began
    at ...`` again."""
    with ctx.lock:
        job = jobs.job_for_owner(ctx, message, message["jobid"])
        if job.get("_subjob"):
            raise PbsError(PBSE_IVALREQ)
        types = hold_types(message)
        check_hold_privilege(ctx, types, message)
        free = release_types(job, types)
        if job.get("array") == "True":
            for sub in array_jobs.subjobs_of(ctx, job):
                if sub.get("job_state") != "H":
                    continue
                if release_types(sub, types):
                    sub["job_state"], sub["substate"] = "Q", "10"
                    sub.pop("comment", None)
                ctx.log.job(pbslog.PBSEVENT_JOB, sub["id"], "Holds %s released at request of %s"
                            % (types, ctx.requestor(message)))
            if free:
                if job.get("stime"):
                    job["comment"] = "Job Array Began at %s" % time.strftime(
                        "%a %b %d at %H:%M", time.localtime(int(job["stime"])))
                else:
                    job.pop("comment", None)
            array_jobs.refresh_array(ctx, job)
        elif free and job["job_state"] == "H":
            job["job_state"], job["substate"] = "Q", "10"
        ctx.log.job(pbslog.PBSEVENT_JOB, job["id"], "Holds %s released at request of %s"
                    % (types, ctx.requestor(message)))
        ctx.state.save()
    ctx.wake_scheduler()
    return {}
