"""The ``pbs`` hook module, as PBS hooks see it (OpenPBS 23.06), for the mock.

Inside a hook run by :mod:`mockpbs.hookrun`, ``import pbs`` gives this module. It covers
what PP-928 hooks use (seed ``pp-928-reliable-job-startup.txt``, interfaces 5-9):

- ``pbs.event()`` with ``type``, ``hook_name``, ``job``, ``vnode_list``,
  ``vnode_list_fail`` (execjob_prologue/launch), ``env``/``argv``/``progname``
  (execjob_launch, the only writable event parameters), ``requestor``,
  ``requestor_host``, ``accept()``, ``reject(msg)`` (both raise ``SystemExit``, as PBS);
- the job object: attributes as ``qstat -f`` names them (unset ones read as None),
  ``Resource_List`` (``["select"]`` is a :class:`select`), ``in_ms_mom()``, ``rerun()``,
  ``delete()``, ``release_nodes(keep_select=...)`` (interface 8, see
  :mod:`mockpbs.release_nodes`; its result is a borrowed reference, as in pbs_python: a
  hook that lets it be freed crashes, see :class:`_BorrowedJob`), ``failed_mom_list`` /
  ``succeeded_mom_list``;
- :class:`select` with ``increment_chunks`` (interface 7, with every quirk of OpenPBS's
  implementation, see ``tests/reference/increment_chunks_quirks.md``);
- vnodes with a settable ``state`` (``pbs.ND_OFFLINE``...), ``comment``,
  ``resources_available``;
- ``pbs.logmsg`` / ``pbs.logjobmsg`` with the PBS event classes real hooks get;
- constants with OpenPBS's numeric values (events, log levels, node states).

What a hook may set follows OpenPBS's ``is_attrib_val_settable``
(``src/lib/Libpython/pbs_python_svr_internal.c``), per event:

- execjob_launch (interface 6): job attributes, resources (``Resource_List``,
  ``resources_used``, a vnode's ``resources_available``), vnode attributes and the
  ``progname``/``argv``/``env`` event parameters. Anything else (e.g. an attribute of
  ``pbs.server()``) raises ``AssertionError("Can only set progname, argv, env event
  parameters as well as job, resource, vnode under execjob_launch hook.")``; when the hook
  lets it escape, the hook fails as with any exception (see
  :func:`mockpbs.hookrun.uncaught_exception_lines`).
- execjob_resize (interface 9): nothing; any set raises ``AssertionError("nothing is
  settable inside an execjob_resize hook!")`` (see :class:`NothingSettableError`).
- other execjob_* events: job, resource and vnode attributes only; queuejob/modifyjob:
  job and resource attributes only.
- ``Execution_Time`` must lie in the future and ``run_count`` be >= 0
  (``BadAttributeValueError``, PBS's texts); event parameters other than
  ``progname``/``argv``/``env`` and PBS's own variables in a launch ``env`` are read-only.

State lives in :data:`_current` (one hook run per process, as in ``pbs_python``);
:func:`_start` installs it, :func:`_job_freed` tells whether pbs_python would have crashed
and :func:`_outcome` reads what the hook changed.
"""
import math
import sys
import time
import weakref

from mockpbs import pbsconf, pbslog, selectspec
from mockpbs import release_nodes as _release

# ---------------------------------------------------------------- event types (hook.h)
QUEUEJOB = 0x01
MODIFYJOB = 0x02
RESVSUB = 0x04
MOVEJOB = 0x08
RUNJOB = 0x10
PROVISION = 0x20
EXECJOB_BEGIN = 0x40
EXECJOB_PROLOGUE = 0x80
EXECJOB_EPILOGUE = 0x100
EXECJOB_END = 0x200
EXECJOB_PRETERM = 0x400
EXECJOB_LAUNCH = 0x800
EXECHOST_PERIODIC = 0x1000
EXECHOST_STARTUP = 0x2000
EXECJOB_ATTACH = 0x4000
PERIODIC = 0x8000
RESV_END = 0x10000
EXECJOB_RESIZE = 0x20000
EXECJOB_ABORT = 0x40000
EXECJOB_POSTSUSPEND = 0x80000
EXECJOB_PRERESUME = 0x100000
MANAGEMENT = 0x200000
MODIFYVNODE = 0x400000
JOBOBIT = 0x800000
RESV_BEGIN = 0x1000000
RESV_CONFIRM = 0x2000000
MODIFYRESV = 0x4000000

