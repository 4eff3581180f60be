"""Wire operation handlers of the mock server (client operations and the mom operations
of PROTOCOL.md).

:class:`ServerCore` owns a :class:`mockpbs.server.models.State` and answers
``dispatch(message, peer) -> reply``. Client operations (private to mockpbs.cli):

- ``qmgr``: a parsed qmgr directive (see ``qmgr_lang.Command.to_message``); import
  content travels base64-encoded in ``content_b64``.
- ``stat_server``, ``stat_jobs`` (``ids``, ``history``), ``stat_nodes`` (``names``),
  ``submit``, ``alter``, ``delete``, ``hold``, ``release``, ``node_mark``.

Every client message carries ``user`` (the caller's user name) and ``host``. Managers
are ``root`` and the entries of the server's ``managers`` attribute.
"""
import base64
import binascii
import copy
import fnmatch
import socket
import threading
import time

from mockpbs import hookdefs, pbslog, selectspec, wire
from mockpbs.server import accounting, arrays, hookpush, models, scheduler
from mockpbs.server.models import PbsError

HOOK_PREFIX_MESSAGE = "hook_name '%s', cannot use PBS as a prefix it is reserved for pbs hooks"
FAIL_ACTION_EVENTS = {"execjob_begin", "exechost_startup", "execjob_prologue"}
PERIODIC_EVENTS = {"periodic", "exechost_periodic"}
FAIL_ACTION_MESSAGE = ('fail_action value of a hook must be "none" or one or more of '
                       '"offline_vnodes","clear_vnodes_upon_recovery", "scheduler_restart_cycle"')
BOOL_MESSAGE = "unexpected value '%s', must be (not case sensitive) true|t|y|1|false|f|n|0"
TOLERATE_VALUES = ("all", "job_start", "none")
PBS_HOOK_ORDER_RANGE = (-1000, 2000)
SITE_HOOK_ORDER_RANGE = (1, 1000)
RUN_JOB_TIMEOUT = 10.0
# The exiting substates (EXITING, STAGEOUT, STAGEDEL, EXITED) a job passes after its obit,
# each logged as "Updated job state to 69 and substate to N" (transcript g).
OBIT_SUBSTATES = ("50", "51", "52", "53")
REQUEUE_EXIT_STATUS = -16   # what PBS wrote in the R record of a hook-requested rerun (transcript g)
# job_run_wait=execjob_hook: seconds the scheduler waits for the mom's verdict on one job
# (requeue = rejected, mom_job_started = accepted); pbs_runjob's own limit is 600 s.
RUN_ACK_TIMEOUT = 600.0
MAX_FAILED_RUNS = 20        # PBS_MAX_HOPCOUNT: run_count above it -> system hold
HELD_FAILED_RUNS_COMMENT = "job held, too many failed attempts to run"
ARRAY_HELD_COMMENT = "Job Array Held, too many failed attempts to run subjob %s"
MOM_REJECT_COMMENT = "Not Running: PBS Error: Execution server rejected request"
JOB_EXEC_FAILHOOK_DELETE = -17   # include/job.h: a mom hook rejected the job, which is to be deleted
# Batch request numbers of the three run requests (src/include/libpbs.h) and the IFL call
# the scheduler makes for each job_run_wait value (sched send_run_job()).
RUN_REQUESTS = {
    "execjob_hook": (15, "pbs_runjob"),
    "runjob_hook": (97, "pbs_asyrunjob_ack"),
    "none": (23, "pbs_asyrunjob"),
}
THROUGHPUT_DEPRECATED = "'throughput_mode' is being deprecated, it is recommended to use 'job_run_wait'"


def _hook_error(text):
    return PbsError(models.PBSE_HOOKERROR, text, hook_error=True)


