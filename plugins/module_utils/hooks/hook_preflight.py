# -*- coding: utf-8 -*-
# Copyright: hpc.pbs developers
# Apache License 2.0
"""Preflight of a hook body before it goes live, on the PBS server host.

Three checks, all run by the interpreter PBS runs hooks with:

1. compile: ``compile()`` of the body by ``$PBS_EXEC/bin/pbs_python`` (which, without
   ``--hook``, hands its arguments to the Python it was built with), else by the Python
   running this module. A SyntaxError is reported with file, line and message.
2. load: where ``pbs_python`` has its hook mode (``pbs_python --hook -i <input> -o
   <output> -l <log> <script>``, OpenPBS ``src/tools/pbs_python.c``), the body's module
   level is executed once inside ``pbs_python``, with the real ``pbs`` module and an empty
   event of the hook's own type, with ``__name__`` set to :data:`LOAD_MODULE_NAME`, so
   import-time errors (a NameError at module level, a missing import) are named as such.
3. events: then each of the hook's events that pbs_python's hook mode can build and this
   module has a synthetic event for (:data:`EVENT_RUN_ORDER`) is run once, the body
   executed as PBS executes a hook (a namespace holding only ``__builtins__``, so
   ``__name__`` is ``"builtins"`` and the event code under ``if __name__ == "builtins":``
   runs) on a synthetic event written in pbs_python's input format
   (:func:`event_input_text`): a job of a few chunks on hosts that do not exist
   (:data:`PREFLIGHT_HOSTS`, job :data:`PREFLIGHT_JOB_ID`), the shape of a job that
   reliable job startup padded, with a failed sister at execjob_launch. An exception other
   than the hook's own ``accept()`` / ``reject()`` (both raise SystemExit), or a run past
   the hook's alarm, refuses the body; a reject is a legitimate outcome and is reported
   with its message. Events pbs_python's hook mode has no event for
   (:data:`NO_HOOK_MODE_EVENTS`, e.g. ``periodic``: ``pbs_python.c`` ends such a run with
   "Unexpected event") and those with no synthetic event here are reported as not run,
   with the reason.

The events run on the PBS server host, as root, as the hook's event code would on a mom:
a hook that acts on its host (cgroups, files, services) acts on the server host for the
synthetic job. The mom events run in the order a job meets them, the launch first (before
any begin made per-job state) and end/abort last, so a hook that creates per-job state at
begin and removes it at end leaves none behind.

A Python without the hook mode (a plain interpreter, or a ``pbs_python`` wrapper around
one) cannot load a hook: the load is then reported as not done, never faked.
"""

import json
import os
import shutil
import sys
import tempfile

# __name__ the body is loaded with (PBS runs hooks as "builtins").
LOAD_MODULE_NAME = "hpc_pbs_hook_preflight"
# pbs_python's hook mode has no input format for these events: another of the hook's
# events, else queuejob, gives the empty event the body is loaded with.
UNLOADABLE_EVENTS = ("periodic",)
DEFAULT_LOAD_EVENT = "queuejob"
DEFAULT_ALARM = 30

# Events pbs_python's hook mode cannot run: src/tools/pbs_python.c (23.06.06 and 22.05.11)
# builds an event only for queuejob, postqueuejob (23.06 only), modifyjob, movejob, runjob,
# resvsub, the execjob_* events, exechost_periodic and exechost_startup; any other type
# ends the run with "Unexpected event" before the hook runs.
NO_HOOK_MODE_EVENTS = ("modifyvnode", "management", "modifyresv", "jobobit", "provision",
                       "periodic", "resv_confirm", "resv_begin", "resv_end")
# The events run on a synthetic event, in this order: the server's, then the mom's in the
# order a job meets them, execjob_launch first (before a begin made per-job state) and
# execjob_end / execjob_abort last.
EVENT_RUN_ORDER = (
    "queuejob", "exechost_startup", "execjob_launch",
    "execjob_begin", "execjob_prologue", "execjob_resize", "execjob_postsuspend",
    "execjob_preresume", "execjob_preterm", "execjob_epilogue", "execjob_end",
    "execjob_abort", "exechost_periodic",
)
# Events whose job pbs_python's hook mode asks the PBS server for (pbs_statobj: "failed to
# get job ...'s python job object" without it), which knows no synthetic job.
SERVER_JOB_EVENTS = ("modifyjob", "movejob", "runjob")
SERVER_JOB_REASON = ("pbs_python's hook mode asks the PBS server for the job of a %s event, "
                     "and the server has no synthetic job")