EVENT_TYPES = {
    "queuejob": QUEUEJOB, "modifyjob": MODIFYJOB, "resvsub": RESVSUB, "movejob": MOVEJOB,
    "runjob": RUNJOB, "provision": PROVISION, "execjob_begin": EXECJOB_BEGIN,
    "execjob_prologue": EXECJOB_PROLOGUE, "execjob_epilogue": EXECJOB_EPILOGUE,
    "execjob_end": EXECJOB_END, "execjob_preterm": EXECJOB_PRETERM,
    "execjob_launch": EXECJOB_LAUNCH, "exechost_periodic": EXECHOST_PERIODIC,
    "exechost_startup": EXECHOST_STARTUP, "execjob_attach": EXECJOB_ATTACH,
    "periodic": PERIODIC, "resv_end": RESV_END, "execjob_resize": EXECJOB_RESIZE,
    "execjob_abort": EXECJOB_ABORT, "execjob_postsuspend": EXECJOB_POSTSUSPEND,
    "execjob_preresume": EXECJOB_PRERESUME, "management": MANAGEMENT,
    "modifyvnode": MODIFYVNODE, "jobobit": JOBOBIT, "resv_begin": RESV_BEGIN,
    "resv_confirm": RESV_CONFIRM, "modifyresv": MODIFYRESV,
}
MOM_EVENTS = (EXECJOB_BEGIN | EXECJOB_PROLOGUE | EXECJOB_EPILOGUE | EXECJOB_END | EXECJOB_PRETERM
              | EXECHOST_PERIODIC | EXECJOB_LAUNCH | EXECHOST_STARTUP | EXECJOB_ATTACH
              | EXECJOB_RESIZE | EXECJOB_ABORT | EXECJOB_POSTSUSPEND | EXECJOB_PRERESUME)

# ---------------------------------------------------------------- log levels (hook.h, log.h)
# pbs.LOG_* are syslog severities; PBS logs them under event class ADMIN|SYSTEM (0x0006).
LOG_DEBUG = 0x0005
LOG_WARNING = 0x0006
LOG_ERROR = 0x0007
EVENT_ERROR = pbslog.PBSEVENT_ERROR
EVENT_SYSTEM = pbslog.PBSEVENT_SYSTEM
EVENT_ADMIN = pbslog.PBSEVENT_ADMIN
EVENT_JOB = pbslog.PBSEVENT_JOB
EVENT_JOB_USAGE = pbslog.PBSEVENT_JOB_USAGE
EVENT_SECURITY = pbslog.PBSEVENT_SECURITY
EVENT_SCHED = pbslog.PBSEVENT_SCHED
EVENT_DEBUG = pbslog.PBSEVENT_DEBUG
EVENT_DEBUG2 = pbslog.PBSEVENT_DEBUG2
EVENT_RESV = pbslog.PBSEVENT_RESV
EVENT_DEBUG3 = pbslog.PBSEVENT_DEBUG3
EVENT_DEBUG4 = pbslog.PBSEVENT_DEBUG4
EVENT_FORCE = 0x8000
_SEVERITIES = (LOG_DEBUG, LOG_WARNING, LOG_ERROR)
_EVENT_CLASSES = (EVENT_ERROR, EVENT_SYSTEM, EVENT_ADMIN, EVENT_JOB, EVENT_JOB_USAGE,
                  EVENT_SECURITY, EVENT_SCHED, EVENT_DEBUG, EVENT_DEBUG2, EVENT_RESV,
                  EVENT_DEBUG3, EVENT_DEBUG4, EVENT_FORCE)

# ---------------------------------------------------------------- vnode states (bit mask)
ND_FREE = 0
ND_OFFLINE = 1
ND_DOWN = 2
ND_DELETED = 4
ND_UNRESOLVABLE = 8
ND_JOBBUSY = 16
ND_STALE = 32
ND_JOB_EXCLUSIVE = 64
ND_BUSY = 128
ND_STATE_UNKNOWN = 256
ND_NEEDS_HELLOSVR = 512
ND_INIT = 1024
ND_PROV = 2048
ND_WAIT_PROV = 4096
ND_RESVEXCL = 8192
ND_OFFLINE_BY_MOM = 16384
ND_MARKEDDOWN = 32768
ND_NEED_ADDRS = 65536
ND_MAINTENANCE = 131072
ND_SLEEP = 262144
ND_NEED_CREDENTIALS = 524288
ND_STATE_FREE = ND_FREE
# State text as pbsnodes prints it, bit by bit.
_STATE_NAMES = (
    (ND_OFFLINE, "offline"), (ND_DOWN, "down"), (ND_DELETED, "deleted"),
    (ND_UNRESOLVABLE, "unresolvable"), (ND_JOBBUSY, "job-busy"), (ND_STALE, "Stale"),
    (ND_JOB_EXCLUSIVE, "job-exclusive"), (ND_BUSY, "busy"), (ND_STATE_UNKNOWN, "state-unknown"),
    (ND_INIT, "initializing"), (ND_PROV, "provisioning"), (ND_WAIT_PROV, "wait-provisioning"),
    (ND_RESVEXCL, "resv-exclusive"), (ND_OFFLINE_BY_MOM, "offline_by_mom"),
    (ND_MAINTENANCE, "maintenance"), (ND_SLEEP, "sleep"),
)


def state_to_text(state):
    """``ND_OFFLINE`` -> ``"offline"``; a mask of several bits -> ``"offline,down"``."""
    state = int(state)
    if state == ND_FREE:
        return "free"
    return ",".join(name for bit, name in _STATE_NAMES if state & bit)


def text_to_state(text):
    """``"offline,down"`` -> ``ND_OFFLINE | ND_DOWN``; unknown words are ignored."""
    by_name = {name: bit for bit, name in _STATE_NAMES}
    state = ND_FREE
    for word in str(text or "free").split(","):
        state |= by_name.get(word.strip(), 0)
    return state


# ---------------------------------------------------------------- exceptions (_exc_types.py)
class EventIncompatibleError(Exception):
    """An event parameter the current event does not have."""


class UnsetAttributeNameError(Exception):
    pass


class BadAttributeValueTypeError(Exception):
    pass


