"""Helpers for tests that drive an in-process mock server through the real CLI ``main()``s.

- :func:`start_server` writes a pbs.conf (``PBS_SERVER`` = ``host``) under ``tmp_path``,
  points ``PBS_CONF_FILE`` at it and starts a :class:`~mockpbs.server.daemon.ServerDaemon`
  bound to ``address``. Inside a node the server name resolves through ``/etc/hosts``;
  here ``mockpbs.cli.common.server_address`` is pointed at ``address`` instead.
- :func:`run_cli` runs a command's ``main(argv)`` with stdin text and returns
  ``(rc, stdout, stderr)``.
"""
import io
import os
import sys

from mockpbs.cli import common
from mockpbs.server.daemon import ServerDaemon

TEST_ADDRESS = "127.0.1.200"


def start_server(tmp_path, monkeypatch, host="vm", address=TEST_ADDRESS, **options):
    pbs_home = os.path.join(str(tmp_path), "pbs_home")
    conf = os.path.join(str(tmp_path), "pbs.conf")
    with open(conf, "w") as handle:
        handle.write("PBS_SERVER=%s\nPBS_HOME=%s\nPBS_EXEC=/opt/pbs\nPBS_START_SERVER=1\n" % (host, pbs_home))
    monkeypatch.setenv("PBS_CONF_FILE", conf)
    for key in ("PBS_SERVER", "PBS_HOME"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setattr(common, "server_address", lambda: address)
    options.setdefault("ping_interval", 0.5)
    options.setdefault("sched_interval", 0.5)
    return ServerDaemon(pbs_home, host, address, **options).start()


class _Stdin(io.StringIO):
    @property
    def buffer(self):
        return io.BytesIO(self.getvalue().encode())


class _Stdout(io.StringIO):
    """stdout whose ``buffer`` collects what commands write as bytes (qmgr export)."""

    def __init__(self):
        super().__init__()
        self.buffer = io.BytesIO()


def run_cli(main, argv, stdin=""):
    """Run ``main(argv)``; returns ``(rc, stdout text, stderr text)``."""
    stdout, stderr = _Stdout(), io.StringIO()
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = _Stdin(stdin), stdout, stderr
    try:
        rc = main(list(argv))
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return rc, stdout.getvalue() + stdout.buffer.getvalue().decode(errors="replace"), stderr.getvalue()
