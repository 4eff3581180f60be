"""``pbs_mom``: the mock mom daemon (see tests/mockpbs/PROTOCOL.md).

``main(argv)`` reads pbs.conf (``PBS_CONF_FILE`` honoured), reads ``mom_priv/config``
(refusing to start with ``<argv0>: config file(s) parsing failed`` and exit 1 when a line
does not parse), daemonizes, and returns 0 once ports 15002 (service) and 15003
(inter-mom) listen on the address of the host name. ``SIGHUP`` re-reads the config (a
bad line makes the mom exit, as the real one does); ``SIGTERM`` stops it.

:class:`Mom` is the daemon itself, usable in-process (tests give it an address, a
server address and a host resolver).
"""
import os
import signal
import socket
import sys
import threading
import time

import mockpbs
from mockpbs import pbsconf, pbslog, wire
from mockpbs.mom import config as momconfig
from mockpbs.mom import vnodedefs
from mockpbs.mom.hooks import HookStore
from mockpbs.mom.jobs import MomJobs

DEFAULT_ALARM = 30   # PP-928 interfaces 3/4: no hook of the event -> 30 seconds
PBS_MAX_POLL_DOWNTIME = 300   # seconds: $max_poll_downtime when never set (include/job.h)
HELLO_RETRY = 2.0


