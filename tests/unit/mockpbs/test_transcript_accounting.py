"""The accounting records of the runtime transcripts of real OpenPBS replayed on an
in-process mock server: g_reliable_job_startup (one mom), g_reliable_job_startup_2nodes
(a padded job pruned at launch: ``Q``, ``S``, ``s``, ``e``, ``E``), h_job_arrays (a job
array: the array's ``Q``/``S``/``E`` and its subjobs') and j_second_mom_same_host (a
``vscatter`` job over two moms on one host).

The transcript's records drive the replay, in their order. The test plays the moms (two
:class:`mockpbs.testing.server.FakeMom` named ``vm`` and ``vm-m2``, two CPUs each, host
``vm``, as in the session) and the submitting user ``pbsuser``; the server does the rest:

- ``Q``: ``qsub`` with the transcript's arguments. Where the session's queuejob hook
  (ReliableJobStartup.py) rewrote the select, the test submits what the hook made of it
  (``select`` padded, ``site`` the original): the hook itself is not part of the replay;
- ``S`` of a job or subjob: written by the server when its scheduler runs it; the test
  then reports the job started, with the session id of the job's ``E`` record;
- ``S`` / ``E`` of an array: written by the server on its first subjob's start / last
  subjob's end;
- ``s``: the primary mom's update after ``release_nodes()`` (the record's exec_vnode,
  exec_host and select);
- ``e`` / ``E``: the mom's obit with the ``E`` record's Exit_status and resources_used.

After each record, the mock's first records are compared with the transcript's so far
(its scheduler may have gone one step further), field by field (``key=value`` split on single spaces, so a doubled or trailing
space counts), with two substitutions: the epoch times (``ctime``, ``qtime``, ``etime``,
``start``, ``end``) become ``<time>`` and the job ids are mapped to the mock's (its
numbers start at 0).

Where the transcript shows the job's server log lines (g, both sessions), the mock's
lines of the job are compared with them at the end, field by field (event class,
daemon, object type, object name, message), all of them for a ``grep``, the last ones
for a ``| tail -15``; not compared: the repeated ``Received the same SID`` (a real mom's
periodic status update) and the pruning's ``clearing job``/``deallocating`` lines (with
both moms on one host real PBS credits every vnode to the first mom's host, a set-up
the mock cluster never has).

At the end, the transcript's ``qstat -fx <job> | grep -E ...`` block (g, both sessions,
and j) is run over the mock's ``qstat -fx`` of the job, line by line (a comment's time
as ``<when>``).

Not replayed: job 18 of g_reliable_job_startup_2nodes (its ``R`` record follows a
requeue caused by two moms sharing one host name, a set-up the mock cluster never
has), and job 15 of j_second_mom_same_host (``place=scatter`` over two vnodes of one
host never runs: only its ``Q`` exists).
"""
import collections
import glob
import os
import re

import pytest

from mockpbs import testaddr, wire
from mockpbs.cli import common, pbsnodes, qmgr, qstat, qsub
from mockpbs.testing import server as testing

TIME_FIELDS = ("ctime", "qtime", "etime", "start", "end")
MOM_RESOURCES = {"ncpus": "2", "host": "vm"}

