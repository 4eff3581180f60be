# -*- coding: utf-8 -*-
"""The grammar of ``$option value`` lines a Linux pbs_mom accepts, one rule per option.

Source of every rule: the ``special[]`` table of OpenPBS 23.06 ``src/resmom/mom_main.c``
and its handlers (``set_boolean``, ``set_int``, ``usecp``, ``prologalarm``, ...), read as
a Linux build (no ALPS, Windows or NAS entries). A handler that fails makes the mom log
``parse_config, ... failed, aborting`` and exit, so each rule refuses at least what the
handler refuses, and also what a real mom accepts but no site could mean (upper bounds,
trailing text that ``atoi``/``atof`` silently ignore).

Each :class:`OptionRule` gives:

- ``accepts``: the text of what is accepted (used in messages and in the module doc);
- ``parse(value)``: the line text to write for a task value (int, float, bool or str), or
  :class:`ValueError` with the reason;
- ``logged(text)``: the ``(object, id, value)`` the mom logs when it reads that line
  (``...;pbs_mom;<object>;<id>;<value>``), or None when it logs no value we can compare;
- ``repeatable``: whether several lines of the option may exist (a list value).

Options no rule can check (``configversion``, builds' extra options) are accepted only
when the task names them in ``unchecked_options``; they then get :func:`unchecked_text`.

This module does not touch files or processes except to read what the mom itself checks
on the host: whether a directory is secure (:func:`directory_problem`) and whether a
``$clienthost`` name resolves.
"""

import math
import os
import re
import socket
import stat
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple, Union

# fgets(line, 512) in parse_config(): a longer line is cut and its rest read as a new line.
MAX_LINE_CHARS = 510
SECONDS_MAX = 86400
LOAD_MAX = 100000.0
FACTOR_MAX = 1000.0
UID_MAX = 2147483647
PORT_MAX = 65534          # the mom also listens on port + 1
SIGNAL_MAX = 64           # SIGRTMAX on Linux
LOGEVENT_MAX = 0xFFFF
# The module verifies a reload through PBSEVENT_ERROR (0x1) and PBSEVENT_SYSTEM (0x2) lines.
LOGEVENT_REQUIRED = 0x0003
RESTRICT_USER_EXCEPTIONS_MAX = 10   # NUM_RESTRICT_USER_EXEMPT_UIDS: the rest are ignored
MOMNAME_MAX = 63
ACTION_EVENTS = ("terminate", "checkpoint", "checkpoint_abort", "restart", "multinodebusy")
ENFORCE_FLAGS = ("cpuburst", "cpuaverage", "mem", "complexmem")
JOBDIR_USER_HOME = "PBS_USER_HOME"
TRUE_WORDS = ("yes", "true", "on", "1")
FALSE_WORDS = ("no", "false", "off", "0")

# No leading zero: strtol(base 0) of set_int() reads "010" as octal 8.
_DIGITS = re.compile(r"(0|[1-9][0-9]*)\Z")
_HEX_OR_DIGITS = re.compile(r"(0[xX][0-9a-fA-F]+|0|[1-9][0-9]*)\Z")
_DECIMAL = re.compile(r"([0-9]+(\.[0-9]*)?|\.[0-9]+)\Z")
_HOST = re.compile(r"[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?\Z")
_HOST_PATTERN = re.compile(r"[A-Za-z0-9*]([A-Za-z0-9*.-]*[A-Za-z0-9*])?\Z")
_USER = re.compile(r"[A-Za-z_][A-Za-z0-9._-]*\Z")
_ABS_PATH = re.compile(r"/[^\s\"'#]*\Z")
_SCRIPT_PATH = re.compile(r"[^\s\"'#!][^\s\"'#]*\Z")
_OPTION_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")


class MomConfigValueError(ValueError):
    """An option name or value the mom would not accept; the message says what is."""


class OptionRule:
    """How one ``$option`` is checked, written and logged (see the module docstring)."""

    def __init__(self, accepts: str, parse: Callable[[Any], str],
                 logged: Optional[Callable[[str], Any]] = None, repeatable: bool = False) -> None:
        self.accepts = accepts
        self.parse = parse
        self.logged = logged or (lambda text: None)
        self.repeatable = repeatable


