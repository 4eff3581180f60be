"""``pbs_server``: the mock server daemon (PROTOCOL.md, "Processes of a node").

``main(argv)`` reads pbs.conf (``PBS_CONF_FILE`` honoured), binds port 15001 on the
address ``PBS_SERVER`` resolves to (else the host name's address), daemonizes with a
double fork and returns 0 in the launching process only once the port listens (a pipe
carries the readiness). The daemon writes its PID to ``PBS_HOME/server_priv/server.lock``,
logs to ``PBS_HOME/server_logs/YYYYMMDD`` as ``Server@<host>`` and stops cleanly on SIGTERM.

:class:`ServerDaemon` is the same server without the fork, for in-process use (tests).
"""
import os
import signal
import socket
import sys
import threading

from mockpbs import PBS_VERSION, pbsconf, pbslog, wire
from mockpbs.server import responses, scheduler


class ServerDaemon:
    """Listener + scheduler thread + mom pinger around a :class:`responses.ServerCore`.

    ``host``: the server's host name (job ids end with it); ``address``: the IP to bind;
    ``ping_interval``/``sched_interval``: seconds between mom pings / periodic cycles."""

    def __init__(self, pbs_home, host, address, port=wire.SERVER_PORT, mom_port=wire.MOM_PORT,
                 ping_interval=5.0, sched_interval=5.0):
        self.core = responses.ServerCore(pbs_home, host, mom_port=mom_port)
        self.address = address
        self.port = port
        self.ping_interval = ping_interval
        self.scheduler = scheduler.Scheduler(self.core.schedule_cycle, sched_interval, log=self.core.sched_log)
        self.core.wake_scheduler = self.scheduler.wake
        self._listener = None
        self._stop = threading.Event()
        self._pinger = threading.Thread(target=self._ping_loop, name="mom-pinger", daemon=True)

    def start(self):
        """Load state, bind and start serving; raises OSError if the port cannot be bound."""
        pbs_home = self.core.state.pbs_home
        for sub in ("server_priv", "server_logs", "sched_logs", "sched_priv"):
            os.makedirs(os.path.join(pbs_home, sub), exist_ok=True)
        self.core.load()
        self._listener = wire.serve(self.address, self.port, self.core.dispatch)
        self.core.log.svr(pbslog.PBSEVENT_SYSTEM | pbslog.PBSEVENT_ADMIN, "Server@%s" % self.core.host,
                          "Server@%s: pbs_version=%s listening on %s:%d"
                          % (self.core.host, PBS_VERSION, self.address, self.port))
        self.scheduler.start()
        self._pinger.start()
        self.scheduler.wake()
        return self

    def _ping_loop(self):
        while not self._stop.wait(self.ping_interval):
            try:
                self.core.ping_all()
            except Exception as exc:  # keep pinging whatever one node did
                self.core.log.svr(pbslog.PBSEVENT_ERROR, "Server@%s" % self.core.host, "ping failed: %s" % exc)

    def stop(self):
        self._stop.set()
        if self._listener is not None:
            self._listener.shutdown()
            self._listener.server_close()
        self.scheduler.stop()
        self.core.close()
        with self.core.lock:
            self.core.state.save()
        self.core.log.svr(pbslog.PBSEVENT_SYSTEM, "Server@%s" % self.core.host, "Server shutdown")


def _serve_forever(daemon, ready_fd):
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    signal.signal(signal.SIGINT, lambda *_: stopped.set())
    try:
        daemon.start()
    except OSError as exc:
        os.write(ready_fd, ("error: %s" % exc).encode())
        os.close(ready_fd)
        os._exit(1)
    lock_path = os.path.join(daemon.core.state.priv, "server.lock")
    with open(lock_path, "w") as handle:
        handle.write("%d\n" % os.getpid())
    os.write(ready_fd, b"ok")
    os.close(ready_fd)
    while not stopped.wait(1.0):
        pass
    daemon.stop()
    try:
        os.unlink(lock_path)
    except OSError:
        pass
    os._exit(0)


def main(argv=None):
    """``pbs_server [--version]``: start the daemon; 0 once it listens, 1 otherwise."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--version" in argv:
        print("pbs_version = %s" % PBS_VERSION)
        return 0
    conf = pbsconf.load()
    host = conf.get("PBS_SERVER") or socket.gethostname()
    daemon = ServerDaemon(conf["PBS_HOME"], host, wire.resolve_address(host))
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid:
        os.close(write_fd)
        chunks = []
        while True:
            data = os.read(read_fd, 4096)
            if not data:
                break
            chunks.append(data)
        os.close(read_fd)
        os.waitpid(pid, 0)
        status = b"".join(chunks).decode(errors="replace")
        if status == "ok":
            return 0
        sys.stderr.write("pbs_server: %s\n" % (status or "daemon failed to start"))
        return 1
    # first child: new session, fork again so the daemon is no session leader
    os.close(read_fd)
    os.setsid()
    if os.fork():
        os._exit(0)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.chdir("/")
    _serve_forever(daemon, write_fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