def _compiles(body):
    """True if ``body`` (bytes of a hook script) compiles as Python, as the server checks
    a hook body before ``qmgr import hook`` replaces the old one (OpenPBS mgr_hook_import)."""
    try:
        compile(body, "<embedded code object>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _now():
    return int(time.time())


def _sum_kb(values):
    """A size total as the server shows it: the largest unit that keeps it whole (6gb)."""
    return selectspec.format_kb(sum(values))


class ServerCore:
    """State plus request handling; threads and sockets live in ``daemon.ServerDaemon``."""

    def __init__(self, pbs_home, host, mom_port=wire.MOM_PORT, push_hooks=True):
        self.state = models.State(pbs_home, host)
        self.host = host
        self.mom_port = mom_port
        self.push_hooks = push_hooks
        self.log = pbslog.DaemonLog("%s/server_logs" % pbs_home, "Server@%s" % host)
        self.hook_pusher = hookpush.HookPusher(self.state, self.log, host)
        self.sched_log = pbslog.DaemonLog("%s/sched_logs" % pbs_home, "pbs_sched")
        self.acct = pbslog.AccountingLog("%s/server_priv/accounting" % pbs_home)
        self.wake_scheduler = lambda: None
        # notified (under the state lock) whenever a running job is accepted, requeued or ends
        self.job_changed = threading.Condition(self.state.lock)
        self._pending_hellos = {}   # node name -> mom_hello of a mom whose node does not exist yet
        self._handlers = {
            "qmgr": self.op_qmgr, "stat_server": self.op_stat_server, "stat_jobs": self.op_stat_jobs,
            "stat_nodes": self.op_stat_nodes, "submit": self.op_submit, "alter": self.op_alter,
            "delete": self.op_delete, "hold": self.op_hold, "release": self.op_release,
            "node_mark": self.op_node_mark,
            "mom_hello": self.op_mom_hello, "mom_job_started": self.op_mom_job_started,
            "mom_job_update": self.op_mom_job_update, "mom_node_update": self.op_mom_node_update,
            "mom_job_obit": self.op_mom_job_obit, "mom_job_requeue": self.op_mom_job_requeue,
        }

    @property
    def lock(self):
        return self.state.lock

    def load(self):
        fresh = self.state.load_or_init()
        with self.lock:
            for node in self.state.nodes.values():
                self._refresh_node_state(node)
        return fresh

    # ------------------------------------------------------------------
    def dispatch(self, message, peer=None):
        handler = self._handlers.get(message.get("op"))
        if handler is None:
            return {"ok": False, "code": models.PBSE_IVALREQ, "error": "Invalid request"}
        try:
            reply = handler(message)
        except PbsError as exc:
            return {"ok": False, "code": exc.code, "error": exc.text, "hook_error": exc.hook_error}
        reply = reply or {}
        reply.setdefault("ok", True)
        return reply

    def is_manager(self, message):
        user = message.get("user", "")
        if user == "root":
            return True
        who = "%s@%s" % (user, message.get("host", ""))
        managers = [m for m in self.state.server.get("managers", "").split(",") if m]
        return any(fnmatch.fnmatchcase(who, pattern) for pattern in managers)

    def requestor(self, message):
        return "%s@%s" % (message.get("user", ""), message.get("host", ""))

    # ==================================================================
    # qmgr

    def op_qmgr(self, message):
        command = message["command"]
        objtype = message["object"]
        if command in ("create", "delete", "set", "unset", "import") and not self.is_manager(message):
            raise PbsError(models.PBSE_PERM)
        if objtype not in ("hook", "pbshook") and any(
                not models.attribute_known(objtype, name) for name in self._requested(message)):
            raise PbsError(models.PBSE_NOATTR)   # before anything of the request is applied
        with self.lock:
            if objtype in ("hook", "pbshook"):
                reply = self._qmgr_hook(message, command, objtype)
            else:
                handler = getattr(self, "_qmgr_" + objtype)
                reply = handler(message, command)
            if command not in ("list", "print", "export"):
                self.state.save()
        if command not in ("list", "print", "export"):
            self.wake_scheduler()
        return reply

    @staticmethod
    def _requested(message):
        return [a[0] for a in message.get("attrs") or []]

    @staticmethod
    def _filter(items, requested):
        """Only the requested attributes, in reverse request order (as qmgr shows them)."""
        if not requested:
            return items
        values = dict(items)
        out = []
        for name in reversed(requested):
            if name in values:
                out.append((name, values[name]))
            else:
                out.extend((k, v) for k, v in items if k.startswith(name + "."))
        return out

    def _apply_attr(self, objtype, attrs, name, op, value):
        if op == "=":
            attrs[name] = models.normalize_value(objtype, name, value)
            return
        current = [v for v in attrs.get(name, "").split(",") if v]
        items = [v for v in value.split(",") if v]
        if op == "+=":
            if models.attribute_kind(objtype, name) in ("int",) or "." in name:
                base = attrs.get(name, "0")
                attrs[name] = str(int(base) + int(models.normalize_value(objtype, name, value)))
                return
            current += [v for v in items if v not in current]
        else:
            current = [v for v in current if v not in items]
        if current:
            attrs[name] = ",".join(current)
        else:
            attrs.pop(name, None)

    # server -----------------------------------------------------------
    def _server_listing(self):
        state = self.state
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
        attrs["server_host"] = self.host
        return models.ordered_items("server", attrs)

    def _qmgr_server(self, message, command):
        state = self.state
        if command == "list":
            items = self._filter(self._server_listing(), self._requested(message))
            return {"objects": [{"label": "Server", "name": self.host, "items": items}]}
        if command == "print":
            queues = [(name, self._queue_print_items(attrs)) for name, attrs in state.queues.items()]
            server_items = [(k, v) for k, v in models.ordered_items("server", state.server)
                            if models.attribute_kind("server", k) != "ro"
                            and not k.startswith("resources_assigned")]
            server_items = self._filter(server_items, self._requested(message))
            return {"queues": queues, "server": server_items}
        if command == "set":
            for name, op, value in message["attrs"]:
                self._apply_attr("server", state.server, name, op, value)
                if name == "default_qsub_arguments":
                    self._bump_qsub_args_version()
            self.log.svr(pbslog.PBSEVENT_ADMIN, "Server@%s" % self.host,
                         "svr_set at request of %s" % self.requestor(message))
            return {}
        if command == "unset":
            defaults = models.default_server_attrs(self.host)
            for name, _unused, _unused in message["attrs"]:
                if models.attribute_kind("server", name) == "ro":
                    raise PbsError(models.PBSE_BADATVAL)
                if name in defaults:
                    state.server[name] = defaults[name]
                else:
                    state.server.pop(name, None)
                if name == "default_qsub_arguments":
                    self._bump_qsub_args_version()
            return {}
        raise PbsError(models.PBSE_IVALREQ)

    def _bump_qsub_args_version(self):
        self.state.qsub_args_version = "%d" % time.time_ns()

    # sched ------------------------------------------------------------
    def _sched_attr_log(self, verb, attr, value):
        self.log.record(pbslog.PBSEVENT_ADMIN, "Sched", "Server@%s" % self.host,
                        "attributes %s: %s = %s" % (verb, attr, value))

    def _qmgr_sched(self, message, command):
        state = self.state
        name = message.get("name") or "default"
        if name != "default":
            if command == "create":
                raise PbsError(models.PBSE_IVALREQ)
            raise PbsError(15214, "Unknown Scheduler")
        if command == "list":
            items = self._filter(models.ordered_items("sched", state.sched), self._requested(message))
            return {"objects": [{"label": "Sched", "name": "default", "items": items}]}
        if command == "print":
            return {"sched": models.ordered_items("sched", state.sched)}
        if command == "set":
            for attr, op, value in message["attrs"]:
                if attr == "job_run_wait":
                    if value not in models.JOB_RUN_WAIT_VALUES:
                        raise PbsError(models.PBSE_BADATVAL)
                    state.sched["job_run_wait"] = value
                    if value == "none":
                        state.sched.pop("throughput_mode", None)
                    else:
                        state.sched["throughput_mode"] = "True" if value == "runjob_hook" else "False"
                elif attr == "throughput_mode":
                    flag = models.normalize_value("sched", attr, value)
                    self.log.record(pbslog.PBSEVENT_ADMIN, pbslog.OBJ_REQ, "default", THROUGHPUT_DEPRECATED)
                    state.sched["throughput_mode"] = flag
                    state.sched["job_run_wait"] = "runjob_hook" if flag == "True" else "execjob_hook"
                else:
                    self._apply_attr("sched", state.sched, attr, op, value)
                self._sched_attr_log("set", attr, value)
            return {}
        if command == "unset":
            defaults = models.default_sched_attrs(self.host, state.pbs_home)
            for attr, _unused, _unused in message["attrs"]:
                if attr in ("job_run_wait", "throughput_mode"):
                    state.sched["job_run_wait"] = defaults["job_run_wait"]
                    state.sched["throughput_mode"] = defaults["throughput_mode"]
                elif attr in defaults:
                    state.sched[attr] = defaults[attr]
                else:
                    state.sched.pop(attr, None)
                self._sched_attr_log("unset", attr, "")
            return {}
        raise PbsError(models.PBSE_IVALREQ)

    # queue ------------------------------------------------------------
    def _queue_listing(self, name, attrs):
        values = dict(attrs)
        jobs = [j for j in self.state.jobs.values() if j.get("queue") == name and j.get("job_state") != "F"]
        counts = {"Transit": 0, "Queued": 0, "Held": 0, "Waiting": 0, "Running": 0, "Exiting": 0, "Begun": 0}
        names = {"Q": "Queued", "H": "Held", "W": "Waiting", "R": "Running", "E": "Exiting"}
        for job in jobs:
            if job.get("job_state") in names:
                counts[names[job["job_state"]]] += 1
        values["total_jobs"] = str(len(jobs))
        values["state_count"] = "".join("%s:%d " % kv for kv in counts.items())
        return models.ordered_items("queue", values)

    def _queue_print_items(self, attrs):
        return [(k, v) for k, v in models.ordered_items("queue", attrs)
                if models.attribute_kind("queue", k) != "ro"]

    def _qmgr_queue(self, message, command):
        state = self.state
        name = message.get("name")
        if command == "create":
            if name in state.queues:
                raise PbsError(models.PBSE_QUEEXIST)
            attrs = {}
            for attr, op, value in message["attrs"]:
                self._apply_attr("queue", attrs, attr, op, value)
            state.queues[name] = attrs
            return {}
        names = [name] if name else list(state.queues)
        for each in names:
            if each not in state.queues:
                raise PbsError(models.PBSE_UNKQUE)
        if command == "list":
            return {"objects": [{"label": "Queue", "name": n,
                                 "items": self._filter(self._queue_listing(n, state.queues[n]),
                                                       self._requested(message))} for n in names]}
        if command == "print":
            return {"queues": [(n, self._queue_print_items(state.queues[n])) for n in names]}
        if command == "delete":
            if any(j.get("queue") == name for j in state.jobs.values() if j.get("job_state") != "F"):
                raise PbsError(15052, "Queue is not empty")
            del state.queues[name]
            return {}
        for each in names:
            attrs = state.queues[each]
            for attr, op, value in message["attrs"]:
                if command == "set":
                    self._apply_attr("queue", attrs, attr, op, value)
                else:
                    attrs.pop(attr, None)
        return {}

    # node -------------------------------------------------------------
    def _new_node(self, name):
        return {
            "Mom": name, "Port": str(self.mom_port), "pbs_version": "unavailable", "ntype": "PBS",
            "state": "down", "resources_available.host": name, "resources_available.vnode": name,
            "resv_enable": "True", "sharing": "default_shared",
            "last_state_change_time": str(_now()), "_down": True, "_offline": False,
        }

    def _refresh_node_state(self, node):
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
            node["last_state_change_time"] = str(_now())

    def node_listing(self, node):
        values = {k: v for k, v in node.items() if not k.startswith("_")}
        if "resources_available.ncpus" in values:
            values["pcpus"] = values["resources_available.ncpus"]
        for res in models.NODE_ASSIGNED_SHOWN:
            key = "resources_assigned." + res
            if key not in values:
                values[key] = "0kb" if res in ("accelerator_memory", "hbmem", "mem", "vmem") else "0"
        if not node.get("_down"):
            values["license"] = "l"
        return models.ordered_items("node", values)

    def _qmgr_node(self, message, command):
        state = self.state
        name = message.get("name")
        if command == "create":
            if name in state.nodes:
                raise PbsError(models.PBSE_NODEEXIST)
            node = self._new_node(name)
            for attr, op, value in message["attrs"]:
                self._set_node_attr(node, attr, op, value)
            state.nodes[name] = node
            self._refresh_node_state(node)
            self.log.record(pbslog.PBSEVENT_ADMIN, pbslog.OBJ_NODE, name,
                            "node created at request of %s" % self.requestor(message))
            hello = self._pending_hellos.get(name)
            if hello is not None:
                threading.Thread(target=self.op_mom_hello, args=(hello,), daemon=True).start()
            else:
                threading.Thread(target=self.ping_node, args=(name,), daemon=True).start()
            return {}
        names = [name] if name else list(state.nodes)
        for each in names:
            if each not in state.nodes:
                raise PbsError(models.PBSE_UNKNODE)
        if command == "list":
            return {"objects": [{"label": "Node", "name": n,
                                 "items": self._filter(self.node_listing(state.nodes[n]),
                                                       self._requested(message))} for n in names]}
        if command == "print":
            out = []
            for n in names:
                node = state.nodes[n]
                suffix = ""
                if node.get("Mom") != n:
                    suffix += " Mom=%s" % node["Mom"]
                if node.get("Port") != str(self.mom_port):
                    suffix += " Port=%s" % node["Port"]
                items = [(k, v) for k, v in self.node_listing(node)
                         if (k == "state" and not node.get("_down")) or k.startswith("resources_available.")
                         or k in ("resv_enable", "comment", "queue", "priority")]
                out.append((n, suffix, items))
            return {"nodes": out}
        if command == "delete":
            family = self._family(name)
            if any(state.nodes[n].get("jobs") for n in family):
                raise PbsError(15118, "Cannot delete busy object")
            for each in family:
                del state.nodes[each]
            return {}
        for each in names:
            node = state.nodes[each]
            for attr, op, value in message["attrs"]:
                if command == "set":
                    self._set_node_attr(node, attr, op, value)
                elif attr == "state":
                    node["_offline"] = False
                else:
                    node.pop(attr, None)
            self._refresh_node_state(node)
        return {}

    def _set_node_attr(self, node, attr, op, value):
        if attr == "state":
            words = [w for w in value.split(",") if w]
            if any(w not in models.NODE_STATES for w in words):
                raise PbsError(models.PBSE_BADATVAL)
            if op == "-=":
                if "offline" in words:
                    node["_offline"] = False
            elif op == "+=":
                if "offline" in words:
                    node["_offline"] = True
            else:
                node["_offline"] = "offline" in words
            return
        if models.attribute_kind("node", attr) == "ro":
            raise PbsError(models.PBSE_BADATVAL, "Cannot set attribute, read only or insufficient permission")
        self._apply_attr("node", node, attr, op, value)

    # hooks ------------------------------------------------------------
    def _find_hook(self, name, objtype, missing_text="%s does not exist!"):
        hook = self.state.hooks.get(name)
        if hook is None:
            if name in self.state.pending_delete:
                raise _hook_error("%s is pending delete!" % name)
            raise _hook_error(missing_text % name)
        return hook

    def _qmgr_hook(self, message, command, objtype):
        state = self.state
        name = message.get("name")
        who = self.requestor(message)
        want_type = "pbs" if objtype == "pbshook" else "site"
        if command == "create":
            if objtype == "pbshook":
                raise PbsError(models.PBSE_IVALREQ)
            if name.startswith("PBS"):
                raise _hook_error(HOOK_PREFIX_MESSAGE % name)
            if name in state.hooks:
                raise _hook_error("hook name '%s' already registered, try another name" % name)
            hook = models.Hook(name)
            for attr, op, value in message["attrs"]:
                self._set_hook_attr(hook, attr, op, value)
            state.hooks[name] = hook
            state.pending_delete.discard(name)
            state.save_hook(hook)
            self.log.hook(pbslog.PBSEVENT_ADMIN, name, "created at request of %s" % who)
            self._push_hook(name)
            return {}
        if command == "delete":
            if objtype == "pbshook":
                raise PbsError(models.PBSE_IVALREQ)
            hook = self._find_hook(name, objtype)
            if hook.type != "site":
                raise _hook_error("%s not of 'site' type" % name)
            del state.hooks[name]
            state.pending_delete.add(name)
            for ext in ("HK", "PY", "CF"):
                state.remove_hook_file(name, ext)
            self.log.hook(pbslog.PBSEVENT_ADMIN, name, "deleted at request of %s" % who)
            self._push_hook_delete(name)
            return {}
        if command in ("list", "print"):
            if name:
                hook = state.hooks.get(name)
                if hook is None:
                    raise PbsError(models.PBSE_HOOKERROR, "hook not found", hook_error=True)
                hooks = [hook] if hook.type == want_type else []
                if not hooks:
                    return {"objects": [], "empty_rc": 1}
            else:
                hooks = [h for h in state.hooks.values() if h.type == want_type]
            if command == "print" and objtype == "pbshook":
                return {"objects": [], "empty_rc": 1}
            requested = self._requested(message)
            objects = []
            for hook in hooks:
                entry = {"label": "Hook", "name": hook.name, "items": self._filter(hook.listing(), requested)}
                if command == "print":
                    for ext in ("PY", "CF"):
                        text = state.read_hook_file(hook.name, ext)
                        entry[ext + "_b64"] = base64.b64encode(text.encode()).decode() if text else ""
                objects.append(entry)
            return {"objects": objects}
        hook = self._find_hook(name, objtype)
        if command in ("set", "unset"):
            if objtype == "hook" and hook.type == "pbs":
                raise _hook_error("cannot set attributes of a 'pbs' hook")
            if objtype == "pbshook" and hook.type != "pbs":
                raise _hook_error("%s not of 'pbs' type" % name)
            warnings = []
            for attr, op, value in message["attrs"]:
                if command == "set":
                    self._set_hook_attr(hook, attr, op, value)
                    if hook.type == "pbs" and attr == "enabled" and hook.attrs["enabled"] == "false":
                        warnings.append("WARNING: Disabling a PBS hook results in an unsupported configuration!")
                else:
                    self._unset_hook_attr(hook, attr)
            hook.pristine_hk = None
            state.save_hook(hook)
            self.log.hook(pbslog.PBSEVENT_ADMIN, name, "mgr_hook_set at request of %s" % who)
            self._push_hook(name, only=("HK",))
            return {"stderr": warnings}
        if command in ("import", "export"):
            content_type = message.get("content_type")
            encoding = message.get("encoding")
            if objtype == "hook" and hook.type != "site":
                raise _hook_error("%s not of 'site' type" % name)
            if command == "import":
                # OpenPBS mgr_hook_import logs the request before it checks its parameters
                self.log.hook(pbslog.PBSEVENT_ADMIN, name, "mgr_hook_import at request of %s" % who)
            if objtype == "pbshook" and content_type != "application/x-config":
                raise _hook_error("<content-type> must be application/x-config")
            if content_type not in ("application/x-python", "application/x-config"):
                raise _hook_error("<content-type> must be application/x-python or application/x-config")
            if encoding not in ("default", "base64"):
                raise _hook_error("<content-encoding> must be default or base64")
            ext = "PY" if content_type == "application/x-python" else "CF"
            if command == "export":
                text = state.read_hook_file(name, ext) or ""
                return {"content_b64": base64.b64encode(text.encode()).decode()}
            raw = base64.b64decode(message.get("content_b64") or "")
            existed = state.read_hook_file(name, ext) is not None
            if encoding == "base64":
                try:
                    raw = base64.b64decode(raw)
                except (binascii.Error, ValueError) as exc:
                    if ext == "CF":
                        state.remove_hook_file(name, ext)
                    raise _hook_error(str(exc))
            if ext == "PY" and not _compiles(raw):
                text = ("Failed to compile script, hook '%s' contents not overwritten" % name
                        if existed else "Failed to compile script")
                self.log.hook(pbslog.PBSEVENT_DEBUG, "mgr_hook_import", text)
                raise _hook_error(text)
            state.write_hook_file(name, ext, raw.decode(errors="replace"))
            self._push_hook(name, only=("HK", ext))
            return {"stderr": ["hook '%s' contents overwritten" % name] if existed else []}
        raise PbsError(models.PBSE_IVALREQ)

    def _set_hook_attr(self, hook, attr, op, value):
        attrs = hook.attrs
        if attr == "type":
            if value.lower() == "pbs" and hook.type != "pbs":
                raise _hook_error("not allowed to set hook to 'pbs' type")
            if value.lower() != hook.type:
                raise _hook_error("not allowed to set hook to '%s' type" % value)
            return
        if attr in ("enabled", "debug"):
            word = value.lower()
            if word in models.TRUE_WORDS:
                attrs[attr] = "true"
            elif word in models.FALSE_WORDS:
                attrs[attr] = "false"
            else:
                raise _hook_error(BOOL_MESSAGE % value)
            return
        if attr == "alarm":
            if not value.isdigit() or int(value) <= 0:
                raise _hook_error("set_hook_alarm: alarm value '%s' of a hook must be > 0" % value)
            attrs["alarm"] = str(int(value))
            return
        if attr == "order":
            low, high = PBS_HOOK_ORDER_RANGE if hook.type == "pbs" else SITE_HOOK_ORDER_RANGE
            try:
                number = int(value)
            except ValueError:
                number = None
            if number is None or not low <= number <= high:
                raise _hook_error("order given (%s) is outside the acceptable range of [%d, %d] for type '%s'."
                                  % (value, low, high, hook.type))
            attrs["order"] = str(number)
            return
        if attr == "user":
            if value not in hookdefs.HOOK_USERS:
                raise _hook_error("user value of a hook must be %s" % ",".join(hookdefs.HOOK_USERS))
            attrs["user"] = value
            return
        if attr == "freq":
            if not PERIODIC_EVENTS & set(hook.events()):
                raise _hook_error("set_hook_freq: Can't set hook freq value: hook event must contain "
                                  "at least'exechost_periodic' or 'periodic'")
            if not value.isdigit() or int(value) <= 0:
                raise _hook_error("set_hook_freq: freq value '%s' of a hook must be > 0" % value)
            attrs["freq"] = str(int(value))
            return
        if attr == "fail_action":
            words = [w for w in value.split(",") if w]
            current = [w for w in hook.effective()["fail_action"].split(",") if w and w != "none"]
            valid = set(hookdefs.FAIL_ACTIONS) - {"none"}
            if op == "=" and words == ["none"]:
                attrs.pop("fail_action", None)
                return
            if not words or any(w not in valid for w in words):
                raise _hook_error(FAIL_ACTION_MESSAGE)
            if op == "+=":
                words = current + [w for w in words if w not in current]
            elif op == "-=":
                words = [w for w in current if w not in words]
            if words:
                attrs["fail_action"] = ",".join(w for w in hookdefs.FAIL_ACTIONS if w in words)
            else:
                attrs.pop("fail_action", None)
            return
        if attr == "event":
            self._set_hook_events(hook, op, value)
            return
        raise _hook_error("unknown hook attribute %s" % attr)

    def _set_hook_events(self, hook, op, value):
        words = [w.strip() for w in value.split(",") if w.strip()]
        for word in words:
            if word not in hookdefs.EVENTS:
                raise _hook_error(hookdefs.BAD_EVENT_MESSAGE % value)
        current = hook.events()
        if op == "+=":
            new = current + words
        elif op == "-=":
            new = [e for e in current if e not in words]
        else:
            new = words
        new = set(new)
        attrs = hook.attrs
        # Side effects of mgr_hook_set on event (README "Setting event can silently reset").
        if not new & hookdefs.MOM_EVENTS:
            attrs.pop("user", None)
        if not new & FAIL_ACTION_EVENTS:
            attrs.pop("fail_action", None)
        if op == "-=" and "execjob_begin" in words and "fail_action" in attrs:
            kept = [w for w in attrs["fail_action"].split(",") if w != "scheduler_restart_cycle"]
            if kept:
                attrs["fail_action"] = ",".join(kept)
            else:
                attrs.pop("fail_action", None)
        if not new & PERIODIC_EVENTS:
            attrs.pop("freq", None)
        events = ",".join(models.sort_listed_events(new))
        if events:
            attrs["event"] = events
        else:
            attrs.pop("event", None)

    def _unset_hook_attr(self, hook, attr):
        if attr == "type":
            return
        hook.attrs.pop(attr, None)

    # hook pushes --------------------------------------------------------
    def mom_addresses(self):
        """``[(host, port), ...]``: one entry per mom (the vnodes of a multi-vnode mom share
        their mom's), in node creation order."""
        with self.lock:
            addresses = [(n.get("Mom", name), int(n.get("Port", self.mom_port))) for name, n in self.state.nodes.items()]
        return list(dict.fromkeys(addresses))

    def _push_hook(self, name, only=None, targets=None):
        """Send hook ``name`` (file types ``only``, None for all) to every mom, or to
        ``targets``; ordered per mom by :class:`hookpush.HookPusher`."""
        if self.push_hooks:
            self.hook_pusher.push(name, targets if targets is not None else self.mom_addresses(), only)

    def _push_hook_delete(self, name):
        if self.push_hooks:
            self.hook_pusher.push_delete(name, self.mom_addresses())

    def push_all_hooks(self, host, port):
        with self.lock:
            names = list(self.state.hooks)
        for name in names:
            self._push_hook(name, targets=[(host, port)])

    # ==================================================================
    # nodes: pings and pbsnodes

    def _family(self, name):
        """``name`` plus the vnodes its mom reported in ``mom_hello`` (multi-vnode moms)."""
        return [name] + [n for n, node in self.state.nodes.items() if node.get("_natural") == name]

    def ping_node(self, name):
        """Ping one mom (its natural vnode ``name``): connection refused (or unreachable) ->
        every vnode of the mom down; a mom that accepts but never answers keeps its state;
        an answer -> up (resources of the natural vnode taken from the reply)."""
        with self.lock:
            node = self.state.nodes.get(name)
            if node is None:
                return
            host, port = node.get("Mom", name), int(node.get("Port", self.mom_port))
        try:
            reply = wire.request(host, port, {"op": "ping"}, timeout=3)
        except wire.WireError as exc:
            if isinstance(exc.__cause__, (socket.timeout, TimeoutError)):
                return
            with self.lock:
                changed = False
                for each in self._family(name) if name in self.state.nodes else []:
                    vnode = self.state.nodes[each]
                    if not vnode.get("_down"):
                        vnode["_down"] = True
                        self._refresh_node_state(vnode)
                        self.log.record(pbslog.PBSEVENT_SYSTEM, pbslog.OBJ_NODE, each,
                                        "node down: communication closed")
                        changed = True
                if changed:
                    self.state.save()
            return
        with self.lock:
            node = self.state.nodes.get(name)
            if node is None:
                return
            self._mark_up(node, reply.get("resources_available"))
            for each in self._family(name)[1:]:
                self._mark_up(self.state.nodes[each], None)
            self.state.save()
        self.wake_scheduler()

    def _mark_up(self, node, resources):
        for key, value in (resources or {}).items():
            node["resources_available." + key] = str(value)
        node["pbs_version"] = node.get("pbs_version") if node.get("pbs_version") != "unavailable" else "23.06.06"
        node["_down"] = False
        self._refresh_node_state(node)

    def ping_all(self):
        with self.lock:
            names = [n for n, node in self.state.nodes.items() if not node.get("_natural")]
        for name in names:
            self.ping_node(name)

    def op_stat_nodes(self, message):
        with self.lock:
            names = message.get("names") or list(self.state.nodes)
            out = []
            for name in names:
                node = self.state.nodes.get(name)
                if node is None:
                    raise PbsError(models.PBSE_UNKNODE, "Unknown node %s" % name)
                out.append({"name": name, "items": self.node_listing(node)})
            return {"nodes": out}

    def op_node_mark(self, message):
        if not self.is_manager(message):
            raise PbsError(models.PBSE_PERM)
        with self.lock:
            for name in message["names"]:
                node = self.state.nodes.get(name)
                if node is None:
                    raise PbsError(models.PBSE_UNKNODE, "Unknown node %s" % name)
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
                self._refresh_node_state(node)
            self.state.save()
        self.wake_scheduler()
        return {}

    # ==================================================================
    # jobs: submit, stat, alter, delete, hold, release

    def public_job(self, job):
        return {k: copy.deepcopy(v) for k, v in job.items() if not k.startswith("_")}

    def op_stat_server(self, message):
        with self.lock:
            return {"name": self.host, "items": self._server_listing(),
                    "qsub_args_version": self.state.qsub_args_version}

    def op_stat_jobs(self, message):
        with self.lock:
            history = message.get("history")
            ids = message.get("ids")
            out = []
            if ids:
                for jobid in ids:
                    job = self._lookup_job(jobid)
                    if job is None:
                        raise PbsError(models.PBSE_UNKJOBID, "Unknown Job Id %s" % jobid)
                    if job.get("job_state") == "F" and not history:
                        raise PbsError(models.PBSE_HISTJOBID,
                                       "%s Job has finished, use -x or -H to obtain historical job information"
                                       % job["id"])
                    out.append(self.public_job(job))
            else:
                for job in self.state.jobs.values():
                    if job.get("job_state") == "F" and not history:
                        continue
                    if job.get("_subjob") and not message.get("subjobs"):
                        continue
                    if message.get("arrays_only") and job.get("array") != "True":
                        continue
                    out.append(self.public_job(job))
            return {"jobs": out, "history_enabled": self.state.server.get("job_history_enable") == "True"}

    def _lookup_job(self, jobid):
        jobs = self.state.jobs
        if jobid in jobs:
            return jobs[jobid]
        seq = jobid.split(".", 1)[0]
        for job in jobs.values():
            if job["id"].split(".", 1)[0] == seq:
                return job
        return None

    def _job_for_owner(self, message, jobid):
        job = self._lookup_job(jobid)
        if job is None or job.get("job_state") == "F":
            raise PbsError(models.PBSE_UNKJOBID, "Unknown Job Id %s" % jobid)
        if job.get("euser") != message.get("user") and not self.is_manager(message):
            raise PbsError(models.PBSE_PERM)
        return job

    def _sorted_hooks(self, event):
        hooks = []
        for hook in self.state.hooks.values():
            values = hook.effective()
            if values.get("enabled") == "true" and event in hook.events():
                hooks.append((int(values.get("order", "1")), hook.name, hook, values))
        return [(h, v) for _unused, _unused, h, v in sorted(hooks, key=lambda t: (t[0], t[1]))]

    def _run_queuejob_hooks(self, job, message):
        hooks = self._sorted_hooks("queuejob")
        if not hooks:
            return
        from mockpbs import hookrun  # imported late: a server without hooks does not need it

        for hook, values in hooks:
            context = {
                "job": self.public_job(job), "vnode_list": {}, "vnode_list_fail": {}, "env": {},
                "argv": [], "progname": "", "in_ms_mom": False, "hostname": self.host,
                "server": self.host, "failed_mom_list": [], "succeeded_mom_list": [],
                "requestor": message.get("user", ""), "requestor_host": message.get("host", ""),
                "daemon": "server",
            }
            spec = {"name": hook.name, "body": self.state.hook_path(hook.name, "PY"),
                    "config": self.state.hook_path(hook.name, "CF")
                    if self.state.read_hook_file(hook.name, "CF") is not None else None,
                    "alarm": int(values.get("alarm", "30")), "user": values.get("user"),
                    "debug": values.get("debug") == "true"}
            self.log.hook(pbslog.PBSEVENT_DEBUG3, hook.name, "started")
            result = hookrun.run_hook(spec, "queuejob", context, self.state.pbs_home, log=self.log)
            self.log.hook(pbslog.PBSEVENT_DEBUG3, hook.name, "finished")
            if result.get("alarm"):
                raise PbsError(models.PBSE_HOOKERROR, "request rejected as filter hook '%s' got an "
                               "alarm call. Please inform Admin" % hook.name)
            if result.get("exception"):
                raise PbsError(models.PBSE_HOOKERROR, "request rejected as filter hook '%s' encountered "
                               "an exception. Please inform Admin" % hook.name)
            if not result.get("accepted"):
                self.log.hook(pbslog.PBSEVENT_DEBUG2, hook.name, "queuejob request rejected by '%s'" % hook.name)
                raise PbsError(models.PBSE_HOOKERROR, result.get("reject_msg")
                               or "request rejected by filter hook '%s'" % hook.name)
            changes = result.get("job") or {}
            for key, value in changes.items():
                if key == "Resource_List":
                    job["Resource_List"].update({k: str(v) for k, v in value.items() if v is not None})
                    for k in [k for k, v in value.items() if v is None]:
                        job["Resource_List"].pop(k, None)
                elif key == "Variable_List":
                    job["Variable_List"].update(value)
                elif key not in ("id",):
                    job[key] = value

    def _fill_select(self, job):
        """Resource_List select/place defaults, then ncpus/mem/nodect and schedselect."""
        resources = job["Resource_List"]
        server = self.state.server
        default_chunk = {k.split(".", 1)[1]: v for k, v in server.items() if k.startswith("default_chunk.")}
        if "select" not in resources:
            ncpus = resources.get("ncpus") or server.get("resources_default.ncpus", "1")
            parts = ["1", "ncpus=%s" % ncpus]
            if "mem" in resources:
                parts.append("mem=%s" % resources["mem"])
            resources["select"] = ":".join(parts)
            resources.setdefault("place", "pack")
        else:
            resources.setdefault("place", "free")
        try:
            chunks = selectspec.parse_select(resources["select"])
        except selectspec.SelectSpecError:
            raise PbsError(models.PBSE_BADATVAL)
        sched_chunks = []
        for chunk in chunks:
            res = list(chunk.resources)
            names = [k for k, _unused in res]
            for key, value in default_chunk.items():
                if key not in names:
                    res.append((key, value))
            sched_chunks.append(selectspec.Chunk(chunk.count, res, True))
        self._set_from_schedselect(job, selectspec.format_select(sched_chunks))

    @staticmethod
    def _set_from_schedselect(job, schedselect):
        chunks = selectspec.parse_select(schedselect)
        resources = job["Resource_List"]
        job["schedselect"] = schedselect
        resources["ncpus"] = str(sum(c.count * int(c.get("ncpus", "0")) for c in chunks))
        resources["nodect"] = str(sum(c.count for c in chunks))
        if any(c.get("mem") for c in chunks):
            resources["mem"] = _sum_kb(c.count * selectspec.size_to_kb(c.get("mem")) for c in chunks if c.get("mem"))

    def op_submit(self, message):
        """Queue a job, or a job array when ``attrs`` has ``array_indices_submitted``
        (``X-Y[:Z]``). ``defaults_version`` (the default_qsub_arguments version qsub's cache
        holds) different from the server's -> PBSE_FORCE_QSUB_UPDATE (15160), as PBS makes
        qsub fetch the defaults again."""
        user = message["user"]
        host = message.get("host") or self.host
        attrs = message.get("attrs") or {}
        with self.lock:
            state = self.state
            held = message.get("defaults_version")
            if held is not None and held != state.qsub_args_version:
                raise PbsError(models.PBSE_FORCE_QSUB_UPDATE)
            indices = None
            if attrs.get("array_indices_submitted") is not None:
                try:
                    indices = arrays.parse_range(attrs["array_indices_submitted"])
                except arrays.ArrayRangeError:
                    raise PbsError(models.PBSE_BADATVAL)
                if len(indices) > int(state.server.get("max_array_size", "10000")):
                    raise PbsError(15107, "Array job exceeds server or queue size limit")
            run_count = attrs.get("run_count")
            if run_count is not None and (not str(run_count).isdigit() or int(run_count) >= 2 ** 63):
                raise PbsError(models.PBSE_BADATVAL)
            queue = attrs.get("queue") or state.server.get("default_queue", "workq")
            if queue not in state.queues:
                raise PbsError(models.PBSE_UNKQUE)
            tolerate = attrs.get("tolerate_node_failures")
            if tolerate is not None and tolerate not in TOLERATE_VALUES:
                raise PbsError(models.PBSE_BADATVAL)
            seq = state.next_seq
            jobid = ("%d[].%s" if indices is not None else "%d.%s") % (seq, self.host)
            now = str(_now())
            job = {
                "id": jobid, "Job_Name": attrs.get("Job_Name", "STDIN"),
                "Job_Owner": "%s@%s" % (user, host), "job_state": "Q", "queue": queue,
                "server": self.host, "Checkpoint": attrs.get("Checkpoint", "u"), "ctime": now,
                "Hold_Types": attrs.get("Hold_Types", "n"), "Join_Path": attrs.get("Join_Path", "n"),
                "Keep_Files": attrs.get("Keep_Files", "n"), "Mail_Points": attrs.get("Mail_Points", "a"),
                "mtime": now, "Priority": attrs.get("Priority", "0"), "qtime": now,
                "Rerunable": attrs.get("Rerunable", "True"),
                "Resource_List": dict(attrs.get("Resource_List") or {}), "substate": "10",
                "Variable_List": dict(attrs.get("Variable_List") or {}),
                "euser": user, "egroup": message.get("group", user), "hashname": jobid,
                "queue_rank": str(int(time.time() * 1e6)), "queue_type": "E", "etime": now,
                "project": attrs.get("project", "_pbs_project_default"), "Submit_Host": host,
                "script": message.get("script", ""),
            }
            for key in ("Submit_arguments", "executable", "argument_list", "Account_Name"):
                if attrs.get(key) is not None:
                    job[key] = attrs[key]
            if tolerate is not None:
                job["tolerate_node_failures"] = tolerate
            if run_count is not None:
                job["run_count"] = str(int(run_count))
            job["Variable_List"]["PBS_O_QUEUE"] = queue
            job["Variable_List"]["PBS_O_HOST"] = host
            workdir = job["Variable_List"].get("PBS_O_WORKDIR", "/")
            for key, suffix in (("Output_Path", "o"), ("Error_Path", "e")):
                path = attrs.get(key)
                if not path:
                    path = "%s/%s.%s%d" % (workdir, job["Job_Name"], suffix, seq)
                    if indices is not None:
                        path += "." + arrays.INDEX_PLACEHOLDER
                if ":" not in path:
                    if not path.startswith("/"):
                        path = "%s/%s" % (workdir, path)
                    path = "%s:%s" % (host, path)
                job[key] = path
            self._run_queuejob_hooks(job, message)
            if job.get("tolerate_node_failures") not in (None,) + TOLERATE_VALUES:
                raise PbsError(models.PBSE_BADATVAL)
            self._fill_select(job)
            if job["Hold_Types"] != "n":
                job["job_state"] = "H"
                job["substate"] = "20"
            state.next_seq = seq + 1
            if state.next_seq > int(state.server.get("max_job_sequence_id", "9999999")):
                state.next_seq = 0
            state.jobs[jobid] = job
            if indices is not None:
                self._create_subjobs(job, indices, attrs["array_indices_submitted"])
            self._log_state_change(job)
            self.log.job(pbslog.PBSEVENT_DEBUG2, jobid, "enqueuing into %s, state %s hop 1" % (queue, job["job_state"]))
            self.log.job(pbslog.PBSEVENT_JOB, jobid,
                         "Job Queued at request of %s@%s, owner = %s, job name = %s, queue = %s"
                         % (user, host, job["Job_Owner"], job["Job_Name"], queue))
            self.acct.record("Q", jobid, accounting.queued_record(job))
            state.save()
        self.wake_scheduler()
        return {"jobid": jobid}

    # job arrays -----------------------------------------------------------
    def _create_subjobs(self, parent, indices, submitted):
        """Give ``parent`` its array attributes and add one queued subjob per index."""
        parent["array"] = "True"
        parent["array_indices_submitted"] = submitted
        parent["_array_step"] = indices[1] - indices[0] if len(indices) > 1 else 1
        parent["_subjobs"] = [arrays.subjob_id(parent["id"], i) for i in indices]
        parent.pop("hashname", None)
        for index in indices:
            sub = {k: copy.deepcopy(v) for k, v in parent.items()
                   if k not in ("array", "array_indices_submitted", "array_indices_remaining",
                                "array_state_count", "Submit_arguments", "_subjobs", "_array_step")}
            sub["id"] = sub["hashname"] = arrays.subjob_id(parent["id"], index)
            sub["array_id"] = parent["id"]
            sub["array_index"] = str(index)
            sub["_subjob"] = True
            sub["Hold_Types"], sub["job_state"], sub["substate"] = "n", "Q", "10"
            for key in ("Output_Path", "Error_Path"):
                sub[key] = arrays.subjob_path(sub[key], index)
            self.state.jobs[sub["id"]] = sub
        self._refresh_array(parent)

    def _subjobs(self, parent):
        return [self.state.jobs[i] for i in parent.get("_subjobs", []) if i in self.state.jobs]

    def _parent_of(self, job):
        return self.state.jobs.get(job.get("array_id", "")) if job.get("_subjob") else None

    def _refresh_array(self, parent):
        """Recompute the parent's array attributes and state from its subjobs; finish the
        array when no subjob is left to run."""
        subjobs = self._subjobs(parent)
        waiting = [s for s in subjobs if s.get("job_state") in ("Q", "H")]
        parent["array_indices_remaining"] = arrays.format_indices(
            [int(s["array_index"]) for s in waiting], parent.get("_array_step", 1))
        parent["array_state_count"] = arrays.state_count(subjobs)
        if parent.get("job_state") == "F":
            return
        if subjobs and all(s.get("job_state") in ("X", "F") for s in subjobs):
            self._finish_array(parent)
            return
        if parent.get("Hold_Types", "n") != "n":
            parent["job_state"], parent["substate"] = "H", "20"
        elif parent.get("stime"):
            parent["job_state"], parent["substate"] = "B", arrays.ARRAY_BEGUN_SUBSTATE
        else:
            parent["job_state"], parent["substate"] = "Q", "10"

    def _array_began(self, parent):
        if parent.get("stime"):
            return
        now = _now()
        parent["stime"] = str(now)
        parent["comment"] = "Job Array Began at %s" % time.strftime("%a %b %d at %H:%M", time.localtime(now))
        self.acct.record("S", parent["id"], accounting.array_start_record(parent))

    def _finish_array(self, parent):
        parent["array_state_count"] = arrays.state_count([])
        parent["array_indices_remaining"] = "-"
        self.acct.record("E", parent["id"], accounting.array_end_record(parent, _now()))
        history = self.state.server.get("job_history_enable") == "True"
        for sub in self._subjobs(parent):
            if history:
                sub["job_state"], sub["substate"] = "F", "92"
            else:
                self.state.jobs.pop(sub["id"], None)
        if history:
            parent["job_state"], parent["substate"] = "F", "92"
            parent["Exit_status"] = "0"
        else:
            self.state.jobs.pop(parent["id"], None)

    def _subjob_done(self, job, exit_status):
        """A subjob ended (or was deleted): it stays as ``X`` while its array lives."""
        if job.get("exec_vnode"):
            self._release_nodes(job)
        job["job_state"], job["substate"] = "X", "91"
        if exit_status is not None:
            job["Exit_status"] = str(exit_status)
        parent = self._parent_of(job)
        if parent is not None:
            self._refresh_array(parent)

    def _check_failed_attempts(self, job):
        """Seed "run_count of subjobs", interfaces 1 and 2: a job whose ``run_count`` went
        above 20 gets a system hold and PBS's comment; a subjob's array is held too."""
        if int(job.get("run_count", "0")) <= MAX_FAILED_RUNS:
            return False
        current = "" if job.get("Hold_Types", "n") == "n" else job["Hold_Types"]
        job["Hold_Types"] = "".join(t for t in "uos" if t in current or t == "s")
        job["job_state"], job["substate"] = "H", "20"
        job["comment"] = HELD_FAILED_RUNS_COMMENT
        self.log.job(pbslog.PBSEVENT_JOB, job["id"], HELD_FAILED_RUNS_COMMENT)
        parent = self._parent_of(job)
        if parent is not None:
            held = "" if parent.get("Hold_Types", "n") == "n" else parent["Hold_Types"]
            parent["Hold_Types"] = "".join(t for t in "uos" if t in held or t == "s")
            parent["comment"] = ARRAY_HELD_COMMENT % job["id"]
            self.log.job(pbslog.PBSEVENT_JOB, parent["id"], parent["comment"])
            self._refresh_array(parent)
        return True

    def op_alter(self, message):
        with self.lock:
            job = self._job_for_owner(message, message["jobid"])
            attrs = message.get("attrs") or {}
            if "tolerate_node_failures" in attrs and attrs["tolerate_node_failures"] not in TOLERATE_VALUES:
                raise PbsError(models.PBSE_BADATVAL)
            if attrs.get("Resource_List") and job["job_state"] not in ("Q", "H"):
                raise PbsError(models.PBSE_BADSTATE)
            for key, value in attrs.items():
                if key == "Resource_List":
                    job["Resource_List"].update(value)
                    if "select" in value:
                        job["Resource_List"].pop("ncpus", None)
                        self._fill_select(job)
                else:
                    job[key] = value
            job["mtime"] = str(_now())
            self.log.job(pbslog.PBSEVENT_JOB, job["id"], "Job Modified at request of %s" % self.requestor(message))
            self.state.save()
        self.wake_scheduler()
        return {}

    def _check_hold_privilege(self, types, message):
        """``chk_hold_priv()``: a system hold needs a manager, an operator hold an operator."""
        if "s" in types and not self.is_manager(message):
            raise PbsError(models.PBSE_PERM)
        if "o" in types and not (self.is_manager(message) or self._is_operator(message)):
            raise PbsError(models.PBSE_PERM)

    def _is_operator(self, message):
        who = "%s@%s" % (message.get("user", ""), message.get("host", ""))
        operators = [m for m in self.state.server.get("operators", "").split(",") if m]
        return any(fnmatch.fnmatchcase(who, pattern) for pattern in operators)

    @staticmethod
    def _hold_types(message):
        types = message.get("hold_types") or "u"
        if any(t not in "uosn" for t in types):
            raise PbsError(models.PBSE_IVALREQ)
        return types

    def op_hold(self, message):
        """``req_holdjob()``: jobs and job arrays (a subjob: 15004 Invalid request); the
        comment becomes ``Job held by <user> on <date>``; a running job keeps running."""
        with self.lock:
            job = self._job_for_owner(message, message["jobid"])
            if job.get("_subjob"):
                raise PbsError(models.PBSE_IVALREQ)
            types = self._hold_types(message)
            self._check_hold_privilege(types, message)
            if job["job_state"] in ("E", "X"):
                raise PbsError(models.PBSE_BADSTATE)
            current = "" if job["Hold_Types"] == "n" else job["Hold_Types"]
            job["Hold_Types"] = "".join(t for t in "uos" if t in current or t in types) or "n"
            job["comment"] = "Job held by %s on %s" % (message.get("user", ""), time.ctime(_now())[:24])
            self.log.job(pbslog.PBSEVENT_JOB, job["id"], "Holds %s set at request of %s"
                         % (types, self.requestor(message)))
            if job.get("array") == "True":
                self._refresh_array(job)
            elif job["job_state"] == "Q" and job["Hold_Types"] != "n":
                job["job_state"], job["substate"] = "H", "20"
            self.state.save()
        return {}

    def _release_types(self, job, types):
        """Remove hold ``types`` from ``job``; True when no hold is left."""
        left = "".join(t for t in job.get("Hold_Types", "n") if t not in types and t != "n")
        job["Hold_Types"] = left or "n"
        return not left

    def op_release(self, message):
        """``req_releasejob()``: jobs and job arrays (a subjob: 15004). Releasing an array
        first releases the same holds on its held subjobs (seed interface 3): their comment
        goes; then the array, whose comment becomes ``Job Array Began at ...`` again."""
        with self.lock:
            job = self._job_for_owner(message, message["jobid"])
            if job.get("_subjob"):
                raise PbsError(models.PBSE_IVALREQ)
            types = self._hold_types(message)
            self._check_hold_privilege(types, message)
            free = self._release_types(job, types)
            if job.get("array") == "True":
                for sub in self._subjobs(job):
                    if sub.get("job_state") != "H":
                        continue
                    if self._release_types(sub, types):
                        sub["job_state"], sub["substate"] = "Q", "10"
                        sub.pop("comment", None)
                    self.log.job(pbslog.PBSEVENT_JOB, sub["id"], "Holds %s released at request of %s"
                                 % (types, self.requestor(message)))
                if free:
                    if job.get("stime"):
                        job["comment"] = "Job Array Began at %s" % time.strftime(
                            "%a %b %d at %H:%M", time.localtime(int(job["stime"])))
                    else:
                        job.pop("comment", None)
                self._refresh_array(job)
            elif free and job["job_state"] == "H":
                job["job_state"], job["substate"] = "Q", "10"
            self.log.job(pbslog.PBSEVENT_JOB, job["id"], "Holds %s released at request of %s"
                         % (types, self.requestor(message)))
            self.state.save()
        self.wake_scheduler()
        return {}

    def op_delete(self, message):
        """qdel: a job, a subjob (kept as ``X`` while its array lives) or a whole array
        (every subjob; running ones are killed through their primary mom)."""
        targets = []
        with self.lock:
            job = self._job_for_owner(message, message["jobid"])
            if job.get("job_state") == "X":
                raise PbsError(15159, "Request invalid for finished array subjob")
            members = self._subjobs(job) if job.get("array") == "True" else [job]
            for member in members:
                if member.get("job_state") in ("X", "F"):
                    continue
                self.acct.record("D", member["id"], "requestor=%s" % self.requestor(message))
                if member["job_state"] == "R":
                    targets.append((member["id"], self._primary_mom(member)))
                elif member.get("_subjob"):
                    self._subjob_done(member, None)
                else:
                    self._finish_job(member, exit_status=None)
            if job.get("array") == "True" and job["id"] in self.state.jobs:
                self.acct.record("D", job["id"], "requestor=%s" % self.requestor(message))
                self._refresh_array(job)
            self.state.save()
        for jobid, target in targets:
            try:
                reply = wire.request(target[0], target[1], {"op": "delete_job", "jobid": jobid},
                                     timeout=RUN_JOB_TIMEOUT)
                delivered = bool(reply.get("ok"))
            except wire.WireError:
                delivered = False
            if not delivered:
                with self.lock:
                    member = self.state.jobs.get(jobid)
                    if member is not None:
                        self._finish_job(member, exit_status=271)
                        self.state.save()
        self.wake_scheduler()
        return {}

    # ==================================================================
    # scheduling and job execution

    def _primary_mom(self, job):
        first = selectspec.parse_exec_vnode(job["exec_vnode"])[0][0][0]
        node = self.state.nodes[first]
        return node.get("Mom", first), int(node.get("Port", self.mom_port))

    def _vnodes_payload(self, job):
        out = {}
        for chunk in selectspec.parse_exec_vnode(job.get("exec_vnode", "")):
            for name, _unused in chunk:
                node = self.state.nodes.get(name, {})
                out[name] = {
                    "host": node.get("resources_available.host", name), "mom": node.get("Mom", name),
                    "port": int(node.get("Port", self.mom_port)),
                    "resources_available": {k.split(".", 1)[1]: v for k, v in node.items()
                                            if k.startswith("resources_available.")},
                }
        return out

    def _assign(self, job, sign, nodes=None):
        """Add (sign=1) or release (sign=-1) the job's exec_vnode amounts on its vnodes of
        ``nodes`` (``{name: flat attribute dict}``; None: the server's own nodes, else e.g.
        a scheduling cycle's view of them)."""
        nodes = self.state.nodes if nodes is None else nodes
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
                    node["last_used_time"] = str(_now())
                self._refresh_node_state(node)

    def _log_state_change(self, job):
        """OpenPBS svr_setjobstate's line: the state letter's code and the substate."""
        self.log.job(pbslog.PBSEVENT_DEBUG3, job["id"], "Updated job state to %d and substate to %s"
                     % (ord(job["job_state"]), job["substate"]))

    def _job_slots_in_use(self, jobid):
        """``{natural vnode: {job index}}`` held by the jobs other than ``jobid`` that hold
        nodes (running or exiting), for the exec_host of a job placed now."""
        return scheduler.job_slots_in_use(other.get("exec_host") for other in self.state.jobs.values()
                                          if other.get("id") != jobid and other.get("job_state") in ("R", "E"))

    def _release_nodes(self, job, log_clearing=False):
        """Give the job's vnodes back. ``log_clearing``: log ``clearing job ... from node
        ...`` per vnode, as OpenPBS deallocate_job() does when released sisters report
        after release_nodes() (transcript g); a job's end or requeue logs no such line."""
        seen = set()
        for chunk in selectspec.parse_exec_vnode(job.get("exec_vnode", "")):
            for name, _unused in chunk:
                if log_clearing and name not in seen:
                    seen.add(name)
                    self.log.record(pbslog.PBSEVENT_DEBUG2, pbslog.OBJ_NODE, name,
                                    "clearing job %s from node %s" % (job["id"], name))
        self._assign(job, -1)

    def run_mode(self):
        """The run request the scheduler uses now (seed "job_run_wait"): ``execjob_hook``,
        ``runjob_hook`` (only while an enabled runjob hook exists) or ``none``."""
        mode = self.state.sched.get("job_run_wait", "runjob_hook")
        if mode == "runjob_hook" and not self._sorted_hooks("runjob"):
            return "none"
        return mode if mode in RUN_REQUESTS else "none"

    def _runnable(self):
        """Queued jobs and subjobs in queue order (array parents, subjobs of a held array
        and jobs of stopped queues left out)."""
        out = []
        for job in self.state.jobs.values():
            if job.get("job_state") != "Q" or job.get("array") == "True":
                continue
            if self.state.queues.get(job["queue"], {}).get("started", "True") != "True":
                continue
            parent = self._parent_of(job)
            if parent is not None and parent.get("job_state") in ("H", "F"):
                continue
            out.append(job)
        return sorted(out, key=lambda j: (int(j.get("queue_rank", "0")), int(j.get("array_index", "0"))))

    def schedule_cycle(self):
        """One scheduling cycle; returns the ids of the jobs the moms accepted (with
        ``none``/``runjob_hook``: the jobs sent). Jobs are taken one at a time in queue
        order, each considered once per cycle; with ``job_run_wait = execjob_hook`` the
        cycle waits for the mom's verdict on a job before it places the next one, so the
        vnodes of a rejected job serve later jobs of the same cycle.

        As the PBS scheduler, which queries the server's state once per cycle, the cycle
        places jobs on a view of the vnodes taken at its start, minus what the jobs it ran
        took: vnodes freed during the cycle (a job requeued or ended meanwhile) serve the
        next cycle, which their release wakes."""
        with self.lock:
            state = self.state
            if state.server.get("scheduling") != "True" or state.sched.get("scheduling", "True") != "True":
                return []
            mode = self.run_mode()
            self.sched_log.record(pbslog.PBSEVENT_DEBUG, pbslog.OBJ_REQ, "", "Starting Scheduling Cycle")
            view = copy.deepcopy(state.nodes)
        considered = set()
        started = []
        while True:
            with self.lock:
                job = placed = None
                for candidate in self._runnable():
                    if candidate["id"] in considered:
                        continue
                    considered.add(candidate["id"])
                    try:
                        placed = scheduler.place_job(candidate["schedselect"],
                                                     candidate["Resource_List"].get("place"), view,
                                                     self._job_slots_in_use(candidate["id"]))
                    except selectspec.SelectSpecError:
                        placed = None
                    if placed is None:
                        self.sched_log.job(pbslog.PBSEVENT_DEBUG2, candidate["id"],
                                           "Insufficient amount of resource: ncpus")
                        continue
                    job = candidate
                    break
                if job is None:
                    break
                jobid = job["id"]
                number, call = RUN_REQUESTS[mode]
                self.sched_log.job(pbslog.PBSEVENT_DEBUG2, jobid, "run request %s (job_run_wait=%s)"
                                   % (call, self.state.sched.get("job_run_wait", "runjob_hook")))
                self.log.record(pbslog.PBSEVENT_DEBUG2, pbslog.OBJ_REQ, "",
                                "Type %d request received from Scheduler@%s, sock=0" % (number, self.host))
                if mode == "runjob_hook" and not self._runjob_hooks_accept(job):
                    continue
                self._start_job(job, placed[0], placed[1])
                payload = (self._primary_mom(job), self.public_job(job), self._vnodes_payload(job),
                           job["run_count"])
                self.state.save()
                taken = {"id": jobid, "exec_vnode": placed[0]}
                if mode != "execjob_hook":
                    self._assign(taken, 1, nodes=view)
            if mode == "execjob_hook":
                if self._run_and_wait(jobid, payload):
                    started.append(jobid)
                    with self.lock:
                        self._assign(taken, 1, nodes=view)
            else:
                threading.Thread(target=self._send_run_job, args=(jobid, payload),
                                 name="run-%s" % jobid, daemon=True).start()
                started.append(jobid)
        with self.lock:
            self.sched_log.record(pbslog.PBSEVENT_DEBUG, pbslog.OBJ_REQ, "", "Leaving Scheduling Cycle")
            self.state.save()
        return started

    def _runjob_hooks_accept(self, job):
        """Run the enabled runjob hooks (server side) on ``job``; a reject leaves it queued
        with the scheduler's ``Not Running: PBS Error: <message>`` comment."""
        from mockpbs import hookrun  # imported late: a server without hooks does not need it

        for hook, values in self._sorted_hooks("runjob"):
            context = {
                "job": self.public_job(job), "vnode_list": {}, "vnode_list_fail": {}, "env": {},
                "argv": [], "progname": "", "in_ms_mom": False, "hostname": self.host,
                "server": self.host, "failed_mom_list": [], "succeeded_mom_list": [],
                "requestor": "Scheduler", "requestor_host": self.host, "daemon": "server",
            }
            spec = {"name": hook.name, "body": self.state.hook_path(hook.name, "PY"),
                    "config": self.state.hook_path(hook.name, "CF")
                    if self.state.read_hook_file(hook.name, "CF") is not None else None,
                    "alarm": int(values.get("alarm", "30")), "user": values.get("user"),
                    "debug": values.get("debug") == "true"}
            result = hookrun.run_hook(spec, "runjob", context, self.state.pbs_home, log=self.log)
            if result.get("accepted") and not result.get("exception") and not result.get("alarm"):
                continue
            text = result.get("reject_msg") or "request rejected by filter hook '%s'" % hook.name
            self.log.hook(pbslog.PBSEVENT_DEBUG2, hook.name, "runjob request rejected by '%s'" % hook.name)
            job["comment"] = "Not Running: PBS Error: %s" % text
            self.sched_log.job(pbslog.PBSEVENT_SCHED, job["id"],
                               "Failed to run: %s (%d)" % (text, models.PBSE_HOOKERROR))
            return False
        return True

    def _deliver(self, jobid, payload):
        """Send ``run_job`` to the job's primary mom; an unreachable mom or a refusal
        requeues the job (run_count kept, hold above 20 failed runs). True if delivered."""
        (host, port), job, vnodes, _unused = payload
        try:
            reply = wire.request(host, port, {"op": "run_job", "job": job, "vnodes": vnodes},
                                 timeout=RUN_JOB_TIMEOUT)
            if reply.get("ok"):
                return True
        except wire.WireError:
            pass
        with self.lock:
            current = self.state.jobs.get(jobid)
            if current is not None and current.get("job_state") == "R" \
                    and current.get("run_count") == payload[3]:
                self._release_nodes(current)
                self._back_to_queue(current, hold=None)
                self.log.job(pbslog.PBSEVENT_JOB, jobid, "Job requeued, execution node %s down" % host)
                self._check_failed_attempts(current)
                self._after_requeue(current)
                self.state.save()
            self.job_changed.notify_all()
        self.wake_scheduler()
        return False

    def _send_run_job(self, jobid, payload):
        self._deliver(jobid, payload)

    def _run_and_wait(self, jobid, payload):
        """``pbs_runjob``: deliver, then wait until the mom accepted the job (its program
        started) or gave it back; a rejection is logged by the scheduler as PBS does."""
        run_count = payload[3]
        accepted = self._deliver(jobid, payload)

        def settled():
            job = self.state.jobs.get(jobid)
            return (job is None or job.get("run_count") != run_count or job.get("job_state") != "R"
                    or job.get("substate") != "41")

        with self.lock:
            if accepted:
                self.job_changed.wait_for(settled, timeout=RUN_ACK_TIMEOUT)
            job = self.state.jobs.get(jobid)
            if job is not None and job.get("run_count") == run_count and job.get("job_state") == "R":
                return True
            if job is not None and job.get("job_state") == "Q":
                job["comment"] = MOM_REJECT_COMMENT
            self.sched_log.job(pbslog.PBSEVENT_SCHED, jobid, "Failed to run: %s (%d)"
                               % (models.ERROR_TEXT[models.PBSE_MOMREJECT], models.PBSE_MOMREJECT))
            return False

    def _start_job(self, job, exec_vnode, exec_host):
        now = _now()
        job["exec_vnode"] = exec_vnode
        job["exec_host"] = exec_host
        job["job_state"], job["substate"] = "R", "41"
        job["stime"] = str(now)
        job["run_count"] = str(int(job.get("run_count", "0")) + 1)
        job["run_version"] = job["run_count"]
        job["comment"] = "Job run at %s on %s" % (time.strftime("%a %b %d at %H:%M", time.localtime(now)), exec_vnode)
        job["_resource_acct"] = dict(job["Resource_List"])
        job.pop("_pruned", None)
        job.pop("session_id", None)
        self._assign(job, 1)
        parent = self._parent_of(job)
        if parent is not None:
            self._array_began(parent)
            self._refresh_array(parent)
        self.sched_log.job(pbslog.PBSEVENT_SCHED, job["id"], "Job run")
        self.log.job(pbslog.PBSEVENT_JOB, job["id"],
                     "Job Run at request of Scheduler@%s on exec_vnode %s" % (self.host, exec_vnode))
        self.log.job(pbslog.PBSEVENT_DEBUG3, job["id"], "Updated job state to 82 and substate to 41")
        self.acct.record("S", job["id"], accounting.start_record(job))

    def _back_to_queue(self, job, hold, comment=None):
        for key in ("exec_vnode", "exec_host", "session_id"):
            job.pop(key, None)
        if hold:
            current = "" if job.get("Hold_Types", "n") == "n" else job["Hold_Types"]
            job["Hold_Types"] = "".join(t for t in "uos" if t in current or t in hold)
            job["job_state"], job["substate"] = "H", "20"
        else:
            job["job_state"], job["substate"] = "Q", "10"
        if comment:
            job["comment"] = comment

    def _finish_job(self, job, exit_status):
        if job.get("_subjob"):
            self._subjob_done(job, exit_status)
            return
        if job.get("exec_vnode"):
            self._release_nodes(job)
        if self.state.server.get("job_history_enable") == "True":
            # OpenPBS svr_setjob_histinfo(): FAILED (93) for a non-zero Exit_status, else
            # FINISHED (92); update_job_finish_comment() words the comment after it.
            failed = bool(exit_status)
            job["job_state"], job["substate"] = "F", "93" if failed else "92"
            if job.get("comment"):
                job["comment"] += " and failed" if failed else " and finished"
            if exit_status is not None:
                job["Exit_status"] = str(exit_status)
        else:
            self.state.jobs.pop(job["id"], None)

    # ==================================================================
    # mom operations (PROTOCOL.md)

    def _find_node_for_mom(self, name):
        nodes = self.state.nodes
        if name in nodes:
            return name, nodes[name]
        for node_name, node in nodes.items():
            if node.get("Mom") == name:
                return node_name, node
        return None, None

    def op_mom_hello(self, message):
        """A mom (re)started. ``vnodes`` ({name: {"resources_available": {...}, other
        attribute: value}}, the natural vnode included) creates or updates one vnode per
        entry, each with this mom's ``Mom``/``Port``; without it ``resources_available``
        updates the natural vnode."""
        with self.lock:
            name, node = self._find_node_for_mom(message.get("node", ""))
            if node is None:
                # kept until "create node <name>": a mom usually starts before its node exists
                self._pending_hellos[message.get("node", "")] = message
                return {"known": False}
            self._pending_hellos.pop(message.get("node", ""), None)
            vnodes = message.get("vnodes") or {}
            natural = vnodes.get(name) or vnodes.get(message.get("node")) or {}
            self._mark_up(node, natural.get("resources_available") or message.get("resources_available"))
            self._apply_vnode_attrs(node, natural)
            for vname, entry in vnodes.items():
                if vname in (name, message.get("node")):
                    continue
                self._update_reported_vnode(name, node, vname, entry)
            self.log.record(pbslog.PBSEVENT_SYSTEM, pbslog.OBJ_NODE, name, "mom hello: node up")
            self.state.save()
            target = (node.get("Mom", name), int(node.get("Port", self.mom_port)))
        self.push_all_hooks(*target)
        self.wake_scheduler()
        return {"known": True}

    def _apply_vnode_attrs(self, vnode, entry):
        for key, value in (entry or {}).items():
            if key == "resources_available" or key.startswith("_"):
                continue
            if key in ("sharing", "comment", "priority", "queue", "resv_enable"):
                vnode[key] = str(value)

    def _update_reported_vnode(self, natural_name, natural, vname, entry):
        vnode = self.state.nodes.get(vname)
        if vnode is None:
            vnode = self._new_node(vname)
            vnode["Mom"] = natural.get("Mom", natural_name)
            vnode["Port"] = natural.get("Port", str(self.mom_port))
            self.state.nodes[vname] = vnode
            self.log.record(pbslog.PBSEVENT_ADMIN, pbslog.OBJ_NODE, vname,
                            "vnode created from the report of mom %s" % natural_name)
        vnode["_natural"] = natural_name
        self._mark_up(vnode, (entry or {}).get("resources_available"))
        self._apply_vnode_attrs(vnode, entry)

    def _running_job(self, jobid):
        job = self.state.jobs.get(jobid)
        if job is None:
            raise PbsError(models.PBSE_UNKJOBID, "Unknown Job Id %s" % jobid)
        return job

    def op_mom_job_started(self, message):
        with self.lock:
            job = self._running_job(message["jobid"])
            if job.get("session_id") == str(message.get("session")):
                self.log.job(pbslog.PBSEVENT_DEBUG3, job["id"], "Received the same SID as before: %s" % message.get("session"))
                return {}
            job["session_id"] = str(message.get("session"))
            job["substate"] = "42"
            self.log.job(pbslog.PBSEVENT_DEBUG3, job["id"], "Received session ID for job: %s" % message.get("session"))
            self.log.job(pbslog.PBSEVENT_DEBUG3, job["id"], "Updated job state to 82 and substate to 42")
            self.state.save()
            self.job_changed.notify_all()
        return {}

    def op_mom_job_update(self, message):
        """After release_nodes(): applied only if both exec_vnode and schedselect differ
        (release_nodes_semantics.md section 4); frees every vnode, reassigns the kept
        ones, regenerates exec_host, rebuilds Resource_List (site/place untouched) and
        writes the ``s`` record."""
        with self.lock:
            job = self._running_job(message["jobid"])
            new_vnode = message.get("exec_vnode")
            new_select = message.get("schedselect")
            if not new_vnode or not new_select or new_vnode == job.get("exec_vnode") \
                    or new_select == job.get("schedselect"):
                self.log.job(pbslog.PBSEVENT_DEBUG3, job["id"], "update from Mom without session id")
                return {"applied": False}
            try:
                chunks = selectspec.parse_exec_vnode(new_vnode)
                selectspec.parse_select(new_select)
            except selectspec.SelectSpecError as exc:
                raise PbsError(models.PBSE_BADATVAL, str(exc))
            job["exec_vnode_acct"] = job.get("exec_vnode")
            job["exec_host_acct"] = job.get("exec_host")
            self._release_nodes(job, log_clearing=True)
            job["exec_vnode"] = new_vnode

            job["exec_host"] = scheduler.exec_host_from_exec_vnode(
                new_vnode, scheduler.natural_vnode_of(self.state.nodes), self._job_slots_in_use(job["id"]))
            job["schedselect"] = new_select
            resources = job["Resource_List"]
            resources["select"] = new_select
            resources["nodect"] = str(sum(c.count for c in selectspec.parse_select(new_select)))
            ncpus = 0
            mem = []
            for chunk in chunks:
                for _unused, res in chunk:
                    values = dict(res)
                    ncpus += int(values.get("ncpus", "0"))
                    if "mem" in values:
                        mem.append(selectspec.size_to_kb(values["mem"]))
            resources["ncpus"] = str(ncpus)
            if mem:
                resources["mem"] = _sum_kb(mem)
            else:
                resources.pop("mem", None)
            job["_pruned"] = True
            self._assign(job, 1)
            self.log.job(pbslog.PBSEVENT_DEBUG3, job["id"], "update from Mom without session id")
            self.acct.record("s", job["id"], accounting.start_record(job))
            self.state.save()
        self.wake_scheduler()
        return {"applied": True, "exec_host": job["exec_host"]}

    def op_mom_node_update(self, message):
        """A mom hook changed vnode ``vnode``. A change made through ``vnode_list``
        (``hook_list``) by a mom (``mom``: its host name) that does not own the vnode is
        refused, as OpenPBS's ``update2_to_vnode()`` refuses an IS_UPDATE_FROM_HOOK request
        (src/server/node_manager.c): a DEBUG2 line under the sending mom, nothing changed,
        reply ``{"refused": text}``. Changes through ``vnode_list_fail`` (IS_UPDATE_FROM_HOOK2)
        and reports without ``hook_list`` apply to any vnode."""
        with self.lock:
            name = message.get("vnode")
            node = self.state.nodes.get(name)
            if node is None:
                raise PbsError(models.PBSE_UNKNODE, "Unknown node %s" % name)
            refusal = self._hook_update_refusal(node, name, message)
            if refusal is not None:
                self.log.record(pbslog.PBSEVENT_DEBUG2, pbslog.OBJ_NODE, message["mom"], refusal)
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
            self._refresh_node_state(node)
            self.log.record(pbslog.PBSEVENT_DEBUG2, pbslog.OBJ_NODE, name,
                            "Updated vnode %s's attribute state=%s per mom hook request" % (name, state))
            self.state.save()
        self.wake_scheduler()
        return {}

    @staticmethod
    def _hook_update_refusal(node, name, message):
        """The text refusing a mom hook's change of vnode ``name`` (dict ``node``), or None
        when it may be applied (see :meth:`op_mom_node_update`). The vnode's owner is its
        ``Mom`` (a host name, or the address ``create node`` gave) or its host."""
        sender = message.get("mom")
        owners = (node.get("Mom", name), node.get("resources_available.host"))
        if message.get("hook_list") != "vnode_list" or not sender or sender in owners:
            return None
        return "Not allowed to update vnode '%s', as it is owned by a different mom" % name

    def op_mom_job_obit(self, message):
        """Job done. An obit for a job that is gone or not running (already requeued) is
        ignored, and so is one whose ``run_count`` (the mom's copy of the job's) is below
        the job's current run: a late obit of an earlier run (OpenPBS job_obit: "Obit is
        for an older run version"). Reply ``{"ignored": true}`` then."""
        with self.lock:
            job = self.state.jobs.get(message.get("jobid"))
            if job is None or job.get("job_state") != "R":
                self.log.job(pbslog.PBSEVENT_DEBUG, message.get("jobid", ""),
                             "obit for a job not running, ignored")
                return {"ignored": True}
            jobid = job["id"]
            mom_run, server_run = self._reported_run(job, message)
            self.log.job(pbslog.PBSEVENT_DEBUG, jobid, "Obit received momhop:%d serverhop:%d state:%s substate:%s"
                         % (mom_run, server_run, job.get("job_state"), job.get("substate")))
            if mom_run < server_run:
                return {"ignored": True}
            for substate in OBIT_SUBSTATES:
                self.log.job(pbslog.PBSEVENT_DEBUG3, jobid, "Updated job state to %d and substate to %s"
                             % (ord("E"), substate))
            exit_status = message.get("exit_status", 0)
            if exit_status == JOB_EXEC_FAILHOOK_DELETE:
                self.log.job(pbslog.PBSEVENT_ERROR | pbslog.PBSEVENT_JOB, jobid,
                             "hook rejected request, requiring job to be deleted")
            job["resources_used"] = {k: str(v) for k, v in (message.get("resources_used") or {}).items()}
            end = _now()
            if job.get("_pruned"):
                self.acct.record("e", jobid, accounting.phase_end_record(job))
            self.acct.record("E", jobid, accounting.end_record(
                job, end, exit_status, job.get("_resource_acct") if job.get("_pruned") else None))
            used = " ".join("resources_used.%s=%s" % (k, job["resources_used"][k]) for k in sorted(job["resources_used"]))
            self.log.job(pbslog.PBSEVENT_JOB_USAGE, jobid, ("Exit_status=%s %s" % (exit_status, used)).strip())
            self._finish_job(job, exit_status)
            self.state.save()
            self.job_changed.notify_all()
        self.wake_scheduler()
        return {}

    @staticmethod
    def _reported_run(job, message):
        """``(mom's run, server's run)`` of a running ``job`` as integers: the message's
        ``run_count`` (a mom that sends none is taken to report the current run) and the
        job's ``run_version``. Raises PbsError (PBSE_IVALREQ) for a run_count that is not
        a non-negative integer."""
        server_run = int(job.get("run_version") or job.get("run_count") or "0")
        reported = message.get("run_count")
        if reported is None:
            return server_run, server_run
        if not str(reported).isdigit():
            raise PbsError(models.PBSE_IVALREQ)
        return int(reported), server_run

    def _after_requeue(self, job):
        parent = self._parent_of(job)
        if parent is not None:
            self._refresh_array(parent)

    def op_mom_job_requeue(self, message):
        """The mom gives a job back: its start failed (``reason`` says why), a hook asked
        for a rerun, or it lost a sister while running (``rerun: true``). The job returns
        to Q (H with ``hold``), its nodes are freed and no obit follows. A job whose program
        never started counts as a failed run attempt (system hold above 20). A requeue for
        a job that is not running any more, or from an earlier run of it (``run_count``
        below the job's), is ignored (reply ``{"ignored": true}``)."""
        with self.lock:
            job = self.state.jobs.get(message.get("jobid"))
            if job is None or job.get("job_state") != "R":
                self.log.job(pbslog.PBSEVENT_DEBUG, message.get("jobid", ""),
                             "requeue request for a job not running, ignored")
                return {"ignored": True}
            jobid = job["id"]
            mom_run, server_run = self._reported_run(job, message)
            if mom_run < server_run:
                self.log.job(pbslog.PBSEVENT_DEBUG, jobid, "requeue request of run %d while the job is in run %d, "
                             "ignored" % (mom_run, server_run))
                return {"ignored": True}
            never_started = job.get("substate") == "41"
            if message.get("reason"):
                self.log.job(pbslog.PBSEVENT_JOB, jobid, message["reason"])
            self.acct.record("R", jobid, accounting.end_record(
                job, _now(), message.get("exit_status", REQUEUE_EXIT_STATUS)))
            self._release_nodes(job)
            hold = message.get("hold")
            self._back_to_queue(job, hold, message.get("comment"))
            self.log.job(pbslog.PBSEVENT_JOB, jobid, "Job requeued, execution node  down")
            if never_started:
                self._check_failed_attempts(job)
            self.log.job(pbslog.PBSEVENT_DEBUG3, jobid, "Updated job state to %d and substate to %s"
                         % (72 if job["job_state"] == "H" else 81, job["substate"]))
            self._after_requeue(job)
            self.state.save()
            self.job_changed.notify_all()
        self.wake_scheduler()
        return {}
