"""Run one hook for one event in a child Python process, the way ``pbs_python`` does.

See the "Hook runner" section of ``tests/mockpbs/PROTOCOL.md`` for the shapes of
``hook``, ``context`` and the result. Parent side: :func:`run_hook`. Child side:
``python -m mockpbs.hookrun`` reads ``{"hook", "event", "context", "pbs_home"}`` as JSON
on stdin and writes the result as JSON on stdout (the hook's own prints go to stderr).

Also the ``pbs_python`` command (:func:`pbs_python_main`).
"""
import builtins
import json
import os
import subprocess
import sys
import traceback

import mockpbs
from mockpbs import pbs as pbs_module
from mockpbs import pbslog

DEFAULT_ALARM = 30
_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(mockpbs.__file__)))


CRASH_MESSAGE = ("pbs_python killed by signal 11 (SIGSEGV) as the hook ended: the job object "
                 "returned by release_nodes() was freed before the hook ended (release_nodes() "
                 "returns a borrowed reference; keep what it returns referenced, e.g. in a "
                 "module-level name, until the hook ends)")


def _rejected(reject_msg=None, exception=None, alarm=False, logs=None, crashed=False):
    return {"accepted": False, "reject_msg": reject_msg, "exception": exception, "alarm": alarm,
            "crashed": crashed, "job": {}, "rerun": False, "delete": False, "vnodes": {},
            "logs": logs or []}


