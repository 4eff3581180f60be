"""Transcript h (tests/reference/openpbs/h_job_arrays.txt, attempt 2: ``qsub -J 1-3`` with
the queuejob hook disabled) replayed on an in-process mock server, block by block.

The test plays the mom (a :class:`mockpbs.testing.server.FakeMom` named ``vm`` with two
CPUs, as in the session) and the user ``pbsuser`` (the session's environment: HOME,
LOGNAME, PATH, MAIL, SHELL; its home directory is a directory under ``tmp_path``,
written back as ``/home/pbsuser`` before comparing); the server's job sequence starts at
14, as the session's did. The subjobs start and end when the transcript's do: two
run at once, the third when the first ends, with the session ids and resources_used of
the transcript's accounting records. Job history is on, as the session of transcript g
left it.

Compared, for every block of attempt 2 that the replay reaches:

- ``qsub`` and the ``qstat`` tables (``-t``, ``-J``, ``-xt``): stdout, stderr and exit
  code exactly, ``-xt`` restricted to the array's rows (``12.vm`` and ``13.vm`` are jobs
  of earlier sessions);
- ``qstat -f`` of the array and of a subjob: attribute by attribute, in order, wrapped
  values joined; the values in :data:`VARYING` (times, the queue rank) only for being
  present;
- ``qstat -fx ... | grep -n -E ...``: the grepped lines in order, without their line
  numbers (they count the lines of the wrapped Variable_List, whose PBS_O_WORKDIR is
  this test's directory).

Not compared, and why (:data:`MOM_REPORTED`): the ``Time Use`` of a running subjob and
its ``resources_used.*`` and ``jobdir`` attributes are what a real mom reports in its
periodic status updates while the job runs; the mock mom reports usage only with the
obit (after the job ends, where the ``-xt`` and ``-fx`` blocks compare it).
"""
import os
import re

import pytest

from mockpbs import testaddr
from mockpbs.cli import common, pbsnodes, qmgr, qstat, qsub
from mockpbs.testing import server as testing

TRANSCRIPT = "h_job_arrays.txt"
HOME = "/home/pbsuser"
SESSION_ENV = {"HOME": HOME, "LOGNAME": "pbsuser", "MAIL": "/var/mail/pbsuser", "SHELL": "/bin/bash",
               "PATH": "/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games:/opt/pbs/bin"}
VARYING = {"ctime", "mtime", "qtime", "stime", "etime", "queue_rank", "comment"}
MOM_REPORTED = re.compile(r"^(resources_used\.\S+|jobdir)$")
RUNNING_TIME_USE = re.compile(r"^(\S+\s+\S+\s+\S+\s+)00:00:00( R )")
SUBMIT = "su - pbsuser -c 'qsub -J 1-3 -- /bin/sleep 5'"


blocks = testing.transcript_blocks


def attempt_two():
    """The blocks after the hook was disabled (the second ``qsub -J``), up to the hook's
    re-enabling: [(command, stdout, stderr, rc)]."""
    found = blocks(TRANSCRIPT)
    start = [i for i, b in enumerate(found) if b[0] == SUBMIT][1]
    end = next(i for i, b in enumerate(found) if i > start and b[0].startswith("qmgr "))
    return found[start:end]


def accounting(jobid, record_type):
    """``{key: value}`` of the transcript's accounting record of ``jobid``."""
    out = next(b[1] for b in blocks(TRANSCRIPT) if b[0].startswith("grep -F ';14['"))
    line = next(l for l in out.splitlines() if ";%s;%s;" % (record_type, jobid) in l)
    return dict(f.split("=", 1) for f in line.split(";", 3)[3].split() if "=" in f)


class Session:
    """The in-process server and fake mom, and the session's user."""

    def __init__(self, daemon, mom, home):
        self.daemon, self.mom, self.home = daemon, mom, home
        self.started = set()

    def run(self, module, argv, unwrap=False):
        """``(rc, stdout, stderr)`` of a command, the home directory written back as the
        session's; ``unwrap``: wrapped ``qstat -f`` values joined first (a long path
        wraps)."""
        rc, out, err = testing.run_cli(module.main, argv)
        if unwrap:
            out = out.replace("\n\t", "")
        return rc, out.replace(self.home, HOME), err.replace(self.home, HOME)

    def start_runs(self, count):
        """Report every subjob the server sent to the mom as started (the transcript's
        session id), once ``count`` runs were sent."""
        runs = testing.wait_for(lambda: len(self.mom.ops("run_job")) >= count and self.mom.ops("run_job"),
                                "%d run_job requests" % count)
        for run in runs:
            jobid = run["job"]["id"]
            if jobid not in self.started:
                self.started.add(jobid)
                self.mom.report({"op": "mom_job_started", "jobid": jobid,
                                 "session": int(accounting(jobid, "E")["session"])})

    def end(self, jobid):
        record = accounting(jobid, "E")
        used = {k[len("resources_used."):]: v for k, v in record.items() if k.startswith("resources_used.")}
        self.mom.report({"op": "mom_job_obit", "jobid": jobid, "exit_status": int(record["Exit_status"]),
                         "resources_used": used, "run_count": int(record["run_count"])})


