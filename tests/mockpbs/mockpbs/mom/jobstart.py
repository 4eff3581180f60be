"""Job start on the primary mom and the sister side of it (PP-928 interfaces 1, 3, 4, 5, 8, 9).

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
   ``succeeded_mom_list`` and the job's environment; a reject requeues the job with the
   hold/rerun the hook set; an accepted ``release_nodes()`` prunes the job
   (``pruned from``/``pruned to``, ``delete_job2`` to released sisters, the primary's
   own execjob_resize hooks, ``update_job`` to kept sisters with a 5 s wait for their
   acknowledgements, ``mom_job_update``); a rejecting execjob_resize hook on any mom
   still in the job requeues it (interfaces 8, 9);
5. ``PBS_NODEFILE`` (``PBS_HOME/aux/<jobid>``), the job program as the job's user (the
   shell running the script, or ``PROGRAM ARGS`` of a ``qsub -- PROGRAM ARGS`` job; a
   subjob gets ``PBS_ARRAY_INDEX``/``PBS_ARRAY_ID``),
   ``mom_job_started``; while it runs the sisters are polled every
   :attr:`JobStarter.poll_interval` seconds: a lost sister is ignored when
   ``tolerate_node_failures=all``; otherwise it kills the job (requeued) once it has
   stayed lost for more than ``$max_poll_downtime`` seconds (see
   :meth:`JobStarter.sister_lost`; interface 1);
   on exit ``delete_job`` to sisters and ``mom_job_obit`` (with the job's ``run_count``,
   so the server can tell an obit of an earlier run; ``mom_job_requeue`` carries it too).

A Cray primary mom (``$alps_client`` set) runs the job with
``tolerate_node_failures=none`` whatever the job asked (interface 1). Tasks of the job
(``pbsdsh``, :mod:`mockpbs.mom.tm`) are started through ``tm_nodeinfo`` / ``tm_spawn``
on the primary, which runs them itself or forwards ``spawn_task`` to the sister owning
the node; a sister only runs tasks for a job whose current ``exec_host`` names it. Every
task runs the execjob_launch hooks of its mom first, without ``PBS_NODEFILE`` in its
environment (seed interface 8).

Log texts and classes follow tests/reference/log_messages.json and transcripts g.
"""
import grp
import os
import pwd
import re
import secrets
import shutil
import signal
import tempfile
import threading
import time

from mockpbs import hookrun, pbsconf, pbslog, selectspec, wire
from mockpbs.mom.jobchild import JobChild

OFFLINE_EVENTS = ("execjob_begin", "execjob_prologue")   # where fail_action=offline_vnodes applies
# What the primary mom logs (DEBUG2, Hook, empty name) when these events' hooks failed
# internally (a crashed pbs_python) and it goes on as if they had accepted (start_exec.c).
ACCEPT_BY_DEFAULT_TEXTS = {
    "execjob_prologue": "prologue hook event: accept req by default",
    "execjob_launch": "execjob_launch hook event: accept req by default",
}
PBSE_HOOKERROR = 15169   # the code a sister's rejecting execjob_begin/prologue reports
UPDATE_JOB_WAIT = 5      # seconds the primary waits for update_job acks (seed interface 8)
HOOK_REJECT_CODE = 15169
LATE_ACK_GRACE = 3600    # seconds a prologue request stays open after $job_launch_delay
POLL_INTERVAL = 5        # seconds between two polls of the sisters of a running job
POLL_TIMEOUT = 10        # seconds a polled sister has to answer
# Seconds the mom's connection to its peers must have been up before a lost sister may
# kill a job (COMM_MATURITY_TIME, include/mom_func.h): a young connection is not trusted.
COMM_MATURITY_TIME = 60
JOB_EXEC_FAILHOOK_RERUN = -16    # include/job.h: a launch hook rejected the job after job.rerun()
JOB_EXEC_FAILHOOK_DELETE = -17   # ... rejected it otherwise (the job is to be deleted)
TASK_TIMEOUT = 24 * 3600  # seconds the primary waits for a task forwarded to a sister
# Task manager error numbers and names (OpenPBS include/tm_.h, get_ecname()).
TM_ESYSTEM = 17000
TM_EBADENVIRONMENT = 17005
TM_ENOTFOUND = 17006
TM_ERROR_NAMES = {17000: "TM_ESYSTEM", 17001: "TM_ENOEVENT", 17002: "TM_ENOTCONNECTED",
                  17003: "TM_EUNKNOWNCMD", 17004: "TM_ENOTIMPLEMENTED",
                  17005: "TM_EBADENVIRONMENT", 17006: "TM_ENOTFOUND", 17007: "TM_BADINIT"}
# log_joberr() writes PBSEVENT_ERROR | PBSEVENT_FORCE, which the log shows as 0001
# (src/lib/Liblog/pbs_log.c; seen in a real mom's log).
JOB_ERROR_CLASS = pbslog.PBSEVENT_ERROR


def tolerates_failures(job, running=False):
    """``do_tolerate_node_failures()``: ``all`` always; ``job_start`` only while the job is
    not yet running its program (``running`` False)."""
    value = job.get("tolerate_node_failures")
    return value == "all" or (value == "job_start" and not running)


def exec_hosts(job):
    """Unique host names of ``exec_host``, in order (the primary first)."""
    seen = []
    for host, _index, _ncpus in selectspec.parse_exec_host(job.get("exec_host", "")):
        if host not in seen:
            seen.append(host)
    return seen


def vnode_host(vnodes, vnode):
    info = vnodes.get(vnode) or {}
    return info.get("host") or info.get("resources_available", {}).get("host") or vnode


