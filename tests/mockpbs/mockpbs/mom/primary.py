"""The primary mom's (mother superior's) job start (PP-928 interfaces 1, 3, 4, 5, 8, 9).

Primary mom (``run_job``), in order:

1. its own execjob_begin hooks;
2. ``join_job`` to every sister host in parallel, waiting at most
   ``$sister_join_job_alarm`` seconds; failures are tolerated when
   ``tolerate_node_failures`` is ``all`` or ``job_start`` (the job is not running yet),
   otherwise the job is requeued (``mom_job_requeue``);
3. its own execjob_prologue hooks, then ``exec_prologue`` to the healthy sisters, waiting
   at most ``$job_launch_delay`` seconds; unacknowledged hosts become failed, but a
   positive acknowledgement that arrives before the execjob_launch hooks run puts its
   host back among the healthy ones (interface 4, as OpenPBS's job child asks its parent
   for the failed hosts only when it is about to run the launch hooks);
4. execjob_launch hooks with ``vnode_list``, ``vnode_list_fail``, ``failed_mom_list``,
   ``succeeded_mom_list`` and the job's environment (:mod:`mockpbs.mom.jobenv`); a reject
   requeues the job with the hold/rerun the hook set; an accepted ``release_nodes()``
   prunes the job (``pruned from``/``pruned to``, ``delete_job2`` to released sisters, the
   primary's own execjob_resize hooks, ``update_job`` to kept sisters with a 5 s wait for
   their acknowledgements, ``mom_job_update``); a rejecting execjob_resize hook on any mom
   still in the job requeues it (interfaces 8, 9);
5. the job program runs and ends: :mod:`mockpbs.mom.running`.

A Cray primary mom (``$alps_client`` set) runs the job with
``tolerate_node_failures=none`` whatever the job asked (interface 1). The sisters' side
of these requests is :mod:`mockpbs.mom.sister`.

Log texts and classes follow tests/reference/log_messages.json and transcripts g.
"""
import secrets
import threading

from mockpbs import pbslog
from mockpbs.mom import jobenv
from mockpbs.mom.imclient import fire_and_forget, parallel
from mockpbs.mom.jobchild import JobChild
from mockpbs.mom.jobevents import PBSE_HOOKERROR, HookRejected, primary_hook_context
from mockpbs.mom.jobrecord import JOB_ERROR_CLASS, JobRecord, exec_hosts, resource_list_from, tolerates_failures

UPDATE_JOB_WAIT = 5      # seconds the primary waits for update_job acks (PP-928 interface 8)
LATE_ACK_GRACE = 3600    # seconds a prologue request stays open after $job_launch_delay
JOB_EXEC_FAILHOOK_RERUN = -16    # include/job.h: a launch hook rejected the job after job.rerun()
JOB_EXEC_FAILHOOK_DELETE = -17   # ... rejected it otherwise (the job is to be deleted)
JOB_ATTRIBUTES_PRUNED = ("exec_vnode", "exec_host", "schedselect")   # what release_nodes() changes