@pytest.fixture
def session(tmp_path, monkeypatch):
    home = str(tmp_path / "pbsuser")
    os.makedirs(home)
    with testaddr.reserved_addresses(1) as (address,):
        daemon = testing.start_server(tmp_path, monkeypatch)
        mom = testing.FakeMom(address, "vm", daemon.address, resources={"ncpus": "2", "host": "vm"},
                              verdict=lambda job: None)
        try:
            # Set by the session of transcript g, before h.
            assert testing.run_cli(qmgr.main, ["-c", "set server job_history_enable = True"])[0] == 0
            assert testing.run_cli(qmgr.main, ["-c", "create node vm Mom=%s" % address])[0] == 0
            testing.wait_for(lambda: "state = free" in testing.run_cli(pbsnodes.main, ["vm"])[1], "vm free")
            monkeypatch.setattr(common, "identity", lambda: {"user": "pbsuser", "group": "pbsuser", "host": "vm"})
            for key, value in SESSION_ENV.items():
                monkeypatch.setenv(key, value)
            monkeypatch.chdir(home)
            daemon.core.state.next_seq = 14
            yield Session(daemon, mom, home)
        finally:
            mom.close()
            daemon.stop()


def full_attributes(text):
    """``[(name, value)]`` of one ``qstat -f`` job, wrapped values joined; VARYING values
    as ``<varies>``; MOM_REPORTED left out."""
    pairs = re.findall(r"^    (\S+) = (.*)$", text.replace("\n\t", ""), re.M)
    return [(name, "<varies>" if name in VARYING else value) for name, value in pairs
            if not MOM_REPORTED.match(name)]


def grepped(text):
    """The lines of ``grep -n`` output without their numbers."""
    return [line.split(":", 1)[1] for line in text.splitlines()]


def without_running_time_use(text):
    return "\n".join(RUNNING_TIME_USE.sub(r"\g<1>       0\g<2>", line) for line in text.split("\n"))


def compare(session, command, out, err, rc):
    """Run the mock's equivalent of one transcript block and compare (module docstring)."""
    if command == SUBMIT:
        assert session.run(qsub, ["-J", "1-3", "--", "/bin/sleep", "5"]) == (rc, out, err)
    elif command in ("qstat -t", "qstat -J"):
        assert session.run(qstat, [command.split()[1]]) == (rc, without_running_time_use(out), err)
    elif command == "qstat -xt":
        got_rc, got, got_err = session.run(qstat, ["-xt"])
        keep = [l for l in out.splitlines() if not re.match(r"1[23]\.vm ", l)]
        assert (got_rc, got.splitlines(), got_err) == (rc, keep, err)
    elif command.startswith("qstat -f") and "|" not in command:
        got_rc, got, got_err = session.run(qstat, ["-f", command.split("'")[1]], unwrap=True)
        assert (got_rc, got_err) == (rc, err)
        assert full_attributes(got) == full_attributes(out)
    elif command.startswith("qstat -f") and "| grep -n -E" in command:
        option, jobid = command.split("'")[0].split()[1], command.split("'")[1]
        pattern = command.rsplit("'", 2)[1]
        got_rc, got, got_err = session.run(qstat, [option, jobid], unwrap=True)
        got_lines = [l for l in got.splitlines() if re.search(pattern, l)]
        assert (got_rc, got_lines, got_err) == (rc, grepped(out), err), command
    else:
        return False
    return True


def test_job_array_blocks_match_transcript_h(session):
    compared = []
    for command, out, err, rc in attempt_two():
        if command == "qstat -t":
            session.start_runs(2)
        elif command == "qstat -xt":
            session.end("14[1].vm")
            session.start_runs(3)
            session.end("14[2].vm")
            session.end("14[3].vm")
            testing.wait_for(lambda: "    job_state = F\n" in session.run(qstat, ["-fx", "14[].vm"])[1],
                             "the array finished")
        if compare(session, command, out, err, rc):
            compared.append(command)
    # qsub; -t, -J, -f of the array, -f of a subjob and its grep; -xt and two -fx greps.
    assert len(compared) == 9, compared