Replay = collections.namedtuple("Replay", "transcript command jobid qsub_argv records server_log final_qstat")
REPLAYS = {
    "g_one_mom": Replay("g_reliable_job_startup.txt",
                        "tail -n +40 /var/spool/pbs/server_priv/accounting/20261121 | grep '12.vm'",
                        "12.vm", ["-l", "select=1:ncpus=1", "-l", "site=1:ncpus=1",
                                  "-W", "tolerate_node_failures=job_start", "--", "/bin/sleep", "20"], 3,
                        "tail -n +1574 /var/spool/pbs/server_logs/20261121 | grep -E "
                        "'12.vm|rjs_hook|queuejob hook|select spec'",
                        "qstat -fx 12.vm | grep -E 'job_state|Resource_List|tolerate_node_failures|exec_vnode|"
                        "Exit_status|run_count|resources_used'"),
    "g_two_moms_pruned": Replay(
        "g_reliable_job_startup_2nodes.txt", "grep -F ';17.vm;' /var/spool/pbs/server_priv/accounting/$(date +%Y%m%d)",
        "17.vm", ["-l", "select=1:ncpus=1+2:ncpus=1", "-l", "site=1:ncpus=1+1:ncpus=1", "-l", "place=free",
                  "-W", "tolerate_node_failures=job_start", "--", "/bin/sleep", "15"], 5,
        "grep -F '17.vm' /var/spool/pbs/server_logs/$(date +%Y%m%d) | tail -15",
        "qstat -fx 17.vm | grep -E 'job_state|Resource_List|exec_host|exec_vnode|schedselect|tolerate|"
        "Exit_status|run_count'"),
    "h_job_array": Replay("h_job_arrays.txt", "grep -F ';14[' /var/spool/pbs/server_priv/accounting/$(date +%Y%m%d)",
                          "14[].vm", ["-J", "1-3", "--", "/bin/sleep", "5"], 9, None, None),
    "j_vscatter_two_moms": Replay(
        "j_second_mom_same_host.txt", "grep -F '16.vm' /var/spool/pbs/server_priv/accounting/$(date +%Y%m%d)",
        "16.vm", ["-l", "select=2:ncpus=1", "-l", "place=vscatter", "--", "/bin/sleep", "10"], 3, None,
        "qstat -fx 16.vm | grep -E 'job_state|exec_host|exec_vnode|comment|Exit_status|run_count'"),
}
# h ran before the second mom was added (j): one mom then.
MOMS_OF = {"g_one_mom": ("vm",), "h_job_array": ("vm",)}


blocks = testing.transcript_blocks

Record = collections.namedtuple("Record", "type jobid fields")


def parse_record(line):
    """``Record(type, jobid, [field, ...])`` of one accounting line; the fields are the
    body split on single spaces (empty strings stand for doubled or trailing spaces)."""
    _unused, record_type, jobid, body = line.split(";", 3)
    return Record(record_type, jobid, body.split(" "))


def transcript_records(replay):
    """The records of the transcript's last block of ``replay.command`` (g's 2-node
    session greps the accounting file twice: before and after the job ended)."""
    found = [b for b in blocks(replay.transcript) if b[0] == replay.command]
    assert found, replay.command
    return [parse_record(line) for line in found[-1][1].splitlines()]


def field_value(record, key):
    values = [f.split("=", 1)[1] for f in record.fields if f.startswith(key + "=")]
    assert len(values) == 1, (key, record)
    return values[0]


def normalized(record, ids):
    """The record with epoch times as ``<time>`` and job ids through ``ids``."""
    fields = []
    for item in record.fields:
        key, _unused, value = item.partition("=")
        if key in TIME_FIELDS:
            assert value.isdigit(), item
            value = "<time>"
        fields.append("%s=%s" % (key, value) if _unused else item)
    return (record.type, ids(record.jobid), fields)


