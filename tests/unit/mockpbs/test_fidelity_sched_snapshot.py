"""The mock scheduler's cycle works from a view of the vnodes taken at the cycle start, as
the PBS scheduler does (it queries the server's state once per cycle): a CPU freed by a
requeue that arrives during a cycle serves the next cycle, not a later job of the same one."""
import threading
import types

from mockpbs import testaddr
from mockpbs.cli import pbsnodes, qmgr, qstat, qsub
from mockpbs.server import runloop
from mockpbs.testing import server as testing


class RefusingMom(testing.FakeMom):
    """A fake mom refusing every ``run_job`` of ``refused``: the server requeues the job
    while it still sends the run request, inside the scheduling cycle."""

    def __init__(self, *args, refused, **kwargs):
        super().__init__(*args, **kwargs)
        self.refused = refused

    def dispatch(self, message, peer):
        reply = super().dispatch(message, peer)
        if message["op"] == "run_job" and message["job"]["id"] == self.refused:
            return {"ok": False, "code": 15004, "error": "Invalid request"}
        return reply


class _InlineRunThread(threading.Thread):
    """Runs the scheduler's ``run-<jobid>`` senders in the cycle's own thread, so the
    requeue of a refused job lands before the cycle considers the next job."""

    def start(self):
        if self.name.startswith("run-"):
            self.run()
        else:
            super().start()


def _job_state(jobid):
    out = testing.run_cli(qstat.main, ["-f", jobid])[1]
    return next(line.split(" = ")[1] for line in out.splitlines() if "job_state = " in line)


def _run_requests(mom):
    """The job ids of the ``run_job`` requests ``mom`` received, in order."""
    return [m["job"]["id"] for m in mom.ops("run_job")]


def test_cpu_freed_by_a_requeue_during_a_cycle_serves_the_next_cycle(tmp_path, monkeypatch):
    monkeypatch.setattr(runloop, "threading",
                        types.SimpleNamespace(Thread=_InlineRunThread, Condition=threading.Condition))
    with testaddr.reserved_addresses(1) as (mom_address,):
        daemon = testing.start_server(tmp_path, monkeypatch, sched_interval=0.2)
        mom = RefusingMom(mom_address, "mom1", resources={"ncpus": "1", "mem": "1gb"},
                          server_address=daemon.address, refused="0.vm")
        try:
            assert testing.run_cli(qmgr.main, ["-c", "set server scheduling = False"])[0] == 0
            assert testing.run_cli(qmgr.main, ["-c", "create node mom1 Mom=%s" % mom_address])[0] == 0
            testing.wait_for(lambda: "state = free" in testing.run_cli(pbsnodes.main, ["mom1"])[1],
                             "mom1 free")
            for _unused in range(2):
                assert testing.run_cli(qsub.main, ["--", "/bin/true"])[0] == 0
            assert testing.run_cli(qmgr.main, ["-c", "set server scheduling = True"])[0] == 0
            testing.wait_for(lambda: _job_state("0.vm") == "H", "0.vm held after 21 refusals", deadline=60)
            # the server shows R once it sends the run request, which the mom may not have
            # received yet: wait for both
            testing.wait_for(lambda: _job_state("1.vm") == "R" and "1.vm" in _run_requests(mom), "1.vm running")
            order = _run_requests(mom)
            # each cycle tried 0.vm first; the CPU its requeue freed never served 1.vm in
            # the same cycle, so 1.vm ran only once 0.vm was held
            assert order == ["0.vm"] * 21 + ["1.vm"]
        finally:
            mom.close()
            daemon.stop()
