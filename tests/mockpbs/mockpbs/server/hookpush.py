"""Ordered hook pushes from the server to its moms (PROTOCOL.md, "Mom service port":
``hook_copy`` / ``hook_delete``).

pbs_server sends a hook's files to every mom *host* once, and a mom must end up with the
server's latest version of every hook however quickly qmgr changes it. A thread per
change (and per vnode) lets an older ``hook_copy`` arrive last: the mom then keeps, say,
``enabled=false`` while the server says ``enabled=true``.

:class:`HookPusher` keeps, per mom (``(host, port)``), the set of hooks that changed
since they were last sent, and one worker thread per mom that sends them one request at
a time. Each request is built when it is sent, from the server's state at that moment
(the hook's current files, or ``hook_delete`` if the hook is gone), so a push can never
carry an older state than one sent before it, and changes queued while a request is in
flight collapse into a single later request.
"""
import threading

from mockpbs import pbslog, wire

HOOK_FILE_TYPES = ("HK", "PY", "CF")
PUSH_TIMEOUT = 10       # seconds a mom has to answer one hook_copy / hook_delete


class HookPusher:
    """Per-mom ordered hook pushes of one server.

    ``state``: the server's :class:`mockpbs.server.models.State` (``lock``, ``hooks``,
    ``hook_files(name)``, ``hook_path(name, ext)``); ``log``: its
    :class:`mockpbs.pbslog.DaemonLog`; ``host``: the server's host name (log lines)."""

    def __init__(self, state, log, host):
        self.state = state
        self.log = log
        self.host = host
        self._lock = threading.Lock()
        # (host, port) -> {hook name: {"types": changed file types (None: all), "deleted": bool}}
        self._pending = {}
        self._workers = {}      # (host, port) -> its running worker thread
        self._idle = threading.Condition(self._lock)

    def push(self, name, targets, only=None):
        """Queue hook ``name`` for every mom of ``targets`` (``[(host, port), ...]``;
        duplicates, e.g. one per vnode of a multi-vnode mom, are sent once). ``only``:
        the file types (of ``HOOK_FILE_TYPES``) that changed; None for all of them. A
        hook that no longer exists when its turn comes is sent as ``hook_delete``."""
        self._queue(name, targets, only, deleted=False)

    def push_delete(self, name, targets):
        """Queue the deletion of hook ``name`` on every mom of ``targets``: ``hook_delete``
        is sent first, then all files of a hook of that name created again meanwhile."""
        self._queue(name, targets, None, deleted=True)

    def _queue(self, name, targets, only, deleted):
        with self._lock:
            for target in dict.fromkeys(targets):
                entry = self._pending.setdefault(target, {}).setdefault(name, {"types": set(), "deleted": False})
                if only is None or entry["types"] is None:
                    entry["types"] = None
                else:
                    entry["types"] |= set(only)
                entry["deleted"] = entry["deleted"] or deleted
                self._start_worker(target)

    def queued(self, name):
        """Whether a push of hook ``name`` waits in some mom's queue (not yet being sent)."""
        with self._lock:
            return any(name in pending for pending in self._pending.values())

    def wait_idle(self, timeout):
        """Block until nothing is queued or being sent (True), or ``timeout`` seconds
        passed (False)."""
        with self._idle:
            return self._idle.wait_for(lambda: not self._workers, timeout=timeout)

    def _start_worker(self, target):
        if target in self._workers:
            return
        worker = threading.Thread(target=self._run, args=(target,), name="hook-push-%s:%d" % target,
                                  daemon=True)
        self._workers[target] = worker
        worker.start()

    def _run(self, target):
        while True:
            with self._lock:
                queued = self._pending.get(target)
                if not queued:
                    self._pending.pop(target, None)
                    del self._workers[target]
                    self._idle.notify_all()
                    return
                name = next(iter(queued))
                entry = queued.pop(name)
            self._send(target, name, entry["types"], entry["deleted"])

    def _send(self, target, name, types, deleted):
        with self.state.lock:
            exists = name in self.state.hooks
            files = self.state.hook_files(name) if exists else {}
        if deleted or not exists:
            if not self._request(target, name, {"op": "hook_delete", "name": name}):
                return
            types = None
        if not exists:
            return
        if types is not None:
            files = {ext: text for ext, text in files.items() if ext in types}
        reply = self._request(target, name, {"op": "hook_copy", "name": name, "files": files})
        host, port = target
        if reply and reply.get("ok"):
            for ext in files:
                self.log.record(pbslog.PBSEVENT_DEBUG, pbslog.OBJ_REQ, "Server@%s" % self.host,
                                "successfully sent hook file %s to %s:%d"
                                % (self.state.hook_path(name, ext), host, port))

    def _request(self, target, name, request):
        """The mom's reply, or None (logged) if it could not be reached."""
        host, port = target
        try:
            return wire.request(host, port, request, timeout=PUSH_TIMEOUT)
        except wire.WireError as exc:
            # the mom gets every hook again in its next mom_hello
            self.log.record(pbslog.PBSEVENT_DEBUG, pbslog.OBJ_REQ, "Server@%s" % self.host,
                            "failed to send %s of hook %s to %s:%d (%s)" % (request["op"], name, host, port, exc))
            return None