class MockSide:
    """The in-process server, its fake moms and what the test plays of their part."""

    def __init__(self, daemon, moms):
        self.daemon = daemon
        self.moms = moms
        self.sent_obit = set()

    def records(self):
        lines = []
        for path in sorted(glob.glob(os.path.join(self.daemon.core.state.priv, "accounting", "*"))):
            with open(path) as handle:
                lines += [line.rstrip("\n") for line in handle]
        return [parse_record(line) for line in lines]

    def report(self, message):
        reply = wire.request(self.daemon.address, wire.SERVER_PORT, message, timeout=30)
        assert reply.get("ok", True), reply
        return reply

    def started(self, jobid, session):
        self.report({"op": "mom_job_started", "jobid": jobid, "session": int(session)})

    def pruned(self, jobid, record):
        reply = self.report({"op": "mom_job_update", "jobid": jobid,
                             "exec_vnode": field_value(record, "exec_vnode"),
                             "exec_host": field_value(record, "exec_host"),
                             "schedselect": field_value(record, "Resource_List.select")})
        assert reply["applied"], reply

    def obit(self, jobid, end_record):
        if jobid in self.sent_obit:
            return
        self.sent_obit.add(jobid)
        used = {f.split("=", 1)[0][len("resources_used."):]: f.split("=", 1)[1]
                for f in end_record.fields if f.startswith("resources_used.")}
        self.report({"op": "mom_job_obit", "jobid": jobid, "resources_used": used,
                     "exit_status": int(field_value(end_record, "Exit_status")),
                     "run_count": int(field_value(end_record, "run_count"))})


@pytest.fixture
def mock_side(request, tmp_path, monkeypatch):
    """``make(mom names) -> MockSide``: a server and free fake moms, ``qsub`` as pbsuser."""
    made = []

    def make(names):
        with testaddr.reserved_addresses(len(names)) as addresses:
            daemon = testing.start_server(tmp_path, monkeypatch)
            moms = [testing.FakeMom(address, name, daemon.address, resources=dict(MOM_RESOURCES),
                                    verdict=lambda job: None) for name, address in zip(names, addresses)]
            made.append((daemon, moms))
            # Set by the session of transcript g before its jobs: finished jobs stay listed.
            assert testing.run_cli(qmgr.main, ["-c", "set server job_history_enable = True"])[0] == 0
            for mom in moms:
                rc, _unused, err = testing.run_cli(qmgr.main, ["-c", "create node %s Mom=%s" % (mom.name, mom.address)])
                assert rc == 0, err
            testing.wait_for(lambda: testing.run_cli(pbsnodes.main, ["-a"])[1].count("state = free") == len(names),
                             "nodes free")
        monkeypatch.setattr(common, "identity", lambda: {"user": "pbsuser", "group": "pbsuser", "host": "vm"})
        return MockSide(daemon, moms)

    yield make
    for daemon, moms in made:
        for mom in moms:
            mom.close()
        daemon.stop()


def id_mapper(transcript_jobid, mock_jobid):
    """Maps the transcript's ``14[].vm`` / ``14[2].vm`` / ``12.vm`` to the mock's number."""
    real = transcript_jobid.split("[")[0].split(".")[0]
    mock = mock_jobid.split("[")[0].split(".")[0]
    return lambda jobid: re.sub(r"^%s(?=[.\[])" % re.escape(real), mock, jobid)


def end_record_of(records, jobid):
    return next(r for r in records if r.jobid == jobid and r.type in ("E", "R"))


def wait_for_record(side, record, ids):
    def written():
        return any((r.type, r.jobid) == (record.type, ids(record.jobid)) for r in side.records())
    testing.wait_for(written, "record %s of %s" % (record.type, record.jobid))


def drive(side, record, records, ids):
    """Play the mom's or the user's part that makes the server write ``record``."""
    jobid = ids(record.jobid)
    if record.type in ("e", "E") and not record.jobid.endswith("[].vm"):
        side.obit(jobid, end_record_of(records, record.jobid))
    elif record.type == "s":
        side.pruned(jobid, record)
    wait_for_record(side, record, ids)
    if starts_the_program(record, records):
        side.started(jobid, field_value(end_record_of(records, record.jobid), "session"))


def starts_the_program(record, records):
    """True when the mom reports the job started (its session id) after ``record``: after
    the ``s`` record of a pruned job (its launch hook ran first), else after its ``S``."""
    if record.jobid.endswith("[].vm"):
        return False
    pruned = any(r.type == "s" and r.jobid == record.jobid for r in records)
    return record.type == ("s" if pruned else "S")


