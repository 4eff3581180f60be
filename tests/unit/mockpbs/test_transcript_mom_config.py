"""Transcript f (tests/reference/openpbs/f_mom_config_job_launch_delay_sister_join_job_alarm.txt)
replayed on an in-process :class:`mockpbs.mom.daemon.Mom` (PP-928 interfaces 3 and 4,
``$job_launch_delay`` / ``$sister_join_job_alarm``).

The transcript's blocks drive the mom in their order, on one PBS_HOME, as the real
session did:

- ``cat .../mom_priv/config``: the file is written with the block's stdout;
- ``/opt/pbs/sbin/pbs_mom   # restart ...``: the original config (the first ``cat``) is
  written back and a new mom is started on the same PBS_HOME;
- ``kill -HUP``: ``Mom.hangup()`` when the transcript's kill succeeded; when it failed
  (``No such process``) the mock mom must have stopped already;
- ``tail -n +N .../mom_logs/...``: the mom log lines written since the previous action
  are compared with the block's lines, field by field except the timestamp (event class,
  daemon, object type, object name, message), in order;
- ``ps ...; pbsnodes ...``: a listed PID / ``state = free`` means the mock mom answers
  on its service port, an empty ps list / ``state = down`` means it stopped;
- case 8 (``/opt/pbs/sbin/pbs_mom; echo "pbs_mom exit=$?" ...``): a new mom's
  ``start()`` must refuse; its config is the case-2 one (``$job_launch_delay abc``),
  which the session wrote without a ``cat`` block (the log shows it).

Not covered, and why:

- the two ``ipv4 interface <if>: <names> `` lines of each banner: the mock does not
  enumerate the host's network interfaces (an in-process mom only has its loopback test
  address); they are removed from the expected lines, and the test checks that exactly
  those two lines per banner were removed;
- the count in ``initialize;pcpus=2, OS reports 2 cpu(s)`` is the host's: it is replaced
  by this machine's CPU count before comparing;
- the first cases 3-5 (no pbs_mom process any more, so ``tail`` shows nothing): there is
  nothing to drive; only "the mom has stopped" is checked;
- the ``pbs_mom exit=1`` / stderr text of case 8 and ``mom.lock``: they belong to the
  ``pbs_mom`` command (a forked process), covered by test_mom_config.py;
- the ``pbsnodes`` state itself needs a server: only the mom side (listening or not) is
  compared.
"""
import os
import re

import pytest

from mockpbs import wire
from mockpbs.mom.daemon import Mom
from mockpbs.testaddr import release_address, reserve_address
from mockpbs.testing import server as testing


blocks = testing.transcript_blocks

TRANSCRIPT = "f_mom_config_job_launch_delay_sister_join_job_alarm.txt"
REAL_HOME = "/var/spool/pbs"
CASE8_CONFIG = "$restrict_user_maxsysid 999\n$job_launch_delay abc\n"
IPV4_LINE = re.compile(r"^0002;pbs_mom;Svr;pbs_mom;ipv4 interface \S+: ")


def fields(line):
    """(event class, daemon, object type, object name, message) of a log line."""
    return tuple(line.split(";", 1)[1].split(";", 4))


def expected_fields(stdout):
    """The block's log lines as fields, host-dependent parts handled as the module
    docstring says; returns (fields list, number of ipv4 interface lines removed, number
    of banners)."""
    cpus = os.cpu_count() or 1
    out, removed, banners = [], 0, 0
    for line in stdout.splitlines():
        record = line.split(";", 1)[1]
        if IPV4_LINE.match(record):
            removed += 1
            continue
        if record.endswith(";Log;Log opened"):
            banners += 1
        line = re.sub(r"pcpus=\d+, OS reports \d+ cpu\(s\)", "pcpus=%d, OS reports %d cpu(s)" % (cpus, cpus), line)
        out.append(fields(line))
    return out, removed, banners


