"""The per-user background process of ``qsub`` that caches ``default_qsub_arguments``
(reference/openpbs/README.md "default_qsub_arguments", transcript d).

A real qsub forks a background submit daemon per user that keeps the value of
``default_qsub_arguments`` it fetched; it fetches again only when the server answers a
submission with PBSE_FORCE_QSUB_UPDATE (15160). Because qsub parses the cached value
before it talks to the server, a bad value, once cached, makes every plain ``qsub`` fail
with ``qsub: illegal -W value`` until that process ends, even after the attribute was
corrected. The real process ends after about 60 seconds without a request.

Here the process listens on an abstract UNIX socket named after the user, the server and
the server address (:func:`socket_name`) and answers JSON lines:

- ``{"op": "get"}`` -> ``{"ok": true, "defaults": str or null, "version": str, "pid": int}``
- ``{"op": "refresh"}`` -> the same, after fetching the attribute from the server again.
- ``{"op": "ping"}`` -> the same without counting as use (tests watch the process with it).

It exits after ``MOCKPBS_QSUB_CACHE_IDLE`` seconds (default 60) without a get/refresh.
``MOCKPBS_QSUB_CACHE=off`` makes qsub fetch the attribute itself every time.
"""
import json
import os
import socket
import subprocess
import sys
import time

from mockpbs import wire

IDLE_ENV = "MOCKPBS_QSUB_CACHE_IDLE"
SWITCH_ENV = "MOCKPBS_QSUB_CACHE"
DEFAULT_IDLE = 60.0
CONNECT_TRIES = 50          # x 0.1 s: how long a qsub waits for a cache it just started


class CacheUnavailable(Exception):
    """No cache process could be reached or started."""


def socket_name(user, server_name, server_address):
    """Abstract socket address of ``user``'s cache for one server (a leading NUL byte)."""
    return "\0mockpbs-qsub-%s-%s-%s" % (user, server_name, server_address)


def enabled():
    return os.environ.get(SWITCH_ENV, "on") != "off"


def idle_seconds():
    try:
        return max(float(os.environ.get(IDLE_ENV, DEFAULT_IDLE)), 0.1)
    except ValueError:
        return DEFAULT_IDLE


def _ask(name, op, timeout=30.0):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(name)
        sock.sendall((json.dumps({"op": op}) + "\n").encode())
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    return json.loads(data.decode())


def request(identity, server_name, server_address, op="get"):
    """Ask the cache of ``identity`` (``{"user", "group", "host"}``) for ``op`` (``get`` or
    ``refresh``), starting the cache process first when none runs. Returns the reply dict;
    raises CacheUnavailable."""
    name = socket_name(identity["user"], server_name, server_address)
    try:
        return _ask(name, op)
    except (ConnectionRefusedError, FileNotFoundError):
        pass
    except OSError as exc:
        raise CacheUnavailable(str(exc))
    args = [sys.executable, "-m", "mockpbs.cli.qsub_cache", server_name, server_address,
            identity["user"], identity.get("group", identity["user"]), identity.get("host", "")]
    subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
    for _unused in range(CONNECT_TRIES):
        time.sleep(0.1)
        try:
            return _ask(name, op)
        except (ConnectionRefusedError, FileNotFoundError):
            continue
        except OSError as exc:
            raise CacheUnavailable(str(exc))
    raise CacheUnavailable("qsub cache did not start")


def fetch_defaults(server_address, identity):
    """``(default_qsub_arguments or None, version)`` from the server."""
    message = {"op": "stat_server"}
    message.update(identity)
    reply = wire.request(server_address, wire.SERVER_PORT, message, timeout=30)
    items = dict(reply.get("items") or [])
    return items.get("default_qsub_arguments"), reply.get("qsub_args_version", "0")


def serve(server_name, server_address, identity):
    """The cache process: bind the socket (another cache already bound -> exit 0), fetch
    once, answer until idle."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(socket_name(identity["user"], server_name, server_address))
    except OSError:
        return 0
    listener.listen(16)
    idle = idle_seconds()
    last_use = time.monotonic()
    try:
        cached = fetch_defaults(server_address, identity)
    except wire.WireError:
        cached = (None, None)
    while True:
        left = idle - (time.monotonic() - last_use)
        if left <= 0:
            return 0
        listener.settimeout(left)
        try:
            conn, _unused = listener.accept()
        except socket.timeout:
            return 0
        with conn:
            conn.settimeout(30)
            try:
                data = b""
                while not data.endswith(b"\n"):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                op = json.loads(data.decode() or "{}").get("op")
                if op != "ping":
                    last_use = time.monotonic()
                if op == "refresh" or (cached[1] is None and op != "ping"):
                    try:
                        cached = fetch_defaults(server_address, identity)
                    except wire.WireError:
                        pass
                reply = {"ok": True, "defaults": cached[0], "version": cached[1], "pid": os.getpid()}
                conn.sendall((json.dumps(reply) + "\n").encode())
            except (OSError, ValueError):
                continue


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    server_name, server_address, user, group, host = (argv + [""] * 5)[:5]
    return serve(server_name, server_address, {"user": user, "group": group, "host": host})


if __name__ == "__main__":
    sys.exit(main())
