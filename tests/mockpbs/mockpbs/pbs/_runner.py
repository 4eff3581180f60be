"""The runner's side of the ``pbs`` hook module: :func:`start_run` installs a fresh run
for :mod:`mockpbs.hookrun` (through ``pbs._start``), :func:`_job_freed` tells whether
pbs_python would have crashed and :func:`_outcome` reads what the hook changed."""
from mockpbs.pbs import _state
from mockpbs.pbs._base_types import pbs_env
from mockpbs.pbs._constants import (
    EVENT_TYPES, EXECHOST_PERIODIC, EXECHOST_STARTUP, EXECJOB_ATTACH, EXECJOB_LAUNCH, EXECJOB_PROLOGUE,
    EXECJOB_RESIZE, MOM_EVENTS)
from mockpbs.pbs._state import _RunState
from mockpbs.pbs._svr_types import _Event, _Job, _Vnode


def start_run(hook, event_name, context):
    """Install a fresh run: ``hook`` / ``event_name`` / ``context`` as in PROTOCOL.md.
    Returns the run's event; the module globals that depend on the hook (its config file,
    ``pbs_conf``) are ``pbs._start``'s."""
    state = _RunState()
    context = context or {}
    event_type = EVENT_TYPES[event_name]
    state.event_type = event_type
    state.hostname = context.get("hostname", "")
    if context.get("daemon") == "server":
        state.daemon_name = "Server@%s" % context.get("server", "")
    params = {}
    # exechost_startup / exechost_periodic have no job (pbs.event().job raises
    # EventIncompatibleError) but the local vnodes; exechost_periodic also a job_list (the
    # jobs on the host: none here).
    host_event = event_type in (EXECHOST_STARTUP, EXECHOST_PERIODIC)
    if context.get("job") is not None and not host_event:
        params["job"] = _Job(context["job"], context.get("failed_mom_list"),
                             context.get("succeeded_mom_list"), context.get("in_ms_mom", False))
    if event_type & MOM_EVENTS:
        params["vnode_list"] = {n: _Vnode(dict(v, name=v.get("name", n)))
                                for n, v in (context.get("vnode_list") or {}).items()}
    if event_type == EXECHOST_PERIODIC:
        params["job_list"] = {}
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
    _state.install(state)
    return state.event


def _job_freed():
    """True when the job ``release_nodes()`` returned was freed before the hook ended (see
    :class:`._state._BorrowedJob`): pbs_python would crash writing the hook's results. Call it when
    the hook's code has finished, while its module namespace is still alive."""
    return _state.current.borrowed.job_freed()


def _outcome():
    """What the hook did, in the result shape of PROTOCOL.md (without accepted/alarm)."""
    state = _state.current
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
