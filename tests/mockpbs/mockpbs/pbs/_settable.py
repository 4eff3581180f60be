"""What a hook may set, per event, and the values PBS refuses: OpenPBS's
``is_attrib_val_settable`` (``src/lib/Libpython/pbs_python_svr_internal.c``) and its
checks of ``Execution_Time`` and ``run_count``."""
import time

from mockpbs.pbs import _state
from mockpbs.pbs._constants import (
    EXECJOB_ABORT, EXECJOB_ATTACH, EXECJOB_BEGIN, EXECJOB_END, EXECJOB_EPILOGUE, EXECJOB_LAUNCH,
    EXECJOB_POSTSUSPEND, EXECJOB_PRERESUME, EXECJOB_PRETERM, EXECJOB_PROLOGUE, EXECJOB_RESIZE,
    MODIFYJOB, QUEUEJOB)
from mockpbs.pbs._exc_types import (
    LAUNCH_SET_REFUSED, RESIZE_SET_REFUSED, BadAttributeValueError, NothingSettableError)

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
    event_type = _state.current.event_type
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