# Why another event of the hook is not run.
NOT_BUILT_REASON = ("the preflight builds no synthetic %s event (it would need a "
                    "reservation, a process to attach or a job the server has queued)")
NO_HOOK_MODE_REASON = ("pbs_python's hook mode has no %s event (src/tools/pbs_python.c ends "
                       "such a run with Unexpected event)")

# The synthetic job: on hosts that do not exist, under a server name no real one has.
PREFLIGHT_SERVER = "hpc-pbs-preflight"
PREFLIGHT_JOB_ID = "0.%s" % PREFLIGHT_SERVER
PREFLIGHT_HOSTS = ("hpc-pbs-preflight-1", "hpc-pbs-preflight-2", "hpc-pbs-preflight-3")
# The account the synthetic job and requests belong to: one every host has.
PREFLIGHT_USER = "root"
PREFLIGHT_QUEUE = "workq"

# Run as ``<python> -S -c COMPILE_SOURCE <path> <display name>``; prints one JSON object:
# {"version": "3.11.2"} or {"version": ..., "syntax_error": {lineno, offset, msg, text}}.
COMPILE_SOURCE = r"""
import json, sys
result = {"version": "%d.%d.%d" % tuple(sys.version_info[:3])}
with open(sys.argv[1], "rb") as handle:
    source = handle.read()
try:
    compile(source, sys.argv[2], "exec")
except (SyntaxError, ValueError) as exc:
    result["syntax_error"] = {"lineno": getattr(exc, "lineno", None),
                              "offset": getattr(exc, "offset", None),
                              "msg": getattr(exc, "msg", None) or str(exc),
                              "text": (getattr(exc, "text", None) or "").rstrip()}
sys.stdout.write(json.dumps(result))
"""

# The script pbs_python --hook runs. Environment: HPC_PBS_PREFLIGHT_BODY (path of the body),
# HPC_PBS_PREFLIGHT_NAME (file name in messages), HPC_PBS_PREFLIGHT_RESULT (where the JSON
# result goes: {"loaded": true} or {"loaded": false, "alarm": bool, "error": traceback
# text}), HPC_PBS_PREFLIGHT_EVENT (set: run the body as PBS runs a hook, __name__ resolving
# to "builtins" through __builtins__ as in pbs_python_ext_namespace_init(); unset: load its
# module level only, under LOAD_MODULE_NAME). The hook's accept() / reject() raise
# SystemExit, which ends the body normally; the pbs_python alarm raises KeyboardInterrupt.
LOADER_SOURCE = r"""
import builtins, json, os, sys, traceback
result = {"loaded": True}
try:
    with open(os.environ["HPC_PBS_PREFLIGHT_BODY"], "rb") as handle:
        source = handle.read()
    code = compile(source, os.environ["HPC_PBS_PREFLIGHT_NAME"], "exec")
    namespace = {"__builtins__": builtins}
    if not os.environ.get("HPC_PBS_PREFLIGHT_EVENT"):
        namespace["__name__"] = "%s"
    try:
        exec(code, namespace)
    except SystemExit:
        pass
except BaseException:
    kind, value, trace = sys.exc_info()
    result = {"loaded": False, "alarm": kind is KeyboardInterrupt,
              "error": "".join(traceback.format_exception(kind, value, trace.tb_next))}
with open(os.environ["HPC_PBS_PREFLIGHT_RESULT"], "w") as handle:
    handle.write(json.dumps(result))
""" % LOAD_MODULE_NAME

PLAIN_PYTHON_HOOK_MODE_ERROR = "unknown option --hook"


class HookPreflightError(Exception):
    """The preflight itself could not run (not a problem of the body).

    ``msg``: what happened; ``cmd``, ``rc``, ``stdout``, ``stderr``: the failing command."""

    def __init__(self, msg, cmd=None, rc=None, stdout="", stderr=""):
        Exception.__init__(self, msg)
        self.msg, self.cmd, self.rc, self.stdout, self.stderr = msg, cmd, rc, stdout, stderr

    def fail_kwargs(self):
        return dict(msg=self.msg, cmd=self.cmd, rc=self.rc, stdout=self.stdout,
                    stderr=self.stderr)


