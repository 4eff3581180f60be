"""Job arrays and failed run attempts on the in-process server with a fake mom
(seeds/job-array-subjob-run-count-hold-release.txt, reference/openpbs/h_job_arrays.txt):
qsub -J, qstat -t/-J/-f, qhold/qrls/qdel of arrays and subjobs, run_count above 20,
the array's system hold and its release by ``qrls -h s <array>``."""
import os
import re
import threading

import pytest

from mockpbs import testaddr
from mockpbs.cli import common, qdel, qhold, qmgr, qrls, qstat, qsub
from mockpbs.testing import server as testing


@pytest.fixture
def server(tmp_path, monkeypatch):
    with testaddr.reserved_addresses(1) as (mom_address,):
        daemon = testing.start_server(tmp_path, monkeypatch, sched_interval=0.2)
        moms = []

        def add_mom(verdict=None, ncpus="2"):
            mom = testing.FakeMom(mom_address, "mom1", resources={"ncpus": ncpus, "mem": "4gb"},
                                  server_address=daemon.address, verdict=verdict)
            moms.append(mom)
            assert testing.run_cli(qmgr.main, ["-c", "create node mom1 Mom=%s" % mom_address])[0] == 0
            testing.wait_for(lambda: "state = free" in node_text(), "mom1 free")
            return mom

        yield daemon, add_mom
        for mom in moms:
            mom.close()
        daemon.stop()


def node_text():
    from mockpbs.cli import pbsnodes
    return testing.run_cli(pbsnodes.main, ["mom1"])[1]


def attrs_of(jobid, *flags):
    _unused, out, _unused = testing.run_cli(qstat.main, list(flags) + ["-f", jobid])
    return dict(re.findall(r"^    (\S+) = (.*)$", out.replace("\n\t", ""), re.M))


def submit(*args):
    rc, out, err = testing.run_cli(qsub.main, list(args))
    assert (rc, err) == (0, ""), err
    return out.strip()


def test_qsub_J_creates_array_and_qstat_t_lists_subjobs_in_pbs_format(server):
    daemon, add_mom = server
    gate = threading.Event()
    add_mom(verdict=lambda job: "accept" if job["id"] != "0[3].vm" else (gate.wait(30) and None))
    jobid = submit("-J", "1-3", "--", "/bin/sleep", "5")
    assert jobid == "0[].vm"
    testing.wait_for(lambda: attrs_of("0[2].vm").get("substate") == "42", "two subjobs running")
    _unused, table, _unused = testing.run_cli(qstat.main, ["-t"])
    lines = table.splitlines()
    assert lines[0] == "Job id            Name             User              Time Use S Queue"
    assert lines[2].startswith("0[].vm            STDIN            root                     0 B workq")
    assert [l.split()[0] for l in lines[2:]] == ["0[].vm", "0[1].vm", "0[2].vm", "0[3].vm"]
    assert [l.split()[4] for l in lines[3:]] == ["R", "R", "Q"]
    plain = testing.run_cli(qstat.main, [])[1]
    assert "0[1].vm" not in plain and "0[].vm" in plain
    assert testing.run_cli(qstat.main, ["-J"])[1].splitlines()[2].startswith("0[].vm ")
    parent = attrs_of("0[].vm")
    assert parent["job_state"] == "B" and parent["substate"] == "70"
    assert parent["array"] == "True" and parent["array_indices_submitted"] == "1-3"
    assert parent["array_indices_remaining"] == "3"
    assert parent["array_state_count"] == "Queued:1 Running:2 Exiting:0 Expired:0"
    assert parent["comment"].startswith("Job Array Began at ")
    assert parent["Output_Path"].endswith("/STDIN.o0.^array_index^")
    sub = attrs_of("0[1].vm")
    assert (sub["array_id"], sub["array_index"], sub["run_count"]) == ("0[].vm", "1", "1")
    assert sub["Output_Path"].endswith("/STDIN.o0.1")
    assert "Checkpoint" not in sub and "Hold_Types" not in sub and "Submit_arguments" not in sub
    gate.set()


def test_subjob_hold_and_release_are_invalid_requests(server):
    _unused, add_mom = server
    add_mom(verdict=lambda job: None, ncpus="0")
    submit("-J", "1-2", "--", "/bin/true")
    rc, _unused, err = testing.run_cli(qhold.main, ["0[1].vm"])
    assert (rc, err) == (156, "qhold: Invalid request 0[1].vm\n")
    rc, _unused, err = testing.run_cli(qrls.main, ["0[1].vm"])
    assert (rc, err) == (156, "qrls: Invalid request 0[1].vm\n")
    assert testing.run_cli(qhold.main, ["0[].vm"])[0] == 0
    parent = attrs_of("0[].vm")
    assert (parent["job_state"], parent["Hold_Types"]) == ("H", "u")
    assert parent["comment"].startswith("Job held by root on ")
    assert testing.run_cli(qrls.main, ["0[].vm"])[0] == 0
    parent = attrs_of("0[].vm")
    assert (parent["job_state"], parent["Hold_Types"]) == ("Q", "n") and "comment" not in parent


