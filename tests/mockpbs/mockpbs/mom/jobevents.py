"""The hook events of a job on a mom: every enabled hook of one event run in order over
the job (execjob_begin, execjob_prologue, execjob_launch, execjob_resize, execjob_abort,
execjob_end), their rejections, crashes and ``fail_action=offline_vnodes``, and what a
hook on the primary mom sees of the job's hosts (PP-928 interfaces 1, 4, 5, 9).

Log texts and classes follow tests/reference/log_messages.json and transcripts g.
"""
from mockpbs import hookrun, pbsconf, pbslog, selectspec
from mockpbs.mom.jobrecord import exec_hosts

OFFLINE_EVENTS = ("execjob_begin", "execjob_prologue")   # where fail_action=offline_vnodes applies
# What the primary mom logs (DEBUG2, Hook, empty name) when these events' hooks failed
# internally (a crashed pbs_python) and it goes on as if they had accepted (start_exec.c).
ACCEPT_BY_DEFAULT_TEXTS = {
    "execjob_prologue": "prologue hook event: accept req by default",
    "execjob_launch": "execjob_launch hook event: accept req by default",
}
PBSE_HOOKERROR = 15169   # the code a sister's rejecting execjob_begin/prologue reports


class HookRejected(Exception):
    """A hook of the event rejected the job (or failed); ``result`` is the merged result
    so far: ``job``, ``rerun``, ``delete``, ``vnodes``, ``vnodes_by_list``..."""

    def __init__(self, message, result):
        super().__init__(message)
        self.result = result


def vnode_host(vnodes, vnode):
    """The host of ``vnode`` in ``vnodes`` ({name: vnode dict}); the vnode's name if unknown."""
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


def primary_hook_context(record, env=None):
    """What a hook on the primary mom sees of the job of ``record`` (a JobRecord): its
    ``vnode_list``, ``vnode_list_fail`` and ``failed_mom_list`` (failed hosts that reported
    an error, not the silent ones), ``succeeded_mom_list`` and ``env`` (default empty)."""
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


class JobEvents:
    """Hook events of the jobs of one mom. ``mom`` provides: ``log`` / ``hook_log``
    (DaemonLog), ``hooks`` (HookStore), ``host_name``, ``node_name``, ``server_name``,
    ``send_server(message)``, ``run_hook(hook, event, context)`` and maybe ``vnodes()``."""

    def __init__(self, mom):
        self.mom = mom

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
        context = primary_hook_context(record) if record.primary else {"in_ms_mom": False}
        for event in events:
            try:
                self.run_event(event, record.job, record.vnodes, context)
            except HookRejected:
                pass

    def _log_resize_reject(self, jobid, hook_name, result):
        """Interface 9: the PP-928 page's two DEBUG2 lines for a reject, exception or alarm of an
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