class HookBodyRefused(Exception):
    """The body fails a preflight check; the message says where and why."""


def hook_interpreter(pbs_exec):
    """``(path, is_pbs_python)``: ``PBS_EXEC/bin/pbs_python`` when it is an executable
    file, else the Python running this code (``sys.executable``)."""
    candidate = os.path.join(pbs_exec, "bin", "pbs_python")
    if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
        return candidate, True
    return sys.executable, False


def load_event(events):
    """The event the body is loaded with: the first of ``events`` (server order expected)
    that pbs_python's hook mode can build, else :data:`DEFAULT_LOAD_EVENT`."""
    for event in events or ():
        if event not in UNLOADABLE_EVENTS:
            return event
    return DEFAULT_LOAD_EVENT


def load_input_text(hook_name, event, alarm):
    """The ``-i`` input file of ``pbs_python --hook``: ``pbs.event().<attr>=<value>``
    lines (hook_name, hook_type site, type, alarm in seconds)."""
    return "".join("pbs.event().%s=%s\n" % pair for pair in (
        ("type", event), ("hook_name", hook_name), ("hook_type", "site"),
        ("alarm", int(alarm or DEFAULT_ALARM))))


def _job_lines(attributes):
    """``pbs.event().job.<name>=<value>`` lines of ``attributes`` (pairs, in order)."""
    return ["pbs.event().job.%s=%s" % pair for pair in attributes]


def _vnode_lines(table, hosts):
    """A vnode table (``vnode_list`` or ``vnode_list_fail``) of one ncpus each, as the mom
    writes it (``resources_assigned`` with the vnode's host)."""
    lines = []
    for host in hosts:
        lines.append('pbs.event().%s["%s"].resources_assigned[ncpus]=1' % (table, host))
        lines.append('pbs.event().%s["%s"].resources_assigned[host]=%s' % (table, host, host))
    return lines


def _running_job(hosts, select, extra=()):
    """The attributes of the synthetic job running one ncpus on each of ``hosts``."""
    return [
        ("id", PREFLIGHT_JOB_ID), ("Job_Name", "preflight"),
        ("Job_Owner", "%s@%s" % (PREFLIGHT_USER, PREFLIGHT_SERVER)), ("job_state", "R"),
        ("queue", PREFLIGHT_QUEUE),
        ("exec_host", "+".join("%s/0" % h for h in hosts)),
        ("exec_host2", "+".join("%s:15002/0" % h for h in hosts)),
        ("exec_vnode", "+".join("(%s:ncpus=1)" % h for h in hosts)),
        ("Resource_List[ncpus]", len(hosts)), ("Resource_List[nodect]", len(hosts)),
        ("Resource_List[place]", "scatter"), ("Resource_List[select]", select),
    ] + list(extra) + [
        ("schedselect", select), ("euser", PREFLIGHT_USER),
        ("tolerate_node_failures", "job_start"), ("_msmom", "True"),
    ]


def _queuejob_lines():
    """A qsub as reliable job startup sees it: two chunks, tolerate_node_failures=job_start."""
    return _job_lines([
        ("Job_Name", "preflight"), ("Job_Owner", "%s@%s" % (PREFLIGHT_USER, PREFLIGHT_SERVER)),
        ("queue", PREFLIGHT_QUEUE), ("Resource_List[select]", "2:ncpus=1"),
        ("Resource_List[place]", "scatter"), ("tolerate_node_failures", "job_start"),
        ("Variable_List", '"""PBS_O_HOME=/root,PBS_O_LOGNAME=%s,PBS_O_WORKDIR=/tmp,'
                          'PBS_O_HOST=%s"""' % (PREFLIGHT_USER, PREFLIGHT_SERVER)),
    ])