class BadAttributeValueError(Exception):
    """A value PBS refuses, or a read-only attribute or parameter being set."""


class UnsetResourceNameError(Exception):
    pass


class BadResourceValueTypeError(Exception):
    pass


class BadResourceValueError(Exception):
    """A resource value PBS refuses (e.g. a select spec with a chunk count below 1)."""


class NothingSettableError(AssertionError):
    """Raised when anything is set under execjob_resize (PP-928 interface 9): OpenPBS
    raises a plain ``AssertionError("nothing is settable inside an execjob_resize hook!")``,
    and so does this (a subclass only so the mock can name it)."""


LAUNCH_SET_REFUSED = ("Can only set progname, argv, env event parameters as well as job, "
                      "resource, vnode under execjob_launch hook.")
RESIZE_SET_REFUSED = "nothing is settable inside an execjob_resize hook!"


# ---------------------------------------------------------------- value types
_C_SPACE = " \t\n\v\f\r"
_C_DIGITS = "0123456789"
_C_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_C_ALNUM = _C_DIGITS + _C_LETTERS


def _select_value_end(text, pos):
    """Scan a resource value of a select spec from ``pos`` (just after ``=``), as
    ``decode_select`` does. Returns ``(position after the value's separator, new chunk)``:
    ``(None, _)`` when the spec is bad, ``(len(text), False)`` at the end of the spec."""
    end = len(text)
    while pos < end:
        char = text[pos]
        if char in "'\"":               # a quoted substring: anything up to the same quote
            close = text.find(char, pos + 1)
            if close < 0:
                return None, False
            pos = close + 1
        elif char in ":+":
            pos += 1
            return (pos, char == "+") if pos < end else (None, False)
        elif " " <= char <= "~":        # C isprint()
            pos += 1
        else:
            return None, False
    return end, False


def select_syntax_ok(text):
    """True when OpenPBS accepts ``text`` as a select spec: the rules of its
    ``decode_select`` (``src/lib/Libattr/attr_resc_func.c``), which ``pbs.select()`` applies
    through ``_pbs_v1.validate_input("resc", "select", ...)``. ASCII only, as C's ctype:

    - leading white space is skipped; an empty spec is bad;
    - a chunk starts with a letter or digit: digits (any count, ``0`` included) are its
      count, followed by the end of the spec, ``+`` and another chunk, or ``:``;
    - then ``name=value`` pairs joined by ``:``: a name starts with a letter and goes on
      with letters, digits, ``-`` and ``_``; a value is printable characters (``=`` and
      spaces included) and quoted substrings (``'...'``/``"..."``, closed, anything
      inside); it may be empty only when a ``:`` or ``+`` follows;
    - ``:`` and ``+`` must be followed by something.
    """
    pos, end = 0, len(text)
    while pos < end and text[pos] in _C_SPACE:
        pos += 1
    if pos == end:
        return False
    new_chunk = True
    while pos < end:
        if text[pos] not in _C_ALNUM:
            return False
        if new_chunk and text[pos] in _C_DIGITS:
            while pos < end and text[pos] in _C_DIGITS:
                pos += 1
            if pos == end:
                return True
            if text[pos] == "+":
                pos += 1
                if pos == end:
                    return False
                continue
            if text[pos] != ":":
                return False
            pos += 1
        if pos == end or text[pos] not in _C_LETTERS:
            return False
        while pos < end and (text[pos] in _C_ALNUM or text[pos] in "-_"):
            pos += 1
        if pos == end or text[pos] != "=" or pos + 1 == end:
            return False
        pos, new_chunk = _select_value_end(text, pos + 1)
        if pos is None:
            return False
    return True