def total_memory_kb():
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Mom:
    """One mom. ``pbs_home`` its PBS_HOME; ``node_name`` the natural vnode name;
    ``host_name`` the host name the server uses in exec_host; ``address`` the IP to bind;
    ``server_name``/``server_address`` where ``mom_hello`` and job reports go;
    ``resolve(host) -> address`` finds sister moms (default: the resolver)."""

    def __init__(self, pbs_home, node_name, host_name, address, server_name, server_address=None,
                 resolve=None, service_port=wire.MOM_PORT, im_port=wire.IM_PORT,
                 server_port=wire.SERVER_PORT, exit_on_bad_config=None, mom_node_name_set=False):
        self.pbs_home = pbs_home
        self.node_name = node_name
        self.host_name = host_name
        self.address = address
        self.server_name = server_name
        self.server_address = server_address
        self.resolve = resolve or socket.gethostbyname
        self.service_port = service_port
        self.im_port = im_port
        self.server_port = server_port
        self.exit_on_bad_config = exit_on_bad_config
        self.mom_node_name_set = mom_node_name_set
        self.priv = os.path.join(pbs_home, "mom_priv")
        os.makedirs(self.priv, exist_ok=True)
        self.log = pbslog.DaemonLog(os.path.join(pbs_home, "mom_logs"), "pbs_mom")
        self.hook_log = pbslog.DaemonLog(os.path.join(pbs_home, "mom_logs"), "pbs_python")
        self.hooks = HookStore(os.path.join(self.priv, "hooks"))
        self.config = momconfig.MomConfig()
        # The values the mom holds, as real pbs_mom's globals (mom_main.c): set from the
        # config line, else summed from the hooks at the start and at each .HK copy, 30 s
        # after a SIGHUP (see _derive_at_start, _derive_at_hook_copy).
        self.joinjob_alarm_time = DEFAULT_ALARM
        self.job_launch_delay_time = DEFAULT_ALARM
        # update_joinjob_alarm_time / update_job_launch_delay: the config has no line.
        self.update_joinjob_alarm_time = True
        self.update_job_launch_delay = True
        # $max_poll_downtime in seconds. As in mom_main.c, a reload never resets it: a line
        # removed from the config leaves the last value set in force until the mom restarts.
        self.max_poll_downtime = PBS_MAX_POLL_DOWNTIME
        # When this mom's connection to its peers came up (time.time()), the mock's stand-in
        # for pbs_comm's net_restore_handler(): set when the mom starts listening.
        self.net_up_time = None
        self.vnode_definitions = {}         # from mom_priv/config.d ($configversion 2 files)
        self.jobs = MomJobs(self)
        self.servers = []
        self.stopped = threading.Event()
        # Set by SIGTERM: the mom answers no more sister requests (a real pbs_mom killed
        # while frozen, so with a JOIN_JOB waiting, never answers it: test_report.py).
        self.terminating = threading.Event()
        self.signal_fd = None   # read end of the signal wakeup pipe (_serve_forever)
        self.hello_done = threading.Event()

    # ------------------------------------------------------------ config
    def _log_banner(self):
        self.log.svr(pbslog.PBSEVENT_SYSTEM, "Log", "Log opened")
        self.log.svr(pbslog.PBSEVENT_SYSTEM, "pbs_mom", "pbs_version=%s" % mockpbs.PBS_VERSION)
        self.log.svr(pbslog.PBSEVENT_SYSTEM, "pbs_mom", "pbs_build=mach=N/A:security=N/A:configure_args=N/A")
        self.log.svr(pbslog.PBSEVENT_SYSTEM, "pbs_mom", "hostname=%s;pbs_leaf_name=N/A;pbs_mom_node_name=%s"
                     % (self.host_name, self.node_name if self.mom_node_name_set else "N/A"))

    def read_config(self):
        """Read mom_priv/config; returns True when every line parsed."""
        self.config = momconfig.read_config(os.path.join(self.priv, "config"), self.log)
        if not self.config.ok:
            return False
        # read_config(): -1 unless a line sets it; initialize() turns a -1 left into 30
        # (the start sums the hooks in between: _derive_at_start).
        self.update_joinjob_alarm_time = self.config.sister_join_job_alarm is None
        self.update_job_launch_delay = self.config.job_launch_delay is None
        self.joinjob_alarm_time = (DEFAULT_ALARM if self.update_joinjob_alarm_time
                                   else self.config.sister_join_job_alarm)
        self.job_launch_delay_time = (DEFAULT_ALARM if self.update_job_launch_delay
                                      else self.config.job_launch_delay)
        if self.config.max_poll_downtime is not None:
            self.max_poll_downtime = self.config.max_poll_downtime
        self.vnode_definitions = vnodedefs.read_config_d(os.path.join(self.priv, "config.d"), self.log)
        return True

    def is_cray(self):
        """True for a Cray (MOM_ALPS) mom: ``$alps_client`` is set in mom_priv/config.
        Such a primary mom ignores ``tolerate_node_failures`` (PP-928 interface 1)."""
        return self.config.alps_client is not None

    def vnodes(self):
        """{vnode: {"resources_available": {...}, other attributes}} this mom reports:
        the natural vnode plus the vnodes of the ``config.d`` definition files."""
        natural = {"ncpus": str(os.cpu_count() or 1), "mem": "%dkb" % total_memory_kb()}
        return vnodedefs.mom_vnodes(self.vnode_definitions, self.node_name, self.host_name, natural)

    def join_alarm(self):
        """Effective ``$sister_join_job_alarm`` in seconds (interface 3): the value held."""
        return self.joinjob_alarm_time

    def launch_delay(self):
        """Effective ``$job_launch_delay`` in seconds (interface 4): the value held."""
        return self.job_launch_delay_time

    def _derive_at_start(self):
        """At the mom's start (mom_main.c, the hooks directory read after the config): an
        option with no config line is the sum of the alarms of the enabled hooks having its
        event (a hook with both events counts for both); none, 30. Nothing is logged."""
        begin, prologue = self.hooks.alarm_sums(both_count_for_both=True)
        if self.update_joinjob_alarm_time:
            self.joinjob_alarm_time = begin if begin is not None else DEFAULT_ALARM
        if self.update_job_launch_delay:
            self.job_launch_delay_time = prologue if prologue is not None else DEFAULT_ALARM

    def _derive_at_hook_copy(self):
        """After the server copied a ``.HK`` file (req_copy_hookfile): the options with no
        config line are summed again over the enabled hooks; while the join alarm has no
        line, a hook having both events counts for it only; an option no enabled hook counts
        for keeps the value held. Logs ``joinjob_alarm_time updated to N`` /
        ``job_launch_delay updated to N`` (log_err: class 0001, Svr, pbs_mom)."""
        begin, prologue = self.hooks.alarm_sums(join_derived=self.update_joinjob_alarm_time)
        if self.update_joinjob_alarm_time and begin is not None:
            self.joinjob_alarm_time = begin
            self.log.svr(pbslog.PBSEVENT_ERROR, "pbs_mom",
                         "req_copy_hookfile, joinjob_alarm_time updated to %d" % begin)
        if self.update_job_launch_delay and prologue is not None:
            self.job_launch_delay_time = prologue
            self.log.svr(pbslog.PBSEVENT_ERROR, "pbs_mom",
                         "req_copy_hookfile, job_launch_delay updated to %d" % prologue)

    def _log_cpus(self):
        cpus = os.cpu_count() or 1
        self.log.record(pbslog.PBSEVENT_SYSTEM, pbslog.OBJ_NONE, "ncpus", "hyperthreading disabled")
        self.log.record(pbslog.PBSEVENT_SYSTEM, pbslog.OBJ_NONE, "initialize",
                        "pcpus=%d, OS reports %d cpu(s)" % (cpus, cpus))

    def _config_failed(self):
        self.log.svr(pbslog.PBSEVENT_SYSTEM, "Log", "Log closed")
        self.stop()
        if self.exit_on_bad_config is not None:
            self.exit_on_bad_config()

    def hangup(self):
        """What SIGHUP does (transcript f). Returns False when the config failed (the mom
        has then stopped)."""
        self.log.record(pbslog.PBSEVENT_SYSTEM, pbslog.OBJ_NONE, "catch_hup", "caught signal 1")
        self.log.record(pbslog.PBSEVENT_SYSTEM, pbslog.OBJ_NONE, "process_hup", "reset")
        self.log.svr(pbslog.PBSEVENT_SYSTEM, "Log", "Log closed")
        self._log_banner()
        self.log.record(pbslog.PBSEVENT_SYSTEM, pbslog.OBJ_NONE, "setup_env",
                        "read environment from %s" % os.path.join(self.pbs_home, "pbs_environment"))
        if not self.read_config():
            self._config_failed()
            return False
        self._log_cpus()
        # The server learns the new vnodes and resources, but a real mom logs no HELLO
        # after a SIGHUP (only at its start): transcript f, and the openpbs backend.
        self.hello_done.clear()
        self._start_hello(log=False)
        return True

    # ------------------------------------------------------------ start / stop
    def start(self, hello=True):
        """Log the banner, read the config, listen. Returns False (nothing listening)
        when the config does not parse; raises OSError when a port cannot be bound."""
        self._log_banner()
        if not self.read_config():
            return False
        self._derive_at_start()
        self._log_cpus()
        self.servers.append(wire.serve(self.address, self.service_port, self.dispatch_service))
        self.servers.append(wire.serve(self.address, self.im_port, self.dispatch_im))
        self.net_up_time = time.time()
        self.log.record(pbslog.PBSEVENT_SYSTEM | pbslog.PBSEVENT_ADMIN, "Fil", "pbs_mom",
                        "Version %s, started, initialization type = 0" % mockpbs.PBS_VERSION)
        self.log.svr(pbslog.PBSEVENT_SYSTEM, "pbs_mom", "Mom pid = %d ready, using ports Server:%d MOM:%d RM:%d"
                     % (os.getpid(), self.server_port, self.service_port, self.im_port))
        if hello:
            self._start_hello()
        return True

    def stop(self):
        self.stopped.set()
        for server in self.servers:
            server.shutdown()
            server.server_close()
        self.servers = []

    def _start_hello(self, log=True):
        threading.Thread(target=self._hello_loop, args=(log,), name="mom-hello", daemon=True).start()

    def _hello_loop(self, log=True):
        vnodes = self.vnodes()
        message = {"op": "mom_hello", "node": self.node_name, "host": self.host_name,
                   "resources_available": dict(vnodes[self.node_name]["resources_available"]),
                   "vnodes": vnodes, "hook_checksums": self.hooks.checksums()}
        while not self.stopped.is_set() and not self.hello_done.is_set():
            try:
                reply = wire.request(self._server_address(), self.server_port, message, timeout=10)
            except (wire.WireError, OSError):
                reply = None
            if reply is not None and reply.get("ok"):
                if log:
                    self.log.svr(pbslog.PBSEVENT_SYSTEM, "pbs_mom", "HELLO sent to server at %s:%d, stream:0"
                                 % (self.server_name, self.server_port))
                self.hello_done.set()
                return
            self.stopped.wait(HELLO_RETRY)

    def _server_address(self):
        return self.server_address or self.resolve(self.server_name)

    def address_of(self, host):
        return self.resolve(host)

    def send_server(self, message):
        """Send one report to the server; retried a few times, errors logged."""
        for attempt in range(5):
            try:
                reply = wire.request(self._server_address(), self.server_port, message, timeout=30)
                return reply
            except wire.WireError as exc:
                error = exc
                time.sleep(1 + attempt)
        self.log.svr(pbslog.PBSEVENT_ERROR, "pbs_mom", "unable to send %s to server: %s" % (message.get("op"), error))
        return None

    def run_hook(self, hook, event, context):
        from mockpbs import hookrun
        return hookrun.run_hook(hook, event, context, self.pbs_home)

    # ------------------------------------------------------------ dispatch
    def dispatch_service(self, message, peer):
        op = message.get("op")
        if op == "ping":
            # The server refreshes the natural vnode's resources from this (ping_node).
            natural = self.vnodes().get(self.node_name) or {}
            return {"ok": True, "node": self.node_name,
                    "resources_available": dict(natural.get("resources_available") or {})}
        if op == "hook_copy":
            return self.hook_copy(message, peer)
        if op == "hook_delete":
            self.log.record(pbslog.PBSEVENT_DEBUG2, pbslog.OBJ_REQ, "",
                            "Type 86 request received from root@%s:%d, sock=0" % (peer, self.server_port))
            self.hooks.delete(message["name"])
            return {"ok": True}
        if op == "run_job":
            self.log.record(pbslog.PBSEVENT_DEBUG2, pbslog.OBJ_REQ, "",
                            "Type 1 request received from root@%s:%d, sock=0" % (peer, self.server_port))
            return self.jobs.primary.run_job(message)
        if op == "delete_job":
            self.log.record(pbslog.PBSEVENT_DEBUG2, pbslog.OBJ_REQ, "",
                            "Type 6 request received from root@%s:%d, sock=0" % (peer, self.server_port))
            return self.jobs.running.delete_job(message)
        return {"ok": False, "code": 15004, "error": "Invalid request"}

    def _sigterm_arrived(self):
        """SIGTERM delivered, though the main thread may not have run its handler yet (a
        frozen mom resumed with SIGTERM pending: this thread can run first)."""
        if self.signal_fd is not None and not self.terminating.is_set():
            try:
                if bytes([signal.SIGTERM]) in os.read(self.signal_fd, 512):
                    self.terminating.set()
            except (BlockingIOError, OSError):
                pass
        return self.terminating.is_set()

    def dispatch_im(self, message, peer):
        if self._sigterm_arrived():
            self.stopped.wait()         # no answer: the connection ends with the process
            return None
        handlers = {
            "join_job": self.jobs.sister.join_job,
            "exec_prologue": self.jobs.sister.exec_prologue,
            "update_job": self.jobs.sister.update_job,
            "delete_job2": self.jobs.sister.delete_job2,
            "delete_job": self.jobs.sister.delete_job,
            "poll_job": self.jobs.sister.poll_job,
            "spawn_task": self.jobs.tm.spawn_task,
            "tm_nodeinfo": self.jobs.tm.nodeinfo,
            "tm_spawn": self.jobs.tm.spawn,
        }
        handler = handlers.get(message.get("op"))
        if handler is None:
            return {"ok": False, "code": 15004, "error": "Invalid request"}
        return handler(message)

    def hook_copy(self, message, peer):
        """Write the given hook files (0700); after a ``.HK`` recompute the alarm defaults
        the way ``req_copy_hookfile`` does, logging ``joinjob_alarm_time updated to N``."""
        name = message["name"]
        files = message.get("files") or {}
        for ext in ("HK", "PY", "CF"):
            if ext not in files:
                continue
            self.log.record(pbslog.PBSEVENT_DEBUG2, pbslog.OBJ_REQ, "",
                            "Type 85 request received from root@%s:%d, sock=0" % (peer, self.server_port))
            self.hooks.write(name, ext, files[ext])
            self.log.hook(pbslog.PBSEVENT_DEBUG, "%s.%s" % (name, ext), "copy hook-related file request received")
            if ext == "HK":
                self._derive_at_hook_copy()
        return {"ok": True}


