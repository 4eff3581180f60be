"""Jobs on the server: the client operations ``submit`` (qsub), ``stat_jobs`` (qstat),
``alter`` (qalter) and ``delete`` (qdel), and the rules they share: finding a job by id,
the owner-or-manager check, and the select/place defaults that give a job its
``schedselect`` and resource totals. Holds (qhold, qrls) are in :mod:`holds`; a job's
runs in :mod:`lifecycle`.
"""
import time

from mockpbs import arrays, pbslog, selectspec, wire
from mockpbs.server import accounting, array_jobs, context, hooks, lifecycle, nodes
from mockpbs.server.errors import (PBSE_BADATVAL, PBSE_BADSTATE, PBSE_FORCE_QSUB_UPDATE, PBSE_HISTJOBID,
                                   PBSE_PERM, PBSE_UNKJOBID, PBSE_UNKQUE, PbsError)

TOLERATE_VALUES = ("all", "job_start", "none")


def op_stat_jobs(ctx, message):
    """``{"jobs": [job, ...], "history_enabled": bool}``: the jobs ``ids`` (all jobs
    without), finished ones only with ``history``, subjobs only with ``subjobs``."""
    with ctx.lock:
        history = message.get("history")
        ids = message.get("ids")
        out = []
        if ids:
            for jobid in ids:
                job = lookup_job(ctx, jobid)
                if job is None:
                    raise PbsError(PBSE_UNKJOBID, "Unknown Job Id %s" % jobid)
                if job.get("job_state") == "F" and not history:
                    raise PbsError(PBSE_HISTJOBID,
                                   "%s Job has finished, use -x or -H to obtain historical job information"
                                   % job["id"])
                out.append(context.public_job(job))
        else:
            for job in ctx.state.jobs.values():
                if job.get("job_state") == "F" and not history:
                    continue
                if job.get("_subjob") and not message.get("subjobs"):
                    continue
                if message.get("arrays_only") and job.get("array") != "True":
                    continue
                out.append(context.public_job(job))
        return {"jobs": out, "history_enabled": ctx.state.server.get("job_history_enable") == "True"}


def lookup_job(ctx, jobid):
    """Job ``jobid`` (a full id, or its sequence number with any server suffix); None
    when the server does not know it."""
    jobs = ctx.state.jobs
    if jobid in jobs:
        return jobs[jobid]
    seq = jobid.split(".", 1)[0]
    for job in jobs.values():
        if job["id"].split(".", 1)[0] == seq:
            return job
    return None


def job_for_owner(ctx, message, jobid):
    """Job ``jobid`` if the sender of ``message`` owns it or is a manager; PbsError
    (PBSE_UNKJOBID, PBSE_PERM) otherwise."""
    job = lookup_job(ctx, jobid)
    if job is None or job.get("job_state") == "F":
        raise PbsError(PBSE_UNKJOBID, "Unknown Job Id %s" % jobid)
    if job.get("euser") != message.get("user") and not ctx.is_manager(message):
        raise PbsError(PBSE_PERM)
    return job


def fill_select(ctx, job):
    """Resource_List select/place defaults, then ncpus/mem/nodect and schedselect."""
    resources = job["Resource_List"]
    server = ctx.state.server
    default_chunk = {k.split(".", 1)[1]: v for k, v in server.items() if k.startswith("default_chunk.")}
    if "select" not in resources:
        ncpus = resources.get("ncpus") or server.get("resources_default.ncpus", "1")
        parts = ["1", "ncpus=%s" % ncpus]
        if "mem" in resources:
            parts.append("mem=%s" % resources["mem"])
        resources["select"] = ":".join(parts)
        resources.setdefault("place", "pack")
    else:
        resources.setdefault("place", "free")
    try:
        chunks = selectspec.parse_select(resources["select"])
    except selectspec.SelectSpecError:
        raise PbsError(PBSE_BADATVAL)
    sched_chunks = []
    for chunk in chunks:
        res = list(chunk.resources)
        names = [k for k, _unused in res]
        for key, value in default_chunk.items():
            if key not in names:
                res.append((key, value))
        sched_chunks.append(selectspec.Chunk(chunk.count, res, True))
    set_from_schedselect(job, selectspec.format_select(sched_chunks))