class select(str):
    """A select spec ``[N:]res=val[:res=val][+...]``; the text is kept as written.

    Accepts exactly what OpenPBS's select type accepts (:func:`select_syntax_ok`: a chunk
    count of ``0`` included, e.g. ``"0:ncpus=1+1:ncpus=2"``). Raises TypeError for a value
    that is not a string and :class:`BadResourceValueError` (PBS's text ``input value <v>
    not of the right format for 'select'``) for a bad spec."""

    def __new__(cls, value):
        if not isinstance(value, str):
            raise TypeError("validate_input() argument 3 must be str, not %s" % type(value).__name__)
        if not select_syntax_ok(value):
            raise BadResourceValueError("input value %s not of the right format for 'select'" % (value,))
        return super().__new__(cls, value)

    def increment_chunks(self, increment_spec):
        """Add chunks to every chunk but the primary mom's single one (PP-928 interface 7).

        ``increment_spec``: an int (bool counts as int), a numeric string, a
        ``"<number>%"`` string (rounded up), or a dict ``{chunk index (int): int or str}``.
        Returns a :class:`select` with every count written. Errors, exactly as OpenPBS:
        ``ValueError("bad increment specs")`` for a zero increment (unless no chunk has an
        adjustable count), a dict missing an index, or another type; ``ValueError`` /
        ``OverflowError`` from ``int()``/``float()``/``ceil()`` for bad strings;
        ``UnboundLocalError`` for a non int/str dict value on the first chunk (a later
        chunk silently reuses the previous chunk's count); :class:`BadResourceValueError`
        when the result has a negative count (negative increments are not checked; a
        count of 0 is a valid select, as in OpenPBS)."""
        amount = None
        factor = None
        per_chunk = None
        if isinstance(increment_spec, int):
            amount = increment_spec
        elif isinstance(increment_spec, str):
            if increment_spec.endswith("%"):
                factor = _percent_factor(increment_spec)
            else:
                amount = int(increment_spec)
        elif isinstance(increment_spec, dict):
            per_chunk = increment_spec
        else:
            raise ValueError("bad increment specs")

        no_count = object()
        count = no_count
        pieces = []
        for index, chunk_text in enumerate(str(self).split("+")):
            fields = chunk_text.split(":")
            if fields[0].isdigit():
                adjustable = int(fields[0])
                resources = fields[1:]
            else:
                adjustable = 1
                resources = fields
            if index == 0:
                adjustable -= 1  # the primary mom's single chunk is never incremented
            # Truth tests, not None tests: OpenPBS treats an increment of 0 (or a 0.0
            # factor from "-100%") as missing and ends in "bad increment specs".
            if adjustable <= 0:
                count = 0
            elif amount:
                count = adjustable + amount
            elif factor:
                count = int(math.ceil(adjustable * factor))
            elif per_chunk is not None and index in per_chunk:
                value = per_chunk[index]
                if isinstance(value, int):
                    count = adjustable + value
                elif isinstance(value, str):
                    if value.endswith("%"):
                        count = int(math.ceil(adjustable * _percent_factor(value)))
                    else:
                        count = adjustable + int(value)
                # any other value type leaves ``count`` as the previous chunk set it
            else:
                raise ValueError("bad increment specs")
            if count is no_count:
                raise UnboundLocalError(
                    "cannot access local variable 'num' where it is not associated with a value")
            if index == 0:
                count += 1
            pieces.append(":".join([str(count)] + resources))
        return select("+".join(pieces))


def _percent_factor(text):
    return float(text[:-1]) / 100 + 1.0


class hold_types(str):
    """``Hold_Types`` value: letters from ``u``, ``o``, ``s``, ``p`` or ``n``."""

    def __new__(cls, value):
        text = str(value)
        if not text or any(c not in "uospn" for c in text):
            raise BadAttributeValueError("illegal Hold_Types value '%s'" % text)
        return super().__new__(cls, text)


class _ParsedString(str):
    """A string attribute value PBS checks on assignment: ``_parse`` (a selectspec
    parser) must accept it, else BadAttributeValueError with the parser's message."""

    _parse = None

    def __new__(cls, value):
        text = str(value)
        try:
            cls._parse(text)
        except selectspec.SelectSpecError as exc:
            raise BadAttributeValueError(str(exc)) from None
        return super().__new__(cls, text)


class exec_vnode(_ParsedString):
    """An ``exec_vnode`` value ``(vn:res=val+...)+(...)``."""

    _parse = staticmethod(selectspec.parse_exec_vnode)


class exec_host(_ParsedString):
    """An ``exec_host`` value ``host/N[*C][+...]``."""

    _parse = staticmethod(selectspec.parse_exec_host)


class place(str):
    pass


class pbs_env(dict):
    """``pbs.event().env`` of execjob_launch: PBS's own variables are read-only in a site hook."""

    READONLY = frozenset({
        "PBS_ENVIRONMENT", "PBS_JOBDIR", "PBS_JOBID", "PBS_JOBNAME", "PBS_NODEFILE", "TMPDIR",
        "PBS_O_HOME", "PBS_O_HOST", "PBS_O_LANG", "PBS_O_LOGNAME", "PBS_O_MAIL", "PBS_O_PATH",
        "PBS_O_QUEUE", "PBS_O_SHELL", "PBS_O_SYSTEM", "PBS_O_TZ", "PBS_O_WORKDIR", "PBS_QUEUE",
    })

    def __setitem__(self, name, value):
        if name in self.READONLY:
            raise BadAttributeValueError("env variable '%s' is readonly" % (name,))
        super().__setitem__(name, value)


_TYPED_JOB_ATTRIBUTES = {"schedselect": select, "exec_vnode": exec_vnode, "exec_host": exec_host,
                         "exec_host2": exec_host, "Hold_Types": hold_types}
_INT_JOB_ATTRIBUTES = {"run_count", "Priority", "run_version", "Execution_Time"}
_TYPED_RESOURCES = {"select": select, "place": place}


def _to_text(value):
    if value is None:
        return None
    if isinstance(value, bool):
        return "True" if value else "False"
    return str(value)


# ---------------------------------------------------------------- objects
class _Resources:
    """A ``Resource_List`` / ``resources_available`` mapping. Unset resources read as None;
    setting one records the change (unless the owner is read-only). The owner is held by a
    weak reference, so that the job's reference count is the hook's alone (see
    :class:`_BorrowedJob`)."""

    def __init__(self, owner, values, typed=True):
        object.__setattr__(self, "_owner", weakref.ref(owner))
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_changed", {})
        for key, value in (values or {}).items():
            self._values[key] = self._convert(key, value) if typed else value
        object.__setattr__(self, "_typed", typed)

    @staticmethod
    def _convert(key, value):
        kind = _TYPED_RESOURCES.get(key)
        if kind is not None and value is not None and not isinstance(value, kind):
            return kind(value)
        return value

    def __getitem__(self, key):
        return self._values.get(key)

    def __setitem__(self, key, value):
        self._owner()._check_writable(key, kind="resource")
        value = self._convert(key, value) if self._typed else value
        self._values[key] = value
        self._changed[key] = _to_text(value)

    def __delitem__(self, key):
        self[key] = None

    def __getattr__(self, key):
        if key.startswith("__"):
            raise AttributeError(key)
        return self._values.get(key)

    def __setattr__(self, key, value):
        self[key] = value

    def __contains__(self, key):
        return self._values.get(key) is not None

    def __iter__(self):
        return iter([k for k, v in self._values.items() if v is not None])

    def keys(self):
        return list(self)

    def __str__(self):
        return ",".join("%s=%s" % (k, v) for k, v in self._values.items() if v is not None)

    __repr__ = __str__


