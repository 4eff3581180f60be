"""Nodes (vnodes) on the server: their state and listing, the amounts jobs take from
them, the moms' reports (``mom_hello``, pings, ``mom_node_update``) and the client
operations ``stat_nodes`` and ``node_mark`` (pbsnodes).

A vnode is a flat attribute dict (``state.nodes[name]``) with the server's private keys
``_down``, ``_offline`` and, on the vnodes a multi-vnode mom reported, ``_natural`` (the
name of the mom's natural vnode). Functions take the server context ``ctx`` where they
need the state; callers hold ``ctx.lock`` unless a function says it takes it.
"""
import socket

from mockpbs import attributes, pbslog, selectspec, wire
from mockpbs.server import context, hooks, qmgr_attrs, scheduler
from mockpbs.server.errors import PBSE_BADATVAL, PBSE_PERM, PBSE_UNKNODE, PbsError


def new_node(ctx, name):
    """A fresh vnode ``name`` as ``create node`` makes it: down until its mom answers."""
    return {
        "Mom": name, "Port": str(ctx.mom_port), "pbs_version": "unavailable", "ntype": "PBS",
        "state": "down", "resources_available.host": name, "resources_available.vnode": name,
        "resv_enable": "True", "sharing": "default_shared",
        "last_state_change_time": str(context.now()), "_down": True, "_offline": False,
    }


def refresh_state(node):
    """Recompute ``node["state"]`` (down, offline, job-busy or free) from its flags and
    jobs; a change stamps ``last_state_change_time``."""
    flags = []
    if node.get("_down"):
        flags.append("down")
    if node.get("_offline"):
        flags.append("offline")
    if not flags:
        free = scheduler.vnode_free(node)
        jobs = node.get("jobs")
        flags.append("job-busy" if jobs and free.get("ncpus", 1) <= 0 else "free")
    text = ",".join(flags)
    if node.get("state") != text:
        node["state"] = text
        node["last_state_change_time"] = str(context.now())


def node_listing(node):
    """``[(name, value), ...]`` of ``node`` as pbsnodes and qmgr list it (private keys
    left out, pcpus, zero resources_assigned and license filled in)."""
    values = {k: v for k, v in node.items() if not k.startswith("_")}
    if "resources_available.ncpus" in values:
        values["pcpus"] = values["resources_available.ncpus"]
    for res in attributes.NODE_ASSIGNED_SHOWN:
        key = "resources_assigned." + res
        if key not in values:
            values[key] = "0kb" if res in ("accelerator_memory", "hbmem", "mem", "vmem") else "0"
    if not node.get("_down"):
        values["license"] = "l"
    return attributes.ordered_items("node", values)


def set_node_attr(node, attr, op, value):
    """Apply ``attr op value`` (qmgr ``set node``) to ``node``; ``state`` only sets or
    clears offline. Raises PbsError (PBSE_BADATVAL)."""
    if attr == "state":
        words = [w for w in value.split(",") if w]
        if any(w not in attributes.NODE_STATES for w in words):
            raise PbsError(PBSE_BADATVAL)
        if op == "-=":
            if "offline" in words:
                node["_offline"] = False
        elif op == "+=":
            if "offline" in words:
                node["_offline"] = True
        else:
            node["_offline"] = "offline" in words
        return
    if attributes.attribute_kind("node", attr) == "ro":
        raise PbsError(PBSE_BADATVAL, "Cannot set attribute, read only or insufficient permission")
    qmgr_attrs.apply_attr("node", node, attr, op, value)


def family(ctx, name):
    """``name`` plus the vnodes its mom reported in ``mom_hello`` (multi-vnode moms)."""
    return [name] + [n for n, node in ctx.state.nodes.items() if node.get("_natural") == name]


def ping_node(ctx, name):
    """Ping one mom (its natural vnode ``name``): connection refused (or unreachable) ->
    every vnode of the mom down; a mom that accepts but never answers keeps its state;
    an answer -> up (resources of the natural vnode taken from the reply)."""
    with ctx.lock:
        node = ctx.state.nodes.get(name)
        if node is None:
            return
        host, port = node.get("Mom", name), int(node.get("Port", ctx.mom_port))
    try:
        reply = wire.request(host, port, {"op": "ping"}, timeout=3)
    except wire.WireError as exc:
        if isinstance(exc.__cause__, (socket.timeout, TimeoutError)):
            return
        with ctx.lock:
            changed = False
            for each in family(ctx, name) if name in ctx.state.nodes else []:
                vnode = ctx.state.nodes[each]
                if not vnode.get("_down"):
                    vnode["_down"] = True
                    refresh_state(vnode)
                    ctx.log.record(pbslog.PBSEVENT_SYSTEM, pbslog.OBJ_NODE, each,
                                   "node down: communication closed")
                    changed = True
            if changed:
                ctx.state.save()
        return
    with ctx.lock:
        node = ctx.state.nodes.get(name)
        if node is None:
            return
        mark_up(node, reply.get("resources_available"))
        for each in family(ctx, name)[1:]:
            mark_up(ctx.state.nodes[each], None)
        ctx.state.save()
    ctx.wake_scheduler()