def set_from_schedselect(job, schedselect):
    """Set ``job``'s schedselect and its Resource_List ncpus, nodect and mem totals."""
    chunks = selectspec.parse_select(schedselect)
    resources = job["Resource_List"]
    job["schedselect"] = schedselect
    resources["ncpus"] = str(sum(c.count * int(c.get("ncpus", "0")) for c in chunks))
    resources["nodect"] = str(sum(c.count for c in chunks))
    if any(c.get("mem") for c in chunks):
        resources["mem"] = lifecycle.sum_kb(c.count * selectspec.size_to_kb(c.get("mem")) for c in chunks if c.get("mem"))


def op_submit(ctx, message):
    """Queue a job, or a job array when ``attrs`` has ``array_indices_submitted``
    (``X-Y[:Z]``). ``defaults_version`` (the default_qsub_arguments version qsub's cache
    holds) different from the server's -> PBSE_FORCE_QSUB_UPDATE (15160), as PBS makes
    qsub fetch the defaults again."""
    user = message["user"]
    host = message.get("host") or ctx.host
    attrs = message.get("attrs") or {}
    with ctx.lock:
        state = ctx.state
        held = message.get("defaults_version")
        if held is not None and held != state.qsub_args_version:
            raise PbsError(PBSE_FORCE_QSUB_UPDATE)
        indices = None
        if attrs.get("array_indices_submitted") is not None:
            try:
                indices = arrays.parse_range(attrs["array_indices_submitted"])
            except arrays.ArrayRangeError:
                raise PbsError(PBSE_BADATVAL)
            if len(indices) > int(state.server.get("max_array_size", "10000")):
                raise PbsError(15107, "Array job exceeds server or queue size limit")
        run_count = attrs.get("run_count")
        if run_count is not None and (not str(run_count).isdigit() or int(run_count) >= 2 ** 63):
            raise PbsError(PBSE_BADATVAL)
        queue = attrs.get("queue") or state.server.get("default_queue", "workq")
        if queue not in state.queues:
            raise PbsError(PBSE_UNKQUE)
        tolerate = attrs.get("tolerate_node_failures")
        if tolerate is not None and tolerate not in TOLERATE_VALUES:
            raise PbsError(PBSE_BADATVAL)
        seq = state.next_seq
        jobid = ("%d[].%s" if indices is not None else "%d.%s") % (seq, ctx.host)
        now = str(context.now())
        job = {
            "id": jobid, "Job_Name": attrs.get("Job_Name", "STDIN"),
            "Job_Owner": "%s@%s" % (user, host), "job_state": "Q", "queue": queue,
            "server": ctx.host, "Checkpoint": attrs.get("Checkpoint", "u"), "ctime": now,
            "Hold_Types": attrs.get("Hold_Types", "n"), "Join_Path": attrs.get("Join_Path", "n"),
            "Keep_Files": attrs.get("Keep_Files", "n"), "Mail_Points": attrs.get("Mail_Points", "a"),
            "mtime": now, "Priority": attrs.get("Priority", "0"), "qtime": now,
            "Rerunable": attrs.get("Rerunable", "True"),
            "Resource_List": dict(attrs.get("Resource_List") or {}), "substate": "10",
            "Variable_List": dict(attrs.get("Variable_List") or {}),
            "euser": user, "egroup": message.get("group", user), "hashname": jobid,
            "queue_rank": str(int(time.time() * 1e6)), "queue_type": "E", "etime": now,
            "project": attrs.get("project", "_pbs_project_default"), "Submit_Host": host,
            "script": message.get("script", ""),
        }
        for key in ("Submit_arguments", "executable", "argument_list", "Account_Name"):
            if attrs.get(key) is not None:
                job[key] = attrs[key]
        if tolerate is not None:
            job["tolerate_node_failures"] = tolerate
        if run_count is not None:
            job["run_count"] = str(int(run_count))
        job["Variable_List"]["PBS_O_QUEUE"] = queue
        job["Variable_List"]["PBS_O_HOST"] = host
        workdir = job["Variable_List"].get("PBS_O_WORKDIR", "/")
        for key, suffix in (("Output_Path", "o"), ("Error_Path", "e")):
            path = attrs.get(key)
            if not path:
                path = "%s/%s.%s%d" % (workdir, job["Job_Name"], suffix, seq)
                if indices is not None:
                    path += "." + arrays.INDEX_PLACEHOLDER
            if ":" not in path:
                if not path.startswith("/"):
                    path = "%s/%s" % (workdir, path)
                path = "%s:%s" % (host, path)
            job[key] = path
        hooks.run_queuejob_hooks(ctx, job, message)
        if job.get("tolerate_node_failures") not in (None,) + TOLERATE_VALUES:
            raise PbsError(PBSE_BADATVAL)
        fill_select(ctx, job)
        if job["Hold_Types"] != "n":
            job["job_state"] = "H"
            job["substate"] = "20"
        state.next_seq = seq + 1
        if state.next_seq > int(state.server.get("max_job_sequence_id", "9999999")):
            state.next_seq = 0
        state.jobs[jobid] = job
        if indices is not None:
            array_jobs.create_subjobs(ctx, job, indices, attrs["array_indices_submitted"])
        log_state_change(ctx, job)
        ctx.log.job(pbslog.PBSEVENT_DEBUG2, jobid, "enqueuing into %s, state %s hop 1" % (queue, job["job_state"]))
        ctx.log.job(pbslog.PBSEVENT_JOB, jobid,
                    "Job Queued at request of %s@%s, owner = %s, job name = %s, queue = %s"
                    % (user, host, job["Job_Owner"], job["Job_Name"], queue))
        ctx.acct.record("Q", jobid, accounting.queued_record(job))
        state.save()
    ctx.wake_scheduler()
    return {"jobid": jobid}


