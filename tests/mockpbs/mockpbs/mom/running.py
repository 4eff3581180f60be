"""A job's program on its primary mom, from its start to its end (PP-928 interface 1).

The job program runs as the job's user (:mod:`mockpbs.mom.jobenv`), then ``mom_job_started``;
while it runs the sisters are polled every ``MomJobs.poll_interval`` seconds: a lost sister
is ignored when ``tolerate_node_failures=all``; otherwise it kills the job (requeued) once
it has stayed lost for more than ``$max_poll_downtime`` seconds (see
:meth:`RunningJobs.sister_lost`); on exit ``delete_job`` to sisters and ``mom_job_obit``
(with the job's ``run_count``, so the server can tell an obit of an earlier run;
``mom_job_requeue`` carries it too). ``delete_job`` from the server (qdel) kills it.

Log texts and classes follow tests/reference/log_messages.json and transcripts g.
"""
import os
import signal
import threading
import time

from mockpbs import pbslog, wire
from mockpbs.mom import jobenv
from mockpbs.mom.imclient import fire_and_forget, im_request
from mockpbs.mom.jobevents import HookRejected, primary_hook_context
from mockpbs.mom.jobrecord import JOB_ERROR_CLASS, exec_hosts, tolerates_failures

POLL_INTERVAL = 5        # seconds between two polls of the sisters of a running job
POLL_TIMEOUT = 10        # seconds a polled sister has to answer
# Seconds the mom's connection to its peers must have been up before a lost sister may
# kill a job (COMM_MATURITY_TIME, include/mom_func.h): a young connection is not trusted.
COMM_MATURITY_TIME = 60


