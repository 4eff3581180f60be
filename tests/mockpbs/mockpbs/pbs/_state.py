"""The state of the hook run (one per process, as in ``pbs_python``) and the module
functions that read it: ``pbs.event()``, ``pbs.logmsg()``, ``pbs.logjobmsg()``,
``pbs.get_local_nodename()``.

:data:`current` is the run's :class:`_RunState`; :func:`install` replaces it when a new
run starts (see :mod:`mockpbs.pbs._runner`). Read it as ``_state.current`` so that a
replaced state is seen.
"""
import sys
import weakref

from mockpbs import pbslog
from mockpbs import release_nodes as _release
from mockpbs.pbs._constants import _EVENT_CLASSES, _SEVERITIES
from mockpbs.pbs._exc_types import EventIncompatibleError


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
    (:meth:`._svr_types._Job._alias`) watched by a weak reference (CPython frees deterministically).
    pbs_python's count of the job is the references to the job and to its living aliases,
    less one per alias handed out; it is taken whenever an alias is freed and when the hook
    ends (:func:`._runner._job_freed`). A count of 0 or less means the job was freed.
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


current = _RunState()


def install(state):
    """Make ``state`` (a :class:`_RunState`) the current run's."""
    global current
    current = state


def event():
    """The event the running hook handles."""
    return current.event


def logmsg(loglevel, message):
    """Write ``message`` to the daemon log as ``Hook;<daemon name>;message``.

    ``loglevel``: ``LOG_DEBUG``/``LOG_WARNING``/``LOG_ERROR`` (event class 0x0006) or an
    ``EVENT_*`` class (used as is). Anything else raises TypeError, as PBS."""
    if not isinstance(loglevel, int) or (loglevel not in _SEVERITIES and loglevel not in _EVENT_CLASSES):
        raise TypeError("Invalid severity or eventtype value <%s>" % (loglevel,))
    event_class = loglevel if loglevel in _EVENT_CLASSES else (pbslog.PBSEVENT_ADMIN | pbslog.PBSEVENT_SYSTEM)
    current.logs.append([event_class, pbslog.OBJ_HOOK, current.daemon_name, str(message)])


def logjobmsg(jobid, message):
    """Write ``message`` to the daemon log as ``Job;<jobid>;message`` (PBSEVENT_JOB)."""
    if not jobid:
        raise ValueError("no jobid given!")
    current.logs.append([pbslog.PBSEVENT_JOB, pbslog.OBJ_JOB, str(jobid), str(message)])


def _job_log(jobid, message):
    current.logs.append([pbslog.PBSEVENT_DEBUG2, pbslog.OBJ_JOB, str(jobid), message])


def get_local_nodename():
    """The name of the host (mom) the hook runs on."""
    return current.hostname
