"""Hooks on the server: the rules of hook attributes (as ``qmgr set hook`` applies them),
the pushes of hook files to the moms, and the server-side hook events (queuejob at
submission, runjob before a job is sent to its mom).

Functions take the server context ``ctx`` (:class:`mockpbs.server.context.ServerContext`)
where they need the state; errors are hook errors (:func:`mockpbs.server.errors.hook_error`).
"""
import hashlib

from mockpbs import attributes, hookdefs, pbslog
from mockpbs.server import context, models
from mockpbs.server.errors import PBSE_HOOKERROR, PbsError, hook_error

FAIL_ACTION_EVENTS = {"execjob_begin", "exechost_startup", "execjob_prologue"}
PERIODIC_EVENTS = {"periodic", "exechost_periodic"}
FAIL_ACTION_MESSAGE = ('fail_action value of a hook must be "none" or one or more of '
                       '"offline_vnodes","clear_vnodes_upon_recovery", "scheduler_restart_cycle"')
BOOL_MESSAGE = "unexpected value '%s', must be (not case sensitive) true|t|y|1|false|f|n|0"
PBS_HOOK_ORDER_RANGE = (-1000, 2000)
SITE_HOOK_ORDER_RANGE = (1, 1000)


def check_user(hook, value):
    """``user`` as set_hook_user (OpenPBS src/lib/Libutil/hook.c) allows it: pbsadmin always;
    never anything else on a server ``periodic`` hook; pbsuser only with one of the
    USER_MOM_EVENTS. Raises the hook error PBS gives."""
    if value == "pbsadmin":
        return
    events = set(hook.events())
    if "periodic" in events:
        raise hook_error("user value of a server periodic hook must be pbsadmin")
    if value not in hookdefs.HOOK_USERS:
        raise hook_error("user value of a hook must be %s" % ",".join(hookdefs.HOOK_USERS))
    if not events & hookdefs.USER_MOM_EVENTS:
        raise hook_error("Can't set hook user value to '%s': hook event must contain at least %s"
                         % (value, ",".join(hookdefs.sort_events(hookdefs.USER_MOM_EVENTS))))