def run_hook(hook, event, context, pbs_home, log=None):
    """Run ``hook`` for ``event`` in a child process and return the result dict.

    - ``hook``: ``{"name", "body" (path of NAME.PY), "config" (path or None), "alarm"
      (seconds, default 30), "user", "debug"}``.
    - ``event``: PBS event name (``"queuejob"``, ``"execjob_launch"``...).
    - ``context``: event context as in PROTOCOL.md.
    - ``pbs_home``: the daemon's PBS_HOME; the hook runs with it as working directory
      (when it exists) and ``PBS_HOME`` in its environment.
    - ``log``: optional :class:`mockpbs.pbslog.DaemonLog`; when given, the records in
      ``result["logs"]`` are also written to it, in order.

    The child is killed after ``alarm`` seconds: the result then has ``alarm=True`` and
    ``accepted=False`` (records logged before the kill are lost, as with PBS). A child that
    dies or writes no result gives ``accepted=False`` with ``exception`` telling why.
    ``crashed=True`` (with ``accepted=False``, ``exception`` saying why, and no changes:
    ``job``/``vnodes`` empty, ``rerun``/``delete`` False, no ``env``/``argv``/``progname``)
    is a run that real pbs_python would end with a segfault: the job ``release_nodes()``
    returned was freed before the hook ended. Its log records are kept (pbs_python writes
    them as the hook runs); the daemon must skip the hook (see
    :meth:`mockpbs.mom.jobevents.JobEvents.run_event`). Never raises for a failing hook.

    The child Python runs without the ``site`` module (``-S``), as pbs_python starts its
    interpreter with ``PyConfig.site_import = 0``: site-packages (pip's and the OS
    packages' modules) are not on ``sys.path`` until the hook calls ``site.main()``, as
    OpenPBS's own PBS_cray_atom hook does.
    """
    alarm = int(hook.get("alarm") or DEFAULT_ALARM)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_PARENT, env.get("PYTHONPATH")) if p)
    env["PBS_HOME"] = pbs_home
    if hook.get("config"):
        env["PBS_HOOK_CONFIG_FILE"] = hook["config"]
    else:
        env.pop("PBS_HOOK_CONFIG_FILE", None)
    request = json.dumps({"hook": hook, "event": event, "context": context, "pbs_home": pbs_home})
    cwd = pbs_home if pbs_home and os.path.isdir(pbs_home) else None
    process = subprocess.Popen([sys.executable, "-S", "-m", "mockpbs.hookrun"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
    try:
        stdout, stderr = process.communicate(request.encode(), timeout=alarm)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        return _rejected(alarm=True)
    try:
        result = json.loads(stdout.decode())
    except ValueError:
        return _rejected(exception="hook runner exited %s without a result\n%s"
                         % (process.returncode, stderr.decode(errors="replace")))
    if log is not None:
        for event_class, objtype, objname, message in result.get("logs", []):
            log.record(event_class, objtype, objname, message)
    return result


# Events whose uncaught hook exceptions get pbs_python's own log lines below (checked
# against a real OpenPBS for execjob_launch, PP-928 interface 6); other events keep the
# mom's single DEBUG2 line for now.
EXCEPTION_LOGGING_EVENTS = ("execjob_launch",)
EVALUATION_ERROR = "PBS server internal error (15011) in Error evaluating Python script, "


def uncaught_exception_lines(exc, hook_name, event):
    """What ``pbs_python --hook`` logs when the hook lets ``exc`` escape
    (``pbs_python_write_error_to_log()`` then ``tools/pbs_python.c``): the exception's
    class and its text (when not empty) as errors of ``pbs_python``, then the DEBUG2
    ``<event> hook '<name>' encountered an exception, request rejected`` under the hook.
    Returns log records ``[event_class, objtype, objname, message]``."""
    lines = [[pbslog.PBSEVENT_ERROR, pbslog.OBJ_SERVER, "pbs_python", EVALUATION_ERROR + str(type(exc))]]
    if str(exc):
        lines.append([pbslog.PBSEVENT_ERROR, pbslog.OBJ_SERVER, "pbs_python", EVALUATION_ERROR + str(exc)])
    lines.append([pbslog.PBSEVENT_DEBUG2, pbslog.OBJ_HOOK, hook_name,
                  "%s hook '%s' encountered an exception, request rejected" % (event, hook_name)])
    return lines


def execute(hook, event, context):
    """Child side: run the hook body in this process and return the result dict."""
    pbs_module._start(hook, event, context)
    sys.modules["pbs"] = pbs_module
    result = {"accepted": True, "reject_msg": None, "exception": None, "alarm": False, "crashed": False}
    # The hook's module namespace lives until its results are taken, as pbs_python keeps it.
    namespace = {"__name__": "builtins", "__builtins__": builtins}
    try:
        with open(hook["body"]) as handle:
            source = handle.read()
        code = compile(source, hook["body"], "exec")
        exec(code, namespace)
    except SystemExit:
        # accept()/reject() end the hook this way; so does a bare sys.exit() in the hook.
        pass
    except BaseException as exc:  # the hook's exception is the reject reason, whatever it is
        pbs_module._current.accepted = False
        result["exception"] = traceback.format_exc()
        if event in EXCEPTION_LOGGING_EVENTS:
            pbs_module._current.logs.extend(uncaught_exception_lines(exc, hook.get("name", ""), event))
    if pbs_module._job_freed():
        return _rejected(exception=CRASH_MESSAGE, crashed=True, logs=list(pbs_module._current.logs))
    result["accepted"] = bool(pbs_module._current.accepted)
    result["reject_msg"] = None if result["accepted"] else pbs_module._current.reject_msg
    result.update(pbs_module._outcome())
    return result


def main():
    request = json.loads(sys.stdin.read())
    # The JSON channel is the original stdout; whatever the hook prints goes to stderr.
    channel = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    if request.get("pbs_home") and os.path.isdir(request["pbs_home"]):
        os.chdir(request["pbs_home"])
    result = execute(request["hook"], request["event"], request.get("context") or {})
    channel.write(json.dumps(result))
    channel.flush()
    return 0


def pbs_python_main(argv):
    """The ``pbs_python`` command: ``--version`` prints ``pbs_version = 23.06.06``;
    anything else runs this Python interpreter with ``argv`` (replaces the process)."""
    if list(argv) == ["--version"]:
        sys.stdout.write("pbs_version = %s\n" % mockpbs.PBS_VERSION)
        return 0
    os.execv(sys.executable, [sys.executable] + list(argv))
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
