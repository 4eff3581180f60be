"""The mock's wire protocol: one JSON object per line over TCP.

A client connects, sends one request line ``{"op": ..., ...}`` and reads one reply line.
Replies are ``{"ok": true, ...}`` or ``{"ok": false, "code": <PBS error number>,
"error": <PBS error text>, ...}``. See ``tests/mockpbs/PROTOCOL.md`` for the operations.

Ports (as PBS): server 15001, mom service 15002, mom inter-mom (IM) 15003.
:func:`resolve_address` gives the address the daemons of a host name listen on.
"""
import json
import socket
import socketserver
import threading

SERVER_PORT = 15001
MOM_PORT = 15002
IM_PORT = 15003


class WireError(OSError):
    """The peer could not be reached, did not answer in time, or sent garbage."""


def request(host, port, message, timeout=30.0):
    """Send ``message`` (dict) and return the reply (dict). Raises WireError."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.settimeout(timeout)
            sock.sendall((json.dumps(message) + "\n").encode())
            chunks = []
            while True:
                data = sock.recv(65536)
                if not data:
                    break
                chunks.append(data)
                if data.endswith(b"\n"):
                    break
    except (OSError, socket.timeout) as exc:
        raise WireError("%s:%s: %s" % (host, port, exc)) from exc
    raw = b"".join(chunks)
    if not raw.strip():
        raise WireError("%s:%s: connection closed without a reply" % (host, port))
    try:
        return json.loads(raw.decode())
    except ValueError as exc:
        raise WireError("%s:%s: bad reply %r" % (host, port, raw[:200])) from exc


def resolve_address(host):
    """The IPv4 address ``host`` resolves to, where the daemons of a host listen and clients
    connect: the host name's address as a fallback, else ``127.0.0.1``."""
    for name in (host, socket.gethostname()):
        if not name:
            continue
        try:
            return socket.gethostbyname(name)
        except OSError:
            continue
    return "127.0.0.1"


class _Handler(socketserver.StreamRequestHandler):
    def handle(self):
        line = self.rfile.readline()
        if not line:
            return
        try:
            message = json.loads(line.decode())
        except ValueError:
            reply = {"ok": False, "code": 15004, "error": "Invalid request"}
        else:
            peer = self.client_address[0]
            try:
                reply = self.server.dispatch(message, peer)
            except Exception as exc:  # a daemon must survive a bad request
                reply = {"ok": False, "code": 15010, "error": "System error: %s" % exc}
        try:
            self.wfile.write((json.dumps(reply) + "\n").encode())
        except OSError:
            pass


class _ThreadingServer(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


def serve(host, port, dispatch):
    """Start a threaded listener calling ``dispatch(message, peer_addr) -> reply`` and
    return the server object (already serving in a daemon thread)."""
    server = _ThreadingServer((host, port), _Handler)
    server.dispatch = dispatch
    # shutdown() waits for serve_forever's next poll: 0.5 s by default, on every stop.
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              name="wire-%s" % port, daemon=True)
    thread.start()
    return server