def compiles(body):
    """True if ``body`` (bytes of a hook script) compiles as Python, as the server checks
    a hook body before ``qmgr import hook`` replaces the old one (OpenPBS mgr_hook_import)."""
    try:
        compile(body, "<embedded code object>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def find_hook(ctx, name, objtype, missing_text="%s does not exist!"):
    """Hook ``name`` (a :class:`models.Hook`); a hook error when it does not exist (or
    was deleted: ``pending delete``)."""
    hook = ctx.state.hooks.get(name)
    if hook is None:
        if name in ctx.state.pending_delete:
            raise hook_error("%s is pending delete!" % name)
        raise hook_error(missing_text % name)
    return hook


def set_hook_attr(hook, attr, op, value):
    """Apply ``attr op value`` to ``hook`` as qmgr does (values checked, texts of OpenPBS)."""
    attrs = hook.attrs
    if attr == "type":
        if value.lower() == "pbs" and hook.type != "pbs":
            raise hook_error("not allowed to set hook to 'pbs' type")
        if value.lower() != hook.type:
            raise hook_error("not allowed to set hook to '%s' type" % value)
        return
    if attr in ("enabled", "debug"):
        word = value.lower()
        if word in attributes.TRUE_WORDS:
            attrs[attr] = "true"
        elif word in attributes.FALSE_WORDS:
            attrs[attr] = "false"
        else:
            raise hook_error(BOOL_MESSAGE % value)
        return
    if attr == "alarm":
        if not value.isdigit() or int(value) <= 0:
            raise hook_error("set_hook_alarm: alarm value '%s' of a hook must be > 0" % value)
        attrs["alarm"] = str(int(value))
        return
    if attr == "order":
        low, high = PBS_HOOK_ORDER_RANGE if hook.type == "pbs" else SITE_HOOK_ORDER_RANGE
        try:
            number = int(value)
        except ValueError:
            number = None
        if number is None or not low <= number <= high:
            raise hook_error("order given (%s) is outside the acceptable range of [%d, %d] for type '%s'."
                             % (value, low, high, hook.type))
        attrs["order"] = str(number)
        return
    if attr == "user":
        check_user(hook, value)
        attrs["user"] = value
        return
    if attr == "freq":
        if not PERIODIC_EVENTS & set(hook.events()):
            raise hook_error("set_hook_freq: Can't set hook freq value: hook event must contain "
                             "at least'exechost_periodic' or 'periodic'")
        if not value.isdigit() or int(value) <= 0:
            raise hook_error("set_hook_freq: freq value '%s' of a hook must be > 0" % value)
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
            raise hook_error(FAIL_ACTION_MESSAGE)
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
        set_hook_events(hook, op, value)
        return
    raise hook_error("unknown hook attribute %s" % attr)


def set_hook_events(hook, op, value):
    """Apply ``event op value`` to ``hook``, with its side effects on user, fail_action
    and freq."""
    words = [w.strip() for w in value.split(",") if w.strip()]
    for word in words:
        if word not in hookdefs.EVENTS:
            raise hook_error(hookdefs.BAD_EVENT_MESSAGE % value)
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


def unset_hook_attr(hook, attr):
    """Unset ``attr`` of ``hook`` (``type`` cannot be unset)."""
    if attr == "type":
        return
    hook.attrs.pop(attr, None)


def mom_addresses(ctx):
    """``[(host, port), ...]``: one entry per mom (the vnodes of a multi-vnode mom share
    their mom's), in node creation order."""
    with ctx.lock:
        addresses = [(n.get("Mom", name), int(n.get("Port", ctx.mom_port))) for name, n in ctx.state.nodes.items()]
    return list(dict.fromkeys(addresses))


def push_hook(ctx, name, only=None, targets=None):
    """Send hook ``name`` (file types ``only``, None for all) to every mom, or to
    ``targets``; ordered per mom by :class:`hookpush.HookPusher`."""
    if ctx.push_hooks:
        ctx.hook_pusher.push(name, targets if targets is not None else mom_addresses(ctx), only)


def push_hook_delete(ctx, name):
    """Tell every mom that hook ``name`` is gone."""
    if ctx.push_hooks:
        ctx.hook_pusher.push_delete(name, mom_addresses(ctx))


def push_all_hooks(ctx, host, port, held=None):
    """Send every hook to the mom at ``host:port`` (a mom that just said hello). ``held``
    (``{name: {ext: sha256 hex}}``, the mom's hook checksums): a hook whose files the mom
    already holds, the same, is not sent (a real server copies only the hooks whose
    checksums differ: a mom's reload or restart gets no ``.HK`` copy of unchanged hooks).
    None: every hook is sent."""
    with ctx.lock:
        names = list(ctx.state.hooks)
        if held is not None:
            names = [n for n in names if held.get(n) != dict(
                (ext, hashlib.sha256(text.encode("utf-8")).hexdigest())
                for ext, text in ctx.state.hook_files(n).items())]
    for name in names:
        push_hook(ctx, name, targets=[(host, port)])


def sorted_hooks(ctx, event):
    """``[(hook, effective attributes), ...]``: the enabled hooks of ``event`` in the
    order they run (``order``, then name)."""
    hooks = []
    for hook in ctx.state.hooks.values():
        values = hook.effective()
        if values.get("enabled") == "true" and event in hook.events():
            hooks.append((int(values.get("order", "1")), hook.name, hook, values))
    return [(h, v) for _unused, _unused, h, v in sorted(hooks, key=lambda t: (t[0], t[1]))]


def _run_server_hook(ctx, hook, values, event, job, requestor):
    """Run ``hook`` (effective attributes ``values``) for server ``event`` on ``job``
    (dict), asked by ``requestor`` = ``(user, host)``, in the server's long-lived hook
    interpreter (:class:`mockpbs.server.hook_interpreter.HookInterpreter`); the result dict
    of :func:`mockpbs.hookrun.run_hook` (``accepted``, ``reject_msg``, ``alarm``,
    ``exception``, ``job``: the hook's changes)."""

    hook_context = {
        "job": context.public_job(job), "vnode_list": {}, "vnode_list_fail": {}, "env": {},
        "argv": [], "progname": "", "in_ms_mom": False, "hostname": ctx.host,
        "server": ctx.host, "failed_mom_list": [], "succeeded_mom_list": [],
        "requestor": requestor[0], "requestor_host": requestor[1], "daemon": "server",
    }
    spec = {"name": hook.name, "body": ctx.state.hook_path(hook.name, "PY"),
            "config": ctx.state.hook_path(hook.name, "CF")
            if ctx.state.read_hook_file(hook.name, "CF") is not None else None,
            "alarm": int(values.get("alarm", "30")), "user": values.get("user"),
            "debug": values.get("debug") == "true"}
    return ctx.hook_interpreter().run(spec, event, hook_context,
                                      script_version=ctx.state.script_versions.get(hook.name, 0),
                                      server_attributes=ctx.state.server)


def run_queuejob_hooks(ctx, job, message):
    """Run the enabled queuejob hooks on ``job`` (dict, changed in place by what they
    change), submitted by ``message``'s user; PbsError (PBSE_HOOKERROR) when one rejects
    the job, hits its alarm or raises."""
    hooks = sorted_hooks(ctx, "queuejob")
    for hook, values in hooks:
        ctx.log.hook(pbslog.PBSEVENT_DEBUG3, hook.name, "started")
        result = _run_server_hook(ctx, hook, values, "queuejob", job,
                                  (message.get("user", ""), message.get("host", "")))
        ctx.log.hook(pbslog.PBSEVENT_DEBUG3, hook.name, "finished")
        if result.get("alarm"):
            raise PbsError(PBSE_HOOKERROR, "request rejected as filter hook '%s' got an "
                           "alarm call. Please inform Admin" % hook.name)
        if result.get("exception"):
            raise PbsError(PBSE_HOOKERROR, "request rejected as filter hook '%s' encountered "
                           "an exception. Please inform Admin" % hook.name)
        if not result.get("accepted"):
            ctx.log.hook(pbslog.PBSEVENT_DEBUG2, hook.name, "queuejob request rejected by '%s'" % hook.name)
            raise PbsError(PBSE_HOOKERROR, result.get("reject_msg")
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


def runjob_hooks_accept(ctx, job):
    """Run the enabled runjob hooks (server side) on ``job``; a reject leaves it queued
    with the scheduler's ``Not Running: PBS Error: <message>`` comment."""
    for hook, values in sorted_hooks(ctx, "runjob"):
        result = _run_server_hook(ctx, hook, values, "runjob", job, ("Scheduler", ctx.host))
        if result.get("accepted") and not result.get("exception") and not result.get("alarm"):
            continue
        text = result.get("reject_msg") or "request rejected by filter hook '%s'" % hook.name
        ctx.log.hook(pbslog.PBSEVENT_DEBUG2, hook.name, "runjob request rejected by '%s'" % hook.name)
        job["comment"] = "Not Running: PBS Error: %s" % text
        ctx.sched_log.job(pbslog.PBSEVENT_SCHED, job["id"],
                          "Failed to run: %s (%d)" % (text, PBSE_HOOKERROR))
        return False
    return True
