"""qmgr operations on the server, sched, queue and node objects (hooks: ``qmgr_hooks``),
and ``stat_server``.

``op_qmgr(ctx, message)`` takes a parsed qmgr directive (``mockpbs.cli.qmgr_lang.Command.to_message``):
managers only for create/delete/set/unset/import, every named attribute checked before
anything is applied, the state saved and the scheduler woken after a change.
"""
import threading
import time

from mockpbs import attributes, pbslog
from mockpbs.server import models, nodes, qmgr_attrs, qmgr_hooks
from mockpbs.server.errors import (PBSE_BADATVAL, PBSE_IVALREQ, PBSE_NOATTR, PBSE_NODEEXIST, PBSE_PERM,
                                   PBSE_QUEEXIST, PBSE_UNKNODE, PBSE_UNKQUE, PbsError)

THROUGHPUT_DEPRECATED = "'throughput_mode' is being deprecated, it is recommended to use 'job_run_wait'"
READ_COMMANDS = ("list", "print", "export")


def op_qmgr(ctx, message):
    """A qmgr directive (see the module docstring); the reply of the object's handler."""
    command = message["command"]
    objtype = message["object"]
    if command in ("create", "delete", "set", "unset", "import") and not ctx.is_manager(message):
        raise PbsError(PBSE_PERM)
    if objtype not in ("hook", "pbshook") and any(
            not attributes.attribute_known(objtype, name) for name in qmgr_attrs.requested(message)):
        raise PbsError(PBSE_NOATTR)   # before anything of the request is applied
    with ctx.lock:
        if objtype in ("hook", "pbshook"):
            reply = qmgr_hooks.qmgr_hook(ctx, message, command, objtype)
        else:
            reply = QMGR_OBJECTS[objtype](ctx, message, command)
        if command not in READ_COMMANDS:
            ctx.state.save()
    if command not in READ_COMMANDS:
        ctx.wake_scheduler()
    return reply


def server_listing(ctx):
    state = ctx.state
    attrs = dict(state.server)
    counts = {"Transit": 0, "Queued": 0, "Held": 0, "Waiting": 0, "Running": 0, "Exiting": 0, "Begun": 0}
    names = {"Q": "Queued", "H": "Held", "W": "Waiting", "R": "Running", "E": "Exiting", "T": "Transit"}
    ncpus = nodect = 0
    live = [j for j in state.jobs.values() if j.get("job_state") != "F"]
    for job in live:
        key = names.get(job.get("job_state"))
        if key:
            counts[key] += 1
        if job.get("job_state") == "R":
            ncpus += int(job["Resource_List"].get("ncpus", "0"))
            nodect += int(job["Resource_List"].get("nodect", "0"))
    attrs["total_jobs"] = str(len(live))
    attrs["state_count"] = "".join("%s:%d " % kv for kv in counts.items())
    attrs["resources_assigned.ncpus"] = str(ncpus)
    attrs["resources_assigned.nodect"] = str(nodect)
    attrs["server_host"] = ctx.host
    return attributes.ordered_items("server", attrs)


def qmgr_server(ctx, message, command):
    state = ctx.state
    if command == "list":
        items = qmgr_attrs.filter_items(server_listing(ctx), qmgr_attrs.requested(message))
        return {"objects": [{"label": "Server", "name": ctx.host, "items": items}]}
    if command == "print":
        queues = [(name, queue_print_items(attrs)) for name, attrs in state.queues.items()]
        server_items = [(k, v) for k, v in attributes.ordered_items("server", state.server)
                        if attributes.attribute_kind("server", k) != "ro"
                        and not k.startswith("resources_assigned")]
        server_items = qmgr_attrs.filter_items(server_items, qmgr_attrs.requested(message))
        return {"queues": queues, "server": server_items}
    if command == "set":
        for name, op, value in message["attrs"]:
            qmgr_attrs.apply_attr("server", state.server, name, op, value)
            if name == "default_qsub_arguments":
                bump_qsub_args_version(ctx)
        ctx.log.svr(pbslog.PBSEVENT_ADMIN, "Server@%s" % ctx.host,
                    "svr_set at request of %s" % ctx.requestor(message))
        return {}
    if command == "unset":
        defaults = models.default_server_attrs(ctx.host)
        for name, _unused, _unused in message["attrs"]:
            if attributes.attribute_kind("server", name) == "ro":
                raise PbsError(PBSE_BADATVAL)
            if name in defaults:
                state.server[name] = defaults[name]
            else:
                state.server.pop(name, None)
            if name == "default_qsub_arguments":
                bump_qsub_args_version(ctx)
        return {}
    raise PbsError(PBSE_IVALREQ)