def mark_up(node, resources):
    """``node`` is up, with the ``resources`` (dict or None) its mom reports available."""
    for key, value in (resources or {}).items():
        node["resources_available." + key] = str(value)
    node["pbs_version"] = node.get("pbs_version") if node.get("pbs_version") != "unavailable" else "23.06.06"
    node["_down"] = False
    refresh_state(node)


def ping_all(ctx):
    """Ping every mom (one natural vnode each); takes ``ctx.lock`` itself."""
    with ctx.lock:
        names = [n for n, node in ctx.state.nodes.items() if not node.get("_natural")]
    for name in names:
        ping_node(ctx, name)


def op_stat_nodes(ctx, message):
    with ctx.lock:
        names = message.get("names") or list(ctx.state.nodes)
        out = []
        for name in names:
            node = ctx.state.nodes.get(name)
            if node is None:
                raise PbsError(PBSE_UNKNODE, "Unknown node %s" % name)
            out.append({"name": name, "items": node_listing(node)})
        return {"nodes": out}


def op_node_mark(ctx, message):
    if not ctx.is_manager(message):
        raise PbsError(PBSE_PERM)
    with ctx.lock:
        for name in message["names"]:
            node = ctx.state.nodes.get(name)
            if node is None:
                raise PbsError(PBSE_UNKNODE, "Unknown node %s" % name)
            action = message["action"]
            if action == "offline":
                node["_offline"] = True
            elif action == "clear":
                node["_offline"] = False
            if message.get("comment") is not None:
                if message["comment"]:
                    node["comment"] = message["comment"]
                else:
                    node.pop("comment", None)
            refresh_state(node)
        ctx.state.save()
    ctx.wake_scheduler()
    return {}


def primary_mom(ctx, job):
    first = selectspec.parse_exec_vnode(job["exec_vnode"])[0][0][0]
    node = ctx.state.nodes[first]
    return node.get("Mom", first), int(node.get("Port", ctx.mom_port))


def vnodes_payload(ctx, job):
    out = {}
    for chunk in selectspec.parse_exec_vnode(job.get("exec_vnode", "")):
        for name, _unused in chunk:
            node = ctx.state.nodes.get(name, {})
            out[name] = {
                "host": node.get("resources_available.host", name), "mom": node.get("Mom", name),
                "port": int(node.get("Port", ctx.mom_port)),
                "resources_available": {k.split(".", 1)[1]: v for k, v in node.items()
                                        if k.startswith("resources_available.")},
            }
    return out


def assign(ctx, job, sign, nodes=None):
    """Add (sign=1) or release (sign=-1) the job's exec_vnode amounts on its vnodes of
    ``nodes`` (``{name: flat attribute dict}``; None: the server's own nodes, else e.g.
    a scheduling cycle's view of them)."""
    nodes = ctx.state.nodes if nodes is None else nodes
    for chunk in selectspec.parse_exec_vnode(job.get("exec_vnode", "")):
        for name, resources in chunk:
            node = nodes.get(name)
            if node is None:
                continue
            for key, value in resources:
                field = "resources_assigned." + key
                if key in selectspec.SIZE_RESOURCES:
                    total = selectspec.size_to_kb(node.get(field, "0kb")) + sign * selectspec.size_to_kb(value)
                    node[field] = "%dkb" % max(total, 0)
                else:
                    try:
                        total = int(node.get(field, "0")) + sign * int(value)
                    except ValueError:
                        continue
                    node[field] = str(max(total, 0))
            jobs = [j for j in node.get("jobs", "").split(", ") if j]
            mine = [j for j in jobs if j.startswith(job["id"] + "/")]
            if sign > 0:
                jobs.append("%s/%d" % (job["id"], len(mine)))
            else:
                jobs = [j for j in jobs if j not in mine]
            if jobs:
                node["jobs"] = ", ".join(jobs)
            else:
                node.pop("jobs", None)
            if sign > 0:
                node["last_used_time"] = str(context.now())
            refresh_state(node)


def job_slots_in_use(ctx, jobid):
    """``{natural vnode: {job index}}`` held by the jobs other than ``jobid`` that hold
    nodes (running or exiting), for the exec_host of a job placed now."""
    return scheduler.job_slots_in_use(other.get("exec_host") for other in ctx.state.jobs.values()
                                      if other.get("id") != jobid and other.get("job_state") in ("R", "E"))


def release_nodes(ctx, job, log_clearing=False):
    """Give the job's vnodes back. ``log_clearing``: log ``clearing job ... from node
    ...`` per vnode, as OpenPBS deallocate_job() does when released sisters report
    after release_nodes() (transcript g); a job's end or requeue logs no such line."""
    seen = set()
    for chunk in selectspec.parse_exec_vnode(job.get("exec_vnode", "")):
        for name, _unused in chunk:
            if log_clearing and name not in seen:
                seen.add(name)
                ctx.log.record(pbslog.PBSEVENT_DEBUG2, pbslog.OBJ_NODE, name,
                               "clearing job %s from node %s" % (job["id"], name))
    assign(ctx, job, -1)


