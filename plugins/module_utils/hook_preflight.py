# -*- coding: utf-8 -*-
# Copyright: hpc.pbs developers
# Apache License 2.0
"""Preflight of a hook body before it goes live, on the PBS server host.

Two checks, both run by the interpreter PBS runs hooks with:

1. compile: ``compile()`` of the body by ``$PBS_EXEC/bin/pbs_python`` (which, without
   ``--hook``, hands its arguments to the Python it was built with), else by the Python
   running this module. A SyntaxError is reported with file, line and message.
2. load: where ``pbs_python`` has its hook mode (``pbs_python --hook -i <input> -o
   <output> -l <log> <script>``, OpenPBS ``src/tools/pbs_python.c``), the body's module
   level is executed once inside ``pbs_python``, with the real ``pbs`` module and an empty
   event of the hook's own type, so import-time errors (a NameError at module level, a
   missing import) are caught. The body runs with ``__name__`` set to
   :data:`LOAD_MODULE_NAME`, not ``"builtins"``: code under ``if __name__ ==
   "builtins":`` (the event handling of a well-formed hook) is not run; a hook without
   that guard runs its event code once against the empty event, and an exception there
   refuses it too. ``pbs.event().accept()`` / ``reject()`` end the load normally.

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
# result goes: {"loaded": true} or {"error": traceback text}).
LOADER_SOURCE = r"""
import builtins, json, os, sys, traceback
result = {"loaded": True}
try:
    with open(os.environ["HPC_PBS_PREFLIGHT_BODY"], "rb") as handle:
        source = handle.read()
    code = compile(source, os.environ["HPC_PBS_PREFLIGHT_NAME"], "exec")
    namespace = {"__name__": "%s", "__builtins__": builtins}
    try:
        exec(code, namespace)
    except SystemExit:
        pass
except BaseException:
    kind, value, trace = sys.exc_info()
    result = {"loaded": False,
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


class Preflight(object):
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
              config_path=None):
        """Compile, then (pbs_python with a hook mode) load ``body`` (bytes).

        ``display_name``: the file named in messages; ``events``: the hook's events after
        the task (server order); ``alarm``: seconds pbs_python allows the load;
        ``config`` (bytes, the new config) or else ``config_path`` (the current config
        file): what the body sees as ``pbs.hook_config_filename``; neither: no config.
        Returns ``{"interpreter", "python_version", "compiled": True, "loaded": bool,
        "load_event" (when loaded), "not_loaded_because" (when not)}``.
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
        if problem is None:
            report.update(loaded=True, load_event=event)
        else:
            report["not_loaded_because"] = problem
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

    def _load(self, body_path, display_name, hook_name, event, alarm, config_path):
        """None when loaded; a reason (str) when this pbs_python has no hook mode.
        HookBodyRefused when the load raised."""
        input_path = os.path.join(self.workdir, "hook.input")
        loader_path = os.path.join(self.workdir, "loader.py")
        result_path = os.path.join(self.workdir, "load.json")
        _write(input_path, load_input_text(hook_name, event, alarm).encode())
        _write(loader_path, LOADER_SOURCE.encode())
        cmd = [self.interpreter, "--hook", "-i", input_path,
               "-o", os.path.join(self.workdir, "hook.output"),
               "-l", os.path.join(self.workdir, "hook.log"), loader_path]
        environ = {"HPC_PBS_PREFLIGHT_BODY": body_path,
                   "HPC_PBS_PREFLIGHT_NAME": display_name,
                   "HPC_PBS_PREFLIGHT_RESULT": result_path}
        if config_path:
            environ["PBS_HOOK_CONFIG_FILE"] = config_path
        rc, out, err = self.run_command(cmd, environ_update=environ, cwd=self.workdir)
        try:
            with open(result_path) as handle:
                result = json.load(handle)
        except (IOError, OSError, ValueError):
            if PLAIN_PYTHON_HOOK_MODE_ERROR in err:
                return ("%s has no hook mode (--hook): the body was compiled, not loaded"
                        % self.interpreter)
            raise HookPreflightError(
                "pbs_python could not load the hook body for its preflight (rc %s): %s. "
                "Nothing was changed." % (rc, err.strip() or out.strip() or "no output"),
                cmd, rc, out, err)
        if not result.get("loaded"):
            raise HookBodyRefused("the hook body fails when pbs_python loads it (%s event, "
                                  "module level run once): %s"
                                  % (event, result.get("error", "").strip()))
        return None
