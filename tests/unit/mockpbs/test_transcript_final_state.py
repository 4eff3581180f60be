"""Transcript z (tests/reference/openpbs/z_final_state.txt, the real server's state at
the end of the recorded sessions) replayed on an in-process mock server.

The server is brought to the session's end state by the qmgr commands of the sessions
that changed it (transcripts g: ``job_history_enable``, ``log_events``, the ``rjs_hook``
site hook with its events, left disabled), then each of z's server-side blocks listed
in :data:`COMPARED` is run through the mock's command and compared with the block:
stdout, stderr and exit code exactly, line by line.

Not compared, and why:

- ``ps`` and the ``*.lock`` files: process ids of the real daemons (the mock cluster's
  daemons are compared by the launcher tests);
- ``qstat -B; pbsnodes ...``: the job total counts the session's ten jobs, and the
  second mom listens on a port of its own (15011) that the in-process server does not
  reach; ``qstat -B`` alone is compared by test_transcript_qmgr (transcript 00);
- ``cat .../mom_priv/config``, ``cat /etc/pbs.conf...`` and the init script status:
  files and processes of the real installation, not server output.
"""

import pytest

from mockpbs.cli import qmgr
from mockpbs.testing import server as testing

TRANSCRIPT = "z_final_state.txt"
SESSION_COMMANDS = (
    "set server job_history_enable = True",
    "set server log_events = 2047",
    "create hook rjs_hook",
    "set hook rjs_hook event = 'queuejob,execjob_launch'",
    "set hook rjs_hook enabled = false",
)
COMPARED = (
    'qmgr -c "export pbshook PBS_cray_atom application/x-config default"',
    'qmgr -c "list hook"',
    'qmgr -c "print server"',
)


@pytest.fixture
def server(tmp_path, monkeypatch):
    daemon = testing.start_server(tmp_path, monkeypatch)
    for command in SESSION_COMMANDS:
        rc, _unused, err = testing.run_cli(qmgr.main, ["-c", command])
        assert (rc, err) == (0, ""), command
    yield daemon
    daemon.stop()


def test_final_state_blocks_match_transcript_z(server):
    transcript = testing.transcript_blocks(TRANSCRIPT)
    compared = 0
    for command, out, err, rc in transcript:
        if command not in COMPARED:
            continue
        got = testing.run_qmgr_as_in_transcript(server, testing.transcript_qmgr_argument(command))
        assert (got[0], got[1].splitlines(), got[2]) == (rc, out.splitlines(), err), command
        assert got[1] == out, command
        compared += 1
    assert compared == len(COMPARED) == 3