class _Job:
    """``pbs.event().job``: attributes from the job dict (strings as ``qstat -f`` shows them)."""

    def __init__(self, values, failed_mom_list=None, succeeded_mom_list=None, in_ms_mom=False):
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_changed", {})
        object.__setattr__(self, "_rerun", False)
        object.__setattr__(self, "_delete", False)
        object.__setattr__(self, "_readonly", False)
        object.__setattr__(self, "_msmom", bool(in_ms_mom))
        for key, value in (values or {}).items():
            if key == "Resource_List" or key == "resources_used":
                self._values[key] = _Resources(self, value)
            else:
                self._values[key] = self._convert(key, value)
        for head in ("Resource_List", "resources_used"):
            if head not in self._values:
                self._values[head] = _Resources(self, {})
        self._values["failed_mom_list"] = list(failed_mom_list or [])
        self._values["succeeded_mom_list"] = list(succeeded_mom_list or [])

    @staticmethod
    def _convert(key, value):
        if value is None:
            return None
        kind = _TYPED_JOB_ATTRIBUTES.get(key)
        if kind is not None and not isinstance(value, kind):
            return kind(value)
        if key in _INT_JOB_ATTRIBUTES and not isinstance(value, int):
            return int(value)
        return value

    def _check_writable(self, name, kind="job"):
        _check_settable(self._readonly, kind, name)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._values.get(name)

    def __setattr__(self, name, value):
        self._check_writable(name)
        if name == "Variable_List":
            raise BadAttributeValueError("attribute '%s' cannot be directly set." % (name,))
        value = _checked_job_value(name, value)
        value = self._convert(name, value)
        self._values[name] = value
        self._changed[name] = _to_text(value)

    def __str__(self):
        return str(self._values.get("id"))

    def __eq__(self, other):
        return isinstance(other, _Job) and other.__dict__ is self.__dict__

    def __hash__(self):
        return id(self.__dict__)

    def _alias(self):
        """Another object for this same job: it shares the job's state (attributes, changes,
        ``rerun``/``delete`` flags) and compares equal; only ``is`` tells them apart."""
        alias = _Job.__new__(_Job)
        object.__setattr__(alias, "__dict__", self.__dict__)
        return alias

    def in_ms_mom(self):
        """True when the hook runs on the job's primary mom."""
        return self._msmom

    def rerun(self):
        """Ask PBS to requeue the job once the hook ends (mom hooks only)."""
        if (_current.event_type & MOM_EVENTS) == 0:
            raise NotImplementedError("rerun(): only for mom hooks")
        object.__setattr__(self, "_rerun", True)

    def delete(self):
        """Ask PBS to delete the job once the hook ends (mom hooks only); like ``rerun()``,
        a job action pbs_python reports whether the hook accepts or rejects."""
        if (_current.event_type & MOM_EVENTS) == 0:
            raise NotImplementedError("delete(): only for mom hooks")
        object.__setattr__(self, "_delete", True)

    def release_nodes(self, node_list=None, keep_select=None):
        """Prune the job to ``keep_select`` (PP-928 interface 8).

        Returns None outside execjob_prologue/execjob_launch and on failure (after logging
        the ``could not satisfy``/``NEED``/``HAVE`` lines); the job unchanged (with a
        LOG_DEBUG line) when the job does not tolerate node failures or nothing changes;
        otherwise this job with ``exec_vnode``, ``exec_host``, ``exec_host2`` and
        ``schedselect`` set. ``node_list`` (explicit vnodes) is not emulated:
        NotImplementedError.

        Where OpenPBS's C function returns the job (a pruning that succeeded, whether it
        changed anything or not) it returns it as a borrowed reference: the hook must keep
        the returned object referenced until it ends, see :class:`_BorrowedJob`."""
        if (_current.event_type & (EXECJOB_PROLOGUE | EXECJOB_LAUNCH)) == 0:
            return None
        ajob = _current.event.job
        if ajob.tolerate_node_failures not in ("job_start", "all"):
            logmsg(LOG_DEBUG, "%s: no nodes released as job does not tolerate node failures" % (ajob.id,))
            return ajob
        if node_list is not None:
            raise NotImplementedError("mockpbs: release_nodes(node_list=...) is not emulated")
        if keep_select is None:
            _job_log(self.id, "nothing to release: No values to both node_list and keep_select")
            return None
        if str(keep_select) == "":
            _job_log(self.id, "empty keep_select value")
            return None
        exec_host_value = self.exec_host or self.exec_host2
        exec_host2_value = self.exec_host2 or self.exec_host
        if not (self.id and self.exec_vnode and exec_host_value and self.schedselect):
            return None
        outcome = _release.release_given_select(
            str(self.id), str(self.exec_vnode), str(exec_host_value), str(exec_host2_value),
            str(keep_select), _current.vnode_hosts, self.succeeded_mom_list, self.failed_mom_list,
            _current.known_resources())
        _current.logs.extend(outcome.logs)
        if not outcome.ok:
            return None
        if outcome.changed:
            # PBS sets these even where the job is otherwise not writable by the hook.
            for name in ("exec_vnode", "exec_host", "exec_host2", "schedselect"):
                value = getattr(outcome, name).rstrip("+")
                self._values[name] = self._convert(name, value)
                self._changed[name] = value
        return _current.borrowed.hand_out(self)