def bump_qsub_args_version(ctx):
    ctx.state.qsub_args_version = "%d" % time.time_ns()


def log_sched_attr(ctx, verb, attr, value):
    ctx.log.record(pbslog.PBSEVENT_ADMIN, "Sched", "Server@%s" % ctx.host,
                   "attributes %s: %s = %s" % (verb, attr, value))


def qmgr_sched(ctx, message, command):
    state = ctx.state
    name = message.get("name") or "default"
    if name != "default":
        if command == "create":
            raise PbsError(PBSE_IVALREQ)
        raise PbsError(15214, "Unknown Scheduler")
    if command == "list":
        items = qmgr_attrs.filter_items(attributes.ordered_items("sched", state.sched), qmgr_attrs.requested(message))
        return {"objects": [{"label": "Sched", "name": "default", "items": items}]}
    if command == "print":
        return {"sched": attributes.ordered_items("sched", state.sched)}
    if command == "set":
        for attr, op, value in message["attrs"]:
            if attr == "job_run_wait":
                if value not in attributes.JOB_RUN_WAIT_VALUES:
                    raise PbsError(PBSE_BADATVAL)
                state.sched["job_run_wait"] = value
                if value == "none":
                    state.sched.pop("throughput_mode", None)
                else:
                    state.sched["throughput_mode"] = "True" if value == "runjob_hook" else "False"
            elif attr == "throughput_mode":
                flag = models.normalize_value("sched", attr, value)
                ctx.log.record(pbslog.PBSEVENT_ADMIN, pbslog.OBJ_REQ, "default", THROUGHPUT_DEPRECATED)
                state.sched["throughput_mode"] = flag
                state.sched["job_run_wait"] = "runjob_hook" if flag == "True" else "execjob_hook"
            else:
                qmgr_attrs.apply_attr("sched", state.sched, attr, op, value)
            log_sched_attr(ctx, "set", attr, value)
        return {}
    if command == "unset":
        defaults = models.default_sched_attrs(ctx.host, state.pbs_home)
        for attr, _unused, _unused in message["attrs"]:
            if attr in ("job_run_wait", "throughput_mode"):
                state.sched["job_run_wait"] = defaults["job_run_wait"]
                state.sched["throughput_mode"] = defaults["throughput_mode"]
            elif attr in defaults:
                state.sched[attr] = defaults[attr]
            else:
                state.sched.pop(attr, None)
            log_sched_attr(ctx, "unset", attr, "")
        return {}
    raise PbsError(PBSE_IVALREQ)


def queue_listing(ctx, name, attrs):
    values = dict(attrs)
    jobs = [j for j in ctx.state.jobs.values() if j.get("queue") == name and j.get("job_state") != "F"]
    counts = {"Transit": 0, "Queued": 0, "Held": 0, "Waiting": 0, "Running": 0, "Exiting": 0, "Begun": 0}
    names = {"Q": "Queued", "H": "Held", "W": "Waiting", "R": "Running", "E": "Exiting"}
    for job in jobs:
        if job.get("job_state") in names:
            counts[names[job["job_state"]]] += 1
    values["total_jobs"] = str(len(jobs))
    values["state_count"] = "".join("%s:%d " % kv for kv in counts.items())
    return attributes.ordered_items("queue", values)


def queue_print_items(attrs):
    return [(k, v) for k, v in attributes.ordered_items("queue", attrs)
            if attributes.attribute_kind("queue", k) != "ro"]


