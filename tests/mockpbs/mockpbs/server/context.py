"""The one object every request handler of the mock server works on.

:class:`ServerContext` holds the server's state (:class:`mockpbs.server.models.State`),
its logs, its hook pusher and the hooks into the daemon (``wake_scheduler``); the
handler modules (``qmgr_ops``, ``qmgr_hooks``, ``jobs``, ``nodes``, ``lifecycle``,
``runloop``) are functions taking it as their first argument. Callers hold ``ctx.lock``
while they read or change the state.
"""
import copy
import fnmatch
import threading
import time

from mockpbs import pbslog, wire
from mockpbs.server import hookpush, models

# Seconds the server waits for a mom to answer a run_job or delete_job request.
RUN_JOB_TIMEOUT = 10.0


def now():
    """The time in whole seconds since the epoch, as PBS stamps its attributes."""
    return int(time.time())


def public_job(job):
    """A deep copy of ``job`` (dict) without the server's private ``_`` keys: what the
    clients, the moms and the hooks see."""
    return {k: copy.deepcopy(v) for k, v in job.items() if not k.startswith("_")}


def _user_matches(message, patterns_text):
    """True if ``user@host`` of ``message`` matches a pattern of the comma list
    ``patterns_text`` (a server attribute such as ``managers``)."""
    who = "%s@%s" % (message.get("user", ""), message.get("host", ""))
    patterns = [m for m in patterns_text.split(",") if m]
    return any(fnmatch.fnmatchcase(who, pattern) for pattern in patterns)


class ServerContext:
    """State, logs and collaborators of one server (see the module docstring).

    ``pbs_home``: the server's PBS_HOME; ``host``: its host name (job ids end with it);
    ``mom_port``: the port of moms whose node gives none; ``push_hooks``: False keeps
    hook files from being sent to the moms."""

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
        self.pending_hellos = {}   # node name -> mom_hello of a mom whose node does not exist yet
        self._hook_interpreter = None
        self._hook_interpreter_made = threading.Lock()

    def hook_interpreter(self):
        """The server's hook interpreter (:mod:`mockpbs.server.hook_interpreter`), made at
        the first server hook event (a server without hooks starts no child), one whichever
        thread (a client's request, the scheduler's cycle) asks first."""
        with self._hook_interpreter_made:
            if self._hook_interpreter is None:
                from mockpbs.server import hook_interpreter  # pylint: disable=import-outside-toplevel
                self._hook_interpreter = hook_interpreter.HookInterpreter(self.state.pbs_home, log=self.log)
            return self._hook_interpreter

    def close(self):
        """End what the server started besides its threads: the hook interpreter's child."""
        with self._hook_interpreter_made:
            if self._hook_interpreter is not None:
                self._hook_interpreter.close()

    @property
    def lock(self):
        return self.state.lock

    def is_manager(self, message):
        """True if the sender of ``message`` (``user``, ``host``) is root or matches the
        server's ``managers``."""
        if message.get("user", "") == "root":
            return True
        return _user_matches(message, self.state.server.get("managers", ""))

    def is_operator(self, message):
        """True if the sender of ``message`` matches the server's ``operators``."""
        return _user_matches(message, self.state.server.get("operators", ""))

    @staticmethod
    def requestor(message):
        """``user@host`` of the sender of ``message``, as PBS names it in its logs."""
        return "%s@%s" % (message.get("user", ""), message.get("host", ""))