class Session:
    """The mom side of the transcript's session on one PBS_HOME under ``tmp_path``."""

    def __init__(self, tmp_path):
        self.home = str(tmp_path / "pbs_home")
        os.makedirs(os.path.join(self.home, "mom_priv"))
        self.address = reserve_address()
        self.mom = None
        self.moms = []
        self.mark = 0

    def write_config(self, text):
        with open(os.path.join(self.home, "mom_priv", "config"), "w") as handle:
            handle.write(text)

    def new_mom(self):
        if self.mom is not None:
            self.mom.stop()
        # No server listens at 127.0.0.1:1: the mom's hello loop just keeps retrying.
        self.mom = Mom(self.home, "vm", "vm", self.address, "vm", server_address="127.0.0.1", server_port=1)
        self.moms.append(self.mom)
        return self.mom

    def log_lines(self):
        logdir = os.path.join(self.home, "mom_logs")
        lines = []
        for name in sorted(os.listdir(logdir)):
            with open(os.path.join(logdir, name)) as handle:
                lines.extend(handle.read().splitlines())
        return [line.replace(self.home, REAL_HOME) for line in lines]

    def mark_log(self):
        self.mark = len(self.log_lines())

    def new_lines(self):
        return self.log_lines()[self.mark:]

    def listening(self):
        try:
            wire.request(self.address, wire.MOM_PORT, {"op": "ping"}, timeout=5)
        except wire.WireError:
            return False
        return True

    def close(self):
        for mom in self.moms:
            mom.stop()
        release_address(self.address)


@pytest.fixture
def session(tmp_path):
    made = Session(tmp_path)
    yield made
    made.close()


def test_transcript_f_mom_log_lines_match_block_by_block(session):
    transcript = blocks(TRANSCRIPT)
    original_config = transcript[0][1]
    assert original_config == "$restrict_user_maxsysid 999\n"
    session.write_config(original_config)
    assert session.new_mom().start(hello=False)

    compared = []
    for command, out, err, rc in transcript:
        if command == "cat %s/mom_priv/config" % REAL_HOME:
            session.write_config(out)
        elif command.startswith("/opt/pbs/sbin/pbs_mom   # restart"):
            session.write_config(original_config)
            session.mark_log()
            assert session.new_mom().start(hello=False), command
        elif command.startswith('/opt/pbs/sbin/pbs_mom; echo "pbs_mom exit=$?"'):
            session.write_config(CASE8_CONFIG)
            session.mark_log()
            assert session.new_mom().start(hello=False) is False
            assert not session.listening()
        elif command.startswith("kill -HUP"):
            if rc == 0:
                session.mark_log()
                # Whether the mom survived is checked at the next ps block.
                session.mom.hangup()
            else:
                assert "No such process" in err
                assert session.mom.stopped.is_set()
                session.mark_log()
        elif command.startswith("tail -n +") and "/mom_logs/" in command:
            expected, removed, banners = expected_fields(out)
            assert removed == 2 * banners, command
            got = [fields(line) for line in session.new_lines()]
            assert got == expected, command
            compared.append(command)
        elif command.startswith("ps -o pid,stat,args -p"):
            real_running = len(out.split("\n\n")[0].splitlines()) > 1
            assert real_running == ("state = free" in out)
            assert session.listening() is real_running, command
            assert session.mom.stopped.is_set() is (not real_running), command
    # Cases 1, 2, the first cases 3-5 (empty), redone 3-5, 6, 7 and 8.
    assert len(compared) == 11


def test_transcript_f_hup_outcome_per_case(session):
    """Which HUPs the real mom survived: only case 1 (valid values); every other case
    of the transcript made it exit. The mock's ``hangup()`` result must say the same."""
    transcript = blocks(TRANSCRIPT)
    original_config = transcript[0][1]
    outcomes = []
    config = None
    for index, (command, out, err, rc) in enumerate(transcript):
        if command == "cat %s/mom_priv/config" % REAL_HOME:
            config = out
        elif command.startswith("kill -HUP") and rc == 0:
            session.write_config(original_config)
            assert session.new_mom().start(hello=False)
            session.write_config(config)
            survived = session.mom.hangup()
            following_ps = next(b for b in transcript[index:] if b[0].startswith("ps -o pid,stat,args"))
            outcomes.append((config, survived, "state = free" in following_ps[1]))
    assert len(outcomes) == 7
    assert [(c, s) for c, s, _unused in outcomes] == [(c, real) for c, _unused, real in outcomes]
