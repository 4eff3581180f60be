"""A mock of Cray's ATOM service ("PBS Design Changes for Shasta"): the REST service
that the ``PBS_cray_atom`` hook (or the bundled ``cray_atom`` hook) calls on every mom at
execjob_begin (``POST /rm/v1/jobs``) and execjob_end (``DELETE /rm/v1/jobs/<jobid>``).

- :mod:`mockpbs.atom.service`: the service on a UNIX socket (``python -m mockpbs atomd``),
  keeping the registered jobs in memory; :mod:`mockpbs.atom.handler` its HTTP/1.1 side.
- :mod:`mockpbs.atom.faults`: fault injection, shared by the service and its clients
  through a control file next to the socket (``<socket>.faults``).
- :mod:`mockpbs.atom.client`: a small HTTP client over the UNIX socket (list jobs, stop),
  without third-party libraries.

Files next to the socket ``S`` (default ``/var/run/atomd/atomd.sock``): ``S.pid`` (PID of
the daemon), ``S.faults`` (+ ``S.faults.lock``), ``S.log`` (one JSON line per request).
"""

DEFAULT_SOCKET = "/var/run/atomd/atomd.sock"
SOCKET_ENV = "ATOMD_SOCKET"
API_PREFIX = "/rm/v1"


def socket_path(explicit=None):
    """The socket path: ``explicit`` if given, else ``$ATOMD_SOCKET``, else the default."""
    import os

    return explicit or os.environ.get(SOCKET_ENV) or DEFAULT_SOCKET


def pid_path(sock):
    return sock + ".pid"


def log_path(sock):
    return sock + ".log"
