"""The ``pbs`` hook module, as PBS hooks see it (OpenPBS 23.06), for the mock.

Inside a hook run by :mod:`mockpbs.hookrun`, ``import pbs`` gives this module. It covers
what PP-928 hooks use (PP-928 "Reliable job startup", interfaces 5-9):

- ``pbs.event()`` with ``type``, ``hook_name``, ``job``, ``vnode_list``,
  ``vnode_list_fail`` (execjob_prologue/launch), ``env``/``argv``/``progname``
  (execjob_launch, the only writable event parameters), ``requestor``,
  ``requestor_host``, ``accept()``, ``reject(msg)`` (both raise ``SystemExit``, as PBS);
- the job object: attributes as ``qstat -f`` names them (unset ones read as None),
  ``Resource_List`` (``["select"]`` is a :class:`select`), ``in_ms_mom()``, ``rerun()``,
  ``delete()``, ``release_nodes(keep_select=...)`` (interface 8, see
  :mod:`mockpbs.release_nodes`; its result is a borrowed reference, as in pbs_python: a
  hook that lets it be freed crashes, see :class:`._state._BorrowedJob`), ``failed_mom_list`` /
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

Like pbs_python's ``pbs`` (``pbs/v1/_base_types.py``, ``_svr_types.py``, ``_exc_types.py``),
this is a package whose names all come from its modules:

- :mod:`._constants`: event types, log levels, vnode states;
- :mod:`._exc_types`: the exceptions and the texts of refused sets;
- :mod:`._base_types`: the value types (``select``, ``exec_vnode``, ``pbs_env``...);
- :mod:`._state`: the run's state and the functions that read it (``event()``,
  ``logmsg()``...), with :class:`._state._BorrowedJob`;
- :mod:`._settable`: what a hook may set, per event;
- :mod:`._svr_types`: the job, its resources, vnodes, the event and the server;
- :mod:`._runner`: what :mod:`mockpbs.hookrun` calls (``_start``, ``_job_freed``,
  ``_outcome``).
"""
from mockpbs import pbsconf
from mockpbs.pbs import _runner, _state
from mockpbs.pbs._base_types import (
    exec_host, exec_vnode, hold_types, pbs_env, place, select, select_syntax_ok)
from mockpbs.pbs._constants import (
    EVENT_ADMIN, EVENT_DEBUG, EVENT_DEBUG2, EVENT_DEBUG3, EVENT_DEBUG4, EVENT_ERROR, EVENT_FORCE,
    EVENT_JOB, EVENT_JOB_USAGE, EVENT_RESV, EVENT_SCHED, EVENT_SECURITY, EVENT_SYSTEM, EVENT_TYPES,
    EXECHOST_PERIODIC, EXECHOST_STARTUP, EXECJOB_ABORT, EXECJOB_ATTACH, EXECJOB_BEGIN, EXECJOB_END,
    EXECJOB_EPILOGUE, EXECJOB_LAUNCH, EXECJOB_POSTSUSPEND, EXECJOB_PRERESUME, EXECJOB_PRETERM,
    EXECJOB_PROLOGUE, EXECJOB_RESIZE, JOBOBIT, LOG_DEBUG, LOG_ERROR, LOG_WARNING, MANAGEMENT,
    MODIFYJOB, MODIFYRESV, MODIFYVNODE, MOM_EVENTS, MOVEJOB, ND_BUSY, ND_DELETED, ND_DOWN, ND_FREE,
    ND_INIT, ND_JOBBUSY, ND_JOB_EXCLUSIVE, ND_MAINTENANCE, ND_MARKEDDOWN, ND_NEEDS_HELLOSVR,
    ND_NEED_ADDRS, ND_NEED_CREDENTIALS, ND_OFFLINE, ND_OFFLINE_BY_MOM, ND_PROV, ND_RESVEXCL,
    ND_SLEEP, ND_STALE, ND_STATE_FREE, ND_STATE_UNKNOWN, ND_UNRESOLVABLE, ND_WAIT_PROV, PERIODIC,
    PROVISION, QUEUEJOB, RESV_BEGIN, RESV_CONFIRM, RESV_END, RESVSUB, RUNJOB, state_to_text,
    text_to_state)
