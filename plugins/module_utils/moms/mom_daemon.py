# -*- coding: utf-8 -*-
"""pbs_mom as a running process: its pid file (``mom_priv/mom.lock``), whether it lives,
SIGHUP and the wait for what it logs (``PBS_HOME/mom_logs/YYYYMMDD``), the values it read
at its last start or reload, and its restart with ``-p``. What its config file says is
parsed by :mod:`mom_config` (lines) and :mod:`mom_config_options` (values).

Facts (reference transcript f_, OpenPBS src/resmom/mom_main.c):

- On SIGHUP the mom re-reads its config; a line it cannot parse, or an unknown ``$name``,
  makes it log ``parse_config, ...`` and exit (the node goes down).
- ``$job_launch_delay`` (PP-928 interface 4) and ``$sister_join_job_alarm`` (interface 3)
  take whole seconds >= 1; the mom logs ``...;pbs_mom;Svr;job_launch_delay;<v>`` and
  ``...;pbs_mom;Svr;sister_join_job_alarm;<v>`` when it reads them.
"""

import errno
import os
import re
import signal
import time
from typing import Any, Callable, Iterable, List, Mapping, Optional, Tuple

from ansible_collections.hpc.pbs.plugins.module_utils.moms.mom_config_options import expected_log_line
from ansible_collections.hpc.pbs.plugins.module_utils.pbs.pbs_command import PbsRunner
from ansible_collections.hpc.pbs.plugins.module_utils.common.polling import WaitTimeout, wait_until

_LOG_NAME = re.compile(r"[0-9]{8}\Z")
# How many day files back the last config read of the mom is looked for.
LOG_DAYS_SEARCHED = 31
# A line the mom writes each time it reads its config, at start and on SIGHUP, before the
# values: ``process_hup;reset`` (SIGHUP) and ``parse_config;file config`` (the main file;
# a real mom then reads ``mom_priv/config.d/*`` files, logged the same way after the values).
CONFIG_READ_MARKER = re.compile(
    r"^.*;pbs_mom;[^;]*;(?:process_hup;reset|parse_config;file (?![^\n]*/config\.d/)).*$",
    re.MULTILINE)


def read_mom_pid(lock_path: str) -> Optional[int]:
    """Pid (int) from ``mom.lock``, or None when the file is missing or holds no pid."""
    try:
        with open(lock_path) as handle:
            first = handle.read().split()
    except (IOError, OSError):
        return None
    if not first or not first[0].isdigit():
        return None
    return int(first[0])


def process_alive(pid: int) -> bool:
    """Whether ``pid`` runs (exists and is not a zombie)."""
    try:
        os.kill(pid, 0)
    except OSError as exc:
        if exc.errno == errno.EPERM:
            return True
        return False
    try:
        with open("/proc/%d/stat" % pid) as handle:
            stat = handle.read()
        state = stat[stat.rindex(")") + 2:].split()[0]
        return state not in ("Z", "X")
    except (IOError, OSError, ValueError, IndexError):
        return True


def log_path(logs_dir: str, when: Optional[float] = None) -> str:
    """``PBS_HOME/mom_logs/YYYYMMDD`` for local time ``when`` (default now)."""
    return os.path.join(logs_dir, time.strftime("%Y%m%d", time.localtime(when)))


def file_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


class MomLogWatcher:
    """Reads what the mom appends to its log after a point in time.

    Remembers today's log file and its size at creation; :meth:`new_text` returns
    everything written after that, following a change of day to the next file.
    """

    def __init__(self, logs_dir: str) -> None:
        self.logs_dir = logs_dir
        self.start_path = log_path(logs_dir)
        self.start_offset = file_size(self.start_path)

    def new_text(self) -> str:
        chunks = []
        try:
            with open(self.start_path, "rb") as handle:
                handle.seek(self.start_offset)
                chunks.append(handle.read())
        except (IOError, OSError):
            pass
        today = log_path(self.logs_dir)
        if today != self.start_path:
            try:
                with open(today, "rb") as handle:
                    chunks.append(handle.read())
            except (IOError, OSError):
                pass
        return b"".join(chunks).decode("utf-8", "replace")

    def tail(self, lines: int = 30) -> str:
        """The last ``lines`` lines of the current log file (for error messages)."""
        try:
            with open(log_path(self.logs_dir), "rb") as handle:
                text = handle.read().decode("utf-8", "replace")
        except (IOError, OSError):
            try:
                with open(self.start_path, "rb") as handle:
                    text = handle.read().decode("utf-8", "replace")
            except (IOError, OSError):
                return ""
        return "".join(text.splitlines(True)[-lines:])


