"""pbs_server's embedded Python: one long-lived interpreter for every server hook event.

Real pbs_server runs its hooks (queuejob, modifyjob, runjob, ...) inside its own process,
in one interpreter it keeps (``src/lib/Libpython/pbs_python_external.c``):

- a hook's body is compiled once and again only when the hook's script is imported anew
  (``qmgr import hook``: the server frees the compiled script) or its file's inode, size or
  mtime (whole seconds) changed;
- each event runs the compiled body in a fresh namespace (``__name__ == "builtins"``), so
  only what a hook puts outside its namespace, such as a module in ``sys.modules``, outlives
  the event;
- at the set-up of an event the server counts the hook runs since its last restart and,
  past ``python_restart_max_hooks`` (default 100) and no sooner than
  ``python_restart_min_interval`` (default 30 s) after that restart, restarts the
  interpreter, logging ``Restarting Python interpreter to reduce mem usage`` and its memory
  use (``_pbs_python_event_set``; the count of Python objects, ``python_restart_max_objects``,
  is not modelled);
- a hook past its alarm is interrupted (``KeyboardInterrupt``) and the interpreter goes on;
- a new interpreter has imported few modules (no json, no re); the mock's starts with the
  modules of pbs_python (:func:`mockpbs.hookrun.hide_runner_modules`).

The mock keeps that interpreter in a child process (``python -S -m
mockpbs.server.hook_interpreter``; :class:`HookInterpreter` on the server's side) that
reads one request per line on stdin and writes one result per line, the shapes of
:func:`mockpbs.hookrun.run_hook`. A child that dies, hangs past its alarm, or ran a hook
that real pbs_python would have crashed on, is replaced by a fresh one for the next event.
A mom's hook events still run one ``pbs_python`` process each (:func:`mockpbs.hookrun.run_hook`).
"""
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time

from mockpbs import hookrun, pbslog

RESTART_MAX_HOOKS = 100      # PBS_PYTHON_RESTART_MAX_HOOKS
RESTART_MIN_INTERVAL = 30    # PBS_PYTHON_RESTART_MIN_INTERVAL, seconds
RESTART_MESSAGE = "Restarting Python interpreter to reduce mem usage"
# Seconds the server waits past a hook's alarm for the interrupted hook's result before it
# replaces the interpreter (a hook that swallows KeyboardInterrupt or blocks in C).
ALARM_GRACE = 5.0


def restart_settings(server_attributes):
    """``(max_hooks, min_interval seconds)`` from the server's ``python_restart_max_hooks``
    and ``python_restart_min_interval`` (seconds or ``[[HH:]MM:]SS``), the defaults for
    those unset or unreadable."""
    max_hooks = RESTART_MAX_HOOKS
    try:
        max_hooks = int(server_attributes.get("python_restart_max_hooks", max_hooks))
    except (TypeError, ValueError):
        pass
    min_interval = RESTART_MIN_INTERVAL
    text = str(server_attributes.get("python_restart_min_interval", "")).strip()
    if text:
        try:
            seconds = 0
            for part in text.split(":"):
                seconds = seconds * 60 + int(part)
            min_interval = seconds
        except ValueError:
            pass
    return max_hooks, min_interval


def memory_usage():
    """``VmSize=<kB>kB, VmRSS=<kB>kB`` of this process, as pbs_server logs it after a
    restart (``read_statm``: the first two fields of ``/proc/self/statm``, pages of 4 kB);
    ``unknown`` when it cannot be read."""
    try:
        with open("/proc/self/statm") as handle:
            size, resident = handle.read().split()[:2]
        return "VmSize=%dkB, VmRSS=%dkB" % (int(size) * 4, int(resident) * 4)
    except (OSError, ValueError):
        return "unknown"


