"""``atomd``: the mock ATOM service, HTTP/1.1 on a UNIX socket (the design of the Shasta
PBS Cray ATOM hook: "Forming the URIs", execjob_begin/execjob_end details).

API (JSON bodies; job ids percent-encoded in paths):

| request | answer |
| --- | --- |
| ``POST /rm/v1/jobs`` ``{"jobid": str, "uid": int, "exclusive": bool}`` | 200 + the job record; 400 if the job is already registered or the body is malformed |
| ``GET /rm/v1/jobs`` | 200 ``{"jobs": [record, ...]}`` (in registration order) |
| ``GET /rm/v1/jobs/<jobid>`` | 200 + record, or 404 |
| ``DELETE /rm/v1/jobs/<jobid>`` | 204 (no body), or 404 for an unknown job |
| anything else | 404 (unknown path) or 405 (method) |

A record is ``{"jobid", "uid", "exclusive", "registered" (epoch seconds)}``. Faults are
injected per :mod:`mockpbs.atom.faults`. Every request is appended as one JSON line to
``<socket>.log``: ``{"time", "method", "path", "jobid", "body", "status" (None when
dropped), "fault" (the action used, or None)}``. :mod:`mockpbs.atom.handler` reads the
requests and applies the faults; :class:`AtomService` answers them.

Command line (``python -m mockpbs atomd ...``)::

    atomd [--socket PATH] [--foreground]   serve; without --foreground it daemonizes and
                                           returns 0 once the socket listens (PID in
                                           <socket>.pid), 1 if it cannot
    atomd [--socket PATH] --inject SPEC    change the fault plan (repeatable, see faults)
    atomd [--socket PATH] --jobs           print the registered jobs as JSON
    atomd [--socket PATH] --faults         print the fault plan as JSON
    atomd [--socket PATH] --stop           SIGTERM the daemon, wait until its socket is gone

The socket is ``--socket``, else ``$ATOMD_SOCKET``, else ``/var/run/atomd/atomd.sock``.
"""
import argparse
import json
import os
import signal
import socket
import sys
import threading
import time
import urllib.parse

from mockpbs import atom
from mockpbs.atom import client, faults
from mockpbs.atom.handler import UnixHTTPServer

JOBS_PATH = atom.API_PREFIX + "/jobs"