def value_logged(text: str, line: Tuple[str, str, Optional[str]]) -> bool:
    """Whether ``text`` holds the mom's ``;pbs_mom;<object>;<id>;<value>`` line for
    ``line`` = ``(object, id, value)``."""
    return line[2] in logged_values(text, line[0], line[1])


def logged_values(text: str, obj: str, ident: str) -> List[str]:
    """Every value the mom logged as ``;pbs_mom;<obj>;<ident>;<value>`` in ``text``, in
    order (trailing white space removed)."""
    pattern = re.compile(r";pbs_mom;%s;%s;(.*?)\s*$" % (re.escape(obj), re.escape(ident)),
                         re.MULTILINE)
    return pattern.findall(text)


def logged_value(text: str, obj: str, ident: str) -> Optional[str]:
    """The last value logged as ``;pbs_mom;<obj>;<ident>;<value>`` in ``text``, or None."""
    values = logged_values(text, obj, ident)
    return values[-1] if values else None


def describe_line(line: Tuple[str, str, Optional[str]]) -> str:
    """``id;value`` of a log line triple, as the mom writes it."""
    return "%s;%s" % (line[1], line[2])


def text_from_last_read(path: str, chunk: int = 1 << 20) -> Optional[str]:
    """The text of log file ``path`` from its last :data:`CONFIG_READ_MARKER` line on,
    or None (no such line, or the file cannot be read). Reads from the end in growing
    chunks (``chunk`` bytes first), so a large day file costs little."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            span = chunk
            while True:
                start = max(0, size - span)
                handle.seek(start)
                text = handle.read(size - start).decode("utf-8", "replace")
                if start > 0:                       # drop the first, partial line
                    text = text[text.find("\n") + 1:] if "\n" in text else ""
                starts = [match.start() for match in CONFIG_READ_MARKER.finditer(text)]
                if starts:
                    return text[starts[-1]:]
                if start == 0:
                    return None
                span *= 4
    except (IOError, OSError):
        return None


def last_config_read(logs_dir: str, days: int = LOG_DAYS_SEARCHED) -> Optional[str]:
    """What the mom logged from its last config read (start or SIGHUP) on: the text of
    the newest day file (``PBS_HOME/mom_logs/YYYYMMDD``, ``days`` files searched) that
    holds a :data:`CONFIG_READ_MARKER` line, from the last such line on; None when none
    does. The mom logs the values it read right after that line, in the same file."""
    try:
        names = sorted((n for n in os.listdir(logs_dir) if _LOG_NAME.match(n)), reverse=True)
    except OSError:
        return None
    for name in names[:days]:
        text = text_from_last_read(os.path.join(logs_dir, name))
        if text is not None:
            return text
    return None


def running_differences(read_text: str, file_options: Mapping[str, Any],
                        names: Iterable[str]) -> List[Tuple[str, Optional[str], Any]]:
    """Where the running mom differs from the file, for the options ``names``.

    ``read_text``: what the mom logged since its last config read
    (:func:`last_config_read`); ``file_options``: the file's options
    (:func:`current_options`). Only options whose value the mom logs are compared (see
    :func:`mom_config_options.expected_log_line`); repeated options are not. Returns a
    list of ``(name, running, in_file)`` texts, ``running`` None when the mom logged
    nothing for it (its default), ``in_file`` None when the file does not set it.
    """
    differences = []
    for name in sorted(names):
        in_file = file_options.get(name)
        if isinstance(in_file, list):
            continue
        expected = expected_log_line(name, in_file)
        if expected is None:
            continue
        running = logged_value(read_text, expected[0], expected[1])
        if running != expected[2]:
            differences.append((name, running, in_file))
    return differences


def parse_failure(text: str) -> Optional[str]:
    """The mom's config failure line in ``text`` (``parse_config, ...``), or None."""
    for line in text.splitlines():
        if "parse_config, " in line and ("failed" in line or "not found" in line):
            return line
    return None


RELOAD_MARKERS = ("catch_hup", "process_hup", "parse_config")


