"""Helpers for tests that drive an in-process mock server through the real CLI ``main()``s.

- :func:`start_server` writes a pbs.conf (``PBS_SERVER`` = ``host``) under ``tmp_path``,
  points ``PBS_CONF_FILE`` at it and starts an :class:`InProcessServer` bound to
  ``address`` (by default one reserved with :mod:`mockpbs.testaddr`, so concurrent test
  runs never collide). Inside a node the server name resolves through ``/etc/hosts``;
  here ``mockpbs.cli.common.server_address`` is pointed at ``address`` instead.
- :func:`run_cli` runs a command's ``main(argv)`` with stdin text and returns
  ``(rc, stdout, stderr)``.
- :class:`FakeMom` answers the server's mom requests on ``address:15002`` and reports
  back like a mom (``mom_hello``, ``mom_job_started``, ``mom_job_requeue``,
  ``mom_job_obit``; the last two with the job's ``run_count``); :func:`wait_for` polls a
  condition.
"""
import io
import os
import re
import sys
import threading
import time

from mockpbs import testaddr, wire
from mockpbs.cli import common, qmgr
from mockpbs.server.daemon import ServerDaemon

# The real OpenPBS transcripts the mock is compared with (tests/reference/openpbs).
REFERENCE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))), "reference", "openpbs")
_TRANSCRIPT_BLOCK = re.compile(r"\$ (.*?)\n--- stdout ---\n(.*?)--- stderr ---\n(.*?)--- exit code: (\d+)\n", re.S)


def transcript_blocks(name):
    """[(command, stdout, stderr, rc)] of the transcript file ``name`` of
    :data:`REFERENCE_DIR`, one per ``$ command`` block (blocks are separated by a line of
    64 ``=``)."""
    with open(os.path.join(REFERENCE_DIR, name)) as handle:
        text = handle.read()
    out = []
    for part in text.split("=" * 64 + "\n")[1:]:
        match = _TRANSCRIPT_BLOCK.match(part)
        if match:
            out.append((match.group(1), match.group(2), match.group(3), int(match.group(4))))
    return out


def transcript_qmgr_argument(command_text):
    """The -c argument of a transcript command line ``qmgr -c "..."``."""
    inner = re.match(r'qmgr -c "(.*)"$', command_text).group(1)
    return inner.replace('\\"', '"')


def run_qmgr_as_in_transcript(daemon, line):
    """``(rc, stdout, stderr)`` of ``qmgr -c line`` against the in-process ``daemon``, its
    temporary PBS_HOME written back as the transcripts' ``/var/spool/pbs``."""
    rc, out, err = run_cli(qmgr.main, ["-c", line])
    home = daemon.core.state.pbs_home
    return rc, out.replace(home, "/var/spool/pbs"), err.replace(home, "/var/spool/pbs")


class InProcessServer(ServerDaemon):
    """A :class:`ServerDaemon` that gives back its address (``testaddr``) once stopped,
    when ``owns_address`` says :func:`start_server` reserved it."""

    def __init__(self, *args, owns_address=False, **kwargs):
        super().__init__(*args, **kwargs)
        self.owns_address = owns_address

    def stop(self):
        try:
            super().stop()
        finally:
            if self.owns_address:
                testaddr.release_address(self.address)


def start_server(tmp_path, monkeypatch, host="vm", address=None, qsub_cache=False, **options):
    """Start an in-process server (see the module docstring) and return it (its address
    is ``.address``). ``address`` None (the default) reserves a fresh loopback address,
    released by ``stop()``; a test that restarts a server on the same address reserves
    one itself (``testaddr.reserved_addresses``) and passes it. ``qsub_cache`` False
    (the default) makes in-process ``qsub`` read default_qsub_arguments from the server
    instead of starting its per-user cache process (``MOCKPBS_QSUB_CACHE=off``).
    ``options``: further :class:`ServerDaemon` keywords (``ping_interval`` and
    ``sched_interval`` default to 0.5 s here). Raises OSError if the port cannot be bound."""
    owns_address = address is None
    if owns_address:
        address = testaddr.reserve_address()
    if not qsub_cache:
        monkeypatch.setenv("MOCKPBS_QSUB_CACHE", "off")
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
    server = InProcessServer(pbs_home, host, address, owns_address=owns_address, **options)
    try:
        return server.start()
    except OSError:
        if owns_address:
            testaddr.release_address(address)
        raise


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


def wait_for(predicate, what, deadline=30.0):
    """Poll ``predicate`` every 0.05 s until it returns something true (returned);
    AssertionError after ``deadline`` seconds."""
    end = time.time() + deadline
    while time.time() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out waiting for %s" % what)


class FakeMom:
    """A stand-in mom on ``address`` (port 15002; reserve it with ``mockpbs.testaddr``)
    reporting to the server at ``server_address``. ``verdict(job) -> "accept" | "reject" | None`` decides what a
    ``run_job`` leads to (it runs in a thread and may block): ``accept`` reports
    ``mom_job_started``, ``reject`` a ``mom_job_requeue`` as the mom does when an
    execjob_begin hook rejects, None nothing. ``delete_job`` is answered with an obit
    (exit status 271). Requeues and obits carry the ``run_count`` of the job's last
    ``run_job``, as a real mom's do. Every request is recorded."""

    def __init__(self, address, name, server_address, resources=None, verdict=None):
        self.address = address
        self.name = name
        self.server_address = server_address
        self.resources = resources or {"ncpus": "2", "mem": "4gb"}
        self.verdict = verdict or (lambda job: "accept")
        self.requests = []
        self.run_counts = {}    # jobid -> run_count of its last run_job
        self.lock = threading.Lock()
        self.threads = []       # the reports under way, joined by close()
        self.listener = wire.serve(address, wire.MOM_PORT, self.dispatch)

    def dispatch(self, message, peer):
        with self.lock:
            self.requests.append(message)
            if message["op"] == "run_job":
                self.run_counts[message["job"]["id"]] = message["job"].get("run_count")
        op = message["op"]
        if op == "ping":
            return {"ok": True, "node": self.name, "resources_available": dict(self.resources)}
        if op == "run_job":
            self._start(self._react, message["job"])
        elif op == "delete_job":
            obit = {"op": "mom_job_obit", "jobid": message["jobid"], "exit_status": 271,
                    "resources_used": {}, "run_count": self.run_counts.get(message["jobid"])}
            self._start(self.report, obit)
        return {"ok": True}

    def _start(self, target, argument):
        thread = threading.Thread(target=target, args=(argument,), daemon=True)
        with self.lock:
            self.threads.append(thread)
        thread.start()

    def _react(self, job):
        verdict = self.verdict(job)
        if verdict == "accept":
            self.report({"op": "mom_job_started", "jobid": job["id"], "session": 4242})
        elif verdict == "reject":
            self.report({"op": "mom_job_requeue", "jobid": job["id"], "hold": None,
                         "comment": "rejected by the execjob_begin hook",
                         "reason": "execjob_begin hook rejected", "rerun": False,
                         "run_count": job.get("run_count")})

    def report(self, message):
        return wire.request(self.server_address, wire.SERVER_PORT, message, timeout=30)

    def ops(self, op):
        with self.lock:
            return [m for m in self.requests if m["op"] == op]

    def close(self):
        """Stop listening, then wait for the reports under way (a verdict may block until
        the test releases it): close the mom before its server stops, so that no report
        meets a closed server."""
        self.listener.shutdown()
        self.listener.server_close()
        with self.lock:
            threads = list(self.threads)
        for thread in threads:
            thread.join(timeout=60)
