"""``PBS_HOME/mom_priv/config`` parsing with the rules of OpenPBS 23.06 ``parse_config()``.

Rules (src/resmom/mom_main.c ``parse_config``/``read_config``, transcript f):

- lines are numbered from 1, comments and blank lines included; a line whose first
  character is ``#`` is a comment; a blank line is skipped;
- ``$name value``: ``name`` must be one of :data:`KNOWN_OPTIONS`, otherwise the mom logs
  ``parse_config, command name <name> not found``; the value is the rest of the line with
  leading and trailing white space removed; a value its handler refuses logs
  ``parse_config, config[<line>] command "$<name> <value>" failed, aborting``;
- parsing goes on after an error (later lines are still logged), but the whole read
  fails, and the mom exits (after SIGHUP) or refuses to start;
- ``$job_launch_delay`` / ``$sister_join_job_alarm`` (PP-928 interfaces 3 and 4) log
  ``<name>;<value>`` (PBSEVENT_SYSTEM) before checking it, and accept only a whole
  number >= 1 with nothing after it (``strtol`` base 10);
- any other line is a static resource ``name value`` (``add_static``).
"""
import re

from mockpbs import pbslog

# special[] of mom_main.c, Linux build (no BGL/cpuset/Windows/NAS entries), plus
# ``alps_client``, which only the Cray (MOM_ALPS) build knows: the mock takes a mom
# configured with it for a Cray mom (PP-928 interface 1: tolerate_node_failures ignored).
KNOWN_OPTIONS = (
    "alps_client",
    "action", "alien_attach", "alien_kill", "attach_allow", "checkpoint_path",
    "clienthost", "configversion", "cputmult", "enforce", "ideal_load", "jobdir_root",
    "kbd_idle", "logevent", "max_check_poll", "max_load", "max_poll_downtime",
    "min_check_poll", "momname", "port", "prologalarm", "sister_join_job_alarm",
    "job_launch_delay", "restart_background", "restart_transmogrify", "restrict_user",
    "restrict_user_exceptions", "restrict_user_maxsysid", "restricted", "suspendsig",
    "gen_nodefile_on_sister_mom",
    "tmpdir", "vnodedef_additive", "usecp", "wallmult", "reject_root_scripts",
    "report_hook_checksums",
)

MAX_CHECK_POLL_DEFAULT = 120
MIN_CHECK_POLL_DEFAULT = 10

_BOOLEAN_IDS = {
    "alien_attach": "set_alien_attach",
    "alien_kill": "set_alien_kill",
    "attach_allow": "set_attach_allow",
    "restart_background": "set_restart_background",
    "restart_transmogrify": "set_restart_transmogrify",
    "restrict_user": "set_restrict_user",
    "reject_root_scripts": "set_reject_root_scripts",
    "report_hook_checksums": "set_report_hook_checksums",
    "vnodedef_additive": "set_vnodedef_additive",
    "gen_nodefile_on_sister_mom": "set_gen_nodefile_on_sister_mom",
}
_INT_IDS = {
    "restrict_user_maxsysid": "set_restrict_user_maxsys",
    "max_check_poll": "max_check_poll",
    "min_check_poll": "min_check_poll",
}
_STRTOL10 = re.compile(r"^\s*[+-]?\d+")
_STRTOL0 = re.compile(r"^\s*[+-]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9]\d*)")
_FLOAT = re.compile(r"^\s*[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?)")


class MomConfig:
    """Result of reading the config file.

    ``ok`` bool; ``options`` {name: [value, ...]} of accepted ``$`` lines;
    ``statics`` {name: value}; ``sister_join_job_alarm`` / ``job_launch_delay`` int
    seconds or None when not set; ``max_check_poll`` / ``min_check_poll`` ints;
    ``max_poll_downtime`` int seconds or None when not set."""

    def __init__(self):
        self.ok = True
        self.options = {}
        self.statics = {}
        self.sister_join_job_alarm = None
        self.job_launch_delay = None
        self.max_check_poll = MAX_CHECK_POLL_DEFAULT
        self.min_check_poll = MIN_CHECK_POLL_DEFAULT
        self.max_poll_downtime = None

    @property
    def alps_client(self):
        """Path given by ``$alps_client`` (the last one), or None: set means a Cray mom."""
        values = self.options.get("alps_client")
        return values[-1] if values else None


def _strtol(value, pattern=_STRTOL10):
    """(number, rest) like C strtol, or (None, value) when no digits start it."""
    match = pattern.match(value)
    if not match:
        return None, value
    return int(match.group(0).strip(), 0 if pattern is _STRTOL0 else 10), value[match.end():]


def _atof(value):
    match = _FLOAT.match(value)
    return float(match.group(0)) if match else 0.0


