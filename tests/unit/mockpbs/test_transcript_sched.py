"""Transcript e (tests/reference/openpbs/e_sched_job_run_wait.txt) replayed against an
in-process mock server: every ``qmgr`` command of it, in the transcript's order, with
stdout, stderr and exit code compared exactly (helpers of mockpbs.testing.server).

The one piped command (``qmgr -c "print sched" | grep -E ...``) runs the qmgr part and
applies the grep pattern to its stdout. The two log ``grep`` blocks at the end are
compared as follows: the sched_logs grep is empty in the transcript and must be empty in
the mock; the server_logs grep lines written during the replayed commands (the
transcript's lines from 19:22:15 on; the earlier line 167 comes from a session before
transcript e) must match field by field except the timestamp and the line number.
"""
import glob
import os
import re

from mockpbs.cli import qmgr
from mockpbs.testing import server as testing


blocks, qmgr_c, run_qmgr = (testing.transcript_blocks, testing.transcript_qmgr_argument,
                            testing.run_qmgr_as_in_transcript)

TRANSCRIPT = "e_sched_job_run_wait.txt"
PIPED = re.compile(r'^(qmgr -c ".*") \| grep -E "(.*)"$')
LOG_GREP = re.compile(r"job_run_wait|throughput", re.I)


def replay_qmgr_blocks(server):
    """Run every qmgr block; return the list of (command, expected, got) that differ and
    the number of blocks run."""
    differences = []
    count = 0
    for command, out, err, rc in blocks(TRANSCRIPT):
        piped = PIPED.match(command)
        if piped:
            got_rc, got_out, got_err = run_qmgr(server, qmgr_c(piped.group(1)))
            pattern = re.compile(piped.group(2))
            got_out = "".join(line + "\n" for line in got_out.splitlines() if pattern.search(line))
        elif command.startswith('qmgr -c "'):
            got_rc, got_out, got_err = run_qmgr(server, qmgr_c(command))
        else:
            continue
        count += 1
        if (got_rc, got_out, got_err) != (rc, out, err):
            differences.append((command, (rc, out, err), (got_rc, got_out, got_err)))
    return differences, count


def log_lines(pbs_home, daemon_dir):
    lines = []
    for path in sorted(glob.glob(os.path.join(pbs_home, daemon_dir, "*"))):
        with open(path) as handle:
            lines.extend(handle.read().splitlines())
    return lines


def without_timestamp(line):
    return line.split(";", 1)[1]


def test_every_qmgr_command_of_transcript_e_matches(server):
    differences, count = replay_qmgr_blocks(server)
    assert count == 27
    assert differences == []


def test_server_log_lines_of_transcript_e_match_after_replay(server):
    replay_qmgr_blocks(server)
    pbs_home = server.core.state.pbs_home
    sched_block = [b for b in blocks(TRANSCRIPT) if "sched_logs" in b[0]][0]
    assert sched_block[1] == ""
    assert [l for l in log_lines(pbs_home, "sched_logs") if LOG_GREP.search(l)] == []

    server_block = [b for b in blocks(TRANSCRIPT) if "server_logs" in b[0]][0]
    expected = [without_timestamp(line.split(":", 1)[1]) for line in server_block[1].splitlines()
                if " 19:20:" not in line]
    assert len(expected) == 14
    got = [without_timestamp(l) for l in log_lines(pbs_home, "server_logs") if LOG_GREP.search(l)]
    assert got == expected


def test_rejected_value_leaves_job_run_wait_unchanged(server):
    # Guards the replay against a mock that would answer "bogus" right but store it.
    assert run_qmgr(server, "set sched job_run_wait=execjob_hook")[0] == 0
    rc, _unused, err = run_qmgr(server, "set sched job_run_wait=bogus")
    assert rc != 0 and err
    rc, out, _unused = testing.run_cli(qmgr.main, ["-c", "list sched default job_run_wait"])
    assert out == "Sched default\n    job_run_wait = execjob_hook\n\n"
