"""In-process mom clusters for tests: real :class:`mockpbs.mom.daemon.Mom` objects on
loopback addresses, a recording stand-in for the server, and "frozen" moms.

- :class:`RecordingServer` listens on the server port of its address, answers every
  request ``{"ok": true}`` and keeps them (``requests``, ``wait_for(op)``).
- :class:`MomCluster` gives each mom its own address, PBS_HOME under ``tmp_path`` and
  a resolver mapping the mom names to their addresses. A name in ``frozen`` gets only a
  listening IM socket that never answers (what a SIGSTOPped mom looks like).

Addresses are taken from 127.<b>.<c>.<d> with ``b`` derived from the process id, so two
test runs on one machine rarely collide.
"""
import itertools
import os
import socket
import threading
import time

from mockpbs import wire
from mockpbs.mom.daemon import Mom

_HOSTS = itertools.count(1)
_NET = 100 + os.getpid() % 150


def next_address():
    """A fresh loopback address (IPv4 string)."""
    number = next(_HOSTS)
    return "127.%d.%d.%d" % (_NET, number // 250, number % 250 + 1)


class RecordingServer:
    """Stand-in for pbs_server: records each request, answers ``{"ok": true}``."""

    def __init__(self, address):
        self.address = address
        self.requests = []
        self.cond = threading.Condition()
        self.server = wire.serve(address, wire.SERVER_PORT, self.dispatch)

    def dispatch(self, message, peer):
        with self.cond:
            self.requests.append(message)
            self.cond.notify_all()
        return {"ok": True}

    def wait_for(self, op, timeout=60, where=None):
        """First request with ``op`` (and ``where(message)`` true); AssertionError after
        ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for message in self.requests:
                    if message.get("op") == op and (where is None or where(message)):
                        return message
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError("no %s among %r" % (op, self.ops()))
                self.cond.wait(remaining)

    def ops(self):
        return [m.get("op") for m in list(self.requests)]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class MomCluster:
    """Moms ``names`` (the first is meant as primary) plus a recording server ``srv``."""

    def __init__(self, tmp_path, names=("moma", "momb", "momc"), frozen=()):
        self.tmp_path = tmp_path
        self.addresses = {name: next_address() for name in ("srv",) + tuple(names)}
        self.server = RecordingServer(self.addresses["srv"])
        self.moms = {}
        self.frozen = []
        for name in names:
            if name in frozen:
                sock = socket.socket()
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind((self.addresses[name], wire.IM_PORT))
                sock.listen(16)
                self.frozen.append(sock)
                continue
            home = os.path.join(str(tmp_path), name)
            os.makedirs(os.path.join(home, "mom_priv"), exist_ok=True)
            self.moms[name] = Mom(home, name, name, self.addresses[name], "srv",
                                  server_address=self.addresses["srv"], resolve=self.resolve)

    def resolve(self, host):
        try:
            return self.addresses[host]
        except KeyError:
            raise OSError("unknown host %s" % host) from None

    def write(self, name, relpath, text):
        """Write ``PBS_HOME/<relpath>`` of mom ``name``."""
        path = os.path.join(self.moms[name].pbs_home, relpath)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as handle:
            handle.write(text)

    def config(self, name, text):
        self.write(name, "mom_priv/config", text)

    def hook(self, name, event, body, on=None, alarm=30):
        """Install an enabled site hook of ``event`` on the moms ``on`` (default all)."""
        for mom in on or list(self.moms):
            if mom in self.moms:
                self.moms[mom].hooks.write(name, "HK", "type=site\nenabled=true\nevent=%s\nalarm=%d\n" % (event, alarm))
                self.moms[mom].hooks.write(name, "PY", body)

    def start(self):
        for mom in self.moms.values():
            assert mom.start()
        self.server.wait_for("mom_hello")

    def close(self):
        for mom in self.moms.values():
            mom.stop()
        for sock in self.frozen:
            sock.close()
        self.server.close()

    def log(self, name):
        """Lines of mom ``name``'s logs without the timestamp field."""
        logdir = os.path.join(self.moms[name].pbs_home, "mom_logs")
        lines = []
        for entry in sorted(os.listdir(logdir)):
            with open(os.path.join(logdir, entry)) as handle:
                lines.extend(line.split(";", 1)[1] for line in handle.read().splitlines())
        return lines

    def wait_log(self, name, line, timeout=60):
        """Wait until mom ``name`` logged exactly ``line``; AssertionError otherwise."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if line in self.log(name):
                return
            time.sleep(0.1)
        raise AssertionError("%s never logged %r" % (name, line))