class _BorrowedJob:
    """The job ``release_nodes()`` returns, counted as pbs_python counts it.

    OpenPBS's ``_pbs_v1.release_nodes`` (``pbsv1mod_meth_release_nodes`` in
    ``src/lib/Libpython/pbs_python_svr_internal.c``) returns the job it pruned without
    taking a reference to it (``py_return = py_job``, no ``Py_INCREF``): every such return
    leaves the job one reference short. When the hook drops the returned object and nothing
    else of the hook still holds the job (the usual shape: the call made in a function whose
    result is dropped), CPython frees the job while the event still points at it, and
    pbs_python crashes (SIGSEGV, exit 139) when it writes the hook's results: the mom logs
    ``Internal server error encountered. Skipping hook <name>`` and discards everything the
    hook did. Keeping the returned object referenced until the hook ends avoids it.

    The emulator cannot leave a count short, so each such return is an alias of the job
    (:meth:`_Job._alias`) watched by a weak reference (CPython frees deterministically).
    pbs_python's count of the job is the references to the job and to its living aliases,
    less one per alias handed out; it is taken whenever an alias is freed and when the hook
    ends (:func:`_job_freed`). A count of 0 or less means the job was freed.
    """

    def __init__(self):
        self.job = None       # weak reference to the event's job, once an alias exists
        self.aliases = []     # weak references to every alias handed out
        self.freed = False

    def hand_out(self, job):
        """An alias of ``job`` to return to the hook in place of a borrowed reference."""
        alias = job._alias()
        if self.job is None:
            self.job = weakref.ref(job)
        self.aliases.append(weakref.ref(alias, self._alias_gone))
        return alias

    def _alias_gone(self, _reference):
        count = self.pbs_count()
        if count is not None and count <= 0:
            self.freed = True

    def pbs_count(self):
        """The job's reference count as pbs_python's would be (an int; None when no alias
        was handed out). Each ``sys.getrefcount`` here also counts its own argument and
        this function's local variable, hence the ``- 2``."""
        job = self.job() if self.job is not None else None
        if job is None:
            return None
        count = sys.getrefcount(job) - 2
        for reference in self.aliases:
            alias = reference()
            if alias is not None:
                count += sys.getrefcount(alias) - 2
        return count - len(self.aliases)

    def job_freed(self):
        """True when the job was freed at some point of the hook or is at its end."""
        count = self.pbs_count()
        return self.freed or (count is not None and count <= 0)


class _Vnode:
    """A ``pbs.vnode``: ``name``, ``state`` (ND_* mask), ``comment``, ``resources_available``..."""

    def __init__(self, values):
        values = dict(values or {})
        object.__setattr__(self, "_changed", {})
        object.__setattr__(self, "_readonly", False)
        object.__setattr__(self, "_values", {})
        self._values["name"] = values.pop("name", None)
        self._values["state"] = text_to_state(values.pop("state", "free"))
        for key in ("resources_available", "resources_assigned"):
            self._values[key] = _Resources(self, values.pop(key, {}), typed=False)
        self._values.update(values)

    def _check_writable(self, name, kind="vnode"):
        _check_settable(self._readonly, kind, name)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._values.get(name)

    def __setattr__(self, name, value):
        self._check_writable(name)
        self._values[name] = value
        self._changed[name] = state_to_text(value) if name == "state" else _to_text(value)

    def __str__(self):
        return str(self._values.get("name"))

    def changes(self):
        changed = dict(self._changed)
        for key in ("resources_available", "resources_assigned"):
            if self._values[key]._changed:
                changed[key] = dict(self._values[key]._changed)
        return changed


class _Event:
    """``pbs.event()``. Parameters the event does not have raise EventIncompatibleError."""

    _WRITABLE_PARAMS = ("progname", "argv", "env")

    def __init__(self, event_name, hook_name, params, requestor, requestor_host):
        object.__setattr__(self, "type", EVENT_TYPES[event_name])
        object.__setattr__(self, "hook_name", hook_name)
        object.__setattr__(self, "hook_type", "site")
        object.__setattr__(self, "requestor", requestor)
        object.__setattr__(self, "requestor_host", requestor_host)
        object.__setattr__(self, "_param", params)

    def __getattr__(self, key):
        params = object.__getattribute__(self, "_param")
        if key in params:
            return params[key]
        raise EventIncompatibleError

    def __setattr__(self, name, value):
        if name in self._param and name in self._WRITABLE_PARAMS:
            if name == "env" and not isinstance(value, pbs_env):
                value = pbs_env(value)
            self._param[name] = value
            return
        raise BadAttributeValueError("event attribute '%s' is readonly" % (name,))

    def accept(self, ecode=0):
        """End the hook; PBS goes on with the request."""
        _current.accepted = True
        _current.reject_msg = None
        raise SystemExit(str(ecode))

    def reject(self, emsg="", ecode=255):
        """End the hook; PBS refuses the request and logs ``emsg``."""
        _current.accepted = False
        _current.reject_msg = str(emsg)
        raise SystemExit(str(ecode))


