"""The sister side of a job on a mom (PP-928 interfaces 1, 3, 4, 8, 9): the IM requests
the job's primary mom sends it. ``join_job`` runs its execjob_begin hooks and keeps the job,
``exec_prologue`` its execjob_prologue hooks, ``update_job`` keeps the pruned nodes table
and runs execjob_resize, ``poll_job`` says it still has the job, ``delete_job2`` (released
by ``release_nodes()``) and ``delete_job`` (the job is over) drop it with its execjob_end
hooks. Tasks of the job (``spawn_task``) are the task manager's (:mod:`mockpbs.mom.tm`).
"""
from mockpbs import pbslog
from mockpbs.mom.jobevents import PBSE_HOOKERROR, HookRejected
from mockpbs.mom.jobrecord import JobRecord, resource_list_from


class SisterMom:
    """The sister side of the jobs of one mom over ``jobs`` (a MomJobs): each method serves
    one IM request {op, jobid...} and returns its reply dict."""

    def __init__(self, jobs):
        self.jobs = jobs
        self.mom = jobs.mom
        self.events = jobs.events

    def join_job(self, message):
        """IM ``join_job`` {job, vnodes, node_index, cookie} (interface 3): run the
        execjob_begin hooks and keep the job; a reject answers PBSE_HOOKERROR."""
        job, vnodes = message["job"], message.get("vnodes") or {}
        jobid = job["id"]
        self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, "JOIN_JOB as node %s" % message.get("node_index", 1))
        try:
            job, _unused = self.events.run_event("execjob_begin", job, vnodes, {"in_ms_mom": False})
        except HookRejected as exc:
            return {"ok": False, "code": PBSE_HOOKERROR, "error": str(exc)}
        record = JobRecord(job, vnodes, primary=False)
        record.begun = True
        record.cookie = message.get("cookie")
        self.jobs.add(record)
        return {"ok": True}

    def exec_prologue(self, message):
        """IM ``exec_prologue`` {jobid} (interface 4): run the execjob_prologue hooks."""
        record = self.jobs.get(message["jobid"])
        if record is None:
            return {"ok": False, "code": 15001, "error": "Unknown Job Id %s" % message["jobid"]}
        try:
            record.job, _unused = self.events.run_event("execjob_prologue", record.job, record.vnodes, {"in_ms_mom": False})
        except HookRejected as exc:
            return {"ok": False, "code": PBSE_HOOKERROR, "error": str(exc)}
        return {"ok": True}

    def update_job(self, message):
        """IM ``update_job`` (interfaces 8, 9): keep the new nodes table, run execjob_resize.
        A rejecting resize hook aborts the job here (the record is dropped) and the reply
        carries ``resize_rejected: true`` so the primary requeues the job."""
        jobid = message["jobid"]
        record = self.jobs.get(jobid)
        if record is None:
            return {"ok": False, "code": 15001, "error": "Unknown Job Id %s" % jobid}
        job = dict(record.job)
        for key in ("exec_vnode", "exec_host", "schedselect"):
            if message.get(key):
                job[key] = message[key]
        job["Resource_List"] = resource_list_from(job)
        try:
            self.events.run_event("execjob_resize", job, record.vnodes, {"in_ms_mom": False})
        except HookRejected as exc:
            self.mom.log.job(pbslog.PBSEVENT_DEBUG2, jobid, "execjob_resize hook rejected request: %s" % exc)
            self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, "kill_job")
            self.jobs.pop(jobid)
            record.job = job
            self.events.end_hooks(record, ("execjob_abort", "execjob_end"))
            return {"ok": False, "code": PBSE_HOOKERROR, "error": str(exc), "resize_rejected": True}
        record.job = job
        self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, "updated nodes info")
        return {"ok": True}

    def poll_job(self, message):
        """IM ``poll_job``: the primary checks that this sister is alive and has the job."""
        if self.jobs.get(message["jobid"]) is None:
            return {"ok": False, "code": 15001, "error": "Unknown Job Id %s" % message["jobid"]}
        return {"ok": True}

    def delete_job2(self, message):
        """IM ``delete_job2`` {jobid}: released by ``release_nodes()`` (interface 8)."""
        jobid = message["jobid"]
        self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, "DELETE_JOB2 received")
        self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, "kill_job")
        record = self.jobs.pop(jobid)
        if record is not None:   # released by release_nodes(): its cgroups etc. go now
            self.events.end_hooks(record, ("execjob_end",))
        return {"ok": True}

    def delete_job(self, message):
        """IM ``delete_job`` {jobid}: the job is over or requeued; its execjob_end hooks run."""
        jobid = message["jobid"]
        self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, "DELETE_JOB received")
        record = self.jobs.pop(jobid)
        if record is not None:
            try:
                self.events.run_event("execjob_end", record.job, record.vnodes, {"in_ms_mom": False})
            except HookRejected:
                pass
        self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, "kill_job")
        return {"ok": True}
