"""A minimal HTTP/1.1 client over a UNIX socket (standard library only), for tests and for
the ``atomd`` command's client options. Not what the hook uses (the hook uses ``requests``
and ``requests_unixsocket``, as the Shasta design requires)."""
import http.client
import json
import socket
import urllib.parse

from mockpbs.atom import API_PREFIX


class UnixHTTPConnection(http.client.HTTPConnection):
    """``http.client.HTTPConnection`` that connects to the UNIX socket ``sock``."""

    def __init__(self, sock, timeout=10.0):
        super().__init__("localhost", timeout=timeout)
        self.socket_path = sock

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.socket_path)


def request(sock, method, path, body=None, timeout=10.0):
    """Send one request; return ``(status, parsed JSON body or None, raw body text)``.

    Raises OSError (no socket, refused, timeout) or http.client errors (dropped)."""
    connection = UnixHTTPConnection(sock, timeout=timeout)
    try:
        payload = None if body is None else json.dumps(body)
        headers = {"Content-Type": "application/json"} if payload is not None else {}
        connection.request(method, path, body=payload, headers=headers)
        response = connection.getresponse()
        text = response.read().decode()
        try:
            parsed = json.loads(text) if text else None
        except ValueError:
            parsed = None
        return response.status, parsed, text
    finally:
        connection.close()


def job_path(jobid=None):
    """``/rm/v1/jobs`` or ``/rm/v1/jobs/<percent-encoded jobid>``."""
    path = API_PREFIX + "/jobs"
    return path if jobid is None else path + "/" + urllib.parse.quote(jobid, safe="")


def list_jobs(sock, timeout=10.0):
    """The registered jobs (list of dicts, as ``GET /rm/v1/jobs`` returns them)."""
    status, parsed, text = request(sock, "GET", job_path(), timeout=timeout)
    if status != 200:
        raise RuntimeError("GET %s answered %d: %s" % (job_path(), status, text))
    return parsed["jobs"]