def reload_mom(pid: int, watcher: MomLogWatcher, expected: List[Tuple[str, str, Optional[str]]],
               timeout: float, poll: float = 0.2) -> Tuple[bool, str]:
    """Send SIGHUP to ``pid`` and wait (at most ``timeout`` seconds) until the mom has
    logged every ``(name, value)`` of ``expected``, or - with nothing expected - any of
    :data:`RELOAD_MARKERS`.

    Returns ``(ok, message)``: ok is False when the process died, logged a config failure
    or did not log in time (message says which); with nothing expected, a silent but
    living mom is ok with a message for a warning.
    """
    os.kill(pid, signal.SIGHUP)
    seen = {"text": ""}

    def outcome():
        seen["text"] = watcher.new_text()
        return reload_outcome(pid, seen["text"], expected)

    try:
        return wait_until(outcome, timeout, poll, "pbs_mom (pid %d) to log its reload" % pid)
    except WaitTimeout:
        return reload_timed_out(pid, seen["text"], expected, timeout)


def reload_outcome(pid: int, text: str,
                   expected: List[Tuple[str, str, Optional[str]]]) -> Optional[Tuple[bool, str]]:
    """``(ok, message)`` once the mom's log ``text`` since SIGHUP settles the reload (see
    :func:`reload_mom`), or None while it does not yet."""
    failure = parse_failure(text)
    if failure:
        return False, "pbs_mom rejected the config: %s" % failure.strip()
    if not process_alive(pid):
        return False, "pbs_mom (pid %d) died after the reload" % pid
    if expected:
        if all(value_logged(text, line) for line in expected):
            return True, None
    elif any(marker in text for marker in RELOAD_MARKERS):
        return True, None
    return None


def reload_timed_out(pid: int, text: str, expected: List[Tuple[str, str, Optional[str]]],
                     timeout: float) -> Tuple[bool, str]:
    """``(ok, message)`` when the mom logged (``text``) not enough within ``timeout`` s:
    a failure naming the missing values, or - with nothing expected - a warning."""
    if expected:
        missing = [describe_line(line) for line in expected if not value_logged(text, line)]
        return False, ("pbs_mom (pid %d) did not log %s within %s s after SIGHUP"
                       % (pid, ", ".join(missing), timeout))
    return True, ("pbs_mom (pid %d) is alive but logged nothing within %s s after SIGHUP"
                  % (pid, timeout))


def wait_for_exit(pid: int, seconds: float, poll: float = 0.1) -> bool:
    """Wait at most ``seconds`` for process ``pid`` to end; True when it has (bool)."""
    try:
        return wait_until(lambda: True if not process_alive(pid) else None, seconds, poll,
                          "pbs_mom (pid %d) to exit" % pid)
    except WaitTimeout:
        return not process_alive(pid)


def restart_mom(run_command: Callable[..., Tuple[int, str, str]], paths: Any, timeout: float,
                poll: float = 0.2) -> Tuple[bool, str]:
    """Start ``pbs_mom -p`` (keeps running jobs) and wait at most ``timeout`` seconds for a
    live pid in mom.lock.

    :param run_command: ``AnsibleModule.run_command`` (or the same signature), returns
        ``(rc, stdout, stderr)``; pbs_mom runs through :class:`~pbs_command.PbsRunner`, so
        that it reads ``paths.conf_file``.
    :param paths: where PBS is (``pbs_mom``, ``conf_file``, ``mom_lock``), as
        :func:`pbs_conf.task_pbs_paths` gives them.
    :returns: ``(ok, text)``: whether the mom runs again, and what happened.
    """
    cmd = [paths.pbs_mom, "-p"]
    if not os.access(paths.pbs_mom, os.X_OK):
        return False, "pbs_mom could not be started again: %s is not executable" % paths.pbs_mom
    try:
        rc, out, err = PbsRunner(run_command, paths.conf_file).run_command(cmd)
    except (OSError, IOError) as exc:
        return False, "%s could not run: %s" % (" ".join(cmd), exc)
    if rc != 0:
        return False, "%s exited %s: %s" % (" ".join(cmd), rc, (err or out).strip())

    def live_pid():
        pid = read_mom_pid(paths.mom_lock)
        return pid if pid is not None and process_alive(pid) else None

    try:
        pid = wait_until(live_pid, timeout, poll, "a live pid in %s" % paths.mom_lock)
    except WaitTimeout:
        return False, ("%s returned 0 but no live pid appeared in %s within %s s"
                       % (" ".join(cmd), paths.mom_lock, timeout))
    return True, "pbs_mom was started again with -p (running jobs kept), pid %d" % pid