def find_node_for_mom(ctx, name):
    nodes = ctx.state.nodes
    if name in nodes:
        return name, nodes[name]
    for node_name, node in nodes.items():
        if node.get("Mom") == name:
            return node_name, node
    return None, None


def op_mom_hello(ctx, message):
    """A mom (re)started. ``vnodes`` ({name: {"resources_available": {...}, other
    attribute: value}}, the natural vnode included) creates or updates one vnode per
    entry, each with this mom's ``Mom``/``Port``; without it ``resources_available``
    updates the natural vnode."""
    with ctx.lock:
        name, node = find_node_for_mom(ctx, message.get("node", ""))
        if node is None:
            # kept until "create node <name>": a mom usually starts before its node exists
            ctx.pending_hellos[message.get("node", "")] = message
            return {"known": False}
        ctx.pending_hellos.pop(message.get("node", ""), None)
        vnodes = message.get("vnodes") or {}
        natural = vnodes.get(name) or vnodes.get(message.get("node")) or {}
        mark_up(node, natural.get("resources_available") or message.get("resources_available"))
        apply_vnode_attrs(node, natural)
        for vname, entry in vnodes.items():
            if vname in (name, message.get("node")):
                continue
            update_reported_vnode(ctx, name, node, vname, entry)
        ctx.log.record(pbslog.PBSEVENT_SYSTEM, pbslog.OBJ_NODE, name, "mom hello: node up")
        ctx.state.save()
        target = (node.get("Mom", name), int(node.get("Port", ctx.mom_port)))
    hooks.push_all_hooks(ctx, *target, held=message.get("hook_checksums"))
    ctx.wake_scheduler()
    return {"known": True}


def apply_vnode_attrs(vnode, entry):
    for key, value in (entry or {}).items():
        if key == "resources_available" or key.startswith("_"):
            continue
        if key in ("sharing", "comment", "priority", "queue", "resv_enable"):
            vnode[key] = str(value)


def update_reported_vnode(ctx, natural_name, natural, vname, entry):
    vnode = ctx.state.nodes.get(vname)
    if vnode is None:
        vnode = new_node(ctx, vname)
        vnode["Mom"] = natural.get("Mom", natural_name)
        vnode["Port"] = natural.get("Port", str(ctx.mom_port))
        ctx.state.nodes[vname] = vnode
        ctx.log.record(pbslog.PBSEVENT_ADMIN, pbslog.OBJ_NODE, vname,
                       "vnode created from the report of mom %s" % natural_name)
    vnode["_natural"] = natural_name
    mark_up(vnode, (entry or {}).get("resources_available"))
    apply_vnode_attrs(vnode, entry)


def op_mom_node_update(ctx, message):
    """A mom hook changed vnode ``vnode``. A change made through ``vnode_list``
    (``hook_list``) by a mom (``mom``: its host name) that does not own the vnode is
    refused, as OpenPBS's ``update2_to_vnode()`` refuses an IS_UPDATE_FROM_HOOK request
    (src/server/node_manager.c): a DEBUG2 line under the sending mom, nothing changed,
    reply ``{"refused": text}``. Changes through ``vnode_list_fail`` (IS_UPDATE_FROM_HOOK2)
    and reports without ``hook_list`` apply to any vnode."""
    with ctx.lock:
        name = message.get("vnode")
        node = ctx.state.nodes.get(name)
        if node is None:
            raise PbsError(PBSE_UNKNODE, "Unknown node %s" % name)
        refusal = hook_update_refusal(node, name, message)
        if refusal is not None:
            ctx.log.record(pbslog.PBSEVENT_DEBUG2, pbslog.OBJ_NODE, message["mom"], refusal)
            return {"refused": refusal}
        state = message.get("state")
        if state == "offline":
            node["_offline"] = True
        elif state == "free":
            node["_offline"] = False
        if message.get("comment"):
            node["comment"] = message["comment"]
        elif "comment" in message and state == "free":
            node.pop("comment", None)
        for key, value in (message.get("resources_available") or {}).items():
            node["resources_available." + key] = str(value)
        refresh_state(node)
        ctx.log.record(pbslog.PBSEVENT_DEBUG2, pbslog.OBJ_NODE, name,
                       "Updated vnode %s's attribute state=%s per mom hook request" % (name, state))
        ctx.state.save()
    ctx.wake_scheduler()
    return {}


def hook_update_refusal(node, name, message):
    """The text refusing a mom hook's change of vnode ``name`` (dict ``node``), or None
    when it may be applied (see :func:`op_mom_node_update`). The vnode's owner is its
    ``Mom`` (a host name, or the address ``create node`` gave) or its host."""
    sender = message.get("mom")
    owners = (node.get("Mom", name), node.get("resources_available.host"))
    if message.get("hook_list") != "vnode_list" or not sender or sender in owners:
        return None
    return "Not allowed to update vnode '%s', as it is owned by a different mom" % name
