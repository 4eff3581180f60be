"""hpc.pbs.held_jobs: a failed ``qrls`` whose stderr names no job is a failure.

OpenPBS ``qrls`` (src/cmds/qrls.c) prints ``qrls: cannot connect to server <server>
(errno=<n>)`` without a job id when it cannot reach the server, and exits with that
errno (modulo 256); every job of that call stays held. The qstat / qrls fake is the one
of the module's tests (``held_jobs_fakes``).
"""
import pytest

from ansible_collections.hpc.pbs.plugins.modules import held_jobs
from held_jobs_fakes import FakePbs, wired
from hpc_pbs_module_fakes import run_module

PBSE_NOSERVER = 15010   # errno qrls reports when no server answers


class UnreachableServerPbs(FakePbs):
    """qstat answers; qrls cannot connect for the jobs in ``unreachable`` (all when it is
    None). qrls handles its ids one by one (a connection each) and exits with the errno
    of the last failure, modulo 256."""

    unreachable = None

    def run_command(self, args, **kwargs):
        if args[0] != self.qrls:
            return super().run_command(args, **kwargs)
        self.calls.append(list(args))
        rc, err = 0, ""
        for job_id in args[3:]:
            if self.unreachable is None or job_id in self.unreachable:
                rc = PBSE_NOSERVER % 256
                err += "qrls: cannot connect to server vm (errno=%d)\n" % PBSE_NOSERVER
                continue
            one_rc, _out, one_err = super().run_command(args[:3] + [job_id])
            self.calls.pop()
            rc, err = one_rc or rc, err + one_err
        return rc, "", err


@pytest.fixture
def pbs(pbs_install, answer_commands, monkeypatch):
    return wired(UnreachableServerPbs, pbs_install, answer_commands, monkeypatch)


def test_qrls_failing_without_naming_a_job_is_a_failure_for_every_job(pbs):
    pbs.held_job("12.vm")
    pbs.held_job("13.vm")
    code, result = run_module(held_jobs.main, {"state": "released", "pbs_conf_file": pbs.conf})
    assert [c[0] for c in pbs.calls] == [pbs.qstat, pbs.qrls, pbs.qstat]
    assert code == 1, result
    assert result["failed_ids"] == ["12.vm", "13.vm"] and result["released"] == []
    assert result["still_held"] == ["12.vm", "13.vm"]
    assert "qrls refused to release 2 of 2 jobs" in result["msg"]
    assert "12.vm: qrls: cannot connect to server vm (errno=15010)" in result["msg"]


def test_qrls_naming_one_job_and_losing_another_fails_for_both(pbs):
    pbs.held_job("12.vm")
    pbs.held_job("13.vm")
    pbs.held_job("14.vm")
    pbs.unreachable = {"12.vm"}
    pbs.refuse["13.vm"] = "Unauthorized Request"
    code, result = run_module(held_jobs.main, {"state": "released", "pbs_conf_file": pbs.conf})
    assert code == 1, result
    assert result["failed_ids"] == ["12.vm", "13.vm"] and result["released"] == ["14.vm"]
    assert result["still_held"] == ["12.vm", "13.vm"]
    assert "12.vm: qrls: cannot connect to server vm (errno=15010)" in result["msg"]
    assert "13.vm: Unauthorized Request" in result["msg"]
