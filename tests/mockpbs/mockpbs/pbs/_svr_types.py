"""The objects a hook handles (pbs_python's ``pbs/v1/_svr_types.py``): the job
(``pbs.event().job``) and its resources, vnodes, the event (``pbs.event()``) and the
server (``pbs.server()``). Every set goes through :mod:`mockpbs.pbs._settable`."""
import weakref

from mockpbs import release_nodes as _release
from mockpbs.pbs import _state
from mockpbs.pbs._base_types import (
    _INT_JOB_ATTRIBUTES, _TYPED_JOB_ATTRIBUTES, _TYPED_RESOURCES, _to_text, pbs_env)
from mockpbs.pbs._constants import (
    EVENT_TYPES, EXECJOB_LAUNCH, EXECJOB_PROLOGUE, LOG_DEBUG, MOM_EVENTS, state_to_text, text_to_state)
from mockpbs.pbs._exc_types import BadAttributeValueError, EventIncompatibleError
from mockpbs.pbs._settable import _check_settable, _checked_job_value
from mockpbs.pbs._state import _job_log, logmsg


class _Resources:
    """A ``Resource_List`` / ``resources_available`` mapping. Unset resources read as None;
    setting one records the change (unless the owner is read-only). The owner is held by a
    weak reference, so that the job's reference count is the hook's alone (see
    :class:`._state._BorrowedJob`)."""

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


class _AttributeObject:
    """What a job and a vnode share: attributes read from ``_values`` (an unset one reads as
    None, as in pbs_python) and the settable check of their kind (``_KIND``)."""

    _KIND = None

    def _check_writable(self, name, kind=None):
        _check_settable(self._readonly, kind or self._KIND, name)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._values.get(name)


class _Job(_AttributeObject):
    """``pbs.event().job``: attributes from the job dict (strings as ``qstat -f`` shows them)."""

    _KIND = "job"

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
        if (_state.current.event_type & MOM_EVENTS) == 0:
            raise NotImplementedError("rerun(): only for mom hooks")
        object.__setattr__(self, "_rerun", True)

    def delete(self):
        """Ask PBS to delete the job once the hook ends (mom hooks only); like ``rerun()``,
        a job action pbs_python reports whether the hook accepts or rejects."""
        if (_state.current.event_type & MOM_EVENTS) == 0:
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
        the returned object referenced until it ends, see :class:`._state._BorrowedJob`."""
        if (_state.current.event_type & (EXECJOB_PROLOGUE | EXECJOB_LAUNCH)) == 0:
            return None
        ajob = _state.current.event.job
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
            str(keep_select), _state.current.vnode_hosts, self.succeeded_mom_list, self.failed_mom_list,
            _state.current.known_resources())
        _state.current.logs.extend(outcome.logs)
        if not outcome.ok:
            return None
        if outcome.changed:
            # PBS sets these even where the job is otherwise not writable by the hook.
            for name in ("exec_vnode", "exec_host", "exec_host2", "schedselect"):
                value = getattr(outcome, name).rstrip("+")
                self._values[name] = self._convert(name, value)
                self._changed[name] = value
        return _state.current.borrowed.hand_out(self)


class _Vnode(_AttributeObject):
    """A ``pbs.vnode``: ``name``, ``state`` (ND_* mask), ``comment``, ``resources_available``..."""

    _KIND = "vnode"

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
        _state.current.accepted = True
        _state.current.reject_msg = None
        raise SystemExit(str(ecode))

    def reject(self, emsg="", ecode=255):
        """End the hook; PBS refuses the request and logs ``emsg``."""
        _state.current.accepted = False
        _state.current.reject_msg = str(emsg)
        raise SystemExit(str(ecode))


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
    return _Server(_state.current.server_name, _state.current.server_attributes)