class _Parser:
    def __init__(self, log):
        self.log = log
        self.config = MomConfig()

    def _event(self, event_class, objtype, objname, message):
        if self.log is not None:
            self.log.record(event_class, objtype, objname, message)

    def _err(self, message):
        # log_err(-1, func, msg): class ERROR, object = the daemon name.
        self._event(pbslog.PBSEVENT_ERROR, pbslog.OBJ_SERVER, "pbs_mom", message)

    # Handlers return True (accepted) or False (HANDLER_FAIL).
    def _positive_seconds(self, name, value):
        self._event(pbslog.PBSEVENT_SYSTEM, pbslog.OBJ_SERVER, name, value)
        number, rest = _strtol(value)
        if number is None or rest != "" or number <= 0:
            return False
        setattr(self.config, name, number)
        return True

    def _boolean(self, ident, value):
        if value == "":
            self._event(pbslog.PBSEVENT_SYSTEM, pbslog.OBJ_SERVER, ident, "No value specified, no action taken.")
            return False
        lowered = value.lower()
        if lowered in ("no", "false", "off") or value == "0":
            self._event(pbslog.PBSEVENT_SYSTEM, pbslog.OBJ_SERVER, ident, "false")
            return True
        if lowered in ("yes", "true", "on") or value == "1":
            self._event(pbslog.PBSEVENT_SYSTEM, pbslog.OBJ_SERVER, ident, "true")
            return True
        self._event(pbslog.PBSEVENT_SYSTEM, pbslog.OBJ_SERVER, ident, 'Illegal value "%s", no action taken.' % value)
        return False

    def _int(self, name, ident, value):
        if value == "":
            self._event(pbslog.PBSEVENT_SYSTEM, pbslog.OBJ_SERVER, ident, "No value specified, no action taken.")
            return False
        number, rest = _strtol(value, _STRTOL0)
        if number is None or rest != "" or number <= 0:
            self._event(pbslog.PBSEVENT_SYSTEM, pbslog.OBJ_NONE, ident, 'bad value "%s"' % value)
            return False
        if name in ("max_check_poll", "min_check_poll"):
            setattr(self.config, name, number)
        self._event(pbslog.PBSEVENT_SYSTEM, pbslog.OBJ_NONE, ident, "setting %d" % number)
        return True

    def handle(self, name, value):
        if name in ("sister_join_job_alarm", "job_launch_delay"):
            return self._positive_seconds(name, value)
        if name in _BOOLEAN_IDS:
            return self._boolean(_BOOLEAN_IDS[name], value)
        if name in _INT_IDS:
            return self._int(name, _INT_IDS[name], value)
        if name == "logevent":
            number, rest = _strtol(value, _STRTOL0)
            return number is not None and (rest == "" or rest[0].isspace())
        if name == "prologalarm":
            self._event(pbslog.PBSEVENT_SYSTEM, pbslog.OBJ_SERVER, "prolog alarm", value)
            number, _unused = _strtol(value)
            return bool(number and number > 0)
        if name in ("ideal_load", "max_load"):
            self._event(pbslog.PBSEVENT_SYSTEM, pbslog.OBJ_SERVER, name, value)
            return _atof(value) >= 0.0
        if name in ("cputmult", "wallmult"):
            self._event(pbslog.PBSEVENT_SYSTEM, pbslog.OBJ_SERVER, name, value)
            return _atof(value) != 0.0
        if name in ("max_poll_downtime", "kbd_idle"):
            self._event(pbslog.PBSEVENT_SYSTEM, pbslog.OBJ_SERVER,
                        "idle_avail" if name == "kbd_idle" else name, value)
            number, _unused = _strtol(value)
            if name == "max_poll_downtime" and number and number > 0:
                self.config.max_poll_downtime = number
            return bool(number and number > 0)
        if name == "restricted":
            self._event(pbslog.PBSEVENT_SYSTEM, pbslog.OBJ_SERVER, "restricted", value)
            return True
        if name == "usecp":
            if ":" not in value:
                self._err("usecp, invalid host specification: %s" % value)
                return False
            return True
        if name in ("action", "port", "momname", "alps_client"):
            return value != ""
        # Remaining options are kept as strings (clienthost, tmpdir, checkpoint_path...).
        return True

    def parse(self, text, file_label):
        self._event(pbslog.PBSEVENT_DEBUG2, pbslog.OBJ_SERVER, "parse_config", "file %s" % file_label)
        for linenum, line in enumerate(text.splitlines(), start=1):
            if line.startswith("#"):
                continue
            stripped = line.strip()
            if not stripped:
                continue
            if stripped.startswith("$"):
                parts = stripped[1:].split(None, 1)
                name = parts[0] if parts else ""
                value = parts[1].strip() if len(parts) > 1 else ""
                if name not in KNOWN_OPTIONS:
                    self._err("parse_config, command name %s not found" % name)
                    self.config.ok = False
                    continue
                if self.handle(name, value):
                    self.config.options.setdefault(name, []).append(value)
                else:
                    self._err('parse_config, %s[%d] command "$%s %s" failed, aborting'
                              % (file_label, linenum, name, value))
                    self.config.ok = False
                continue
            parts = stripped.split(None, 1)
            name, value = parts[0], (parts[1].strip() if len(parts) > 1 else "")
            self.config.statics[name] = value
            self._event(pbslog.PBSEVENT_DEBUG, pbslog.OBJ_NONE, "add_static",
                        "%s[%d] add name %s value %s" % (file_label, linenum, name, value))
        return self.config


def parse_text(text, log=None, file_label="config"):
    """Parse config ``text``; ``log`` a :class:`mockpbs.pbslog.DaemonLog` or None.

    Returns a :class:`MomConfig` (``ok`` False when any line failed). Logs exactly what
    ``parse_config`` logs, but not the ``read_config`` summary (see :func:`read_config`)."""
    return _Parser(log).parse(text, file_label)


def read_config(path, log=None):
    """Read ``path`` (a missing file is an empty config, as for the default ``config``)
    and log the ``read_config;max_check_poll = ...`` summary on success."""
    try:
        with open(path) as handle:
            text = handle.read()
    except FileNotFoundError:
        text = None
    if text is None:
        config = MomConfig()
    else:
        config = parse_text(text, log)
    if config.ok and log is not None:
        if config.min_check_poll > config.max_check_poll:
            config.max_check_poll, config.min_check_poll = MAX_CHECK_POLL_DEFAULT, MIN_CHECK_POLL_DEFAULT
        log.record(pbslog.PBSEVENT_SYSTEM, pbslog.OBJ_NONE, "read_config",
                   "max_check_poll = %d, min_check_poll = %d" % (config.max_check_poll, config.min_check_poll))
    return config
