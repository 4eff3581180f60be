"""The waits on pbs_mom (plugins/module_utils/moms/mom_daemon.py) when the mom does not answer: a
real child process that ignores SIGHUP and logs nothing stands in for it."""
import subprocess
import sys

import pytest

from ansible_collections.hpc.pbs.plugins.module_utils.moms import mom_daemon as md

SILENT_MOM = ("import signal, sys, time\n"
              "signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
              "print('ready', flush=True)\n"
              "time.sleep(60)\n")


@pytest.fixture
def silent_mom():
    child = subprocess.Popen([sys.executable, "-c", SILENT_MOM], stdout=subprocess.PIPE)
    child.stdout.readline()                 # SIGHUP is ignored from here on
    yield child
    child.kill()
    child.wait()
    child.stdout.close()


@pytest.fixture
def watcher(tmp_path):
    logs = tmp_path / "mom_logs"
    logs.mkdir()
    return md.MomLogWatcher(str(logs))


def test_a_mom_that_never_logs_the_expected_values_fails_naming_them(silent_mom, watcher):
    expected = [("Svr", "job_launch_delay", "45"), ("Svr", "sister_join_job_alarm", "60")]
    ok, message = md.reload_mom(silent_mom.pid, watcher, expected, 0.3, poll=0.05)
    assert ok is False
    assert message == ("pbs_mom (pid %d) did not log job_launch_delay;45, "
                       "sister_join_job_alarm;60 within 0.3 s after SIGHUP" % silent_mom.pid)


def test_a_silent_living_mom_with_nothing_expected_is_ok_with_a_warning(silent_mom, watcher):
    ok, message = md.reload_mom(silent_mom.pid, watcher, [], 0.3, poll=0.05)
    assert ok is True
    assert message == ("pbs_mom (pid %d) is alive but logged nothing within 0.3 s after SIGHUP"
                       % silent_mom.pid)


def test_waiting_for_the_exit_of_a_living_mom_gives_up_false(silent_mom):
    assert md.wait_for_exit(silent_mom.pid, 0.2, poll=0.05) is False


def test_waiting_for_the_exit_of_a_mom_that_ends_is_true(silent_mom):
    silent_mom.kill()
    silent_mom.wait()
    assert md.wait_for_exit(silent_mom.pid, 5, poll=0.05) is True