@pytest.mark.parametrize("name", sorted(REPLAYS))
def test_accounting_records_match_the_transcript_field_by_field(mock_side, name):
    replay = REPLAYS[name]
    records = transcript_records(replay)
    assert len(records) == replay.records
    side = mock_side(MOMS_OF.get(name, ("vm", "vm-m2")))
    assert records[0].type == "Q" and records[0].jobid == replay.jobid
    rc, out, err = testing.run_cli(qsub.main, replay.qsub_argv)
    assert (rc, err) == (0, "")
    ids = id_mapper(replay.jobid, out.strip())

    compared = 0
    for index, record in enumerate(records):
        drive(side, record, records, ids)
        # The server's scheduler may already have written the next record: the records
        # so far are a prefix of the mock's.
        expected = [normalized(r, ids) for r in records[:index + 1]]
        got = [normalized(r, lambda jobid: jobid) for r in side.records()]
        assert got[:index + 1] == expected, record
        compared += 1
    assert compared == replay.records
    assert len(side.records()) == replay.records
    if replay.server_log:
        expected = expected_server_log(replay, ids)
        got = server_log_lines(side, ids(replay.jobid))
        if "| tail -" in replay.server_log:
            # The block shows the last lines only: the mock's last lines must be those.
            got = got[-len(expected):]
        assert got == expected
    if replay.final_qstat:
        assert final_qstat_lines(replay, ids) == expected_final_qstat(replay)


WHEN = re.compile(r"at \w{3} \w{3} +\d+ at \d\d:\d\d")


def expected_final_qstat(replay):
    """The lines of the transcript's ``qstat -fx <job> | grep -E ...`` block, the time in
    a comment as ``<when>``."""
    out = next(b[1] for b in blocks(replay.transcript) if b[0] == replay.final_qstat)
    return [WHEN.sub("<when>", line) for line in out.splitlines()]


def final_qstat_lines(replay, ids):
    """The same ``grep -E`` over the mock's ``qstat -fx`` of the job (physical lines, as
    grep sees them), without continuation lines: the replay passes what the session's
    queuejob hook set (``site``, ``tolerate_node_failures``) as qsub arguments, so the
    mock's Submit_arguments is longer and wraps where the real one did not."""
    pattern = re.compile(replay.final_qstat.rsplit("'", 2)[1])
    _unused, out, _unused = testing.run_cli(qstat.main, ["-fx", ids(replay.jobid)])
    return [WHEN.sub("<when>", line) for line in out.splitlines()
            if pattern.search(line) and not line.startswith("\t")]


def log_fields(line, ids=None):
    """(event class, daemon, object type, object name, message) of a log line, the job
    ids mapped through ``ids``."""
    fields = line.split(";", 1)[1].split(";", 4)
    if ids is not None:
        fields[3] = ids(fields[3])
        fields[4] = re.sub(r"\b\d+\.vm\b", lambda m: ids(m.group(0)), fields[4])
    return tuple(fields)


def comparable(fields):
    """Whether the replay compares a server log line (see the module docstring)."""
    message = fields[4]
    return not (message.startswith("Received the same SID as before")
                or message.startswith(("clearing job ", "deallocating ")))


def expected_server_log(replay, ids):
    """The transcript's server log lines of the job (module docstring), as fields."""
    out = next(b[1] for b in blocks(replay.transcript) if b[0] == replay.server_log)
    jobid = replay.jobid
    lines = [log_fields(l, ids) for l in out.splitlines() if jobid in l]
    return [f for f in lines if comparable(f)]


def server_log_lines(side, jobid):
    lines = []
    for path in sorted(glob.glob(os.path.join(side.daemon.core.state.pbs_home, "server_logs", "*"))):
        with open(path) as handle:
            lines += [l.rstrip("\n") for l in handle if re.search(r"\b%s\b" % re.escape(jobid), l)]
    return [f for f in map(log_fields, lines) if comparable(f)]