def _launch_lines():
    """The primary mom launching a padded job (select ``1:ncpus=1+2:ncpus=1``, the request
    ``1:ncpus=1+1:ncpus=1`` kept in ``Resource_List.site``) whose second sister failed."""
    hosts = PREFLIGHT_HOSTS
    failed, succeeded = hosts[1], (hosts[0], hosts[2])
    env = ("HOME=/root,PBS_JOBID=%s,PBS_JOBNAME=preflight,PBS_NODEFILE=/dev/null,"
           "PBS_ENVIRONMENT=PBS_BATCH,PBS_QUEUE=%s" % (PREFLIGHT_JOB_ID, PREFLIGHT_QUEUE))
    lines = ["pbs.event().progname=/bin/true", "pbs.event().argv[0]=/bin/true",
             'pbs.event().env="""%s"""' % env]
    lines += _job_lines(_running_job(hosts, "1:ncpus=1+2:ncpus=1",
                                     [("Resource_List[site]", "1:ncpus=1+1:ncpus=1")]))
    lines += _vnode_lines("vnode_list", hosts) + _vnode_lines("vnode_list_fail", [failed])
    lines.append("pbs.event().job.failed_mom_list=%s" % failed)
    lines += ["pbs.event().job.succeeded_mom_list=%s" % host for host in succeeded]
    return lines


def _mom_job_lines(event):
    """A job of three chunks on the primary mom; after release_nodes() (execjob_resize) one
    chunk less."""
    hosts = PREFLIGHT_HOSTS
    if event == "execjob_resize":
        hosts = (hosts[0], hosts[2])
    select = "%d:ncpus=1" % len(hosts)
    return _job_lines(_running_job(hosts, select)) + _vnode_lines("vnode_list", hosts)


def _host_lines():
    """exechost_startup / exechost_periodic: the local vnode only."""
    host = PREFLIGHT_HOSTS[0]
    return ['pbs.event().vnode_list["%s"].resources_available[ncpus]=1' % host,
            'pbs.event().vnode_list["%s"].resources_available[host]=%s' % (host, host)]


def event_input_text(hook_name, event, alarm):
    """The ``-i`` input of ``pbs_python --hook`` that runs ``event`` on the synthetic job
    (the lines the server, or the mom in ``run_hook`` of src/resmom/mom_hook_func.c,
    writes: ``pbs.event().job.<attr>=...``, ``pbs.event().vnode_list["<vnode>"]...``,
    ``pbs.get_local_nodename()=...``, then the event's own fields); None for an event
    not in :data:`EVENT_RUN_ORDER`."""
    if event not in EVENT_RUN_ORDER:
        return None
    mom = event != "queuejob"
    if not mom:
        lines = _queuejob_lines()
    elif event == "execjob_launch":
        lines = _launch_lines()
    elif event.startswith("exechost_"):
        lines = _host_lines()
    else:
        lines = _mom_job_lines(event)
    if mom:
        lines.append("pbs.get_local_nodename()=%s" % PREFLIGHT_HOSTS[0])
    requestor = ("pbs_mom", PREFLIGHT_HOSTS[0]) if mom else (PREFLIGHT_USER, PREFLIGHT_SERVER)
    lines += ["pbs.event().%s=%s" % pair for pair in (
        ("type", event), ("hook_name", hook_name), ("hook_type", "site"),
        ("requestor", requestor[0]), ("requestor_host", requestor[1]),
        ("user", "pbsadmin"), ("alarm", int(alarm or DEFAULT_ALARM)))]
    return "".join(line + "\n" for line in lines)


def event_not_run_reason(event):
    """Why ``event`` is not run on a synthetic event (str), or None when it is."""
    if event in EVENT_RUN_ORDER:
        return None
    if event in NO_HOOK_MODE_EVENTS:
        return NO_HOOK_MODE_REASON % event
    if event in SERVER_JOB_EVENTS:
        return SERVER_JOB_REASON % event
    return NOT_BUILT_REASON % event


def events_to_run(events):
    """The hook's ``events`` that are run, in :data:`EVENT_RUN_ORDER`."""
    wanted = set(events or ())
    return [event for event in EVENT_RUN_ORDER if event in wanted]


def read_outcome(text):
    """``(accepted, reject message)`` from pbs_python's ``-o`` output (its
    ``pbs.event().accept=True|False`` and ``pbs.event().reject_msg=...`` lines); accepted
    when the output says nothing of it."""
    accepted, message = True, ""
    for line in text.splitlines():
        key, _sep, value = line.partition("=")
        if key == "pbs.event().accept":
            accepted = value.strip() != "False"
        elif key == "pbs.event().reject_msg":
            message = value.strip()
    return accepted, message