def op_alter(ctx, message):
    """qalter: the job's attributes from ``attrs`` (Resource_List only while it waits)."""
    with ctx.lock:
        job = job_for_owner(ctx, message, message["jobid"])
        attrs = message.get("attrs") or {}
        if "tolerate_node_failures" in attrs and attrs["tolerate_node_failures"] not in TOLERATE_VALUES:
            raise PbsError(PBSE_BADATVAL)
        if attrs.get("Resource_List") and job["job_state"] not in ("Q", "H"):
            raise PbsError(PBSE_BADSTATE)
        for key, value in attrs.items():
            if key == "Resource_List":
                job["Resource_List"].update(value)
                if "select" in value:
                    job["Resource_List"].pop("ncpus", None)
                    fill_select(ctx, job)
            else:
                job[key] = value
        job["mtime"] = str(context.now())
        ctx.log.job(pbslog.PBSEVENT_JOB, job["id"], "Job Modified at request of %s" % ctx.requestor(message))
        ctx.state.save()
    ctx.wake_scheduler()
    return {}


def op_delete(ctx, message):
    """qdel: a job, a subjob (kept as ``X`` while its array lives) or a whole array
    (every subjob; running ones are killed through their primary mom)."""
    targets = []
    with ctx.lock:
        job = job_for_owner(ctx, message, message["jobid"])
        if job.get("job_state") == "X":
            raise PbsError(15159, "Request invalid for finished array subjob")
        members = array_jobs.subjobs_of(ctx, job) if job.get("array") == "True" else [job]
        for member in members:
            if member.get("job_state") in ("X", "F"):
                continue
            ctx.acct.record("D", member["id"], "requestor=%s" % ctx.requestor(message))
            if member["job_state"] == "R":
                targets.append((member["id"], nodes.primary_mom(ctx, member)))
            elif member.get("_subjob"):
                array_jobs.subjob_done(ctx, member, None)
            else:
                lifecycle.finish_job(ctx, member, exit_status=None)
        if job.get("array") == "True" and job["id"] in ctx.state.jobs:
            ctx.acct.record("D", job["id"], "requestor=%s" % ctx.requestor(message))
            array_jobs.refresh_array(ctx, job)
        ctx.state.save()
    for jobid, target in targets:
        try:
            reply = wire.request(target[0], target[1], {"op": "delete_job", "jobid": jobid},
                                 timeout=context.RUN_JOB_TIMEOUT)
            delivered = bool(reply.get("ok"))
        except wire.WireError:
            delivered = False
        if not delivered:
            with ctx.lock:
                member = ctx.state.jobs.get(jobid)
                if member is not None:
                    lifecycle.finish_job(ctx, member, exit_status=271)
                    ctx.state.save()
    ctx.wake_scheduler()
    return {}


def log_state_change(ctx, job):
    """OpenPBS svr_setjobstate's line: the state letter's code and the substate."""
    ctx.log.job(pbslog.PBSEVENT_DEBUG3, job["id"], "Updated job state to %d and substate to %s"
                % (ord(job["job_state"]), job["substate"]))