def test_system_hold_needs_a_manager(server, monkeypatch):
    _unused, add_mom = server
    add_mom(verdict=lambda job: None, ncpus="0")
    monkeypatch.setattr(common, "identity", lambda: {"user": "pbsuser", "group": "pbsuser", "host": "vm"})
    jobid = submit("--", "/bin/true")
    rc, _unused, err = testing.run_cli(qhold.main, ["-h", "s", jobid])
    assert (rc, err) == (159, "qhold: Unauthorized Request %s\n" % jobid)
    assert testing.run_cli(qhold.main, [jobid])[0] == 0
    assert attrs_of(jobid)["job_state"] == "H"


def test_qdel_of_subjob_leaves_it_expired_and_qdel_of_array_ends_it(server):
    _unused, add_mom = server
    add_mom(verdict=lambda job: None, ncpus="0")
    submit("-J", "1-3", "--", "/bin/true")
    assert testing.run_cli(qdel.main, ["0[2].vm"]) == (0, "", "")
    assert attrs_of("0[2].vm")["job_state"] == "X"
    parent = attrs_of("0[].vm")
    assert parent["array_indices_remaining"] == "1,3"
    assert parent["array_state_count"] == "Queued:2 Running:0 Exiting:0 Expired:1"
    assert testing.run_cli(qdel.main, ["0[].vm"]) == (0, "", "")
    rc, _unused, err = testing.run_cli(qstat.main, ["0[].vm"])
    assert (rc, err) == (153, "qstat: Unknown Job Id 0[].vm\n")


def test_large_run_count_is_held_after_one_rejection(server):
    _unused, add_mom = server
    mom = add_mom(verdict=lambda job: "reject")
    jobid = submit("-W", "run_count=184", "--", "/bin/true")
    testing.wait_for(lambda: attrs_of(jobid).get("job_state") == "H", "job held")
    assert attrs_of(jobid)["run_count"] == "185" and len(mom.ops("run_job")) == 1
    rc, _unused, err = testing.run_cli(qsub.main, ["-W", "run_count=18446744073709551616", "--", "/bin/true"])
    assert rc == 2 and err.startswith("qsub: illegal -W value\n")


def test_subjob_held_after_21_failed_starts_holds_array_until_qrls_s(server):
    daemon, add_mom = server
    verdicts = {"value": "reject"}
    mom = add_mom(verdict=lambda job: verdicts["value"], ncpus="1")
    submit("-J", "1-2", "--", "/bin/true")
    testing.wait_for(lambda: attrs_of("0[].vm").get("job_state") == "H", "array held", deadline=60)
    sub = attrs_of("0[1].vm")
    assert (sub["job_state"], sub["run_count"], sub["Hold_Types"]) == ("H", "21", "s")
    assert sub["comment"] == "job held, too many failed attempts to run"
    parent = attrs_of("0[].vm")
    assert parent["comment"] == "Job Array Held, too many failed attempts to run subjob 0[1].vm"
    assert parent["Hold_Types"] == "s"
    # no further subjob was started: every run_job was for 0[1]
    assert {m["job"]["id"] for m in mom.ops("run_job")} == {"0[1].vm"}
    assert attrs_of("0[2].vm")["job_state"] == "Q"
    verdicts["value"] = "accept"
    # the user hold default of qrls does not touch the system holds
    assert testing.run_cli(qrls.main, ["0[].vm"])[0] == 0
    assert attrs_of("0[].vm")["job_state"] == "H"
    assert testing.run_cli(qrls.main, ["-h", "s", "0[].vm"]) == (0, "", "")
    testing.wait_for(lambda: attrs_of("0[1].vm").get("job_state") == "R", "subjob running again")
    sub = attrs_of("0[1].vm")
    assert sub["run_count"] == "22" and sub.get("Hold_Types", "n") == "n"
    parent = attrs_of("0[].vm")
    assert parent["job_state"] == "B" and parent["comment"].startswith("Job Array Began at ")


# ---------------------------------------------------------------- failed starts (issue 7)
# The seed's two ways a start fails at the mom ("an execution hook that rejects job or
# raises exception during execjob_begin"), plus a mom the server cannot reach: each
# attempt counts in run_count, and the 21st failure holds the job.
RAISING_BEGIN_HOOK = "import pbs\nraise RuntimeError('execjob_begin exploded')\n"


@pytest.fixture
def real_mom_server(tmp_path, monkeypatch):
    """(daemon, mom): the in-process server with one real :class:`Mom` ``mom1`` whose
    execjob_begin hook raises an exception."""
    from mockpbs.mom.daemon import Mom
    with testaddr.reserved_addresses(1) as (mom_address,):
        daemon = testing.start_server(tmp_path, monkeypatch, sched_interval=0.2)
        home = tmp_path / "mom1"
        (home / "mom_priv").mkdir(parents=True)
        mom = Mom(str(home), "mom1", "mom1", mom_address, "vm", server_address=daemon.address)
        mom.hooks.write("boom", "HK", "type=site\nenabled=true\nevent=execjob_begin\nalarm=30\n")
        mom.hooks.write("boom", "PY", RAISING_BEGIN_HOOK)
        try:
            assert mom.start()
            assert testing.run_cli(qmgr.main, ["-c", "create node mom1 Mom=%s" % mom_address])[0] == 0
            testing.wait_for(lambda: "state = free" in node_text(), "mom1 free")
            yield daemon, mom
        finally:
            mom.stop()
            daemon.stop()