def job_vnode_dicts(job, vnodes):
    """{vnode: vnode dict} for every vnode of the job's exec_vnode, with the job's
    assigned resources as ``resources_assigned``."""
    out = {}
    for chunk in selectspec.parse_exec_vnode(job.get("exec_vnode", "")):
        for name, resources in chunk:
            info = vnodes.get(name) or {}
            entry = out.setdefault(name, {
                "name": name,
                "host": vnode_host(vnodes, name),
                "state": info.get("state", "free"),
                "resources_available": dict(info.get("resources_available", {})),
                "resources_assigned": {},
                "comment": info.get("comment"),
            })
            for key, value in resources:
                entry["resources_assigned"][key] = value
    return out


def _sum_resource(chunks, name, size):
    total = 0
    found = False
    for chunk in chunks:
        for _vnode, resources in chunk:
            for key, value in resources:
                if key != name:
                    continue
                found = True
                total += selectspec.size_to_kb(value) if size else int(value)
    return total, found


def resource_list_from(job):
    """Resource_List after a prune: ncpus/mem summed over exec_vnode, nodect = chunks,
    select = schedselect; other resources (place, site...) kept."""
    resources = dict(job.get("Resource_List") or {})
    chunks = selectspec.parse_exec_vnode(job.get("exec_vnode", ""))
    ncpus, _unused = _sum_resource(chunks, "ncpus", False)
    resources["ncpus"] = str(ncpus)
    mem, has_mem = _sum_resource(chunks, "mem", True)
    if has_mem:
        resources["mem"] = selectspec.format_kb(mem)
    resources["nodect"] = str(len(chunks))
    if job.get("schedselect"):
        resources["select"] = job["schedselect"]
    return resources


def nodefile_lines(job):
    """PBS_NODEFILE lines: one per exec_host entry (repeated ``mpiprocs`` times when its
    schedselect chunk sets it; chunks with ``ncpus=0`` left out)."""
    entries = selectspec.parse_exec_host(job.get("exec_host", ""))
    chunk_resources = []
    try:
        chunk_resources = selectspec.expand_chunks(selectspec.parse_select(job.get("schedselect", "")))
    except selectspec.SelectSpecError:
        pass
    lines = []
    for position, (host, _index, _ncpus) in enumerate(entries):
        resources = dict(chunk_resources[position]) if len(chunk_resources) == len(entries) else {}
        if resources.get("ncpus") == "0":
            continue
        repeat = int(resources.get("mpiprocs", "1") or 1)
        lines.extend([host] * repeat)
    return lines


EXECUTABLE_RE = re.compile(r"<jsdl-hpcpa:Executable>(.*?)</jsdl-hpcpa:Executable>", re.S)
ARGUMENT_RE = re.compile(r"<jsdl-hpcpa:Argument>(.*?)</jsdl-hpcpa:Argument>", re.S)


def executable_argv(job):
    """argv of a job submitted as ``qsub -- PROGRAM ARGS...``: ``[PROGRAM, ARGS...]`` decoded
    from the job's ``executable`` (``<jsdl-hpcpa:Executable>P</jsdl-hpcpa:Executable>``) and
    ``argument_list`` (one ``<jsdl-hpcpa:Argument>A</jsdl-hpcpa:Argument>`` per argument)
    attributes, as OpenPBS's ``decode_xml_arg_list()`` does; None for a job with a script."""
    match = EXECUTABLE_RE.search(job.get("executable") or "")
    if match is None:
        return None
    return [match.group(1)] + ARGUMENT_RE.findall(job.get("argument_list") or "")


def resolve_program(progname, env):
    """``progname`` itself when it holds a ``/``, else its first match on the ``PATH`` of
    ``env`` (what execvp would run); unchanged when nothing matches (the exec then fails
    with ENOENT, as it would in PBS)."""
    if "/" in progname:
        return progname
    return shutil.which(progname, path=env.get("PATH", os.defpath)) or progname


class JobRecord:
    """A job this mom knows, as primary (``primary`` True) or sister."""

    def __init__(self, job, vnodes, primary):
        self.job = job
        self.vnodes = vnodes
        self.primary = primary
        self.failed_hosts = []
        # Sisters that never answered IM_JOIN_JOB before $sister_join_job_alarm: treated as
        # failed (no prologue, pruned away) but, as in OpenPBS, in no list a hook sees:
        # not in vnode_list_fail or failed_mom_list (no error came back), nor in
        # succeeded_mom_list (they did not join).
        self.silent_hosts = []
        self.process = None
        self.deleted = False
        self.started = None
        self.sisters = []
        self.cookie = None                # PBS_JOBCOOKIE: tasks must present it
        self.prologue_replies = {}        # host -> exec_prologue reply, filled even when late
        self.late_prologue_hosts = []     # hosts failed only for not answering in time
        self.lost_hosts = []              # sisters lost while the job ran (tolerated)
        self.lost_since = {}              # host -> time.time() it was first found lost (hn_eof_ts)
        self.node_failure = None          # host whose loss killed the job
        self.begun = False                # this mom's execjob_begin hooks accepted the job
        self.poll_stop = threading.Event()


class HookRejected(Exception):
    def __init__(self, message, result):
        super().__init__(message)
        self.result = result