class AtomService:
    """The service: a job registry served on ``socket_path``; also usable in-process.

    ``start()`` binds (creating the socket's directory, mode 0755) and serves in threads;
    raises OSError when the socket cannot be bound. ``stop()`` stops and removes the
    socket. ``jobs`` is ``{jobid: record}``."""

    def __init__(self, socket_path):
        self.socket_path = os.path.abspath(socket_path)
        self.jobs = {}
        self.lock = threading.Lock()
        self._server = None
        self._thread = None
        self._stop = threading.Event()
        self._watcher = None

    # ------------------------------------------------------------ registry
    @staticmethod
    def _jobid_from(path):
        """The decoded job id of ``/rm/v1/jobs/<id>``, ``""`` for ``/rm/v1/jobs``, None otherwise."""
        path = path.split("?", 1)[0]
        if path == JOBS_PATH or path == JOBS_PATH + "/":
            return ""
        if path.startswith(JOBS_PATH + "/"):
            rest = path[len(JOBS_PATH) + 1:]
            if rest and "/" not in rest:
                return urllib.parse.unquote(rest)
        return None

    def handle(self, method, path, body):
        """Answer one request without faults: ``(status, JSON-able payload or None)``."""
        jobid = self._jobid_from(path)
        if jobid is None:
            return 404, {"error": "no such resource %s" % path}
        with self.lock:
            if jobid == "":
                if method == "GET":
                    return 200, {"jobs": list(self.jobs.values())}
                if method == "POST":
                    return self._register(body)
                return 405, {"error": "%s not allowed on %s" % (method, JOBS_PATH)}
            if method == "GET":
                return (200, self.jobs[jobid]) if jobid in self.jobs else (404, {"error": "job %s not found" % jobid})
            if method == "DELETE":
                if self.jobs.pop(jobid, None) is None:
                    return 404, {"error": "job %s not found" % jobid}
                return 204, None
            return 405, {"error": "%s not allowed on %s" % (method, path)}

    def _register(self, body):
        try:
            data = json.loads(body)
        except ValueError:
            return 400, {"error": "body is not JSON"}
        if not isinstance(data, dict):
            return 400, {"error": "body must be a JSON object"}
        jobid, uid, exclusive = data.get("jobid"), data.get("uid"), data.get("exclusive")
        if not isinstance(jobid, str) or not jobid:
            return 400, {"error": "jobid must be a non-empty string"}
        if isinstance(uid, bool) or not isinstance(uid, int) or uid < 0:
            return 400, {"error": "uid must be an integer >= 0"}
        if not isinstance(exclusive, bool):
            return 400, {"error": "exclusive must be true or false"}
        if jobid in self.jobs:
            return 400, {"error": "job %s is already registered" % jobid}
        record = {"jobid": jobid, "uid": uid, "exclusive": exclusive, "registered": time.time()}
        self.jobs[jobid] = record
        return 200, record

    def record(self, method, path, body, status, action):
        jobid = self._jobid_from(path)
        if jobid == "" and method == "POST":
            try:
                jobid = json.loads(body).get("jobid")
            except (ValueError, AttributeError):
                jobid = None
        line = {"time": time.time(), "method": method, "path": path, "jobid": jobid or None,
                "body": body or None, "status": status,
                "fault": {k: v for k, v in action.items() if k != "times"} if action else None}
        with self.lock, open(atom.log_path(self.socket_path), "a") as handle:
            handle.write(json.dumps(line) + "\n")

    # ------------------------------------------------------------ serving
    def _bind(self):
        directory = os.path.dirname(self.socket_path)
        os.makedirs(directory, mode=0o755, exist_ok=True)
        if os.path.exists(self.socket_path):
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(self.socket_path)
            except OSError:
                os.unlink(self.socket_path)  # stale socket of a dead service
            else:
                raise OSError("another service already listens on %s" % self.socket_path)
            finally:
                probe.close()
        server = UnixHTTPServer(self.socket_path, self)
        os.chmod(self.socket_path, 0o660)
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="atomd", daemon=True)
        self._thread.start()

    def _unbind(self):
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        try:
            os.unlink(self.socket_path)
        except FileNotFoundError:
            pass

    @property
    def serving(self):
        return self._server is not None

    def start(self):
        if not faults.no_socket_wanted(self.socket_path):
            self._bind()
        self._watcher = threading.Thread(target=self._watch, name="atomd-faults", daemon=True)
        self._watcher.start()
        return self

    def _watch(self):
        while not self._stop.wait(faults.POLL_INTERVAL):
            wanted_gone = faults.no_socket_wanted(self.socket_path)
            try:
                if wanted_gone and self.serving:
                    self._unbind()
                elif not wanted_gone and not self.serving:
                    self._bind()
            except OSError as exc:
                sys.stderr.write("atomd: %s\n" % exc)

    def stop(self):
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join()
        self._unbind()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


# ---------------------------------------------------------------- command line
def _parser():
    parser = argparse.ArgumentParser(prog="atomd", description="Mock Cray ATOM service on a UNIX socket.")
    parser.add_argument("--socket", help="socket path (default $%s or %s)" % (atom.SOCKET_ENV, atom.DEFAULT_SOCKET))
    parser.add_argument("--foreground", action="store_true", help="do not daemonize")
    parser.add_argument("--inject", action="append", metavar="SPEC",
                        help="METHOD=ITEM[,ITEM...] | no-socket | socket | clear (see mockpbs.atom.faults)")
    parser.add_argument("--jobs", action="store_true", help="print the registered jobs as JSON")
    parser.add_argument("--faults", action="store_true", help="print the fault plan as JSON")
    parser.add_argument("--stop", action="store_true", help="stop the daemon")
    parser.add_argument("--wait", type=float, default=5.0,
                        help="seconds to wait for no-socket/socket/--stop to take effect (default 5)")
    return parser