# ---------------------------------------------------------------- what a hook may set
_MOM_JOB_EVENTS = (EXECJOB_BEGIN | EXECJOB_PROLOGUE | EXECJOB_EPILOGUE | EXECJOB_END | EXECJOB_ABORT
                   | EXECJOB_POSTSUSPEND | EXECJOB_PRERESUME | EXECJOB_PRETERM)


def _check_settable(readonly, kind, name):
    """Refuse a set the way OpenPBS's ``is_attrib_val_settable`` does.

    ``readonly``: the owning object's read-only flag; ``kind``: ``"job"``, ``"resource"``,
    ``"vnode"``, ``"server"`` or ``"event"``; ``name``: the attribute or resource name.
    Raises :class:`BadAttributeValueError` (read-only object), :class:`NothingSettableError`
    (execjob_resize) or ``AssertionError`` (a kind the event does not allow)."""
    if readonly:
        raise BadAttributeValueError("attribute '%s' is part of a readonly object" % (name,))
    event_type = _current.event_type
    if event_type == EXECJOB_RESIZE:
        raise NothingSettableError(RESIZE_SET_REFUSED)
    if event_type == EXECJOB_ATTACH:
        raise AssertionError("nothing is settable inside an execjob_attach hook!")
    if event_type == EXECJOB_LAUNCH:
        if kind not in ("event", "job", "resource", "vnode"):
            raise AssertionError(LAUNCH_SET_REFUSED)
    elif event_type & _MOM_JOB_EVENTS:
        if kind not in ("job", "resource", "vnode"):
            raise AssertionError("Can only set job,resource,vnode attributes under mom hook event.")
    elif event_type in (QUEUEJOB, MODIFYJOB):
        if kind not in ("job", "resource"):
            raise AssertionError("Can only set job,resource attributes under %s event."
                                 % ("queuejob" if event_type == QUEUEJOB else "modifyjob"))


def _checked_job_value(name, value):
    """PBS's value checks for ``Execution_Time`` (a time in the future, int or float
    seconds) and ``run_count`` (>= 0); returns the value to store."""
    if value is None:
        return value
    if name == "Execution_Time":
        try:
            seconds = int(float(value)) if not isinstance(value, int) else value
        except (TypeError, ValueError):
            raise BadAttributeValueError("exec_time could not be parsed") from None
        if seconds < time.time():
            raise BadAttributeValueError("exec_time '%s' not in the future" % (time.ctime(seconds),))
        return seconds
    if name == "run_count":
        try:
            count = int(value)
        except (TypeError, ValueError):
            count = -1
        if isinstance(value, float) or count < 0:
            raise BadAttributeValueError("run_count value must be >= 0")
        return count
    return value


class _Server:
    """``pbs.server()``: the server's attributes as given to the runner (read as strings).
    Setting one goes through the event's rules: under execjob_launch it raises the
    interface-6 ``AssertionError``."""

    def __init__(self, name, values):
        object.__setattr__(self, "_values", dict(values or {}))
        object.__setattr__(self, "name", name)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._values.get(name)

    def __setattr__(self, name, value):
        _check_settable(False, "server", name)
        self._values[name] = value

    def __str__(self):
        return str(self.name)


def server():
    """The local server object (``pbs.server()``), from the runner context's
    ``server`` name and ``server_attributes`` dict."""
    return _Server(_current.server_name, _current.server_attributes)


# ---------------------------------------------------------------- module state and functions
class _RunState:
    def __init__(self):
        self.event = None
        self.event_type = 0
        self.accepted = True
        self.reject_msg = None
        self.logs = []
        self.daemon_name = "pbs_python"
        self.hostname = ""
        self.vnode_hosts = {}
        self.launch_originals = {}
        self.hook_name = ""
        self.server_name = ""
        self.server_attributes = {}
        self.borrowed = _BorrowedJob()

    def known_resources(self):
        names = set(_release.BUILTIN_SELECT_RESOURCES)
        for table in ("vnode_list", "vnode_list_fail"):
            try:
                vnodes = getattr(self.event, table)
            except EventIncompatibleError:
                continue
            for vnode in vnodes.values():
                names.update(vnode.resources_available.keys())
                names.update(vnode.resources_assigned.keys())
        job = self.event.job if self.event is not None else None
        if job is not None:
            names.update(job.Resource_List.keys())
        return names


_current = _RunState()
hook_config_filename = None
pbs_conf = {}


def event():
    """The event the running hook handles."""
    return _current.event


