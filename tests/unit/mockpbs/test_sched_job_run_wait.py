"""The scheduler attribute ``job_run_wait`` (seeds/sched-job-run-wait.txt, transcript e):
values and their link to ``throughput_mode``, managers only, and the three run requests
observably different on one vnode with ncpus=1 and two queued jobs, the first of which
the mom rejects (as an execjob_begin hook would):

- ``execjob_hook`` (``pbs_runjob``): the cycle waits for the mom's verdict, learns of the
  reject and runs the second job on the freed vnode in the same cycle;
- ``none`` (``pbs_asyrunjob``, also ``runjob_hook`` without an enabled runjob hook): the
  cycle does not wait; the second job finds no vnode in that cycle;
- ``runjob_hook`` with an enabled runjob hook (``pbs_asyrunjob_ack``): the hook's reject
  keeps the job queued without reaching the mom.

The sched log names the run request of each job; the server log has PBS's ``Type N
request received from Scheduler@<host>`` (15 RunJob, 23 AsyrunJob, 97 AsyrunJob_ack)."""
import glob
import os
import re
import threading

import pytest

from mockpbs import testaddr
from mockpbs.cli import common, qmgr, qstat, qsub
from mockpbs.testing import server as testing


@pytest.fixture
def server(tmp_path, monkeypatch):
    with testaddr.reserved_addresses(1) as (mom_address,):
        daemon = testing.start_server(tmp_path, monkeypatch, sched_interval=30)
        moms = []

        def add_mom(verdict):
            mom = testing.FakeMom(mom_address, "mom1", resources={"ncpus": "1"}, server_address=daemon.address,
                                  verdict=verdict)
            moms.append(mom)
            assert run("create node mom1 Mom=%s" % mom_address)[0] == 0
            testing.wait_for(lambda: "state = free" in _pbsnodes(), "mom1 free")
            return mom

        yield daemon, add_mom, str(tmp_path)
        for mom in moms:
            mom.close()
        daemon.stop()


def _pbsnodes():
    from mockpbs.cli import pbsnodes
    return testing.run_cli(pbsnodes.main, ["mom1"])[1]


def run(command):
    return testing.run_cli(qmgr.main, ["-c", command])


def log_lines(home, kind):
    lines = []
    for path in sorted(glob.glob(os.path.join(home, "pbs_home", kind, "*"))):
        with open(path) as handle:
            lines += [line.rstrip("\n").split(";", 5)[-1] if kind == "server_logs"
                      else line.rstrip("\n") for line in handle]
    return lines


def cycles(home):
    """The sched log as a list of cycles, each the list of ``<object>;<message>`` texts."""
    out, current = [], None
    for line in log_lines(home, "sched_logs"):
        text = ";".join(line.split(";")[3:])
        if text.endswith("Starting Scheduling Cycle"):
            current = []
        elif text.endswith("Leaving Scheduling Cycle"):
            if current is not None:
                out.append(current)
            current = None
        elif current is not None:
            current.append(text)
    return out


def job_attrs(jobid):
    _unused, out, _unused = testing.run_cli(qstat.main, ["-f", jobid])
    return dict(re.findall(r"^    (\S+) = (.*)$", out.replace("\n\t", ""), re.M))


def two_jobs():
    assert run("set server scheduling = False")[0] == 0
    first = testing.run_cli(qsub.main, ["-N", "first", "--", "/bin/true"])[1].strip()
    second = testing.run_cli(qsub.main, ["-N", "second", "--", "/bin/true"])[1].strip()
    assert run("set server scheduling = True")[0] == 0
    return first, second


