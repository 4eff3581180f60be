"""The HTTP/1.1 side of the mock ATOM service: a threading server on a UNIX socket whose
handler reads each request, applies the fault the plan gives for it
(:func:`mockpbs.atom.faults.take_action`: a delay, a dropped connection or an injected
status) and otherwise lets the service (``server.service``, a
:class:`mockpbs.atom.service.AtomService`) answer it. Every request is recorded through
``service.record``."""
import http.server
import json
import socket
import socketserver
import time

from mockpbs.atom import faults


class UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """Serves ``_Handler`` on the UNIX socket path ``sock`` for ``service`` (an
    :class:`~mockpbs.atom.service.AtomService`), one thread per connection."""

    daemon_threads = True
    # A delayed request must not hold up shutdown.
    block_on_close = False

    def __init__(self, sock, service):
        self.service = service
        super().__init__(sock, _Handler)


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "atomd-mock/1.0"

    # BaseHTTPRequestHandler assumes an (address, port) peer; a UNIX peer has none.
    def address_string(self):
        return "unix"

    def log_message(self, format, *args):
        pass

    def do_POST(self):
        self._dispatch("POST")

    def do_GET(self):
        self._dispatch("GET")

    def do_DELETE(self):
        self._dispatch("DELETE")

    def do_PUT(self):
        self._dispatch("PUT")

    def _read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length).decode(errors="replace") if length else ""

    def _dispatch(self, method):
        service = self.server.service
        body = self._read_body()
        action = faults.take_action(service.socket_path, method) if method in faults.METHODS else None
        if action and action.get("delay"):
            time.sleep(action["delay"])
        if action and action.get("drop"):
            service.record(method, self.path, body, None, action)
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if action and "status" in action:
            status, payload = action["status"], {"error": "injected fault %d" % action["status"]}
        else:
            status, payload = service.handle(method, self.path, body)
        service.record(method, self.path, body, status, action)
        self._answer(status, payload)

    def _answer(self, status, payload):
        data = b"" if status == 204 or payload is None else json.dumps(payload).encode()
        try:
            self.send_response(status)
            if data:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if data:
                self.wfile.write(data)
        except OSError:
            # The client gave up (timeout) while we were delayed.
            self.close_connection = True