def mom_ncpus():
    return re.search(r"resources_available\.ncpus = (\d+)", node_text()).group(1)


BEGIN_EXCEPTION = "0100;pbs_mom;Hook;boom;execjob_begin hook 'boom' encountered an exception, request rejected"


def begin_exceptions(mom):
    """How many times mom1 logged its execjob_begin hook's exception."""
    logdir = os.path.join(mom.pbs_home, "mom_logs")
    count = 0
    for name in os.listdir(logdir):
        with open(os.path.join(logdir, name)) as handle:
            count += sum(1 for line in handle.read().splitlines() if line.split(";", 1)[1] == BEGIN_EXCEPTION)
    return count


@pytest.fixture
def unreachable_mom_server(tmp_path, monkeypatch):
    """The in-process server with node ``mom1`` free (a FakeMom answered its ping), whose
    mom then stops listening: every ``run_job`` meets connection refused. The server's
    periodic ping is slowed down so that it does not mark the node down in between."""
    with testaddr.reserved_addresses(1) as (mom_address,):
        daemon = testing.start_server(tmp_path, monkeypatch, sched_interval=0.2, ping_interval=3600)
        try:
            mom = testing.FakeMom(mom_address, "mom1", resources={"ncpus": "1", "mem": "4gb"},
                                  server_address=daemon.address)
            assert testing.run_cli(qmgr.main, ["-c", "create node mom1 Mom=%s" % mom_address])[0] == 0
            testing.wait_for(lambda: "state = free" in node_text(), "mom1 free")
            mom.close()
            yield daemon
        finally:
            daemon.stop()


def server_log(daemon):
    logdir = os.path.join(daemon.core.state.pbs_home, "server_logs")
    lines = []
    for name in sorted(os.listdir(logdir)):
        with open(os.path.join(logdir, name)) as handle:
            lines.extend(line.split(";", 1)[1] for line in handle.read().splitlines())
    return lines


def requeues(daemon, jobid):
    """How many times the server requeued ``jobid`` after its mom could not be reached."""
    prefix = "0008;Server@vm;Job;%s;Job requeued, execution node " % jobid
    return sum(1 for line in server_log(daemon) if line.startswith(prefix))


@pytest.fixture(params=["rejecting_fake_mom", "raising_execjob_begin_hook", "unreachable_mom"])
def failed_starts(request):
    """``failed_starts(jobid) -> int`` for a server whose every start of a job on mom1
    fails in one of the ways above, counted where that way leaves its trace: the fake
    mom's run_job requests, the real mom's hook exceptions, the server's requeues."""
    if request.param == "rejecting_fake_mom":
        _unused, add_mom = request.getfixturevalue("server")
        mom = add_mom(verdict=lambda job: "reject")
        return lambda jobid: sum(1 for run in mom.ops("run_job") if run["job"]["id"] == jobid)
    if request.param == "raising_execjob_begin_hook":
        _unused, mom = request.getfixturevalue("real_mom_server")
        return lambda jobid: begin_exceptions(mom)
    daemon = request.getfixturevalue("unreachable_mom_server")
    return lambda jobid: requeues(daemon, jobid)


def test_plain_job_held_after_21_failed_starts(failed_starts):
    jobid = submit("--", "/bin/true")
    testing.wait_for(lambda: attrs_of(jobid).get("job_state") == "H", "job held", deadline=120)
    attrs = attrs_of(jobid)
    assert (attrs["run_count"], attrs["Hold_Types"]) == ("21", "s")
    assert attrs["comment"] == "job held, too many failed attempts to run"
    assert failed_starts(jobid) == 21
    assert "resources_assigned.ncpus = 0\n" in node_text()


def test_subjob_held_after_21_failed_starts_holds_the_array(failed_starts):
    # one subjob at a time: each takes every CPU the mom reports
    submit("-J", "1-2", "-l", "select=1:ncpus=%s" % mom_ncpus(), "--", "/bin/true")
    testing.wait_for(lambda: attrs_of("0[].vm").get("job_state") == "H", "array held", deadline=120)
    sub = attrs_of("0[1].vm")
    assert (sub["job_state"], sub["run_count"], sub["Hold_Types"]) == ("H", "21", "s")
    assert sub["comment"] == "job held, too many failed attempts to run"
    parent = attrs_of("0[].vm")
    assert parent["comment"] == "Job Array Held, too many failed attempts to run subjob 0[1].vm"
    assert parent["Hold_Types"] == "s"
    assert attrs_of("0[2].vm")["job_state"] == "Q"
    assert failed_starts("0[1].vm") == 21