def _wait_for(predicate, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(faults.POLL_INTERVAL)
    return predicate()


def inject(sock, specs, wait=5.0):
    """Apply ``--inject`` specs in order; raises FaultSpecError, or RuntimeError when the
    service did not drop/restore its socket within ``wait`` seconds."""
    parsed = [faults.parse_spec(spec) for spec in specs]  # all or nothing
    for method, actions in parsed:
        if method == "clear":
            faults.clear(sock)
        elif method in ("no-socket", "socket"):
            faults.set_no_socket(sock, method == "no-socket")
            gone = method == "no-socket"
            if not _wait_for(lambda gone=gone: os.path.exists(sock) != gone, wait):
                raise RuntimeError("the service did not %s %s within %gs"
                                   % ("remove" if gone else "restore", sock, wait))
        else:
            faults.set_actions(sock, method, actions)


def _serve_foreground(service):
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        while not stop.wait(1.0):
            pass
    finally:
        service.stop()
        try:
            os.unlink(atom.pid_path(service.socket_path))
        except FileNotFoundError:
            pass
    return 0


def _start_daemon(sock):
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid:
        os.close(write_fd)
        with os.fdopen(read_fd) as pipe:
            status = pipe.read()
        os.waitpid(pid, 0)
        if status.startswith("OK"):
            return 0
        sys.stderr.write("atomd: %s\n" % (status.strip() or "failed to start"))
        return 1
    os.close(read_fd)
    code = 1
    try:
        os.setsid()
        if os.fork():
            os._exit(0)
        service = AtomService(sock)
        try:
            service.start()
        except OSError as exc:
            os.write(write_fd, ("cannot serve %s: %s" % (sock, exc)).encode())
            os._exit(1)
        with open(atom.pid_path(sock), "w") as handle:
            handle.write("%d\n" % os.getpid())
        os.write(write_fd, b"OK")
        os.close(write_fd)
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        os.chdir("/")
        code = _serve_foreground(service)
    except BaseException as exc:  # never return into the caller's code from the child
        try:
            os.write(write_fd, str(exc).encode())
        except OSError:
            pass
    finally:
        os._exit(code)


def main(argv):
    """``python -m mockpbs atomd``; returns the exit code (see the module docstring)."""
    args = _parser().parse_args(argv)
    sock = os.path.abspath(atom.socket_path(args.socket))
    try:
        if args.inject:
            inject(sock, args.inject, args.wait)
        if args.faults:
            sys.stdout.write(json.dumps(faults.read_plan(sock), indent=1, sort_keys=True) + "\n")
        if args.jobs:
            sys.stdout.write(json.dumps(client.list_jobs(sock), indent=1) + "\n")
        if args.stop:
            with open(atom.pid_path(sock)) as handle:
                os.kill(int(handle.read().strip()), signal.SIGTERM)
            if not _wait_for(lambda: not os.path.exists(sock) and not os.path.exists(atom.pid_path(sock)), args.wait):
                raise RuntimeError("atomd on %s did not stop within %gs" % (sock, args.wait))
    except (faults.FaultSpecError, RuntimeError, OSError, ValueError) as exc:
        sys.stderr.write("atomd: %s\n" % exc)
        return 1
    if args.inject or args.jobs or args.faults or args.stop:
        return 0
    if args.foreground:
        service = AtomService(sock)
        try:
            service.start()
        except OSError as exc:
            sys.stderr.write("atomd: cannot serve %s: %s\n" % (sock, exc))
            return 1
        with open(atom.pid_path(sock), "w") as handle:
            handle.write("%d\n" % os.getpid())
        return _serve_foreground(service)
    return _start_daemon(sock)