class PrimaryMom:
    """The primary mom's side of the jobs of one mom over ``jobs`` (a MomJobs). ``mom``
    provides: ``log``, ``hooks`` (HookStore), ``host_name``, ``pbs_home``,
    ``address_of(host)``, ``send_server(message)``, ``join_alarm()``, ``launch_delay()``,
    ``is_cray()``."""

    def __init__(self, jobs):
        self.jobs = jobs
        self.mom = jobs.mom
        self.events = jobs.events

    def run_job(self, message):
        """Service op ``run_job``: reply at once, start the job in the background."""
        job, vnodes = dict(message["job"]), message.get("vnodes") or {}
        record = JobRecord(job, vnodes, primary=True)
        record.cookie = secrets.token_hex(16)
        self.jobs.add(record)
        threading.Thread(target=self._start_job, args=(record,), name="job-%s" % job["id"], daemon=True).start()
        return {"ok": True}

    def requeue(self, record, hold=None, comment=None, reason=None, rerun=False, aborted=False):
        """Send the job back to the server; sisters get ``delete_job`` (their execjob_end).
        The primary runs its execjob_end hooks when its execjob_begin ones accepted the job
        (``aborted``: execjob_abort first, the job having been aborted by a hook)."""
        jobid = record.job["id"]
        if record.begun:
            self.events.end_hooks(record, ("execjob_abort", "execjob_end") if aborted else ("execjob_end",))
        fire_and_forget(self.mom, record.sisters, lambda h: {"op": "delete_job", "jobid": jobid})
        self.mom.send_server({"op": "mom_job_requeue", "jobid": jobid, "hold": hold,
                              "comment": comment, "reason": reason, "rerun": rerun,
                              "run_count": record.job.get("run_count")})
        self.jobs.pop(jobid)

    def bail_to_delete(self, record):
        """A launch hook rejected the job without ``job.rerun()``: as the real mom's
        exec_bail(JOB_EXEC_FAILHOOK_DELETE), the job is over, not requeued. Sisters get
        ``delete_job``, the primary runs its execjob_end hooks (when its execjob_begin ones
        accepted the job) and sends the server an obit with exit status -17 and only a
        zero walltime used; the server then ends the job (Exit_status -17)."""
        jobid = record.job["id"]
        if record.begun:
            self.events.end_hooks(record, ("execjob_end",))
        self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, "kill_job")
        fire_and_forget(self.mom, record.sisters, lambda h: {"op": "delete_job", "jobid": jobid})
        self.mom.send_server({"op": "mom_job_obit", "jobid": jobid, "exit_status": JOB_EXEC_FAILHOOK_DELETE,
                              "resources_used": {"walltime": "00:00:00"},
                              "run_count": record.job.get("run_count")})
        self.mom.log.job(pbslog.PBSEVENT_DEBUG2, jobid, "Obit sent")
        self.jobs.pop(jobid)

    def _sister_failures(self, record, replies, request_name, timed_out_log, silent_is_error=True):
        """Log the failed hosts of one phase; returns (failed hosts, tolerated).
        ``silent_is_error`` False: a host that did not answer in time gets only the phase's
        ``timed_out_log`` line (a tolerant primary mom has no error to log or ignore)."""
        jobid = record.job["id"]
        tolerant = tolerates_failures(record.job)
        failed = [h for h, reply in replies.items() if reply is None or not reply.get("ok")]
        if any(replies[h] is None for h in failed) and tolerant:
            timed_out_log()
        for host in failed:
            reply = replies[host]
            if reply is None and tolerant and not silent_is_error:
                continue
            code = (reply or {}).get("code", PBSE_HOOKERROR)
            if reply is not None and reply.get("unreachable"):
                code = PBSE_HOOKERROR
            self.mom.log.job(pbslog.PBSEVENT_JOB, jobid,
                             "job_start_error %s from node %s could not %s successfully" % (code, host, request_name))
            if tolerant:
                self.mom.log.job(pbslog.PBSEVENT_JOB, jobid,
                                 "ignoring error from %s as job is tolerant of node failures" % host)
            if reply is not None and reply.get("error") and not reply.get("unreachable"):
                self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, reply["error"])
        return failed, tolerant

    def _start_job(self, record):
        try:
            self._start_job_steps(record)
        except Exception as exc:  # a broken job start must not kill the mom
            self.mom.log.job(pbslog.PBSEVENT_ERROR, record.job.get("id", ""), "job not started, %s" % exc)
            self.requeue(record, reason="job start error: %s" % exc)

    def _start_job_steps(self, record):
        """Steps 1 to 4 of the module docstring; each step returns False when it ended the
        job (requeued or deleted)."""
        job = record.job
        hosts = exec_hosts(job)
        record.sisters = [h for h in hosts if h != self.mom.host_name]
        if self.mom.is_cray():
            # Interface 1: a Cray primary mom ignores the setting; every hook sees "none".
            record.job["tolerate_node_failures"] = "none"
        if not self._begin(record):
            return
        if record.sisters and not self._join_sisters(record, hosts):
            return
        if not self._prologue(record):
            return
        self._launch(record, job)

    def _begin(self, record):
        """1. execjob_begin on the primary."""
        try:
            record.job, _unused = self.events.run_event("execjob_begin", record.job, record.vnodes,
                                                        primary_hook_context(record))
        except HookRejected as exc:
            self.requeue(record, comment=str(exc), reason="execjob_begin hook rejected")
            return False
        record.begun = True
        return True

    def _join_sisters(self, record, hosts):
        """2. join_job to sisters (PP-928 interface 3); ``hosts`` the job's hosts, in order."""
        jobid = record.job["id"]
        alarm = self.mom.join_alarm()
        if tolerates_failures(record.job):
            # start_exec.c, as the job enters JOB_SUBSTATE_WAITING_JOIN_JOB (the value its
            # join alarm is armed with).
            self.mom.log.job(pbslog.PBSEVENT_DEBUG3, jobid,
                             "job waiting up to %d secs ($sister_join_job_alarm) for all sister moms to join"
                             % alarm)
        replies = parallel(
            self.mom, record.sisters,
            lambda h: {"op": "join_job", "job": record.job, "vnodes": record.vnodes,
                       "node_index": hosts.index(h), "cookie": record.cookie},
            alarm)
        failed, tolerant = self._sister_failures(
            record, replies, "JOIN_JOB",
            lambda: self.mom.log.job(pbslog.PBSEVENT_ADMIN, jobid,
                                     "sister_join_job_alarm wait time %d secs exceeded" % alarm),
            silent_is_error=False)
        if failed and not tolerant:
            self.requeue(record, reason="sister mom failed to join job")
            return False
        record.failed_hosts.extend(h for h in failed if h not in record.failed_hosts)
        record.silent_hosts.extend(h for h in failed if replies[h] is None)
        return True

    def _prologue(self, record):
        """3. execjob_prologue on the primary, then on healthy sisters (interface 4)."""
        jobid = record.job["id"]
        try:
            record.job, _unused = self.events.run_event("execjob_prologue", record.job, record.vnodes,
                                                        primary_hook_context(record))
        except HookRejected as exc:
            self.requeue(record, comment=str(exc), reason="execjob_prologue hook rejected")
            return False
        healthy = [h for h in record.sisters if h not in record.failed_hosts]
        # As start_exec.c: IM_EXEC_PROLOGUE goes to the sisters only when there are
        # execjob_prologue hooks to run; otherwise a sister lost after it joined goes unseen.
        if healthy and self.mom.hooks.has_enabled("execjob_prologue"):
            delay = self.mom.launch_delay()
            replies = parallel(self.mom, healthy, lambda h: {"op": "exec_prologue", "jobid": jobid}, delay,
                               replies=record.prologue_replies, socket_timeout=delay + LATE_ACK_GRACE)
            failed, tolerant = self._sister_failures(
                record, replies, "IM_EXEC_PROLOGUE",
                lambda: self.mom.log.job(
                    pbslog.PBSEVENT_DEBUG2, jobid,
                    "not all prologue hooks to sister moms completed, but job will proceed to execute"))
            if failed and not tolerant:
                self.requeue(record, reason="sister mom failed its prologue")
                return False
            record.failed_hosts.extend(h for h in failed if h not in record.failed_hosts)
            record.late_prologue_hosts = [h for h in failed if replies[h] is None]
        return True

    def _launch(self, record, submitted):
        """4. PBS_NODEFILE, then execjob_launch (interfaces 5, 6, 8), then the program
        (:meth:`mockpbs.mom.running.RunningJobs.execute`). ``submitted``: the job as
        ``run_job`` received it (a launch hook's hold counts only when it differs)."""
        user = self.jobs.user_of(record.job)
        nodefile = jobenv.write_nodefile(self.mom.pbs_home, record.job)
        env = jobenv.job_environment(record.job, user, nodefile, record.cookie)
        program = jobenv.job_program(record.job, user, self.mom.pbs_home, env)
        self.jobs.reclaim_late_prologue_acks(record)
        extra = primary_hook_context(record, env)
        extra["progname"], extra["argv"] = program[0], list(program)
        old = {k: record.job.get(k) for k in JOB_ATTRIBUTES_PRUNED}
        # The launch hooks run in the job child, the process that then becomes the program.
        child = JobChild(self.mom.pbs_home)
        try:
            record.job, launch = self.events.run_event("execjob_launch", record.job, record.vnodes, extra,
                                                       runner=child.run_hook)
        except HookRejected as exc:
            child.abort()
            self._launch_rejected(record, exc, submitted)
            return
        except BaseException:
            child.abort()
            raise
        self._apply_vnode_changes(launch.get("vnodes_by_list"))
        new = {k: record.job.get(k) for k in old}
        if all(new[k] for k in new) and new["exec_vnode"] != old["exec_vnode"]:
            rejection = self._prune(record, old, new)
            if rejection is not None:
                child.abort()
                self.requeue(record, comment=rejection, reason="execjob_resize hook rejected", rerun=True,
                             aborted=True)
                return
            jobenv.write_nodefile(self.mom.pbs_home, record.job)   # the pruned node list
        env = dict(extra.get("env") or env)
        progname = extra.get("progname") or program[0]
        argv = extra.get("argv") or program
        self.jobs.running.execute(record, child, progname, argv, env)

    def _launch_rejected(self, record, exc, submitted):
        """An execjob_launch hook rejected the job (``exc`` a HookRejected): requeued after
        ``job.rerun()`` (with the hold the hook set, when it differs from ``submitted``'s),
        else deleted."""
        jobid = record.job["id"]
        # The job child's starter_return(): JOB_EXEC_FAILHOOK_RERUN after job.rerun(),
        # else JOB_EXEC_FAILHOOK_DELETE (src/resmom/start_exec.c).
        self.mom.log.job(JOB_ERROR_CLASS, jobid, "job not started, Failure %d"
                         % (JOB_EXEC_FAILHOOK_RERUN if exc.result["rerun"] else JOB_EXEC_FAILHOOK_DELETE))
        self._apply_vnode_changes(exc.result.get("vnodes_by_list"))
        if not exc.result["rerun"]:
            self.bail_to_delete(record)
            return
        hold = exc.result["job"].get("Hold_Types")
        self.requeue(record, hold=hold if hold and hold != "n" and hold != submitted.get("Hold_Types") else None,
                     comment=str(exc), reason="execjob_launch hook rejected", rerun=True)

    def reclaim_late_prologue_acks(self, record):
        """Interface 4: hosts whose positive exec_prologue acknowledgement arrived after
        ``$job_launch_delay`` but before now go back among the healthy hosts. Returns
        the hosts put back."""
        back = [h for h in record.late_prologue_hosts
                if (record.prologue_replies.get(h) or {}).get("ok") and h in record.failed_hosts]
        for host in back:
            record.failed_hosts.remove(host)
        for host in record.failed_hosts:
            self.mom.log.job(pbslog.PBSEVENT_DEBUG3, record.job["id"],
                             "received from parent mom that node's host %s is not healthy" % host)
        record.late_prologue_hosts = [h for h in record.late_prologue_hosts if h not in back]
        return back

    def _apply_vnode_changes(self, changes_by_list):
        """Report the vnode changes of a hook run to the server, one ``mom_node_update``
        per vnode, naming this mom and the list the hook changed it through:
        ``changes_by_list`` ``{"vnode_list"|"vnode_list_fail": {vnode: {attribute: value}}}``
        (the hook result's ``vnodes_by_list``; None for none). As pbs_mom sends the two
        lists in separate requests, the server may refuse one and apply the other."""
        for table, changes in (changes_by_list or {}).items():
            for vnode, attrs in changes.items():
                self._send_vnode_change(table, vnode, attrs)

    def _send_vnode_change(self, table, vnode, attrs):
        message = {"op": "mom_node_update", "vnode": vnode, "mom": self.mom.host_name, "hook_list": table}
        if "state" in attrs:
            message["state"] = attrs["state"]
        if "comment" in attrs:
            message["comment"] = attrs["comment"]
        if "resources_available" in attrs:
            message["resources_available"] = attrs["resources_available"]
        self.mom.send_server(message)

    def _prune(self, record, old, new):
        """Apply a release_nodes() result (interfaces 8, 9). Returns None, or the message
        of the first execjob_resize rejection (primary's own hooks or a sister's)."""
        jobid = record.job["id"]
        self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, "pruned from exec_vnode=%s" % old["exec_vnode"])
        self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, "pruned to exec_vnode=%s" % new["exec_vnode"])
        record.job["Resource_List"] = resource_list_from(record.job)
        kept = exec_hosts(record.job)
        released = [h for h in record.sisters if h not in kept]
        record.sisters = [h for h in record.sisters if h in kept]
        fire_and_forget(self.mom, released, lambda h: {"op": "delete_job2", "jobid": jobid})
        rejection = None
        try:
            self.events.run_event("execjob_resize", record.job, record.vnodes, primary_hook_context(record))
        except HookRejected as exc:
            rejection = str(exc)
        healthy_kept = [h for h in record.sisters if h not in record.failed_hosts]
        if healthy_kept:
            replies = parallel(
                self.mom, healthy_kept,
                lambda h: {"op": "update_job", "jobid": jobid, "exec_vnode": new["exec_vnode"],
                           "exec_host": new["exec_host"], "schedselect": new["schedselect"]},
                UPDATE_JOB_WAIT)
            if any(r is None or not r.get("ok") for r in replies.values()):
                self.mom.log.job(pbslog.PBSEVENT_DEBUG2, jobid, "not all job updates to sister moms completed")
            for host in healthy_kept:
                reply = replies.get(host) or {}
                if reply.get("resize_rejected") and rejection is None:
                    rejection = reply.get("error") or "execjob_resize hook rejected on %s" % host
                    record.sisters.remove(host)   # it already dropped the job
        update = {"op": "mom_job_update", "jobid": jobid, "exec_vnode": new["exec_vnode"],
                  "exec_host": new["exec_host"], "schedselect": new["schedselect"]}
        if record.job.get("accounting_id") is not None:
            # pbs_mom returns the job's accounting_id with the pruned exec_vnode
            # (mom_updates_bundle.c get_job_update(), mom_rtn_list).
            update["accounting_id"] = str(record.job["accounting_id"])
        self.mom.send_server(update)
        return rejection