# -- scalar parsers: raise ValueError(reason) -------------------------------------------

def _text(value):
    """A task value as the text it stands for; bools, lists and dicts are refused here."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError("a %s is not accepted here" % type(value).__name__)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("not a finite number")
        return repr(value)
    return str(value).strip()


def _whole(value, low, high):
    """An int in ``[low, high]`` from an int or a string of decimal digits."""
    text = _text(value)
    if not _DIGITS.match(text):
        raise ValueError("not a whole number without sign or leading zero")
    number = int(text)
    if not low <= number <= high:
        raise ValueError("out of range")
    return number


def whole_number(low: int, high: int) -> Callable[[Any], str]:
    return lambda value: str(_whole(value, low, high))


def _decimal(value, low, high, low_open):
    text = _text(value)
    if not _DECIMAL.match(text):
        raise ValueError("not a plain decimal number")
    number = float(text)
    if number > high or number < low or (low_open and number == low):
        raise ValueError("out of range")
    return text


def decimal_number(low: float, high: float, low_open: bool = False) -> Callable[[Any], str]:
    return lambda value: _decimal(value, low, high, low_open)


def boolean(value: Any) -> str:
    """``true``/``false`` for a bool, 0/1, or one of the words ``set_boolean`` knows."""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = _text(value).lower()
    if text in TRUE_WORDS:
        return "true"
    if text in FALSE_WORDS:
        return "false"
    raise ValueError("not a boolean")


def logevent(value: Any) -> str:
    text = _text(value)
    if not _HEX_OR_DIGITS.match(text):
        raise ValueError("not a decimal or 0x hexadecimal mask")
    mask = int(text, 0) if text.lower().startswith("0x") else int(text)
    if mask > LOGEVENT_MAX:
        raise ValueError("out of range")
    if mask & LOGEVENT_REQUIRED != LOGEVENT_REQUIRED:
        raise ValueError("the mask lacks 0x1 (errors) or 0x2 (system events), which this "
                         "module reads to verify a reload")
    return text


def host_name(value: Any, max_chars: int = 255) -> str:
    text = _text(value)
    if len(text) > max_chars or not _HOST.match(text):
        raise ValueError("not a host name")
    return text


def resolvable_host(value: Any) -> str:
    """A host name that resolves on this host, as ``addclient()`` needs."""
    text = host_name(value)
    try:
        socket.gethostbyname(text)
    except (socket.error, UnicodeError):
        raise ValueError("the name does not resolve on this host")
    return text


def host_pattern(value: Any) -> str:
    text = _text(value)
    if len(text) > 255 or not _HOST_PATTERN.match(text):
        raise ValueError("not a host name or * pattern")
    return text


def usecp(value: Any) -> str:
    """``host:from_path to_path`` (both paths absolute)."""
    text = _text(value)
    parts = text.split()
    if len(parts) != 2 or ":" not in parts[0]:
        raise ValueError("not of the form host:path path")
    host, source = parts[0].split(":", 1)
    host_pattern(host)
    if not _ABS_PATH.match(source) or not _ABS_PATH.match(parts[1]):
        raise ValueError("both paths must be absolute, without quotes or '#'")
    return "%s:%s %s" % (host, source, parts[1])


def _absolute_path(value):
    text = _text(value)
    if not _ABS_PATH.match(text):
        raise ValueError("not an absolute path without spaces, quotes or '#'")
    return text


def secure_directory(value: Any) -> str:
    """A directory as ``verify_dir()`` wants $tmpdir and $jobdir_root."""
    text = _absolute_path(value)
    problem = directory_problem(text, sticky_and_parents=True)
    if problem:
        raise ValueError(problem)
    return text


def checkpoint_directory(value: Any) -> str:
    """A directory as ``chk_file_sec()`` wants $checkpoint_path (the directory only)."""
    text = _absolute_path(value)
    problem = directory_problem(text, sticky_and_parents=False)
    if problem:
        raise ValueError(problem)
    return text


def directory_problem(path: str, sticky_and_parents: bool) -> Optional[str]:
    """Why pbs_mom's file security check refuses directory ``path``, or None.

    ``sticky_and_parents`` True is ``verify_dir(path, 1, 1, 0, 1)`` ($tmpdir,
    $jobdir_root): the resolved directory is owned by uid <= 10 and gid <= 9 and has the
    sticky bit; each parent below ``/`` is owned by uid <= 10 and not writable by group
    or others. False is ``chk_file_sec(path, 1, 0, S_IWGRP|S_IWOTH, 0)``
    ($checkpoint_path): the directory alone, owned by uid <= 10, not writable by group or
    others.
    """
    real = os.path.realpath(path)
    try:
        final = os.lstat(real)
    except OSError as exc:
        return "%s: %s" % (real, exc.strerror)
    if not stat.S_ISDIR(final.st_mode):
        return "%s is not a directory" % real
    if final.st_uid > 10:
        return "%s is owned by uid %d, not root" % (real, final.st_uid)
    writable_by_others = final.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    if not sticky_and_parents:
        return ("%s is writable by group or others" % real) if writable_by_others else None
    if final.st_gid > 9:
        return "%s has group %d, not a system group (gid <= 9)" % (real, final.st_gid)
    if not final.st_mode & stat.S_ISVTX:
        return "%s lacks the sticky bit (mode 1777 is usual)" % real
    parent = os.path.dirname(real)
    while parent not in ("/", ""):
        info = os.lstat(parent)
        if info.st_uid > 10:
            return "parent %s is owned by uid %d, not root" % (parent, info.st_uid)
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return "parent %s is writable by group or others" % parent
        parent = os.path.dirname(parent)
    return None


def jobdir_root(value: Any) -> str:
    """``PBS_USER_HOME`` or a secure directory, optionally followed by ``shared``."""
    words = _text(value).split()
    if not words or len(words) > 2 or (len(words) == 2 and words[1] != "shared"):
        raise ValueError("not of the form 'path' or 'path shared'")
    if words[0] != JOBDIR_USER_HOME:
        secure_directory(words[0])
    return " ".join(words)


def kbd_idle(value: Any) -> str:
    words = _text(value).split()
    if not 1 <= len(words) <= 3:
        raise ValueError("not 1 to 3 numbers")
    return " ".join(str(_whole(word, 1, SECONDS_MAX)) for word in words)


def max_load(value: Any) -> str:
    words = _text(value).split()
    if not 1 <= len(words) <= 2 or (len(words) == 2 and words[1] != "suspend"):
        raise ValueError("not of the form 'load' or 'load suspend'")
    words[0] = _decimal(words[0], 0.0, LOAD_MAX, False)
    return " ".join(words)


def suspendsig(value: Any) -> str:
    words = _text(value).split()
    if not 1 <= len(words) <= 2:
        raise ValueError("not one or two signal numbers")
    return " ".join(str(_whole(word, 1, SIGNAL_MAX)) for word in words)


def user_list(value: Any) -> str:
    names = [n for n in re.split(r"[ ,]+", _text(value)) if n]
    if not names or not all(_USER.match(n) for n in names):
        raise ValueError("not a list of user names")
    if len(names) > RESTRICT_USER_EXCEPTIONS_MAX:
        raise ValueError("more than %d names (pbs_mom ignores the rest)"
                         % RESTRICT_USER_EXCEPTIONS_MAX)
    return ",".join(names)


def action(value: Any) -> str:
    """``event timeout requeue`` or ``event timeout !script [args]``."""
    words = _text(value).split()
    if len(words) < 3 or words[0] not in ACTION_EVENTS:
        raise ValueError("not of the form 'event timeout requeue|!script [args]'")
    _whole(words[1], 0, SECONDS_MAX)
    if words[2] == "requeue" and len(words) == 3:
        return " ".join(words)
    if not words[2].startswith("!") or not _SCRIPT_PATH.match(words[2][1:]):
        raise ValueError("the action must be 'requeue' or '!script'")
    if any("#" in w or '"' in w or "'" in w for w in words[3:]):
        raise ValueError("script arguments may not hold quotes or '#'")
    return " ".join(words)


_ENFORCE_NUMBERS = {
    "delta_percent_over": lambda v: str(_whole(v, 0, 10000)),
    "average_percent_over": lambda v: str(_whole(v, 0, 10000)),
    "average_trialperiod": lambda v: str(_whole(v, 1, SECONDS_MAX)),
    "delta_cpufactor": decimal_number(0.0, FACTOR_MAX, low_open=True),
    "average_cpufactor": decimal_number(0.0, FACTOR_MAX, low_open=True),
    "delta_weightup": decimal_number(0.0, 1.0),
    "delta_weightdown": decimal_number(0.0, 1.0),
}


def enforce(value: Any) -> str:
    """``[!]flag`` or ``setting number``."""
    words = _text(value).split()
    if len(words) == 1 and words[0].lstrip("!") in ENFORCE_FLAGS \
            and not words[0].startswith("!!"):
        return words[0]
    if len(words) == 2 and words[0] in _ENFORCE_NUMBERS:
        return "%s %s" % (words[0], _ENFORCE_NUMBERS[words[0]](words[1]))
    raise ValueError("not a [!]flag or a setting with its number")


# -- log forms: what the mom logs when it reads a line ----------------------------------

def logged_as(ident: str, obj: str = "Svr") -> Callable[[str], Tuple[str, str, str]]:
    return lambda text: (obj, ident, text)


def logged_boolean(ident: str) -> Callable[[str], Tuple[str, str, str]]:
    return lambda text: ("Svr", ident, text)


def logged_setting(ident: str) -> Callable[[str], Tuple[str, str, str]]:
    return lambda text: ("n/a", ident, "setting %d" % int(text))


def _boolean_rule(ident):
    return OptionRule("a boolean (true/false, yes/no, on/off, 1/0)", boolean,
                      logged_boolean(ident))


def _seconds_rule(ident, source=""):
    return OptionRule("whole seconds 1-%d%s" % (SECONDS_MAX, source),
                      whole_number(1, SECONDS_MAX), logged_as(ident))


_SECURE_DIR = ("an absolute path of an existing directory owned by root (uid <= 10, "
               "gid <= 9) with the sticky bit set, whose parents are owned by root and "
               "not writable by group or others")

RULES = {
    "action": OptionRule(
        "'EVENT TIMEOUT requeue' or 'EVENT TIMEOUT !script [args]' (EVENT one of %s, "
        "TIMEOUT 0-%d s)" % (", ".join(ACTION_EVENTS), SECONDS_MAX), action,
        repeatable=True),
    "alien_attach": _boolean_rule("set_alien_attach"),
    "alien_kill": _boolean_rule("set_alien_kill"),
    "attach_allow": _boolean_rule("set_attach_allow"),
    "checkpoint_path": OptionRule(
        "an absolute path of an existing directory owned by root (uid <= 10), not "
        "writable by group or others", checkpoint_directory),
    "clienthost": OptionRule("a host name that resolves on the mom's host",
                             resolvable_host, repeatable=True),
    "cputmult": OptionRule("a decimal number > 0 and <= %g" % FACTOR_MAX,
                           decimal_number(0.0, FACTOR_MAX, low_open=True),
                           logged_as("cputmult")),
    "enforce": OptionRule(
        "a flag (%s, '!' before it turns it off) or 'SETTING NUMBER' (%s)"
        % (", ".join(ENFORCE_FLAGS), ", ".join(sorted(_ENFORCE_NUMBERS))), enforce,
        repeatable=True),
    "gen_nodefile_on_sister_mom": _boolean_rule("set_gen_nodefile_on_sister_mom"),
    "ideal_load": OptionRule("a decimal number 0-%g" % LOAD_MAX,
                             decimal_number(0.0, LOAD_MAX), logged_as("ideal_load")),
    "jobdir_root": OptionRule("%s or %s, optionally followed by 'shared'"
                              % (JOBDIR_USER_HOME, _SECURE_DIR), jobdir_root),
    "job_launch_delay": _seconds_rule("job_launch_delay", " (PP-928 interface 4)"),
    "kbd_idle": OptionRule("1 to 3 whole numbers of seconds 1-%d (avail [busy [poll]])"
                           % SECONDS_MAX, kbd_idle, logged_as("idle_avail")),
    "logevent": OptionRule("an event mask 0-0x%X (decimal or 0x hexadecimal) that "
                           "includes 0x3" % LOGEVENT_MAX, logevent),
    "max_check_poll": OptionRule("whole seconds 1-%d" % SECONDS_MAX,
                                 whole_number(1, SECONDS_MAX),
                                 logged_setting("max_check_poll")),
    "max_load": OptionRule("a decimal number 0-%g, optionally followed by 'suspend'"
                           % LOAD_MAX, max_load, logged_as("max_load")),
    "max_poll_downtime": _seconds_rule("max_poll_downtime"),
    "min_check_poll": OptionRule("whole seconds 1-%d" % SECONDS_MAX,
                                 whole_number(1, SECONDS_MAX),
                                 logged_setting("min_check_poll")),
    "momname": OptionRule("a host name of at most %d characters" % MOMNAME_MAX,
                          lambda value: host_name(value, MOMNAME_MAX)),
    "port": OptionRule("a port number 1-%d" % PORT_MAX, whole_number(1, PORT_MAX)),
    "prologalarm": _seconds_rule("prolog alarm"),
    "reject_root_scripts": _boolean_rule("set_reject_root_scripts"),
    "report_hook_checksums": _boolean_rule("set_report_hook_checksums"),
    "restart_background": _boolean_rule("set_restart_background"),
    "restart_transmogrify": _boolean_rule("set_restart_transmogrify"),
    "restrict_user": _boolean_rule("set_restrict_user"),
    "restrict_user_exceptions": OptionRule(
        "1-%d user names separated by commas" % RESTRICT_USER_EXCEPTIONS_MAX, user_list),
    "restrict_user_maxsysid": OptionRule("a uid 1-%d" % UID_MAX, whole_number(1, UID_MAX),
                                         logged_setting("set_restrict_user_maxsys")),
    "restricted": OptionRule("a host name or pattern with '*'", host_pattern,
                             repeatable=True),
    "sister_join_job_alarm": _seconds_rule("sister_join_job_alarm",
                                           " (PP-928 interface 3)"),
    "suspendsig": OptionRule("a signal number 1-%d, optionally followed by the resume "
                             "signal number" % SIGNAL_MAX, suspendsig),
    "tmpdir": OptionRule(_SECURE_DIR, secure_directory),
    "usecp": OptionRule("'host:/from/path /to/path' (host a name or pattern with '*', "
                        "both paths absolute)", usecp, repeatable=True),
    "vnodedef_additive": _boolean_rule("set_vnodedef_additive"),
    "wallmult": OptionRule("a decimal number > 0 and <= %g" % FACTOR_MAX,
                           decimal_number(0.0, FACTOR_MAX, low_open=True),
                           logged_as("wallmult")),
}

# Linux pbs_mom options this module cannot check (``configversion`` switches the rest of
# the file to another format); accepted only through ``unchecked_options``.
UNCHECKABLE = ("configversion",)
OPTION_NAMES = tuple(sorted(RULES))


def _problem(name, value, reason, accepts):
    return "%s: %r is refused (%s); accepted: %s" % (name, value, reason, accepts)


def unchecked_text(name: str, value: Any) -> str:
    """The line text for an option named in ``unchecked_options``: any scalar whose line
    stays one line the mom can read (no newline, no ``#``, not empty, not too long)."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, (str, int, float)):
        text = str(value).strip()
    else:
        raise MomConfigValueError("%s: value must be a string, number or boolean, got %r"
                                  % (name, value))
    if "\n" in text or "\r" in text or "#" in text or not text:
        raise MomConfigValueError(
            "%s (unchecked): %r is refused; accepted: one non-empty line without '#' "
            "(pbs_mom does not strip inline comments)" % (name, value))
    return text


def _line_text(name, value, unchecked):
    if name in unchecked:
        text = unchecked_text(name, value)
    else:
        rule = RULES[name]
        try:
            text = rule.parse(value)
        except ValueError as exc:
            raise MomConfigValueError(_problem(name, value, exc, rule.accepts))
    if len("$%s %s" % (name, text)) > MAX_LINE_CHARS:
        raise MomConfigValueError("%s: the line would be longer than %d characters, which "
                                  "pbs_mom reads as two lines" % (name, MAX_LINE_CHARS))
    return text


def check_name(name: str, unchecked: Sequence[str] = ()) -> None:
    """Raise :class:`MomConfigValueError` unless ``name`` has a rule or is unchecked."""
    if name in unchecked:
        if not isinstance(name, str) or not _OPTION_NAME.match(name):
            raise MomConfigValueError("%r is not an option name (lower-case letters, digits "
                                      "and '_', without '$')" % (name,))
        if name in RULES:
            raise MomConfigValueError(
                "%s is checked by this module and cannot be unchecked; remove it from "
                "unchecked_options (accepted: %s)" % (name, RULES[name].accepts))
        return
    if name in RULES:
        return
    if name in UNCHECKABLE:
        raise MomConfigValueError(
            "%s cannot be checked by this module; name it in unchecked_options to write "
            "it anyway" % name)
    raise MomConfigValueError(
        "unknown mom config option %r: pbs_mom exits on an unknown $option "
        "('parse_config, command name %s not found'). Accepted names: %s; other names "
        "only through unchecked_options" % (name, name, ", ".join(OPTION_NAMES)))


def normalize_value(name: str, value: Any, unchecked: Sequence[str] = ()) -> Union[str, List[str]]:
    """The line text(s) for ``$name value`` or raise :class:`MomConfigValueError`.

    ``value``: a scalar (one line: returns a str) or, for a repeatable option, a list
    (one line per item: returns a list of str). ``unchecked``: names the task accepts
    without a rule. The message names the option, the value, why it is refused and what
    is accepted.
    """
    check_name(name, unchecked)
    if isinstance(value, (list, tuple)):
        if name not in unchecked and not RULES[name].repeatable:
            raise MomConfigValueError("%s takes one value, not a list; accepted: %s"
                                      % (name, RULES[name].accepts))
        if not value:
            raise MomConfigValueError("%s: the list is empty; use null to remove the "
                                      "option" % name)
        return [_line_text(name, item, unchecked) for item in value]
    return _line_text(name, value, unchecked)


def log_line(name: str, text: str) -> Optional[Tuple[str, str, str]]:
    """``(object, id, value)`` the mom logs when it reads ``$name text``, or None."""
    rule = RULES.get(name)
    if rule is None or rule.repeatable:
        return None
    return rule.logged(text)


def _single(options, name):
    value = options.get(name)
    return value[-1] if isinstance(value, list) else value


def combination_problems(options: Mapping[str, Any]) -> List[str]:
    """Problems of a whole file's ``$options`` (name -> text or list of texts, as the
    file will be) that no single line shows; [] when none.

    - ``min_check_poll`` above ``max_check_poll`` (defaults 10 and 120): the mom logs an
      error and silently uses both defaults;
    - ``restart_transmogrify`` true without an ``$action restart ... !script``: the mom
      exits (``read_config``: "This is unsupported").
    """
    problems = []
    min_poll, max_poll = _single(options, "min_check_poll"), _single(options, "max_check_poll")
    low = int(min_poll) if min_poll and _DIGITS.match(min_poll) else 10
    high = int(max_poll) if max_poll and _DIGITS.match(max_poll) else 120
    if low > high:
        problems.append("min_check_poll %d is above max_check_poll %d: pbs_mom would use "
                        "10 and 120 instead; accepted: min_check_poll <= max_check_poll"
                        % (low, high))
    transmogrify = _single(options, "restart_transmogrify")
    if transmogrify and transmogrify.lower() in TRUE_WORDS:
        actions = options.get("action") or []
        actions = actions if isinstance(actions, list) else [actions]
        if not any(a.split()[:1] == ["restart"] and "!" in a for a in actions):
            problems.append("restart_transmogrify true is refused: pbs_mom exits without "
                            "an action 'restart TIMEOUT !script' line; accepted: false, or "
                            "true with such an action line")
    return problems


def canonical_text(name: str, text: str, unchecked: Sequence[str] = ()) -> str:
    """The text the task would write for a file value ``text`` of ``$name``, or ``text``
    itself when no rule applies or the rule refuses it."""
    if name in unchecked or name not in RULES:
        return text
    try:
        return RULES[name].parse(text)
    except ValueError:
        return text


def same_value(name: str, file_text: str, wanted_text: str, unchecked: Sequence[str] = ()) -> bool:
    """Whether the file's ``$name file_text`` already means ``wanted_text`` (e.g. ``yes``
    and ``true`` for a boolean, ``10  20`` and ``10 20`` for ``kbd_idle``)."""
    return canonical_text(name, file_text, unchecked) == wanted_text


def expected_log_line(name: str,
                      file_text: Optional[str]) -> Optional[Tuple[str, str, Optional[str]]]:
    """``(object, id, value)`` the mom logs for the file's ``$name file_text``, None when
    it logs no comparable value. ``file_text`` None: the option is not in the file; the
    value of the triple is then None."""
    try:
        probe = log_line(name, canonical_text(name, file_text)
                         if file_text is not None else "1")
    except ValueError:
        return None
    if probe is None:
        return None
    if file_text is None:
        return probe[0], probe[1], None
    return probe


def plan(options: Mapping[str, Any], state: str,
         unchecked: Sequence[str] = ()) -> Tuple[Dict[str, List[str]], Set[str], List[Tuple[str, str, Optional[str]]]]:
    """``(desired, remove, expected_log)`` from the task or raise MomConfigValueError with
    every problem (one per line).

    ``desired``: name -> list of line texts; ``remove``: names to drop;
    ``expected_log``: the ``(object, id, value)`` lines the mom logs when it reads the
    desired options (those whose value it logs), checked after SIGHUP."""
    desired = {}
    remove = set()
    expected = []
    problems = []
    for name, value in options.items():
        if state == "absent" or value is None:
            if not name or any(c.isspace() for c in name) or name.startswith("$"):
                problems.append("%r is not an option name (give it without '$')" % name)
            remove.add(name)
            continue
        try:
            text = normalize_value(name, value, unchecked)
        except MomConfigValueError as exc:
            problems.append(str(exc))
            continue
        desired[name] = text if isinstance(text, list) else [text]
        line = None if isinstance(text, list) or name in unchecked else log_line(name, text)
        if line is not None:
            expected.append(line)
    if problems:
        raise MomConfigValueError("\n".join(problems))
    return desired, remove, expected


def value_problem(name: str, value: Any, unchecked: Sequence[str] = ()) -> str:
    """What this module says of the one option ``$name value``: ``""`` when :func:`plan`
    (state present, as the ``hpc.pbs.mom_config`` module calls it) accepts ``{name: value}``,
    else its message (str, one line per problem).

    ``value`` None is accepted (it removes the line). Rules that look at the host
    (``tmpdir``, ``clienthost``, ...) look at the host this runs on. Used by the
    ``hpc.pbs.mom_option_problem`` filter so that the roles refuse what the module refuses.
    """
    try:
        plan({name: value}, "present", unchecked)
    except MomConfigValueError as exc:
        return str(exc)
    return ""


def check_unchecked_names(names: Iterable[Any]) -> None:
    """Raise MomConfigValueError unless each ``unchecked_options`` entry is a name."""
    for name in names:
        check_name(name, unchecked=(name,))


def new_combination_problems(old_options: Mapping[str, Any],
                             new_options: Mapping[str, Any]) -> List[str]:
    """Problems of option combinations the new file has and the old one had not."""
    old = set(combination_problems(old_options))
    return [p for p in combination_problems(new_options) if p not in old]