from mockpbs.pbs._exc_types import (
    LAUNCH_SET_REFUSED, RESIZE_SET_REFUSED, BadAttributeValueError, BadAttributeValueTypeError,
    BadResourceValueError, BadResourceValueTypeError, EventIncompatibleError, NothingSettableError,
    UnsetAttributeNameError, UnsetResourceNameError)
from mockpbs.pbs._runner import _job_freed, _outcome  # noqa: F401  (hookrun's interface)
from mockpbs.pbs._state import event, get_local_nodename, logjobmsg, logmsg
from mockpbs.pbs._svr_types import server

__all__ = [
    "BadAttributeValueError", "BadAttributeValueTypeError", "BadResourceValueError",
    "BadResourceValueTypeError", "EVENT_ADMIN", "EVENT_DEBUG", "EVENT_DEBUG2", "EVENT_DEBUG3",
    "EVENT_DEBUG4", "EVENT_ERROR", "EVENT_FORCE", "EVENT_JOB", "EVENT_JOB_USAGE", "EVENT_RESV",
    "EVENT_SCHED", "EVENT_SECURITY", "EVENT_SYSTEM", "EVENT_TYPES", "EXECHOST_PERIODIC",
    "EXECHOST_STARTUP", "EXECJOB_ABORT", "EXECJOB_ATTACH", "EXECJOB_BEGIN", "EXECJOB_END",
    "EXECJOB_EPILOGUE", "EXECJOB_LAUNCH", "EXECJOB_POSTSUSPEND", "EXECJOB_PRERESUME",
    "EXECJOB_PRETERM", "EXECJOB_PROLOGUE", "EXECJOB_RESIZE", "EventIncompatibleError", "JOBOBIT",
    "LAUNCH_SET_REFUSED", "LOG_DEBUG", "LOG_ERROR", "LOG_WARNING", "MANAGEMENT", "MODIFYJOB",
    "MODIFYRESV", "MODIFYVNODE", "MOM_EVENTS", "MOVEJOB", "ND_BUSY", "ND_DELETED", "ND_DOWN",
    "ND_FREE", "ND_INIT", "ND_JOBBUSY", "ND_JOB_EXCLUSIVE", "ND_MAINTENANCE", "ND_MARKEDDOWN",
    "ND_NEEDS_HELLOSVR", "ND_NEED_ADDRS", "ND_NEED_CREDENTIALS", "ND_OFFLINE", "ND_OFFLINE_BY_MOM",
    "ND_PROV", "ND_RESVEXCL", "ND_SLEEP", "ND_STALE", "ND_STATE_FREE", "ND_STATE_UNKNOWN",
    "ND_UNRESOLVABLE", "ND_WAIT_PROV", "NothingSettableError", "PERIODIC", "PROVISION", "QUEUEJOB",
    "RESIZE_SET_REFUSED", "RESVSUB", "RESV_BEGIN", "RESV_CONFIRM", "RESV_END", "RUNJOB",
    "UnsetAttributeNameError", "UnsetResourceNameError", "event", "exec_host", "exec_vnode",
    "get_local_nodename", "hold_types", "hook_config_filename", "logjobmsg", "logmsg", "pbs_conf",
    "pbs_env", "place", "select", "select_syntax_ok", "server", "state_to_text", "text_to_state",
]

# The current run's state and the hook's globals: :func:`_start` rebinds all three.
_current = _state.current
hook_config_filename = None
pbs_conf = {}


def _start(hook, event_name, context):
    """Install a fresh run: ``hook`` / ``event_name`` / ``context`` as in PROTOCOL.md.
    Returns the run's event (``pbs.event()``); sets ``pbs.hook_config_filename`` (the
    hook's config file or None) and ``pbs.pbs_conf`` (``pbs.conf``'s settings)."""
    global _current, hook_config_filename, pbs_conf
    event_of_run = _runner.start_run(hook, event_name, context)
    _current = _state.current
    hook_config_filename = hook.get("config")
    pbs_conf = pbsconf.load()
    return event_of_run