def syntax_error_message(display_name, error):
    """``NAME.PY line 3: invalid syntax: "x = ("`` from the compile result's error dict."""
    where = display_name
    if error.get("lineno"):
        where += " line %s" % error["lineno"]
        if error.get("offset"):
            where += ", column %s" % error["offset"]
    text = ": %r" % error["text"] if error.get("text") else ""
    return "%s: %s%s" % (where, error.get("msg"), text)


def _write(path, data):
    with open(path, "wb") as handle:
        handle.write(data)


class Preflight:
    """Compile and load one hook body in a private temporary directory.

    ``run_command``: ``AnsibleModule.run_command``-like callable ``(args, environ_update=,
    cwd=) -> (rc, stdout, stderr)``. ``pbs_exec``: PBS_EXEC. ``tmpdir``: where the
    private directory is made (removed by :meth:`close`).
    """

    def __init__(self, run_command, pbs_exec, tmpdir=None):
        self.run_command = run_command
        self.interpreter, self.is_pbs_python = hook_interpreter(pbs_exec)
        self.workdir = tempfile.mkdtemp(prefix="hpc_pbs_preflight_", dir=tmpdir)

    def close(self):
        shutil.rmtree(self.workdir, ignore_errors=True)

    def check(self, body, display_name, hook_name, events, alarm, config=None,
              config_path=None, run_events=True):
        """Compile, then (pbs_python with a hook mode) load ``body`` (bytes) and, with
        ``run_events``, run each of its events on a synthetic event.

        ``display_name``: the file named in messages; ``events``: the hook's events after
        the task (server order); ``alarm``: seconds pbs_python allows each run;
        ``config`` (bytes, the new config) or else ``config_path`` (the current config
        file): what the body sees as ``pbs.hook_config_filename``; neither: no config.
        Returns ``{"interpreter", "python_version", "compiled": True, "loaded": bool,
        "load_event" (when loaded), "not_loaded_because" (when not), "events" (when
        loaded): {event: {"ran": bool, "accepted": bool, "reject_message": str} or
        {"ran": False, "not_run_because": str}}}``.
        Raises :class:`HookBodyRefused` for a body that fails, :class:`HookPreflightError`
        when the interpreter cannot run the check.
        """
        body_path = os.path.join(self.workdir, "body.py")
        _write(body_path, body)
        report = {"interpreter": self.interpreter, "compiled": False, "loaded": False}
        report["python_version"] = self._compile(body_path, display_name)
        report["compiled"] = True
        if not self.is_pbs_python:
            report["not_loaded_because"] = ("no pbs_python in PBS_EXEC/bin: the body was "
                                            "compiled by %s" % self.interpreter)
            return report
        if config is not None:
            config_path = os.path.join(self.workdir, "hook.CF")
            _write(config_path, config)
        event = load_event(events)
        problem = self._load(body_path, display_name, hook_name, event, alarm, config_path)
        if problem is not None:
            report["not_loaded_because"] = problem
            return report
        report.update(loaded=True, load_event=event)
        if not run_events:
            return report
        outcomes = {}
        for name in events or ():
            reason = event_not_run_reason(name)
            if reason is not None:
                outcomes[name] = {"ran": False, "not_run_because": reason}
        for name in events_to_run(events):
            accepted, message = self._run_event(body_path, display_name, hook_name, name,
                                                alarm, config_path)
            outcomes[name] = {"ran": True, "accepted": accepted, "reject_message": message}
        report["events"] = outcomes
        return report

    def _compile(self, body_path, display_name):
        """The interpreter's version (``"3.11.2"``); HookBodyRefused on a SyntaxError."""
        cmd = [self.interpreter, "-S", "-c", COMPILE_SOURCE, body_path, display_name]
        rc, out, err = self.run_command(cmd, cwd=self.workdir)
        try:
            result = json.loads(out)
        except ValueError:
            raise HookPreflightError("cannot compile the hook body with %s (rc %s): %s"
                                     % (self.interpreter, rc, err.strip() or out.strip()),
                                     cmd, rc, out, err)
        if "syntax_error" in result:
            raise HookBodyRefused("the hook body does not compile with the hook interpreter "
                                  "%s (Python %s): %s" % (
                                      self.interpreter, result["version"],
                                      syntax_error_message(display_name,
                                                           result["syntax_error"])))
        return result["version"]

    def _pbs_python(self, body_path, display_name, input_text, alarm, config_path,
                    as_event):
        """Run the loader in ``pbs_python --hook`` on ``input_text``. Returns ``(result,
        output text)`` (the loader's JSON result, pbs_python's ``-o`` output), or ``(None,
        reason)`` when this pbs_python has no hook mode; HookPreflightError when it could
        not run the loader."""
        input_path = os.path.join(self.workdir, "hook.input")
        loader_path = os.path.join(self.workdir, "loader.py")
        result_path = os.path.join(self.workdir, "load.json")
        output_path = os.path.join(self.workdir, "hook.output")
        for path in (result_path, output_path):
            if os.path.exists(path):
                os.unlink(path)
        _write(input_path, input_text.encode())
        _write(loader_path, LOADER_SOURCE.encode())
        cmd = [self.interpreter, "--hook", "-i", input_path, "-o", output_path,
               "-l", os.path.join(self.workdir, "hook.log"), loader_path]
        environ = {"HPC_PBS_PREFLIGHT_BODY": body_path,
                   "HPC_PBS_PREFLIGHT_NAME": display_name,
                   "HPC_PBS_PREFLIGHT_RESULT": result_path,
                   "HPC_PBS_PREFLIGHT_EVENT": "1" if as_event else ""}
        if config_path:
            environ["PBS_HOOK_CONFIG_FILE"] = config_path
        rc, out, err = self.run_command(cmd, environ_update=environ, cwd=self.workdir)
        try:
            with open(result_path) as handle:
                result = json.load(handle)
        except (IOError, OSError, ValueError):
            if PLAIN_PYTHON_HOOK_MODE_ERROR in err:
                return None, ("%s has no hook mode (--hook): the body was compiled, not "
                              "loaded" % self.interpreter)
            raise HookPreflightError(
                "pbs_python could not %s the hook body for its preflight (rc %s): %s. "
                "Nothing was changed." % ("run an event of" if as_event else "load", rc,
                                          err.strip() or out.strip() or "no output"),
                cmd, rc, out, err)
        output = ""
        if os.path.exists(output_path):
            with open(output_path, "rb") as handle:
                output = handle.read().decode("utf-8", "replace")
        return result, output

    def _load(self, body_path, display_name, hook_name, event, alarm, config_path):
        """None when loaded; a reason (str) when this pbs_python has no hook mode.
        HookBodyRefused when the load raised."""
        result, output = self._pbs_python(body_path, display_name,
                                          load_input_text(hook_name, event, alarm), alarm,
                                          config_path, False)
        if result is None:
            return output
        if not result.get("loaded"):
            raise HookBodyRefused("the hook body fails when pbs_python loads it (%s event, "
                                  "module level run once): %s"
                                  % (event, result.get("error", "").strip()))
        return None

    def _run_event(self, body_path, display_name, hook_name, event, alarm, config_path):
        """Run ``event`` on its synthetic event: ``(accepted, reject message)``.
        HookBodyRefused when the body raised or ran past its alarm."""
        result, output = self._pbs_python(body_path, display_name,
                                          event_input_text(hook_name, event, alarm), alarm,
                                          config_path, True)
        if result is None:   # no hook mode, though the load ran: as an interpreter failure
            raise HookPreflightError("%s. Nothing was changed." % output)
        if not result.get("loaded"):
            if result.get("alarm"):
                raise HookBodyRefused(
                    "the hook body runs past its alarm (%s s) at its first %s event (a "
                    "synthetic job %s), so PBS would kill it there: %s"
                    % (int(alarm or DEFAULT_ALARM), event, PREFLIGHT_JOB_ID,
                       result.get("error", "").strip()))
            raise HookBodyRefused(
                "the hook body raises an exception at its first %s event (run by pbs_python "
                "on a synthetic job %s; PBS would reject the request and apply the hook's "
                "fail_action): %s" % (event, PREFLIGHT_JOB_ID, result.get("error", "").strip()))
        return read_outcome(output)
