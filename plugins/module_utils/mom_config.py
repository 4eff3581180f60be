# -*- coding: utf-8 -*-
"""``PBS_HOME/mom_priv/config``: parse, validate and edit ``$option value`` lines, and
verify a pbs_mom reload.

Facts (reference transcript f_, OpenPBS src/resmom/mom_main.c):

- A line starting with ``$`` is ``$name value``; any other non-comment line is a static
  resource; ``#`` starts a comment line. The mom does NOT strip an inline ``# comment``.
- On SIGHUP the mom re-reads the file; a line it cannot parse, or an unknown ``$name``,
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

# The ``special[]`` table of src/resmom/mom_main.c (OpenPBS 23.06) for a Linux build:
# entries compiled only for ALPS, BlueGene, SGI, cpusets v4, Windows or NAS are left out
# because a Linux mom refuses them.
MOM_CONFIG_OPTIONS = (
    "action", "alien_attach", "alien_kill", "attach_allow", "checkpoint_path",
    "clienthost", "configversion", "cputmult", "enforce", "ideal_load", "jobdir_root",
    "kbd_idle", "logevent", "max_check_poll", "max_load", "max_poll_downtime",
    "min_check_poll", "momname", "port", "prologalarm", "sister_join_job_alarm",
    "job_launch_delay", "restart_background", "restart_transmogrify", "restrict_user",
    "restrict_user_exceptions", "restrict_user_maxsysid", "restricted", "suspendsig",
    "tmpdir", "vnodedef_additive", "usecp", "wallmult", "reject_root_scripts",
    "report_hook_checksums",
)

# Options whose value must be whole seconds >= 1, with the PP-928 section defining them.
SECONDS_OPTIONS = {
    "job_launch_delay": "PP-928 interface 4",
    "sister_join_job_alarm": "PP-928 interface 3",
}

_DIGITS = re.compile(r"^[0-9]+$")
_OPTION_LINE = re.compile(r"^\$(\S+)(?:[ \t]+(.*?))?[ \t]*$")


class MomConfigValueError(ValueError):
    """An option name or value the mom would not accept; the message says what is."""


def normalize_value(name, value):
    """Return the config text for ``$name value`` or raise :class:`MomConfigValueError`.

    ``name`` must be in :data:`MOM_CONFIG_OPTIONS`. For :data:`SECONDS_OPTIONS` the value
    must be an int >= 1 or a string of digits >= 1 (bool, float, sign, text and anything
    after the number are refused); it is written as a plain decimal. Other values are
    strings, ints or booleans (``true``/``false``) without newline or ``#`` and not empty.
    A list gives one line per item (for options that may repeat, such as ``clienthost``);
    returns a list of texts then.
    """
    if name not in MOM_CONFIG_OPTIONS:
        raise MomConfigValueError(
            "unknown mom config option %r: pbs_mom exits on an unknown $option "
            "('parse_config, command name %s not found'). Accepted names: %s"
            % (name, name, ", ".join(sorted(MOM_CONFIG_OPTIONS))))
    if isinstance(value, (list, tuple)):
        if name in SECONDS_OPTIONS:
            raise MomConfigValueError("%s takes one value, not a list" % name)
        if not value:
            raise MomConfigValueError("%s: the list is empty; use null to remove the "
                                      "option" % name)
        return [normalize_value(name, item) for item in value]
    if name in SECONDS_OPTIONS:
        seconds = None
        if isinstance(value, int) and not isinstance(value, bool):
            seconds = value
        elif isinstance(value, str) and _DIGITS.match(value):
            seconds = int(value)
        if seconds is None or seconds < 1:
            raise MomConfigValueError(
                "%s (%s) must be a whole number of seconds >= 1 with nothing after it, "
                "got %r; pbs_mom exits on any other value"
                % (name, SECONDS_OPTIONS[name], value))
        return str(seconds)
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, (int, float)):
        text = str(value)
    elif isinstance(value, str):
        text = value.strip()
    else:
        raise MomConfigValueError("%s: value must be a string, number or boolean, got %r"
                                  % (name, value))
    if "\n" in text or "\r" in text:
        raise MomConfigValueError("%s: the value may not contain a newline" % name)
    if "#" in text:
        raise MomConfigValueError(
            "%s: the value may not contain '#': pbs_mom does not strip inline comments "
            "and exits on such a line" % name)
    if not text:
        raise MomConfigValueError("%s: the value is empty; use null to remove the option"
                                  % name)
    return text


def split_lines(text):
    """Lines of the file with their line endings kept."""
    return text.splitlines(True)


def option_of(line):
    """``(name, value)`` of a ``$name value`` line, or None for any other line."""
    match = _OPTION_LINE.match(line.rstrip("\r\n"))
    if not match:
        return None
    return match.group(1), (match.group(2) or "")


def current_options(text):
    """All ``$options`` of the file: dict name -> value, or list of values when the
    option occurs more than once (in file order)."""
    found = {}
    for line in split_lines(text):
        parsed = option_of(line)
        if parsed:
            found.setdefault(parsed[0], []).append(parsed[1])
    return dict((k, v[0] if len(v) == 1 else v) for k, v in found.items())


def apply_options(text, desired, remove):
    """Return the new file text.

    ``desired``: dict name -> list of value texts (the exact lines wanted for that option,
    in order); ``remove``: names whose lines are dropped. Existing lines of a desired
    option are replaced in place (surplus ones dropped); missing ones are appended. All
    other lines are kept byte for byte.
    """
    lines = split_lines(text)
    newline = "\n"
    for line in lines:
        if line.endswith("\r\n"):
            newline = "\r\n"
            break
    pending = dict((name, list(values)) for name, values in desired.items())
    out = []
    for line in lines:
        parsed = option_of(line)
        if not parsed:
            out.append(line)
            continue
        name = parsed[0]
        if name in remove:
            continue
        if name in pending:
            if pending[name]:
                value = pending[name].pop(0)
                ending = line[len(line.rstrip("\r\n")):] or newline
                if option_of(line) == (name, value):
                    out.append(line)
                else:
                    out.append("$%s %s%s" % (name, value, ending))
            continue
        out.append(line)
    if out and not out[-1].endswith(("\n", "\r")):
        out[-1] += newline
    for name, values in desired.items():
        for value in pending[name]:
            out.append("$%s %s%s" % (name, value, newline))
    return "".join(out)


def read_mom_pid(lock_path):
    """Pid (int) from ``mom.lock``, or None when the file is missing or holds no pid."""
    try:
        with open(lock_path) as handle:
            first = handle.read().split()
    except (IOError, OSError):
        return None
    if not first or not first[0].isdigit():
        return None
    return int(first[0])


def process_alive(pid):
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


def log_path(logs_dir, when=None):
    """``PBS_HOME/mom_logs/YYYYMMDD`` for local time ``when`` (default now)."""
    return os.path.join(logs_dir, time.strftime("%Y%m%d", time.localtime(when)))


def file_size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


class MomLogWatcher(object):
    """Reads what the mom appends to its log after a point in time.

    Remembers today's log file and its size at creation; :meth:`new_text` returns
    everything written after that, following a change of day to the next file.
    """

    def __init__(self, logs_dir):
        self.logs_dir = logs_dir
        self.start_path = log_path(logs_dir)
        self.start_offset = file_size(self.start_path)

    def new_text(self):
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

    def tail(self, lines=30):
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


def value_logged(text, name, value):
    """Whether ``text`` holds the mom's ``;pbs_mom;Svr;<name>;<value>`` line."""
    pattern = re.compile(r";pbs_mom;Svr;%s;%s\s*$" % (re.escape(name), re.escape(value)),
                         re.MULTILINE)
    return bool(pattern.search(text))


