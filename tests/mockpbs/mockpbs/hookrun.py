"""Run one hook for one event in a child Python process, the way ``pbs_python`` does.

See the "Hook runner" section of ``tests/mockpbs/PROTOCOL.md`` for the shapes of
``hook``, ``context`` and the result. Parent side: :func:`run_hook`. Child side:
``python -m mockpbs.hookrun`` reads ``{"hook", "event", "context", "pbs_home"}`` as JSON
on stdin and writes the result as JSON on stdout (the hook's own prints go to stderr).

Also the ``pbs_python`` command (:func:`pbs_python_main`), with its hook mode
(:func:`pbs_python_hook_mode`).
"""
import builtins
import json
import os
import subprocess
import sys
import time
import traceback

import mockpbs
from mockpbs import pbs as pbs_module
from mockpbs import pbslog

DEFAULT_ALARM = 30
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(mockpbs.__file__)))


# What sys.modules holds, besides PBS's own modules (pbs, _pbs_v1, ...) and encodings.*, when
# the real pbs_python (OpenPBS 23.06.06, CPython 3.11) starts a hook: no json, re or
# collections. A hook's first ``import json`` costs it the import, and CPython 3.10-3.11's
# C scanner (``_json``) raises SystemError instead of JSONDecodeError while json.decoder
# is not imported. tests/unit/hooks/test_real_pbs_python.py checks this list against it.
PBS_PYTHON_MODULES = frozenset((
    "__main__", "_abc", "_codecs", "_collections_abc", "_frozen_importlib",
    "_frozen_importlib_external", "_imp", "_io", "_signal", "_stat", "_thread", "_warnings",
    "_weakref", "abc", "builtins", "codecs", "genericpath", "io", "marshal", "math", "os",
    "os.path", "posix", "posixpath", "stat", "sys", "time", "zipimport",
))


def hide_runner_modules():
    """Drop from ``sys.modules`` what this runner imported and pbs_python would not have:
    every module but PBS_PYTHON_MODULES, encodings.*, ``pbs`` and mockpbs's own. The
    runner keeps its references; a hook that imports one gets a fresh module, as in
    pbs_python. Called once per interpreter, before its first hook: a mom's runner runs
    one event, pbs_server's interpreter (mockpbs.server.hook_interpreter) many, and what
    its hooks import stays in ``sys.modules`` from one event to the next."""
    for name in list(sys.modules):
        if name in PBS_PYTHON_MODULES or name == "pbs" or name.startswith(("encodings", "mockpbs")):
            continue
        del sys.modules[name]


CRASH_MESSAGE = ("pbs_python killed by signal 11 (SIGSEGV) as the hook ended: the job object "
                 "returned by release_nodes() was freed before the hook ended (release_nodes() "
                 "returns a borrowed reference; keep what it returns referenced, e.g. in a "
                 "module-level name, until the hook ends)")