# ---------------------------------------------------------------- process entry point
def _short_hostname():
    return socket.gethostname().split(".")[0]


def build_from_conf(exit_on_bad_config=None):
    """A :class:`Mom` configured from pbs.conf and the environment."""
    conf = pbsconf.load()
    host = _short_hostname()
    node_name = conf.get("PBS_MOM_NODE_NAME") or host
    server = conf.get("PBS_SERVER") or host
    address = socket.gethostbyname(socket.gethostname())
    service_port = int(conf.get("PBS_MOM_SERVICE_PORT", wire.MOM_PORT))
    im_port = int(conf.get("PBS_MANAGER_SERVICE_PORT", wire.IM_PORT))
    return Mom(conf["PBS_HOME"], node_name, host, address, server.split(".")[0],
               service_port=service_port, im_port=im_port, exit_on_bad_config=exit_on_bad_config,
               mom_node_name_set=bool(conf.get("PBS_MOM_NODE_NAME")))


def _serve_forever(mom):
    pending = []
    signal.signal(signal.SIGHUP, lambda s, f: pending.append(s))
    signal.signal(signal.SIGTERM, lambda s, f: (mom.terminating.set(), pending.append(s)))
    # Python's C-level handler writes each signal's number here at once, whichever thread
    # runs first after a SIGCONT; the sister requests check it (Mom._sigterm_arrived).
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    os.set_blocking(write_fd, False)
    try:
        signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    except TypeError:               # Python 3.6: no warn_on_full_buffer
        signal.set_wakeup_fd(write_fd)
    mom.signal_fd = read_fd
    signal.signal(signal.SIGINT, lambda s, f: pending.append(s))
    while not mom.stopped.is_set():
        time.sleep(0.2)
        while pending:
            sig = pending.pop(0)
            if sig == signal.SIGHUP:
                if not mom.hangup():
                    return 1
            else:
                mom.log.record(pbslog.PBSEVENT_SYSTEM, pbslog.OBJ_NONE, "stop_me", "caught signal %d" % sig)
                mom.log.svr(pbslog.PBSEVENT_SYSTEM, "Log", "Log closed")
                mom.stop()
                return 0
    return 0