def parse_failure(text):
    """The mom's config failure line in ``text`` (``parse_config, ...``), or None."""
    for line in text.splitlines():
        if "parse_config, " in line and ("failed" in line or "not found" in line):
            return line
    return None


RELOAD_MARKERS = ("catch_hup", "process_hup", "parse_config")


def reload_mom(pid, watcher, expected, timeout, poll=0.2):
    """Send SIGHUP to ``pid`` and wait (at most ``timeout`` seconds) until the mom has
    logged every ``(name, value)`` of ``expected``, or - with nothing expected - any of
    :data:`RELOAD_MARKERS`.

    Returns ``(ok, message)``: ok is False when the process died, logged a config failure
    or did not log in time (message says which); with nothing expected, a silent but
    living mom is ok with a message for a warning.
    """
    os.kill(pid, signal.SIGHUP)
    deadline = time.time() + timeout
    while True:
        text = watcher.new_text()
        failure = parse_failure(text)
        if failure:
            return False, "pbs_mom rejected the config: %s" % failure.strip()
        if not process_alive(pid):
            return False, "pbs_mom (pid %d) died after the reload" % pid
        if expected:
            if all(value_logged(text, n, v) for n, v in expected):
                return True, None
        elif any(marker in text for marker in RELOAD_MARKERS):
            return True, None
        if time.time() >= deadline:
            break
        time.sleep(poll)
    if expected:
        missing = [("%s;%s" % (n, v)) for n, v in expected if not value_logged(text, n, v)]
        return False, ("pbs_mom (pid %d) did not log %s within %s s after SIGHUP"
                       % (pid, ", ".join(missing), timeout))
    return True, ("pbs_mom (pid %d) is alive but logged nothing within %s s after SIGHUP"
                  % (pid, timeout))