class HookInterpreter:
    """The server side: runs server hook events in one child interpreter, one at a time.

    ``pbs_home``: the server's PBS_HOME (the hooks' working directory and ``PBS_HOME``);
    ``log``: the server's :class:`mockpbs.pbslog.DaemonLog`, or None; ``clock``: seconds
    since the epoch (the restart interval), ``time.time`` unless a test gives another."""

    def __init__(self, pbs_home, log=None, clock=time.time):
        self.pbs_home = pbs_home
        self.log = log
        self.clock = clock
        self._lock = threading.Lock()
        self._process = None
        self._hook_counter = 0
        self._previous_restart = 0
        self.starts = 0          # children started so far (tests read it)

    def run(self, hook, event, context, script_version=0, server_attributes=None):
        """Run ``hook`` for ``event`` (``hook``, ``event``, ``context`` and the result as
        :func:`mockpbs.hookrun.run_hook`); ``script_version``: a number that changes each
        time the hook's script is imported (the body is then compiled again);
        ``server_attributes``: the server's attributes (the restart settings). The result's
        log records are also written to ``log``. Never raises for a failing hook."""
        with self._lock:
            self._count_and_maybe_restart(*restart_settings(server_attributes or {}))
            result = self._exchange(hook, event, context, script_version)
            if result.get("crashed"):
                self._stop()  # pbs_python would have died with the job it freed
        if self.log is not None:
            for event_class, objtype, objname, message in result.get("logs", []):
                self.log.record(event_class, objtype, objname, message)
        return result

    def close(self):
        """End the child (its stdin closed, then killed if it does not exit)."""
        with self._lock:
            self._stop()

    def _count_and_maybe_restart(self, max_hooks, min_interval):
        self._hook_counter += 1
        now = self.clock()
        if self._hook_counter >= max_hooks and now - self._previous_restart >= min_interval:
            self._hook_counter = 0
            self._previous_restart = now
            self._stop()
            if self.log is not None:
                self.log.record(pbslog.PBSEVENT_DEBUG2, pbslog.OBJ_HOOK, "_pbs_python_event_set",
                                RESTART_MESSAGE)
                self.log.record(pbslog.PBSEVENT_DEBUG2, pbslog.OBJ_HOOK, "_pbs_python_event_set",
                                "Current memory usage: %s" % memory_usage())

    def _start(self):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (hookrun.PACKAGE_PARENT, env.get("PYTHONPATH")) if p)
        env["PBS_HOME"] = self.pbs_home
        # stderr (what hooks print) goes where the server's own goes, as in pbs_server.
        self._process = subprocess.Popen(
            [sys.executable, "-S", "-m", "mockpbs.server.hook_interpreter"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
            cwd=self.pbs_home if os.path.isdir(self.pbs_home) else None)
        self.starts += 1

    def _stop(self):
        process, self._process = self._process, None
        if process is None:
            return
        try:
            process.stdin.close()
        except OSError:
            pass
        try:
            process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()

    def _exchange(self, hook, event, context, script_version):
        if self._process is None or self._process.poll() is not None:
            self._stop()
            self._start()
        alarm = int(hook.get("alarm") or hookrun.DEFAULT_ALARM)
        request = json.dumps({"hook": hook, "event": event, "context": context,
                              "pbs_home": self.pbs_home, "script_version": script_version})
        try:
            self._process.stdin.write(request.encode() + b"\n")
            self._process.stdin.flush()
            line = self._read_line(alarm + ALARM_GRACE)
        except (OSError, EOFError) as exc:
            try:
                code = self._process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                code = None
            self._stop()
            return hookrun.rejected(exception="the server's hook interpreter exited (%s) without a result: %s"
                                    % (code, exc))
        if line is None:
            self._stop()
            return hookrun.rejected(alarm=True)
        return json.loads(line.decode())

    def _read_line(self, timeout):
        """The child's next line, or None after ``timeout`` seconds; EOFError if it ended."""
        fd = self._process.stdout.fileno()
        deadline = time.monotonic() + timeout
        data = b""
        while not data.endswith(b"\n"):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _unused, _unused = select.select([fd], [], [], remaining)
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise EOFError("end of its output")
                data += chunk
        return data


# ------------------------------------------------------------------ the child


class _Alarm:
    """The child's alarm: ``KeyboardInterrupt`` in the hook after its seconds."""

    def __init__(self):
        self.fired = False
        signal.signal(signal.SIGALRM, self._interrupt)

    def _interrupt(self, _signum, _frame):
        self.fired = True
        raise KeyboardInterrupt

    def set(self, seconds):
        self.fired = False
        signal.setitimer(signal.ITIMER_REAL, seconds)

    def clear(self):
        signal.setitimer(signal.ITIMER_REAL, 0)


def script_code(hook, script_version, scripts):
    """The compiled body of ``hook`` (its ``body`` path), compiled again only when
    ``script_version`` or the file's (inode, size, whole-second mtime) changed; ``scripts``
    holds ``{path: (version, stat key, code)}`` between events."""
    path = hook["body"]
    stat = os.stat(path)
    key = (stat.st_ino, stat.st_size, int(stat.st_mtime))
    kept = scripts.get(path)
    if kept is not None and kept[:2] == (script_version, key):
        return kept[2]
    code = hookrun.compile_body(hook)
    scripts[path] = (script_version, key, code)
    return code


def serve():
    """Child side: one request per line on stdin, one result per line on the original
    stdout, until stdin ends; what hooks print goes to stderr."""
    channel = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    alarm = _Alarm()
    scripts = {}
    hookrun.hide_runner_modules()
    for line in iter(sys.stdin.readline, ""):
        request = json.loads(line)
        hook = request["hook"]
        if hook.get("config"):
            os.environ["PBS_HOOK_CONFIG_FILE"] = hook["config"]
        else:
            os.environ.pop("PBS_HOOK_CONFIG_FILE", None)
        if request.get("pbs_home") and os.path.isdir(request["pbs_home"]):
            os.chdir(request["pbs_home"])
        alarm.set(int(hook.get("alarm") or hookrun.DEFAULT_ALARM))
        try:
            result = hookrun.execute(hook, request["event"], request.get("context") or {},
                                     compiled=lambda h: script_code(h, request.get("script_version"), scripts))
        except KeyboardInterrupt:  # the alarm, outside the hook's own code
            result = None
        finally:
            alarm.clear()
        if alarm.fired or result is None:
            result = hookrun.rejected(alarm=True)
        channel.write(json.dumps(result) + "\n")
        channel.flush()
    return 0


if __name__ == "__main__":
    sys.exit(serve())