def qmgr_queue(ctx, message, command):
    state = ctx.state
    name = message.get("name")
    if command == "create":
        if name in state.queues:
            raise PbsError(PBSE_QUEEXIST)
        attrs = {}
        for attr, op, value in message["attrs"]:
            qmgr_attrs.apply_attr("queue", attrs, attr, op, value)
        state.queues[name] = attrs
        return {}
    names = [name] if name else list(state.queues)
    for each in names:
        if each not in state.queues:
            raise PbsError(PBSE_UNKQUE)
    if command == "list":
        return {"objects": [{"label": "Queue", "name": n,
                             "items": qmgr_attrs.filter_items(queue_listing(ctx, n, state.queues[n]),
                                                              qmgr_attrs.requested(message))} for n in names]}
    if command == "print":
        return {"queues": [(n, queue_print_items(state.queues[n])) for n in names]}
    if command == "delete":
        if any(j.get("queue") == name for j in state.jobs.values() if j.get("job_state") != "F"):
            raise PbsError(15052, "Queue is not empty")
        del state.queues[name]
        return {}
    for each in names:
        attrs = state.queues[each]
        for attr, op, value in message["attrs"]:
            if command == "set":
                qmgr_attrs.apply_attr("queue", attrs, attr, op, value)
            else:
                attrs.pop(attr, None)
    return {}


def qmgr_node(ctx, message, command):
    state = ctx.state
    name = message.get("name")
    if command == "create":
        if name in state.nodes:
            raise PbsError(PBSE_NODEEXIST)
        node = nodes.new_node(ctx, name)
        for attr, op, value in message["attrs"]:
            nodes.set_node_attr(node, attr, op, value)
        state.nodes[name] = node
        nodes.refresh_state(node)
        ctx.log.record(pbslog.PBSEVENT_ADMIN, pbslog.OBJ_NODE, name,
                       "node created at request of %s" % ctx.requestor(message))
        hello = ctx.pending_hellos.get(name)
        if hello is not None:
            threading.Thread(target=nodes.op_mom_hello, args=(ctx, hello), daemon=True).start()
        else:
            threading.Thread(target=nodes.ping_node, args=(ctx, name), daemon=True).start()
        return {}
    names = [name] if name else list(state.nodes)
    for each in names:
        if each not in state.nodes:
            raise PbsError(PBSE_UNKNODE)
    if command == "list":
        return {"objects": [{"label": "Node", "name": n,
                             "items": qmgr_attrs.filter_items(nodes.node_listing(state.nodes[n]),
                                                              qmgr_attrs.requested(message))} for n in names]}
    if command == "print":
        out = []
        for n in names:
            node = state.nodes[n]
            suffix = ""
            if node.get("Mom") != n:
                suffix += " Mom=%s" % node["Mom"]
            if node.get("Port") != str(ctx.mom_port):
                suffix += " Port=%s" % node["Port"]
            items = [(k, v) for k, v in nodes.node_listing(node)
                     if (k == "state" and not node.get("_down")) or k.startswith("resources_available.")
                     or k in ("resv_enable", "comment", "queue", "priority")]
            out.append((n, suffix, items))
        return {"nodes": out}
    if command == "delete":
        family = nodes.family(ctx, name)
        if any(state.nodes[n].get("jobs") for n in family):
            raise PbsError(15118, "Cannot delete busy object")
        for each in family:
            del state.nodes[each]
        return {}
    for each in names:
        node = state.nodes[each]
        for attr, op, value in message["attrs"]:
            if command == "set":
                nodes.set_node_attr(node, attr, op, value)
            elif attr == "state":
                node["_offline"] = False
            else:
                node.pop(attr, None)
        nodes.refresh_state(node)
    return {}


def op_stat_server(ctx, message):
    with ctx.lock:
        return {"name": ctx.host, "items": server_listing(ctx),
                "qsub_args_version": ctx.state.qsub_args_version}


# the handler of each object type but hooks: (ctx, message, command) -> reply
QMGR_OBJECTS = {"server": qmgr_server, "sched": qmgr_sched, "queue": qmgr_queue, "node": qmgr_node}