def main(argv):
    """``pbs_mom``: returns 0 once listening (the daemon keeps running), 1 on failure."""
    progname = sys.argv[0] if sys.argv and sys.argv[0] else "pbs_mom"
    if progname == "pbs_mom":
        conf_exec = pbsconf.load().get("PBS_EXEC", "/opt/pbs")
        progname = os.path.join(conf_exec, "sbin", "pbs_mom")
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid:
        os.close(write_fd)
        with os.fdopen(read_fd) as pipe:
            status = pipe.read()
        os.waitpid(pid, os.WNOHANG)
        if status.startswith("OK"):
            return 0
        sys.stderr.write("%s: %s\n" % (progname, status.strip() or "failed to start"))
        return 1
    os.close(read_fd)
    os.setsid()
    code = 1
    try:
        mom = build_from_conf()
        try:
            started = mom.start()
        except OSError as exc:
            os.write(write_fd, ("cannot bind ports: %s" % exc).encode())
            os._exit(1)
        if not started:
            os.write(write_fd, b"config file(s) parsing failed")
            os._exit(1)
        with open(os.path.join(mom.priv, "mom.lock"), "w") as lock:
            lock.write("%d\n" % os.getpid())
        os.write(write_fd, b"OK")
        os.close(write_fd)
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        code = _serve_forever(mom)
    except BaseException as exc:  # never return into the caller's code path from the child
        try:
            os.write(write_fd, ("%s" % exc).encode())
        except OSError:
            pass
    finally:
        os._exit(code)