def rejected(reject_msg=None, exception=None, alarm=False, logs=None, crashed=False):
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
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PACKAGE_PARENT, env.get("PYTHONPATH")) if p)
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
        return rejected(alarm=True)
    try:
        result = json.loads(stdout.decode())
    except ValueError:
        return rejected(exception="hook runner exited %s without a result\n%s"
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


def compile_body(hook):
    """The hook's body (``hook["body"]``, a path) read and compiled."""
    with open(hook["body"]) as handle:
        return compile(handle.read(), hook["body"], "exec")


def execute(hook, event, context, compiled=compile_body):
    """Child side: run the hook body in this process and return the result dict.
    ``compiled(hook)``: its code object (an error it raises rejects the event, as an
    exception of the hook's own does)."""
    pbs_module._start(hook, event, context)
    sys.modules["pbs"] = pbs_module
    result = {"accepted": True, "reject_msg": None, "exception": None, "alarm": False, "crashed": False}
    # The hook's module namespace lives until its results are taken, as pbs_python keeps it.
    namespace = {"__name__": "builtins", "__builtins__": builtins}
    try:
        exec(compiled(hook), namespace)
    except SystemExit:
        # accept()/reject() end the hook this way; so does a bare sys.exit() in the hook.
        pass
    except BaseException as exc:  # the hook's exception is the reject reason, whatever it is
        pbs_module._current.accepted = False
        result["exception"] = traceback.format_exc()
        if event in EXCEPTION_LOGGING_EVENTS:
            pbs_module._current.logs.extend(uncaught_exception_lines(exc, hook.get("name", ""), event))
    if pbs_module._job_freed():
        return rejected(exception=CRASH_MESSAGE, crashed=True, logs=list(pbs_module._current.logs))
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
    hide_runner_modules()
    result = execute(request["hook"], request["event"], request.get("context") or {})
    channel.write(json.dumps(result))
    channel.flush()
    return 0


# Events pbs_python's hook mode builds (the switch of src/tools/pbs_python.c); any other
# type (periodic, modifyvnode, management, the resv_* events, jobobit...) ends the run
# with "Unexpected event" and exit 1 before the script runs.
HOOK_MODE_EVENTS = (
    "queuejob", "postqueuejob", "modifyjob", "movejob", "runjob", "resvsub",
    "execjob_begin", "execjob_prologue", "execjob_epilogue", "execjob_end", "execjob_preterm",
    "execjob_resize", "execjob_abort", "execjob_postsuspend", "execjob_preresume",
    "execjob_launch", "execjob_attach", "exechost_periodic", "exechost_startup",
)
HOOK_MODE_USAGE = ("%s --hook -i <hook_input> [-s <data_file>] [-o <hook_output>] [-L <path_log>] "
                   "[-l <logname>] [-r <resourcedef>] [-e <log_event_mask>] [<python_script>]\n")
# pbs_python's exit status (the int main() returns, modulo 256): an exception the hook lets
# escape returns -2, a run past the alarm -3; accept()/reject()/the script's end 0.
EXIT_EXCEPTION = 254
EXIT_ALARM = 253
EXIT_UNEXPECTED_EVENT = 1
EXIT_BAD_INPUT = 2
EXIT_CRASH = 139   # a shell's status of a SIGSEGV (see CRASH_MESSAGE)
KEYBOARD_INTERRUPT_LINES = (
    [pbslog.PBSEVENT_DEBUG2, pbslog.OBJ_HOOK, "catch_hook_alarm",
     "alarm call received, interrupting hook execution."],
    [pbslog.PBSEVENT_ERROR, pbslog.OBJ_SERVER, "pbs_python",
     "PBS server internal error (15011) in Python script received a KeyboardInterrupt, "
     "<class 'KeyboardInterrupt'>"],
    [pbslog.PBSEVENT_ERROR, pbslog.OBJ_SERVER, "pbs_python",
     "PBS server internal error (15011) in Python script received a KeyboardInterrupt, "
     "<could not figure out the exception value>"],
)


class _HookModeLog:
    """pbs_python's log in hook mode: ``-l LOGNAME`` (relative to the working directory),
    else ``<-L dir, default .>/YYYYMMDD``; lines appended as ``pbs_python`` writes them."""

    def __init__(self, logname, path_log):
        if logname:
            self.path = os.path.abspath(logname)
        else:
            self.path = os.path.join(path_log or ".", time.strftime("%Y%m%d"))
        with open(self.path, "a"):
            pass

    def write(self, records):
        with open(self.path, "a") as handle:
            for event_class, objtype, objname, message in records:
                handle.write(pbslog.format_line(event_class, "pbs_python", objtype, objname,
                                                message) + "\n")


def _hook_mode_options(program, argv):
    """``(options, script)`` of ``pbs_python --hook ...`` (getopt ``i:o:l:L:e:r:s:`` on the
    arguments without those starting ``--hook``); SystemExit(2) with pbs_python's usage."""
    import getopt
    args = [a for a in argv if not a.startswith("--hook")]
    if not args:
        sys.stderr.write(HOOK_MODE_USAGE.replace("<hook_input>", "<input_file>")
                         .replace("<hook_output>", "<output_file>") % program)
        raise SystemExit(EXIT_BAD_INPUT)
    try:
        pairs, rest = getopt.getopt(args, "i:o:l:L:e:r:s:")
    except getopt.GetoptError:
        sys.stderr.write(HOOK_MODE_USAGE % program)
        raise SystemExit(EXIT_BAD_INPUT)
    options = dict(pairs)
    if not options.get("-i"):
        sys.stderr.write("%s: No -i <input_file> given\n" % program)
        raise SystemExit(EXIT_BAD_INPUT)
    return options, (rest[0] if rest else None)


def _hook_mode_output(event, accepted, reject_msg, params):
    """The ``-o`` text: accept/reject (and reject_msg) as pbs_python writes them; for
    execjob_launch, accepted or not, also the event's progname, argv and env."""
    if not accepted:
        lines = ["pbs.event().reject=True", "pbs.event().accept=False"]
        if reject_msg is not None:
            lines.append("pbs.event().reject_msg=%s" % reject_msg)
    else:
        lines = ["pbs.event().accept=True", "pbs.event().reject=False"]
    if event == "execjob_launch":
        lines.append("pbs.event().progname=%s" % (params.get("progname") or ""))
        lines += ["pbs.event().argv[%d]=%s" % pair for pair in enumerate(params.get("argv") or [])]
        # As pbs_python writes it: commas in values are not escaped.
        env = ",".join("%s=%s" % pair for pair in (params.get("env") or {}).items())
        lines.append('pbs.event().env="""%s"""' % env)
    return "".join(line + "\n" for line in lines)


def _launch_change_lines(hook_name, context, params):
    """pbs_python's DEBUG2 lines (under the hook) for an execjob_launch hook that changed
    progname, argv or env: ``<what> orig: ...`` then ``<what> new: ...``, whether the hook
    accepted or not."""
    lines = []

    def env_text(env):
        return ",".join("%s=%s" % pair for pair in env.items())

    pairs = (("progname", context.get("progname") or "", params.get("progname") or ""),
             ("argv", " ".join(context.get("argv") or []), " ".join(str(a) for a in params.get("argv") or [])),
             ("env", env_text(context.get("env") or {}), env_text(params.get("env") or {})))
    for what, orig, new in pairs:
        if orig != new:
            lines.append([pbslog.PBSEVENT_DEBUG2, pbslog.OBJ_HOOK, hook_name, "%s orig: %s" % (what, orig)])
            lines.append([pbslog.PBSEVENT_DEBUG2, pbslog.OBJ_HOOK, hook_name, "%s new: %s" % (what, new)])
    return lines


def pbs_python_hook_mode(program, argv):
    """``pbs_python --hook -i INPUT [-o OUTPUT] [-l LOG] [-L DIR] SCRIPT``, as OpenPBS's
    ``src/tools/pbs_python.c``: reads the event from INPUT
    (:func:`mockpbs.hookinput.read_pbs_python_input`), runs SCRIPT with the mock's ``pbs``
    module in a namespace holding only ``__builtins__`` (``__name__`` resolves to
    ``builtins``), under the event's alarm (SIGALRM raises KeyboardInterrupt in the
    script), and writes the outcome to OUTPUT (stdout without ``-o``) and log lines to
    the log. ``PBS_HOOK_CONFIG_FILE`` is ``pbs.hook_config_filename``. Returns the exit
    status: 0 (ran: accepted or rejected), 254 (the script raised), 253 (alarm),
    1 ("Unexpected event": a type the hook mode has no event for, no output written),
    2 (usage, an unknown event attribute or an unreadable input)."""
    import signal
    from mockpbs import hookinput
    options, script = _hook_mode_options(program, argv)
    try:
        log = _HookModeLog(options.get("-l"), options.get("-L"))
    except (IOError, OSError):
        sys.stderr.write("pbs_python: Unable to open logfile\n")
        return 1
    try:
        with open(options["-i"]) as handle:
            text = handle.read()
    except (IOError, OSError):
        sys.stderr.write("%s: failed to populate svrattrl \n" % program)
        return EXIT_BAD_INPUT
    hook_name = ""
    for line in text.splitlines():
        if line.startswith("pbs.event().hook_name="):
            hook_name = line.partition("=")[2]
    try:
        event, hook_name, context = hookinput.read_pbs_python_input(text)
    except hookinput.UnknownInputLine as exc:
        sys.stderr.write("%s: unknown event attribute '%s'\n" % (program, exc.attribute)
                         if exc.attribute else "%s: %s\n" % (program, exc))
        return EXIT_BAD_INPUT
    except hookinput.UnknownEventType:
        event = None
    if event not in HOOK_MODE_EVENTS:
        log.write([[pbslog.PBSEVENT_DEBUG, pbslog.OBJ_HOOK, hook_name, "Unexpected event"]])
        return EXIT_UNEXPECTED_EVENT
    fields = {}
    for line in text.splitlines():
        key, _sep, value = line.partition("=")
        if key.startswith("pbs.event().") and "." not in key[12:] and "[" not in key[12:]:
            fields[key[12:]] = value
    alarm = int(fields.get("alarm") or 0)
    if event == "queuejob" and context.get("job") is not None:
        # pbs_python gives the job of a queuejob event the id of the request: "" when the
        # input has none (the server has not numbered the job yet).
        context["job"].setdefault("id", "")
    hook = {"name": hook_name, "body": script, "config": os.environ.get("PBS_HOOK_CONFIG_FILE"),
            "alarm": alarm}
    pbs_module._start(hook, event, context)
    pbs_module._current.daemon_name = "pbs_python"
    sys.modules["pbs"] = pbs_module
    hide_runner_modules()
    namespace = {"__builtins__": builtins}
    status = 0

    def interrupt(_signum, _frame):
        pbs_module._current.logs.append(list(KEYBOARD_INTERRUPT_LINES[0]))
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.alarm(max(alarm, 0))
    try:
        if script is None:
            raise SystemExit(0)
        with open(script) as handle:
            source = handle.read()
        exec(compile(source, "<embedded code object>", "exec"), namespace)
    except SystemExit:
        pass
    except KeyboardInterrupt:
        signal.alarm(0)
        status = EXIT_ALARM
        pbs_module._current.logs.extend(list(line) for line in KEYBOARD_INTERRUPT_LINES[1:])
        pbs_module._current.logs.append([
            pbslog.PBSEVENT_DEBUG2, pbslog.OBJ_HOOK, hook_name,
            "alarm call while running %s hook '%s', request rejected" % (event, hook_name)])
    except BaseException as exc:  # pylint: disable=broad-except
        signal.alarm(0)
        status = EXIT_EXCEPTION
        pbs_module._current.logs.extend(uncaught_exception_lines(exc, hook_name, event))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    if status:
        pbs_module._current.accepted = False
        pbs_module._current.reject_msg = None
    params = object.__getattribute__(pbs_module._current.event, "_param")
    if event == "execjob_launch":
        pbs_module._current.logs.extend(_launch_change_lines(hook_name, context, params))
    log.write(pbs_module._current.logs)
    if pbs_module._job_freed():
        sys.stderr.write(CRASH_MESSAGE + "\n")
        return EXIT_CRASH
    output = _hook_mode_output(event, bool(pbs_module._current.accepted),
                               pbs_module._current.reject_msg, params)
    if options.get("-o"):
        with open(options["-o"], "w") as handle:
            handle.write(output)
    else:
        sys.stdout.write(output)
        sys.stdout.flush()
    return status


def pbs_python_main(argv):
    """The ``pbs_python`` command: ``--version`` prints ``pbs_version = 23.06.06``;
    ``--hook ...`` is the hook mode (:func:`pbs_python_hook_mode`); anything else runs this
    Python interpreter with ``argv`` (replaces the process)."""
    if list(argv) == ["--version"]:
        sys.stdout.write("pbs_version = %s\n" % mockpbs.PBS_VERSION)
        return 0
    if argv and argv[0].startswith("--hook"):
        return pbs_python_hook_mode(sys.argv[0] if sys.argv else "pbs_python", list(argv))
    os.execv(sys.executable, [sys.executable] + list(argv))
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