def logmsg(loglevel, message):
    """Write ``message`` to the daemon log as ``Hook;<daemon name>;message``.

    ``loglevel``: ``LOG_DEBUG``/``LOG_WARNING``/``LOG_ERROR`` (event class 0x0006) or an
    ``EVENT_*`` class (used as is). Anything else raises TypeError, as PBS."""
    if not isinstance(loglevel, int) or (loglevel not in _SEVERITIES and loglevel not in _EVENT_CLASSES):
        raise TypeError("Invalid severity or eventtype value <%s>" % (loglevel,))
    event_class = loglevel if loglevel in _EVENT_CLASSES else (pbslog.PBSEVENT_ADMIN | pbslog.PBSEVENT_SYSTEM)
    _current.logs.append([event_class, pbslog.OBJ_HOOK, _current.daemon_name, str(message)])


def logjobmsg(jobid, message):
    """Write ``message`` to the daemon log as ``Job;<jobid>;message`` (PBSEVENT_JOB)."""
    if not jobid:
        raise ValueError("no jobid given!")
    _current.logs.append([pbslog.PBSEVENT_JOB, pbslog.OBJ_JOB, str(jobid), str(message)])


def _job_log(jobid, message):
    _current.logs.append([pbslog.PBSEVENT_DEBUG2, pbslog.OBJ_JOB, str(jobid), message])


def get_local_nodename():
    """The name of the host (mom) the hook runs on."""
    return _current.hostname


# ---------------------------------------------------------------- runner interface
def _start(hook, event_name, context):
    """Install a fresh run: ``hook`` / ``event_name`` / ``context`` as in PROTOCOL.md."""
    global hook_config_filename, pbs_conf
    state = _RunState()
    context = context or {}
    event_type = EVENT_TYPES[event_name]
    state.event_type = event_type
    state.hostname = context.get("hostname", "")
    if context.get("daemon") == "server":
        state.daemon_name = "Server@%s" % context.get("server", "")
    params = {}
    if context.get("job") is not None:
        params["job"] = _Job(context["job"], context.get("failed_mom_list"),
                             context.get("succeeded_mom_list"), context.get("in_ms_mom", False))
    if event_type & MOM_EVENTS and event_type not in (EXECHOST_STARTUP,):
        params["vnode_list"] = {n: _Vnode(dict(v, name=v.get("name", n)))
                                for n, v in (context.get("vnode_list") or {}).items()}
    if event_type & (EXECJOB_PROLOGUE | EXECJOB_LAUNCH):
        params["vnode_list_fail"] = {n: _Vnode(dict(v, name=v.get("name", n)))
                                     for n, v in (context.get("vnode_list_fail") or {}).items()}
    if event_type == EXECJOB_LAUNCH:
        params["env"] = dict.__new__(pbs_env)
        dict.update(params["env"], context.get("env") or {})
        params["argv"] = list(context.get("argv") or [])
        params["progname"] = context.get("progname")
        state.launch_originals = {"env": dict(params["env"]), "argv": list(params["argv"]),
                                  "progname": params["progname"]}
    for table in ("vnode_list_fail", "vnode_list"):
        for name, vnode in (context.get(table) or {}).items():
            state.vnode_hosts.setdefault(name, vnode.get("host"))
    state.event = _Event(event_name, hook.get("name", ""), params,
                         context.get("requestor", ""), context.get("requestor_host", ""))
    state.hook_name = hook.get("name", "")
    state.server_name = context.get("server", "")
    state.server_attributes = dict(context.get("server_attributes") or {})
    globals()["_current"] = state
    hook_config_filename = hook.get("config")
    pbs_conf = pbsconf.load()
    return state.event


def _job_freed():
    """True when the job ``release_nodes()`` returned was freed before the hook ended (see
    :class:`_BorrowedJob`): pbs_python would crash writing the hook's results. Call it when
    the hook's code has finished, while its module namespace is still alive."""
    return _current.borrowed.job_freed()


def _outcome():
    """What the hook did, in the result shape of PROTOCOL.md (without accepted/alarm)."""
    state = _current
    result = {"job": {}, "rerun": False, "delete": False, "vnodes": {}, "logs": list(state.logs)}
    params = object.__getattribute__(state.event, "_param") if state.event is not None else {}
    job = params.get("job")
    if job is not None:
        changed = dict(job._changed)
        for head in ("Resource_List", "resources_used"):
            resources = job._values[head]._changed
            if resources:
                changed[head] = dict(resources)
        result["job"] = changed
        # pbs_python writes no job actions for execjob_resize/execjob_attach.
        with_actions = state.event_type not in (EXECJOB_RESIZE, EXECJOB_ATTACH)
        result["rerun"] = bool(job._rerun) and with_actions
        result["delete"] = bool(job._delete) and with_actions
    # Per list as well: pbs_mom reports vnode_list changes and vnode_list_fail changes to
    # the server in separate requests, which the server treats differently (see
    # mockpbs.server.nodes.op_mom_node_update).
    result["vnodes_by_list"] = {}
    for table in ("vnode_list", "vnode_list_fail"):
        for name, vnode in (params.get(table) or {}).items():
            changes = vnode.changes()
            if changes:
                result["vnodes"].setdefault(name, {}).update(changes)
                result["vnodes_by_list"].setdefault(table, {})[name] = changes
    if state.event_type == EXECJOB_LAUNCH:
        original = state.launch_originals
        if dict(params["env"]) != original["env"]:
            result["env"] = dict(params["env"])
        if list(params["argv"]) != original["argv"]:
            result["argv"] = [str(a) for a in params["argv"]]
        if params["progname"] != original["progname"]:
            result["progname"] = params["progname"]
    return result