class JobStarter:
    """Job handling of one mom. ``mom`` provides: ``log`` / ``hook_log`` (DaemonLog),
    ``hooks`` (HookStore), ``host_name``, ``node_name``, ``pbs_home``, ``server_name``,
    ``address_of(host)``, ``send_server(message)``, ``join_alarm()``, ``launch_delay()``,
    ``run_hook(hook, event, context)``."""

    def __init__(self, mom):
        self.mom = mom
        self.jobs = {}
        self.lock = threading.Lock()
        self.poll_interval = POLL_INTERVAL
        self.poll_timeout = POLL_TIMEOUT
        self.comm_maturity = COMM_MATURITY_TIME

    # ---------------------------------------------------------------- hooks
    def _log_hook_result(self, result):
        for entry in result.get("logs") or []:
            event_class, objtype, objname, message = entry
            if isinstance(event_class, str):
                event_class = int(event_class, 16)
            self.mom.hook_log.record(event_class, objtype, objname, message)

    def run_event(self, event, job, vnodes, extra=None, runner=None):
        """Run every enabled hook of ``event`` in order; each sees the job as the previous
        hooks left it. ``runner(hook, event, context) -> result`` runs one hook (default
        ``mom.run_hook``; execjob_launch uses the job child's, see
        :mod:`mockpbs.mom.jobchild`). Returns (job, merged result); raises HookRejected.

        A hook with ``fail_action=offline_vnodes`` that fails by an exception or its alarm
        (not by a plain reject, as in OpenPBS) at execjob_begin or execjob_prologue makes the
        mom offline every vnode it reports (``mom_node_update``, comment
        ``offlined by hook '<name>' due to hook error``).

        A hook whose pbs_python would have crashed (result ``crashed``, see
        :func:`mockpbs.hookrun.run_hook`) is skipped as OpenPBS's mom skips it: see
        :meth:`_skip_crashed_hook`."""
        job_before = job
        launch_before = {k: (extra or {}).get(k) for k in ("env", "argv", "progname")}
        merged = {"vnodes": {}, "vnodes_by_list": {}, "rerun": False, "delete": False,
                  "env": None, "argv": None, "progname": None}
        for hook in self.mom.hooks.for_event(event):
            context = {
                "job": job, "vnode_list": job_vnode_dicts(job, vnodes), "vnode_list_fail": {},
                "env": {}, "argv": [], "progname": "", "in_ms_mom": True,
                "hostname": self.mom.node_name, "server": self.mom.server_name,
                "failed_mom_list": [], "succeeded_mom_list": [],
                "requestor": "pbs_mom", "requestor_host": self.mom.host_name, "daemon": "mom",
            }
            context.update(extra or {})
            result = (runner or self.mom.run_hook)(hook, event, context)
            self._log_hook_result(result)
            if result.get("crashed"):
                self._skip_crashed_hook(event, hook, job_before, context)
                for key, value in launch_before.items():
                    if extra is not None and key in extra:
                        extra[key] = value
                merged.update({"job": job_before, "rerun": False, "delete": False,
                               "env": None, "argv": None, "progname": None, "crashed": hook["name"]})
                return job_before, merged
            if event != "execjob_resize":   # its job is read-only (interface 9)
                job = apply_job_changes(job, result.get("job") or {})
            for name, attrs in (result.get("vnodes") or {}).items():
                merged["vnodes"].setdefault(name, {}).update(attrs)
            for table, changes in (result.get("vnodes_by_list") or {}).items():
                for name, attrs in changes.items():
                    merged["vnodes_by_list"].setdefault(table, {}).setdefault(name, {}).update(attrs)
            merged["rerun"] = merged["rerun"] or bool(result.get("rerun"))
            merged["delete"] = merged["delete"] or bool(result.get("delete"))
            for key in ("env", "argv", "progname"):
                if result.get(key) is not None:
                    merged[key] = result[key]
                    if extra is not None and key in extra:
                        extra[key] = result[key]
            if not result.get("accepted"):
                jobid = job.get("id", "")
                if event == "execjob_resize":
                    merged["job"] = job
                    raise HookRejected(self._log_resize_reject(jobid, hook["name"], result), merged)
                if result.get("alarm"):
                    text = "alarm call while running %s hook '%s', request rejected" % (event, hook["name"])
                elif result.get("exception"):
                    text = "%s hook '%s' encountered an exception, request rejected" % (event, hook["name"])
                else:
                    text = "%s request rejected by '%s'" % (event, hook["name"])
                if result.get("exception") and event in hookrun.EXCEPTION_LOGGING_EVENTS:
                    self._log_hook_exception(jobid, text)
                else:
                    self.mom.log.hook(pbslog.PBSEVENT_DEBUG2, hook["name"], text)
                if (result.get("alarm") or result.get("exception")) and event in OFFLINE_EVENTS \
                        and "offline_vnodes" in str(hook.get("fail_action", "")).split(","):
                    self.offline_own_vnodes(hook["name"])
                message = result.get("reject_msg") or text
                if result.get("reject_msg"):
                    self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, result["reject_msg"])
                merged["job"] = job
                raise HookRejected(message, merged)
        merged["job"] = job
        return job, merged

    def _log_hook_exception(self, jobid, text):
        """The mom's lines for a hook whose pbs_python exited 254 (an uncaught exception,
        ``mom_process_hooks()`` in src/resmom/mom_hook_func.c): ``run_hook``'s error, then
        ``text`` (``... encountered an exception, request rejected``) for the job."""
        pbs_exec = pbsconf.load().get("PBS_EXEC", "/opt/pbs")
        self.mom.log.svr(pbslog.PBSEVENT_ERROR, "pbs_mom", "run_hook, execv of %s/bin/pbs_python resulted in "
                         "nonzero exit status=254" % pbs_exec)
        self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, text)

    def _skip_crashed_hook(self, event, hook, job, context):
        """A hook's pbs_python crashed (``src/resmom/mom_hook_func.c``, ``mom_process_hooks``:
        the child ended by a signal): log ``Internal server error encountered. Skipping hook
        <name>`` for the job and stop running this event's hooks. On the primary mom,
        execjob_prologue and execjob_launch then go on as accepted by default
        (``src/resmom/start_exec.c``: their DEBUG2 line, and none of the event's changes: no
        job update, so no pruning); elsewhere the failure is a hook error (HookRejected), as
        a sister's ``IM_EXEC_PROLOGUE`` reports it."""
        jobid = job.get("id", "")
        text = "Internal server error encountered. Skipping hook %s" % hook["name"]
        self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, text)
        if context.get("in_ms_mom") and event in ACCEPT_BY_DEFAULT_TEXTS:
            self.mom.log.hook(pbslog.PBSEVENT_DEBUG2, "", ACCEPT_BY_DEFAULT_TEXTS[event])
            return
        raise HookRejected(text, {"vnodes": {}, "rerun": False, "delete": False, "job": job})

    def offline_own_vnodes(self, hook_name):
        """fail_action=offline_vnodes: tell the server to offline every vnode of this mom."""
        comment = "offlined by hook '%s' due to hook error" % hook_name
        vnodes = self.mom.vnodes() if hasattr(self.mom, "vnodes") else {self.mom.node_name: {}}
        for vnode in vnodes:
            self.mom.send_server({"op": "mom_node_update", "vnode": vnode, "state": "offline",
                                  "comment": comment})

    def end_hooks(self, record, events):
        """Run ``events`` (execjob_abort and/or execjob_end) for a job leaving this mom;
        rejections only log. Used wherever the real mom purges a job it had begun."""
        context = self._context(record) if record.primary else {"in_ms_mom": False}
        for event in events:
            try:
                self.run_event(event, record.job, record.vnodes, context)
            except HookRejected:
                pass

    def _log_resize_reject(self, jobid, hook_name, result):
        """Interface 9: the seed's two DEBUG2 lines for a reject, exception or alarm of an
        execjob_resize hook; returns the message."""
        if result.get("reject_msg"):
            message = result["reject_msg"]
        elif result.get("alarm"):
            message = "alarm call while running execjob_resize hook '%s', request rejected" % hook_name
        else:
            message = "execjob_resize hook '%s' encountered an exception, request rejected" % hook_name
        # OpenPBS logs the event name unquoted (hook_event_as_string() in
        # src/resmom/mom_hook_func.c), not as the PP-928 page quotes it.
        self.mom.log.hook(pbslog.PBSEVENT_DEBUG2, hook_name,
                          "execjob_resize request rejected by '%s'" % hook_name)
        self.mom.log.job(pbslog.PBSEVENT_DEBUG2, jobid, message)
        return message

    # ---------------------------------------------------------------- sister side
    def sister_join(self, message):
        job, vnodes = message["job"], message.get("vnodes") or {}
        jobid = job["id"]
        self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, "JOIN_JOB as node %s" % message.get("node_index", 1))
        try:
            job, _unused = self.run_event("execjob_begin", job, vnodes, {"in_ms_mom": False})
        except HookRejected as exc:
            return {"ok": False, "code": PBSE_HOOKERROR, "error": str(exc)}
        record = JobRecord(job, vnodes, primary=False)
        record.begun = True
        record.cookie = message.get("cookie")
        with self.lock:
            self.jobs[jobid] = record
        return {"ok": True}

    def _sister_record(self, jobid):
        with self.lock:
            return self.jobs.get(jobid)

    def sister_prologue(self, message):
        record = self._sister_record(message["jobid"])
        if record is None:
            return {"ok": False, "code": 15001, "error": "Unknown Job Id %s" % message["jobid"]}
        try:
            record.job, _unused = self.run_event("execjob_prologue", record.job, record.vnodes, {"in_ms_mom": False})
        except HookRejected as exc:
            return {"ok": False, "code": PBSE_HOOKERROR, "error": str(exc)}
        return {"ok": True}

    def sister_update(self, message):
        """IM ``update_job`` (interfaces 8, 9): keep the new nodes table, run execjob_resize.
        A rejecting resize hook aborts the job here (the record is dropped) and the reply
        carries ``resize_rejected: true`` so the primary requeues the job."""
        jobid = message["jobid"]
        record = self._sister_record(jobid)
        if record is None:
            return {"ok": False, "code": 15001, "error": "Unknown Job Id %s" % jobid}
        job = dict(record.job)
        for key in ("exec_vnode", "exec_host", "schedselect"):
            if message.get(key):
                job[key] = message[key]
        job["Resource_List"] = resource_list_from(job)
        try:
            self.run_event("execjob_resize", job, record.vnodes, {"in_ms_mom": False})
        except HookRejected as exc:
            self.mom.log.job(pbslog.PBSEVENT_DEBUG2, jobid, "execjob_resize hook rejected request: %s" % exc)
            self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, "kill_job")
            with self.lock:
                self.jobs.pop(jobid, None)
            record.job = job
            self.end_hooks(record, ("execjob_abort", "execjob_end"))
            return {"ok": False, "code": PBSE_HOOKERROR, "error": str(exc), "resize_rejected": True}
        record.job = job
        self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, "updated nodes info")
        return {"ok": True}

    def sister_poll(self, message):
        """IM ``poll_job``: the primary checks that this sister is alive and has the job."""
        if self._sister_record(message["jobid"]) is None:
            return {"ok": False, "code": 15001, "error": "Unknown Job Id %s" % message["jobid"]}
        return {"ok": True}

    def sister_spawn(self, message):
        """IM ``spawn_task`` {jobid, cookie, argv, node}: run one task of the job here, if
        this host is still in the job's current exec_host (after ``update_job``)."""
        record = self._sister_record(message["jobid"])
        if record is None or record.cookie != message.get("cookie"):
            return {"ok": False, "code": TM_ENOTFOUND, "error": TM_ERROR_NAMES[TM_ENOTFOUND]}
        if self.mom.host_name not in exec_hosts(record.job):
            return {"ok": False, "code": TM_ENOTFOUND, "error": TM_ERROR_NAMES[TM_ENOTFOUND]}
        return self.run_task(record, message.get("argv") or [], int(message.get("node", 0)))

    def sister_delete2(self, message):
        jobid = message["jobid"]
        self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, "DELETE_JOB2 received")
        self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, "kill_job")
        with self.lock:
            record = self.jobs.pop(jobid, None)
        if record is not None:   # released by release_nodes(): its cgroups etc. go now
            self.end_hooks(record, ("execjob_end",))
        return {"ok": True}

    def sister_delete(self, message):
        jobid = message["jobid"]
        self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, "DELETE_JOB received")
        with self.lock:
            record = self.jobs.pop(jobid, None)
        if record is not None:
            try:
                self.run_event("execjob_end", record.job, record.vnodes, {"in_ms_mom": False})
            except HookRejected:
                pass
        self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, "kill_job")
        return {"ok": True}

    # ---------------------------------------------------------------- primary side
    def run_job(self, message):
        """Service op ``run_job``: reply at once, start the job in the background."""
        job, vnodes = dict(message["job"]), message.get("vnodes") or {}
        record = JobRecord(job, vnodes, primary=True)
        record.cookie = secrets.token_hex(16)
        with self.lock:
            self.jobs[job["id"]] = record
        threading.Thread(target=self._start_job, args=(record,), name="job-%s" % job["id"], daemon=True).start()
        return {"ok": True}

    def _im(self, host, message, timeout):
        return wire.request(self.mom.address_of(host), wire.IM_PORT, message, timeout=timeout)

    def _parallel(self, hosts, make_message, wait_seconds, replies=None, socket_timeout=None):
        """Send one IM request per host in parallel; wait at most ``wait_seconds``.
        Returns {host: reply dict, or None when it did not answer in time}. ``replies``
        (a dict) keeps receiving answers that arrive later, up to ``socket_timeout``
        seconds (default ``wait_seconds``)."""
        replies = {} if replies is None else replies
        threads = []

        def worker(host):
            try:
                replies[host] = self._im(host, make_message(host), socket_timeout or wait_seconds)
            except wire.WireError as exc:
                replies[host] = {"ok": False, "code": 15010, "error": str(exc), "unreachable": True}

        for host in hosts:
            thread = threading.Thread(target=worker, args=(host,), daemon=True)
            thread.start()
            threads.append(thread)
        deadline = time.monotonic() + wait_seconds
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        out = {}
        for host in hosts:
            reply = replies.get(host)
            if reply is not None and reply.get("unreachable") and "timed out" in reply.get("error", ""):
                reply = None
            out[host] = reply
        return out

    def _fire_and_forget(self, hosts, make_message):
        for host in hosts:
            def send(target=host):
                try:
                    self._im(target, make_message(target), 10)
                except wire.WireError:
                    pass
            threading.Thread(target=send, daemon=True).start()

    def _requeue(self, record, hold=None, comment=None, reason=None, rerun=False, aborted=False):
        """Send the job back to the server; sisters get ``delete_job`` (their execjob_end).
        The primary runs its execjob_end hooks when its execjob_begin ones accepted the job
        (``aborted``: execjob_abort first, the job having been aborted by a hook)."""
        jobid = record.job["id"]
        if record.begun:
            self.end_hooks(record, ("execjob_abort", "execjob_end") if aborted else ("execjob_end",))
        self._fire_and_forget(record.sisters, lambda h: {"op": "delete_job", "jobid": jobid})
        self.mom.send_server({"op": "mom_job_requeue", "jobid": jobid, "hold": hold,
                              "comment": comment, "reason": reason, "rerun": rerun,
                              "run_count": record.job.get("run_count")})
        with self.lock:
            self.jobs.pop(jobid, None)

    def _bail_to_delete(self, record):
        """A launch hook rejected the job without ``job.rerun()``: as the real mom's
        exec_bail(JOB_EXEC_FAILHOOK_DELETE), the job is over, not requeued. Sisters get
        ``delete_job``, the primary runs its execjob_end hooks (when its execjob_begin ones
        accepted the job) and sends the server an obit with exit status -17 and only a
        zero walltime used; the server then ends the job (Exit_status -17)."""
        jobid = record.job["id"]
        if record.begun:
            self.end_hooks(record, ("execjob_end",))
        self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, "kill_job")
        self._fire_and_forget(record.sisters, lambda h: {"op": "delete_job", "jobid": jobid})
        self.mom.send_server({"op": "mom_job_obit", "jobid": jobid, "exit_status": JOB_EXEC_FAILHOOK_DELETE,
                              "resources_used": {"walltime": "00:00:00"},
                              "run_count": record.job.get("run_count")})
        self.mom.log.job(pbslog.PBSEVENT_DEBUG2, jobid, "Obit sent")
        with self.lock:
            self.jobs.pop(jobid, None)

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

    def _context(self, record, env=None):
        job, vnodes = record.job, record.vnodes
        all_vnodes = job_vnode_dicts(job, vnodes)
        reported = [h for h in record.failed_hosts if h not in record.silent_hosts]
        failed = [vn for vn, info in all_vnodes.items() if info["host"] in reported]
        hosts = exec_hosts(job)
        return {
            "vnode_list": all_vnodes,
            "vnode_list_fail": {vn: all_vnodes[vn] for vn in failed},
            "failed_mom_list": reported,
            "succeeded_mom_list": [h for h in hosts if h not in record.failed_hosts],
            "in_ms_mom": True,
            "env": env if env is not None else {},
        }

    def _start_job(self, record):
        try:
            self._start_job_steps(record)
        except Exception as exc:  # a broken job start must not kill the mom
            self.mom.log.job(pbslog.PBSEVENT_ERROR, record.job.get("id", ""), "job not started, %s" % exc)
            self._requeue(record, reason="job start error: %s" % exc)

    def _start_job_steps(self, record):
        job = record.job
        jobid = job["id"]
        hosts = exec_hosts(job)
        record.sisters = [h for h in hosts if h != self.mom.host_name]
        if self.mom.is_cray():
            # Interface 1: a Cray primary mom ignores the setting; every hook sees "none".
            record.job["tolerate_node_failures"] = "none"

        # 1. execjob_begin on the primary.
        try:
            record.job, _unused = self.run_event("execjob_begin", record.job, record.vnodes, self._context(record))
        except HookRejected as exc:
            self._requeue(record, comment=str(exc), reason="execjob_begin hook rejected")
            return
        record.begun = True

        # 2. join_job to sisters (PP-928 interface 3).
        if record.sisters:
            alarm = self.mom.join_alarm()
            replies = self._parallel(
                record.sisters,
                lambda h: {"op": "join_job", "job": record.job, "vnodes": record.vnodes,
                           "node_index": hosts.index(h), "cookie": record.cookie},
                alarm)
            failed, tolerant = self._sister_failures(
                record, replies, "JOIN_JOB",
                lambda: self.mom.log.job(pbslog.PBSEVENT_ADMIN, jobid,
                                         "sister_join_job_alarm wait time %d secs exceeded" % alarm),
                silent_is_error=False)
            if failed and not tolerant:
                self._requeue(record, reason="sister mom failed to join job")
                return
            record.failed_hosts.extend(h for h in failed if h not in record.failed_hosts)
            record.silent_hosts.extend(h for h in failed if replies[h] is None)

        # 3. execjob_prologue on the primary, then on healthy sisters (interface 4).
        try:
            record.job, _unused = self.run_event("execjob_prologue", record.job, record.vnodes, self._context(record))
        except HookRejected as exc:
            self._requeue(record, comment=str(exc), reason="execjob_prologue hook rejected")
            return
        healthy = [h for h in record.sisters if h not in record.failed_hosts]
        # As start_exec.c: IM_EXEC_PROLOGUE goes to the sisters only when there are
        # execjob_prologue hooks to run; otherwise a sister lost after it joined goes unseen.
        if healthy and self.mom.hooks.has_enabled("execjob_prologue"):
            delay = self.mom.launch_delay()
            replies = self._parallel(healthy, lambda h: {"op": "exec_prologue", "jobid": jobid}, delay,
                                     replies=record.prologue_replies, socket_timeout=delay + LATE_ACK_GRACE)
            failed, tolerant = self._sister_failures(
                record, replies, "IM_EXEC_PROLOGUE",
                lambda: self.mom.log.job(
                    pbslog.PBSEVENT_DEBUG2, jobid,
                    "not all prologue hooks to sister moms completed, but job will proceed to execute"))
            if failed and not tolerant:
                self._requeue(record, reason="sister mom failed its prologue")
                return
            record.failed_hosts.extend(h for h in failed if h not in record.failed_hosts)
            record.late_prologue_hosts = [h for h in failed if replies[h] is None]

        # 4. PBS_NODEFILE, then execjob_launch (interfaces 5, 6, 8).
        nodefile = self.write_nodefile(record.job)
        env = self.job_environment(record.job, nodefile, record.cookie)
        program = self.job_program(record.job, env)
        self.reclaim_late_prologue_acks(record)
        extra = self._context(record, env)
        extra["progname"], extra["argv"] = program[0], list(program)
        old = {k: record.job.get(k) for k in ("exec_vnode", "exec_host", "schedselect")}
        # The launch hooks run in the job child, the process that then becomes the program.
        child = self._spawn_child(record)
        try:
            record.job, launch = self.run_event("execjob_launch", record.job, record.vnodes, extra,
                                                runner=child.run_hook)
        except HookRejected as exc:
            child.abort()
            # The job child's starter_return(): JOB_EXEC_FAILHOOK_RERUN after job.rerun(),
            # else JOB_EXEC_FAILHOOK_DELETE (src/resmom/start_exec.c).
            self.mom.log.job(JOB_ERROR_CLASS, jobid, "job not started, Failure %d"
                             % (JOB_EXEC_FAILHOOK_RERUN if exc.result["rerun"] else JOB_EXEC_FAILHOOK_DELETE))
            self._apply_vnode_changes(exc.result.get("vnodes_by_list"))
            if not exc.result["rerun"]:
                self._bail_to_delete(record)
                return
            hold = exc.result["job"].get("Hold_Types")
            self._requeue(record, hold=hold if hold and hold != "n" and hold != job.get("Hold_Types") else None,
                          comment=str(exc), reason="execjob_launch hook rejected", rerun=True)
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
                self._requeue(record, comment=rejection, reason="execjob_resize hook rejected", rerun=True,
                              aborted=True)
                return
            nodefile = self.write_nodefile(record.job)
        env = dict(extra.get("env") or env)
        progname = extra.get("progname") or program[0]
        argv = extra.get("argv") or program
        self._execute(record, child, progname, argv, env)

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
        self._fire_and_forget(released, lambda h: {"op": "delete_job2", "jobid": jobid})
        rejection = None
        try:
            self.run_event("execjob_resize", record.job, record.vnodes, self._context(record))
        except HookRejected as exc:
            rejection = str(exc)
        healthy_kept = [h for h in record.sisters if h not in record.failed_hosts]
        if healthy_kept:
            replies = self._parallel(
                healthy_kept,
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
        self.mom.send_server({"op": "mom_job_update", "jobid": jobid, "exec_vnode": new["exec_vnode"],
                              "exec_host": new["exec_host"], "schedselect": new["schedselect"]})
        return rejection

    # ---------------------------------------------------------------- execution
    def write_nodefile(self, job):
        aux = os.path.join(self.mom.pbs_home, "aux")
        os.makedirs(aux, exist_ok=True)
        path = os.path.join(aux, job["id"])
        with open(path, "w") as handle:
            handle.write("".join(line + "\n" for line in nodefile_lines(job)))
        os.chmod(path, 0o644)
        return path

    def _user(self, job):
        try:
            return pwd.getpwnam(job.get("euser") or "")
        except KeyError:
            return pwd.getpwuid(os.getuid())

    def job_environment(self, job, nodefile, cookie=None):
        """Login-like environment of the job program (see module docstring); ``nodefile``
        None leaves ``PBS_NODEFILE`` out (tasks, seed interface 8: an execjob_launch hook
        tells the job's own start from a task by its presence). A subjob (``array_index``
        set) also gets ``PBS_ARRAY_INDEX`` and ``PBS_ARRAY_ID`` (its array's id,
        ``N[].server``); its ``PBS_JOBID`` is the subjob id ``N[i].server``."""
        user = self._user(job)
        env = {}
        for key, value in (job.get("Variable_List") or {}).items():
            env[key] = value
        env.update({
            "HOME": user.pw_dir, "USER": user.pw_name, "LOGNAME": user.pw_name,
            "SHELL": user.pw_shell or "/bin/sh", "PATH": "/usr/local/bin:/usr/bin:/bin",
            "PBS_JOBID": job["id"], "PBS_JOBNAME": job.get("Job_Name", ""),
            "PBS_QUEUE": job.get("queue", ""), "PBS_NODEFILE": nodefile,
            "PBS_ENVIRONMENT": "PBS_BATCH", "PBS_NODENUM": "0", "PBS_TASKNUM": "1",
            "PBS_MOMPORT": str(wire.IM_PORT), "PBS_JOBDIR": user.pw_dir,
        })
        if cookie:
            env["PBS_JOBCOOKIE"] = cookie
        if job.get("array_index") is not None:
            env["PBS_ARRAY_INDEX"] = str(job["array_index"])
            env["PBS_ARRAY_ID"] = str(job.get("array_id", ""))
        if nodefile is None:
            del env["PBS_NODEFILE"]
        return env

    def job_program(self, job, env=None):
        """argv of the top program: ``[PROGRAM, ARGS...]`` for a ``qsub -- PROGRAM ARGS``
        job (PROGRAM looked up on the job's ``PATH`` from ``env`` when it has no ``/``),
        else the user's shell running the job script (written to
        ``mom_priv/jobs/<jobid>.SC``)."""
        command = executable_argv(job)
        if command is not None:
            return [resolve_program(command[0], env or {})] + command[1:]
        user = self._user(job)
        jobs_dir = os.path.join(self.mom.pbs_home, "mom_priv", "jobs")
        os.makedirs(jobs_dir, exist_ok=True)
        script = os.path.join(jobs_dir, "%s.SC" % job["id"])
        with open(script, "w") as handle:
            handle.write(job.get("script") or "")
        os.chmod(script, 0o755)
        if os.getuid() == 0:
            os.chown(script, user.pw_uid, user.pw_gid)
        return [user.pw_shell or "/bin/sh", script]

    def _output_files(self, job, user):
        def path_part(value, default):
            value = value or default
            return value.split(":", 1)[1] if ":" in value else value
        home = user.pw_dir
        jobnum = job["id"].split(".")[0]
        out = path_part(job.get("Output_Path"), os.path.join(home, "%s.o%s" % (job.get("Job_Name", "STDIN"), jobnum)))
        err = path_part(job.get("Error_Path"), os.path.join(home, "%s.e%s" % (job.get("Job_Name", "STDIN"), jobnum)))
        join = job.get("Join_Path", "n")
        if join == "oe":
            err = out
        elif join == "eo":
            out = err
        return out, err

    def _spawn_child(self, record):
        """Fork the job child (:mod:`mockpbs.mom.jobchild`)."""
        return JobChild(self.mom.pbs_home)

    def _execute(self, record, child, progname, argv, env):
        job = record.job
        jobid = job["id"]
        user = self._user(job)
        groups = [g.gr_gid for g in grp.getgrall() if user.pw_name in g.gr_mem]
        cwd = user.pw_dir if os.path.isdir(user.pw_dir) else "/"
        out_path, err_path = self._output_files(job, user)
        argv0 = progname
        if executable_argv(job) is None and progname == (user.pw_shell or "/bin/sh"):
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

    # ---------------------------------------------------------------- polling (interface 1)
    def _poll_sisters(self, record):
        jobid = record.job["id"]
        while not record.poll_stop.wait(self.poll_interval):
            for host in list(record.sisters):
                if host in record.failed_hosts or host in record.lost_hosts or record.poll_stop.is_set():
                    continue
                try:
                    self._im(host, {"op": "poll_job", "jobid": jobid}, self.poll_timeout)
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
        return up_since is not None and now - up_since > self.comm_maturity

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
        self._fire_and_forget(sisters, lambda h: {"op": "delete_job", "jobid": jobid})
        try:
            self.run_event("execjob_end", record.job, record.vnodes, self._context(record))
        except HookRejected:
            pass
        ncpus = (record.job.get("Resource_List") or {}).get("ncpus", "1")
        used = {"cpupercent": "0", "cput": "00:00:00", "mem": "0kb", "ncpus": ncpus, "vmem": "0kb",
                "walltime": "%02d:%02d:%02d" % (walltime // 3600, walltime // 60 % 60, walltime % 60)}
        self.mom.send_server({"op": "mom_job_obit", "jobid": jobid, "exit_status": exit_status,
                              "resources_used": used, "run_count": record.job.get("run_count")})
        self.mom.log.job(pbslog.PBSEVENT_DEBUG2, jobid, "Obit sent")
        with self.lock:
            self.jobs.pop(jobid, None)

    def _finish_node_failure(self, record):
        jobid = record.job["id"]
        self.mom.log.record(pbslog.PBSEVENT_DEBUG, pbslog.OBJ_JOB, jobid, "task 00000001 terminated")
        self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, "Terminated")
        lost = record.node_failure
        record.sisters = [h for h in record.sisters if h != lost and h not in record.failed_hosts]
        self._requeue(record, reason="lost communication with sister mom %s" % lost, rerun=True)

    def delete_job(self, message):
        """Service op ``delete_job`` (qdel of a running job): kill its session, tell sisters."""
        jobid = message["jobid"]
        self.mom.log.job(pbslog.PBSEVENT_DEBUG, jobid, "delete job request received")
        with self.lock:
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
            self._fire_and_forget(record.sisters, lambda h: {"op": "delete_job", "jobid": jobid})
            self.mom.log.job(pbslog.PBSEVENT_JOB, jobid, "kill_job")
            with self.lock:
                self.jobs.pop(jobid, None)
        return {"ok": True}

    # ---------------------------------------------------------------- tasks (pbsdsh)

    def _primary_record(self, message):
        with self.lock:
            record = self.jobs.get(message.get("jobid"))
        if record is None or not record.primary or record.cookie != message.get("cookie"):
            return None
        return record

    def tm_nodeinfo(self, message):
        """IM ``tm_nodeinfo`` {jobid, cookie} on the primary: ``{"ok": true, "nodes":
        [host, ...]}``, the job's task nodes (its PBS_NODEFILE lines, from the current,
        possibly pruned, exec_host); else ``{"ok": false, "code": 17000}``."""
        record = self._primary_record(message)
        if record is None:
            return {"ok": False, "code": TM_ESYSTEM, "error": TM_ERROR_NAMES[TM_ESYSTEM]}
        return {"ok": True, "nodes": nodefile_lines(record.job)}

    def tm_spawn(self, message):
        """IM ``tm_spawn`` {jobid, cookie, node (int index into tm_nodeinfo's list), argv}
        on the primary: runs ``argv`` on that node (itself, or ``spawn_task`` to the
        sister) as the job's user and waits for it. Reply ``{"ok": true, "stdout": str,
        "stderr": str, "exit_status": int}`` or ``{"ok": false, "code": <TM error>}``
        (17006 TM_ENOTFOUND: no such node / the sister has not the job's node there)."""
        record = self._primary_record(message)
        if record is None:
            return {"ok": False, "code": TM_ESYSTEM, "error": TM_ERROR_NAMES[TM_ESYSTEM]}
        nodes = nodefile_lines(record.job)
        node = message.get("node")
        if not isinstance(node, int) or not 0 <= node < len(nodes):
            return {"ok": False, "code": TM_ENOTFOUND, "error": TM_ERROR_NAMES[TM_ENOTFOUND]}
        argv = [str(a) for a in message.get("argv") or []]
        if not argv:
            return {"ok": False, "code": TM_ESYSTEM, "error": TM_ERROR_NAMES[TM_ESYSTEM]}
        host = nodes[node]
        if host == self.mom.host_name:
            return self.run_task(record, argv, node)
        try:
            return self._im(host, {"op": "spawn_task", "jobid": record.job["id"], "cookie": record.cookie,
                                   "argv": argv, "node": node}, TASK_TIMEOUT)
        except wire.WireError:
            return {"ok": False, "code": TM_ESYSTEM, "error": TM_ERROR_NAMES[TM_ESYSTEM]}

    def run_task(self, record, argv, node):
        """Run one task of the job here as the job's user and wait for it; its stdout and
        stderr are captured. As in PBS, the task's process first runs this mom's
        execjob_launch hooks (seed interface 8: with the task's environment, which has no
        ``PBS_NODEFILE``, and ``progname``/``argv`` of the task; a hook may change them).
        Returns the ``tm_spawn`` reply: ``{"ok": true, "stdout", "stderr", "exit_status"}``
        (254 and the error text on stderr when the program cannot be executed), or
        ``{"ok": false, "code": 17000}`` when a launch hook rejected the task."""
        job = record.job
        jobid = job["id"]
        user = self._user(job)
        env = self.job_environment(job, None, record.cookie)
        env["PBS_NODENUM"] = str(node)
        extra = self._context(record, env) if record.primary else {"in_ms_mom": False, "env": env}
        extra["progname"], extra["argv"] = argv[0], list(argv)
        self.mom.log.job(pbslog.PBSEVENT_DEBUG, jobid, "task spawn: %s" % " ".join(argv))
        child = self._spawn_child(record)
        try:
            self.run_event("execjob_launch", job, record.vnodes, extra, runner=child.run_hook)
        except HookRejected:
            child.abort()
            return {"ok": False, "code": TM_ESYSTEM, "error": TM_ERROR_NAMES[TM_ESYSTEM]}
        except BaseException:
            child.abort()
            raise
        env = dict(extra.get("env") or env)
        argv = list(extra.get("argv") or argv)
        progname = resolve_program(extra.get("progname") or argv[0], env)
        groups = [g.gr_gid for g in grp.getgrall() if user.pw_name in g.gr_mem]
        cwd = user.pw_dir if os.path.isdir(user.pw_dir) else "/"
        spool = tempfile.mkdtemp(prefix="task-", dir=self._spool_dir())
        out_path, err_path = os.path.join(spool, "out"), os.path.join(spool, "err")
        try:
            error = child.execute(progname, argv, env, cwd, user.pw_uid, user.pw_gid, groups, out_path, err_path)
            status = child.process.wait()
            stdout, stderr = _read_text(out_path), _read_text(err_path)
        finally:
            shutil.rmtree(spool, ignore_errors=True)
        if error:
            stderr += error + "\n"
        status = status if status >= 0 else 256 - status
        return {"ok": True, "stdout": stdout, "stderr": stderr, "exit_status": status}

    def _spool_dir(self):
        path = os.path.join(self.mom.pbs_home, "spool")
        os.makedirs(path, exist_ok=True)
        return path


def _read_text(path):
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def apply_job_changes(job, changes):
    """Merge a hook result's ``job`` changes (``Resource_List`` holds only changed resources)."""
    if not changes:
        return job
    job = dict(job)
    for key, value in changes.items():
        if key in ("Resource_List", "resources_used", "Variable_List") and isinstance(value, dict):
            merged = dict(job.get(key) or {})
            merged.update(value)
            job[key] = merged
        else:
            job[key] = value
    return job