def test_values_link_and_permissions(server, monkeypatch):
    daemon, _unused, home = server
    assert run("set sched job_run_wait=none") == (0, "", "")
    assert run("list sched default job_run_wait,throughput_mode")[1] == "Sched default\n    job_run_wait = none\n\n"
    assert run("set sched job_run_wait=execjob_hook")[0] == 0
    assert run("list sched default job_run_wait,throughput_mode")[1] == \
        "Sched default\n    throughput_mode = False\n    job_run_wait = execjob_hook\n\n"
    assert run("set sched job_run_wait=bogus") == \
        (166, "", "qmgr obj= svr=default: Illegal attribute or resource value\n"
                  "qmgr: Error (15014) returned from server\n")
    assert run("set sched throughput_mode=true")[0] == 0
    assert run("list sched default job_run_wait,throughput_mode")[1] == \
        "Sched default\n    throughput_mode = True\n    job_run_wait = runjob_hook\n\n"
    server_log = log_lines(home, "server_logs")
    assert "attributes set: job_run_wait = none" in server_log
    assert "'throughput_mode' is being deprecated, it is recommended to use 'job_run_wait'" in server_log
    monkeypatch.setattr(common, "identity", lambda: {"user": "pbsuser", "group": "pbsuser", "host": "vm"})
    rc, _unused, err = run("set sched job_run_wait=none")
    assert rc == 159 and "Unauthorized Request" in err
    assert run("list sched default job_run_wait")[1] == "Sched default\n    job_run_wait = runjob_hook\n\n"


def test_execjob_hook_reuses_the_rejected_jobs_vnode_in_the_same_cycle(server):
    daemon, add_mom, home = server
    add_mom(verdict=lambda job: "reject" if job["Job_Name"] == "first" else "accept")
    assert run("set sched job_run_wait=execjob_hook")[0] == 0
    first, second = two_jobs()
    testing.wait_for(lambda: job_attrs(second).get("substate") == "42", "second job running")
    cycle = next(c for c in cycles(home) if "Job;%s;Job run" % first in c)
    assert cycle.index("Job;%s;run request pbs_runjob (job_run_wait=execjob_hook)" % first) \
        < cycle.index("Job;%s;Job run" % first) \
        < cycle.index("Job;%s;Failed to run: Execution server rejected request (15059)" % first) \
        < cycle.index("Job;%s;Job run" % second)
    attrs = job_attrs(first)
    assert (attrs["job_state"], attrs["run_count"]) == ("Q", "1")
    assert attrs["comment"] == "Not Running: PBS Error: Execution server rejected request"
    assert "Type 15 request received from Scheduler@vm, sock=0" in log_lines(home, "server_logs")


@pytest.mark.parametrize("value", ["none", "runjob_hook"])
def test_none_and_runjob_hook_without_hooks_do_not_wait(server, value):
    daemon, add_mom, home = server
    gate = threading.Event()
    add_mom(verdict=lambda job: (gate.wait(30) and "reject") if job["Job_Name"] == "first" else "accept")
    assert run("set sched job_run_wait=%s" % value)[0] == 0
    first, second = two_jobs()
    try:
        cycle = testing.wait_for(lambda: next((c for c in cycles(home) if "Job;%s;Job run" % first in c), None),
                                 "the cycle that ran the first job")
        assert "Job;%s;run request pbs_asyrunjob (job_run_wait=%s)" % (first, value) in cycle
        assert "Job;%s;Insufficient amount of resource: ncpus" % second in cycle
        assert "Job;%s;Job run" % second not in cycle
        assert job_attrs(first)["job_state"] == "R"     # the mom has not answered yet
        assert "Type 23 request received from Scheduler@vm, sock=0" in log_lines(home, "server_logs")
    finally:
        gate.set()


def test_runjob_hook_with_a_rejecting_runjob_hook(server, tmp_path):
    daemon, add_mom, home = server
    mom = add_mom(verdict=lambda job: "accept")
    body = tmp_path / "r1.py"
    body.write_text("import pbs\ne = pbs.event()\nif e.job.Job_Name == 'first':\n"
                    "    e.reject('first may not run')\ne.accept()\n")
    assert run("create hook r1 event=runjob")[0] == 0
    assert run("import hook r1 application/x-python default %s" % body)[0] == 0
    first, second = two_jobs()
    testing.wait_for(lambda: job_attrs(second).get("substate") == "42", "second job running")
    assert [m["job"]["id"] for m in mom.ops("run_job")] == [second]
    attrs = job_attrs(first)
    assert (attrs["job_state"], attrs.get("run_count", "0")) == ("Q", "0")
    assert attrs["comment"] == "Not Running: PBS Error: first may not run"
    texts = [t for c in cycles(home) for t in c]
    assert "Job;%s;run request pbs_asyrunjob_ack (job_run_wait=runjob_hook)" % second in texts
    assert "Type 97 request received from Scheduler@vm, sock=0" in log_lines(home, "server_logs")
