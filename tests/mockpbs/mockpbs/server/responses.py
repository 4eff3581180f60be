"""Wire operations of the mock server (client operations and the mom operations of
PROTOCOL.md): which handler answers each operation, and the framing of its reply.

:class:`ServerCore` owns the :class:`mockpbs.server.context.ServerContext` every handler
works on and answers ``dispatch(message, peer) -> reply``. Client operations (private to
mockpbs.cli):

- ``qmgr``: a parsed qmgr directive (see ``mockpbs.cli.qmgr_lang.Command.to_message``); import
  content travels base64-encoded in ``content_b64``.
- ``stat_server``, ``stat_jobs`` (``ids``, ``history``), ``stat_nodes`` (``names``),
  ``submit``, ``alter``, ``delete``, ``hold``, ``release``, ``node_mark``.

Every client message carries ``user`` (the caller's user name) and ``host``. Managers
are ``root`` and the entries of the server's ``managers`` attribute.

The handlers live by concern: ``qmgr_ops`` and ``qmgr_hooks`` (qmgr), ``jobs`` and
``holds`` (job requests), ``nodes`` (vnodes, pings, the moms' node reports),
``lifecycle`` (a job's runs: the moms' job reports), ``runloop`` (the scheduling cycle).
"""
from mockpbs import wire
from mockpbs.server import context, holds, jobs, lifecycle, nodes, qmgr_ops, runloop
from mockpbs.server.errors import PBSE_IVALREQ, PbsError

# operation -> handler(ctx, message) -> reply dict (or None for an empty reply)
HANDLERS = {
    "qmgr": qmgr_ops.op_qmgr, "stat_server": qmgr_ops.op_stat_server, "stat_jobs": jobs.op_stat_jobs,
    "stat_nodes": nodes.op_stat_nodes, "submit": jobs.op_submit, "alter": jobs.op_alter,
    "delete": jobs.op_delete, "hold": holds.op_hold, "release": holds.op_release,
    "node_mark": nodes.op_node_mark,
    "mom_hello": nodes.op_mom_hello, "mom_job_started": lifecycle.op_mom_job_started,
    "mom_job_update": lifecycle.op_mom_job_update, "mom_node_update": nodes.op_mom_node_update,
    "mom_job_obit": lifecycle.op_mom_job_obit, "mom_job_requeue": lifecycle.op_mom_job_requeue,
}


class ServerCore:
    """State plus request handling; threads and sockets live in ``daemon.ServerDaemon``.

    ``ctx`` is the server context (:class:`context.ServerContext`); ``state``, ``host``,
    ``lock``, ``log``, ``sched_log``, ``hook_pusher`` and ``wake_scheduler`` (which the
    daemon replaces) are its."""

    def __init__(self, pbs_home, host, mom_port=wire.MOM_PORT, push_hooks=True):
        self.ctx = context.ServerContext(pbs_home, host, mom_port=mom_port, push_hooks=push_hooks)

    state = property(lambda self: self.ctx.state)
    host = property(lambda self: self.ctx.host)
    lock = property(lambda self: self.ctx.lock)
    log = property(lambda self: self.ctx.log)
    sched_log = property(lambda self: self.ctx.sched_log)
    hook_pusher = property(lambda self: self.ctx.hook_pusher)

    @property
    def wake_scheduler(self):
        return self.ctx.wake_scheduler

    @wake_scheduler.setter
    def wake_scheduler(self, wake):
        self.ctx.wake_scheduler = wake

    def load(self):
        """Read the saved state (or start a fresh server); True if fresh."""
        fresh = self.state.load_or_init()
        with self.lock:
            for node in self.state.nodes.values():
                nodes.refresh_state(node)
        return fresh

    def dispatch(self, message, peer=None):
        """The reply to ``message``: the handler's dict with ``ok`` true, or ``ok`` false
        with the PBS error ``code`` and ``error`` text (``hook_error`` for hook errors)."""
        handler = HANDLERS.get(message.get("op"))
        if handler is None:
            return {"ok": False, "code": PBSE_IVALREQ, "error": "Invalid request"}
        try:
            reply = handler(self.ctx, message)
        except PbsError as exc:
            return {"ok": False, "code": exc.code, "error": exc.text, "hook_error": exc.hook_error}
        reply = reply or {}
        reply.setdefault("ok", True)
        return reply

    def close(self):
        """End the server's hook interpreter (:meth:`context.ServerContext.close`)."""
        self.ctx.close()

    def schedule_cycle(self):
        """One scheduling cycle (:func:`runloop.schedule_cycle`): the ids of the jobs sent."""
        return runloop.schedule_cycle(self.ctx)

    def ping_all(self):
        """Ping every mom (:func:`nodes.ping_all`)."""
        nodes.ping_all(self.ctx)

    def _new_node(self, name):
        """A fresh vnode dict (:func:`nodes.new_node`), for tests that plant nodes."""
        return nodes.new_node(self.ctx, name)