class RunningJobs:
    """The running jobs of one primary mom over ``jobs`` (a MomJobs, whose
    ``poll_interval``, ``poll_timeout`` and ``comm_maturity`` set the polling). ``mom``
    provides: ``log``, ``address_of(host)``, ``send_server(message)``,
    ``max_poll_downtime`` and ``net_up_time``."""

    def __init__(self, jobs):
        self.jobs = jobs
        self.mom = jobs.mom
        self.events = jobs.events

    def execute(self, record, child, progname, argv, env):
        """Run the job program ``progname`` ``argv`` with ``env`` in the job child ``child``
        (a JobChild) and wait for its end (:meth:`_finish`)."""
        job = record.job
        jobid = job["id"]
        user = self.jobs.user_of(job)
        groups = jobenv.user_groups(user)
        cwd = jobenv.job_cwd(user)
        out_path, err_path = jobenv.output_files(job, user)
        argv0 = progname
        if jobenv.executable_argv(job) is None and progname == (user.pw_shell or "/bin/sh"):
            # A batch job's shell is started as a login shell ("-bash"), as pbs_mom does,
            # so /etc/profile (and PBS's profile.d entry adding $PBS_EXEC/bin) is read.
            argv0 = "-" + os.path.basename(progname)
        error = child.execute(progname, [argv0] + list(argv[1:]), env, cwd, user.pw_uid, user.pw_gid, groups,
                              out_path, err_path)
        if error:
            self.mom.log.job(JOB_ERROR_CLASS, jobid, "execve failed: %s" % error)
        process = child.process
        record.process = process
        record.started = time.time()
        self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, "Started, pid = %d" % process.pid)
        self.mom.send_server({"op": "mom_job_started", "jobid": jobid, "session": process.pid})
        if record.sisters:
            threading.Thread(target=self._poll_sisters, args=(record,), name="poll-%s" % jobid,
                             daemon=True).start()
        status = process.wait()
        record.poll_stop.set()
        self._finish(record, status)

    def _poll_sisters(self, record):
        jobid = record.job["id"]
        while not record.poll_stop.wait(self.jobs.poll_interval):
            for host in list(record.sisters):
                if host in record.failed_hosts or host in record.lost_hosts or record.poll_stop.is_set():
                    continue
                try:
                    im_request(self.mom, host, {"op": "poll_job", "jobid": jobid}, self.jobs.poll_timeout)
                except wire.WireError:
                    self.sister_lost(record, host)
                else:
                    record.lost_since.pop(host, None)   # it answers again: the count restarts

    def sister_lost(self, record, host):
        """A poll of sister ``host`` failed while the job runs (OpenPBS ``im_eof()`` on the
        primary, ``src/resmom/mom_comm.c``), checked in this order:

        1. ``tolerate_node_failures=all``: ignored for good (DEBUG3 line);
        2. lost for at most ``$max_poll_downtime`` seconds (counted from the first failed
           poll since it last answered): ``not killing job yet``, polled again;
        3. this mom's connection up for at most ``comm_maturity`` seconds: ``due to
           pbs_comm down/recently established, not killing job``, polled again;
        4. otherwise the job is killed (:meth:`_kill_for_lost_sister`) and, once its
           program is gone, requeued (``mom_job_requeue``) instead of ending with an obit."""
        jobid = record.job["id"]
        if tolerates_failures(record.job, running=True):
            record.lost_hosts.append(host)
            self.mom.log.job(pbslog.PBSEVENT_DEBUG3, jobid,
                             "ignoring lost communication with %s as job is tolerant of node failures" % host)
            return
        if record.node_failure is not None:
            return
        now = time.time()
        lost_for = now - record.lost_since.setdefault(host, now)
        if lost_for <= self.mom.max_poll_downtime:
            self.mom.log.job(JOB_ERROR_CLASS, jobid,
                             "im_eof, lost communication with %s, not killing job yet" % host)
        elif not self._comm_is_mature(now):
            self.mom.log.job(JOB_ERROR_CLASS, jobid, "im_eof, lost connection to %s due to pbs_comm "
                             "down/recently established, not killing job" % host)
        else:
            self._kill_for_lost_sister(record, host)

    def _comm_is_mature(self, now):
        """``is_comm_up(COMM_MATURITY_TIME)``: this mom's connection has been up for more
        than ``comm_maturity`` seconds at ``now`` (time.time())."""
        up_since = self.mom.net_up_time
        return up_since is not None and now - up_since > self.jobs.comm_maturity

    def _kill_for_lost_sister(self, record, host):
        """Kill the job's program for sister ``host``, lost too long (``node_bailout()``,
        then ``job_over_limit()``'s ``node EOF``: the job will be requeued)."""
        jobid = record.job["id"]
        record.node_failure = host
        record.poll_stop.set()
        node = exec_hosts(record.job).index(host)   # its index in the job's host list
        self.mom.log.job(JOB_ERROR_CLASS, jobid, "im_eof, lost communication with %s for > %d secs, killing job now"
                         % (host, self.mom.max_poll_downtime))
        self.mom.log.job(JOB_ERROR_CLASS, jobid, "node_bailout, POLL failed from node %d" % node)
        self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, "node EOF %d (%s)" % (node, host))
        self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, "kill_job")
        process = record.process
        if process is not None and process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def _finish(self, record, status):
        jobid = record.job["id"]
        if record.node_failure is not None:
            self._finish_node_failure(record)
            return
        walltime = int(time.time() - (record.started or time.time()))
        exit_status = status if status >= 0 else 256 - status  # killed by signal N -> 256+N
        self.mom.log.record(pbslog.PBSEVENT_DEBUG, pbslog.OBJ_JOB, jobid, "task 00000001 terminated")
        self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, "Terminated")
        self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, "kill_job")
        sisters = [h for h in record.sisters if h not in record.failed_hosts and h not in record.lost_hosts]
        fire_and_forget(self.mom, sisters, lambda h: {"op": "delete_job", "jobid": jobid})
        try:
            self.events.run_event("execjob_end", record.job, record.vnodes, primary_hook_context(record))
        except HookRejected:
            pass
        ncpus = (record.job.get("Resource_List") or {}).get("ncpus", "1")
        used = {"cpupercent": "0", "cput": "00:00:00", "mem": "0kb", "ncpus": ncpus, "vmem": "0kb",
                "walltime": "%02d:%02d:%02d" % (walltime // 3600, walltime // 60 % 60, walltime % 60)}
        self.mom.send_server({"op": "mom_job_obit", "jobid": jobid, "exit_status": exit_status,
                              "resources_used": used, "run_count": record.job.get("run_count")})
        self.mom.log.job(pbslog.PBSEVENT_DEBUG2, jobid, "Obit sent")
        self.jobs.pop(jobid)

    def _finish_node_failure(self, record):
        jobid = record.job["id"]
        self.mom.log.record(pbslog.PBSEVENT_DEBUG, pbslog.OBJ_JOB, jobid, "task 00000001 terminated")
        self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, "Terminated")
        lost = record.node_failure
        record.sisters = [h for h in record.sisters if h != lost and h not in record.failed_hosts]
        self.jobs.primary.requeue(record, reason="lost communication with sister mom %s" % lost, rerun=True)

    def delete_job(self, message):
        """Service op ``delete_job`` (qdel of a running job): kill its session, tell sisters."""
        jobid = message["jobid"]
        self.mom.log.job(pbslog.PBSEVENT_DEBUG, jobid, "delete job request received")
        record = self.jobs.get(jobid)
        if record is None:
            return {"ok": True}
        record.deleted = True
        record.poll_stop.set()
        process = record.process
        if process is not None and process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

            def escalate():
                time.sleep(5)
                if process.poll() is None:
                    try:
                        os.killpg(process.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            threading.Thread(target=escalate, daemon=True).start()
        else:
            fire_and_forget(self.mom, record.sisters, lambda h: {"op": "delete_job", "jobid": jobid})
            self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, "kill_job")
            self.jobs.pop(jobid)
        return {"ok": True}
