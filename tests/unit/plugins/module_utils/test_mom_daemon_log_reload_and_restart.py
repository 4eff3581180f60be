"""pbs_mom's process and log (plugins/module_utils/moms/mom_daemon.py): what the other tests leave
unchecked.

- The mom's last config read is found in a day file whatever the size of the first chunk
  read from its end: a file starting with the read, a last line still being written, a
  file without any read, an empty file; each search ends (a search that does not end
  fails within seconds here, not after a long timeout).
- Repeated options and options the mom does not log leave the others compared.
- Which log lines are a config rejection: the mom's ``parse_config, ...`` lines of
  transcript f_ (``failed, aborting`` and ``command name ... not found``), not another
  failure such as a job's ``finish_exec, chown failed``.
- The outcome of a reload: a rejection, a mom that died.
- The wait for the mom's exit ends when it exits.
- ``pbs_mom -p``: not executable, cannot run, exits non-zero (its error or output
  quoted), a ``mom.lock`` left by a dead mom (no live pid: the wait times out), success.

Waits run on a fake clock; nothing is signalled.
"""
import contextlib
import os
import pathlib
import signal
import types

import pytest

from ansible_collections.hpc.pbs.plugins.module_utils.moms import mom_daemon as md
from ansible_collections.hpc.pbs.plugins.module_utils.common import polling
from ansible_collections.hpc.pbs.plugins.module_utils.pbs.pbs_command import C_LOCALE

PID = 4242
OPENED = "11/21/2026 00:00:00;0002;pbs_mom;Svr;Log;Log opened\n"
START_30 = ("11/21/2026 08:00:00;0100;pbs_mom;Svr;parse_config;file config\n"
            "11/21/2026 08:00:00;0002;pbs_mom;Svr;job_launch_delay;30\n")
JOBS = "".join("11/21/2026 10:00:%02d;0008;pbs_mom;Job;%d.pbs-server;running\n" % (i, i)
               for i in range(6))
# A real mom's reload (reference transcript f_), from SIGHUP to the values it read.
HUP = ("11/21/2026 19:22:24;0002;pbs_mom;n/a;catch_hup;caught signal 1\n"
       "11/21/2026 19:22:24;0002;pbs_mom;n/a;process_hup;reset\n"
       "11/21/2026 19:22:24;0002;pbs_mom;Svr;Log;Log opened\n")
READ_45 = ("11/21/2026 19:22:24;0100;pbs_mom;Svr;parse_config;file config\n"
           "11/21/2026 19:22:24;0002;pbs_mom;Svr;job_launch_delay;45\n"
           "11/21/2026 19:22:24;0002;pbs_mom;Svr;sister_join_job_alarm;60\n")
# Config failures a real mom logged before it exited (transcript f_).
FAILED_LINE = ('11/21/2026 19:22:28;0001;pbs_mom;Svr;pbs_mom;parse_config, config[2] command '
               '"$job_launch_delay abc" failed, aborting')
NOT_FOUND_LINE = ("11/21/2026 19:23:04;0001;pbs_mom;Svr;pbs_mom;parse_config, command name "
                  "no_such_option not found")
# Another failure a real mom logs (transcript g_): not about its config.
CHOWN_LINE = ("11/21/2026 19:23:39;0001;pbs_mom;Svr;pbs_mom;finish_exec, chown failed. "
              "ERR : No such file or directory")


class Overran(Exception):
    """A call that should end within seconds did not."""


@contextlib.contextmanager
def deadline(seconds=3):
    """Raise :class:`Overran` in the block once ``seconds`` of real time have passed."""
    def expire(signum, frame):
        raise Overran("still running after %s s" % seconds)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def clock(monkeypatch):
    """The module's waits run on a clock only their sleeps move; ``clock[0]`` is now."""
    now = [0.0]

    def wait_until(check, timeout, interval, what, timeout_text=None):
        return polling.wait_until(check, timeout, interval, what, timeout_text=timeout_text,
                                  clock=lambda: now[0],
                                  sleep=lambda seconds: now.__setitem__(0, now[0] + seconds))
    monkeypatch.setattr(md, "wait_until", wait_until)
    return now


# -- the last config read in a day file ---------------------------------------------------

DAY_FILES = {
    # a day of a mom: started with 30, reloaded with 45, jobs before and after
    "reloaded": (OPENED + START_30 + JOBS + HUP + READ_45 + JOBS, READ_45 + JOBS),
    # the file starts with the read (a log truncated by the admin, say)
    "starts_with_the_read": (READ_45 + JOBS, READ_45 + JOBS),
    # the read is the file's first line and its only one
    "only_the_read_line": (READ_45.splitlines(True)[0], READ_45.splitlines(True)[0]),
    # the mom is still writing the line of its read: no newline yet
    "read_line_being_written": (OPENED + START_30 + JOBS + READ_45.splitlines(True)[0].rstrip("\n"),
                                READ_45.splitlines(True)[0].rstrip("\n")),
    "no_read": (OPENED + JOBS, None),
    "empty": ("", None),
}


@pytest.mark.parametrize("name", sorted(DAY_FILES))
def test_the_last_read_found_does_not_depend_on_the_first_chunk(tmp_path, name):
    content, expected = DAY_FILES[name]
    path = tmp_path / "20261121"
    path.write_text(content)
    with deadline():
        assert md.text_from_last_read(str(path)) == expected
        for chunk in range(1, len(content) + 3):
            assert (chunk, md.text_from_last_read(str(path), chunk=chunk)) == (chunk, expected)


@pytest.mark.parametrize("name", sorted(DAY_FILES))
def test_the_last_config_read_of_the_log_directory_ends(tmp_path, name):
    content, expected = DAY_FILES[name]
    logs = tmp_path / "mom_logs"
    logs.mkdir()
    (logs / "20261120").write_text(OPENED + START_30)
    (logs / "20261121").write_text(content)
    with deadline():
        found = md.last_config_read(str(logs))
    assert found == (expected if expected is not None else START_30)


# -- what the running mom holds, option by option ------------------------------------------

@pytest.mark.parametrize("skipped", [
    {"clienthost": ["pbs-server", "pbs-server2"]},      # repeated: not compared
    {"clienthost": "pbs-server"},                        # the mom does not log its value
])
def test_options_not_compared_leave_the_next_ones_compared(skipped):
    file_options = dict(skipped, job_launch_delay="50", sister_join_job_alarm="60")
    names = set(file_options)
    assert md.running_differences(HUP + READ_45, file_options, names) == [
        ("job_launch_delay", "45", "50")]


# -- a config rejection in the mom's log -------------------------------------------------

@pytest.mark.parametrize("text, failure", [
    (FAILED_LINE + "\n", FAILED_LINE),
    (NOT_FOUND_LINE + "\n", NOT_FOUND_LINE),
    (HUP + FAILED_LINE + "\n" + OPENED, FAILED_LINE),
    (HUP + NOT_FOUND_LINE + "\n" + OPENED, NOT_FOUND_LINE),
    (HUP + CHOWN_LINE + "\n" + READ_45, None),
    (HUP + READ_45, None),
], ids=["failed", "not_found", "failed_among_others", "not_found_among_others",
        "another_failure", "a_good_read"])
def test_only_the_mom_config_failures_are_rejections(text, failure):
    assert md.parse_failure(text) == failure


@pytest.fixture
def mom(monkeypatch):
    """Whether pid :data:`PID` lives, as the module sees it (nothing is signalled)."""
    state = types.SimpleNamespace(alive=True)
    monkeypatch.setattr(md, "process_alive", lambda pid: state.alive)
    return state


EXPECTED = [("Svr", "job_launch_delay", "45"), ("Svr", "sister_join_job_alarm", "60")]


@pytest.mark.parametrize("line", [FAILED_LINE, NOT_FOUND_LINE])
def test_a_rejection_logged_by_a_mom_still_alive_settles_the_reload(mom, line):
    # the mom logs the failure, then exits: the reload is over before it has exited
    text = HUP + "%s  \n" % line
    assert md.reload_outcome(PID, text, EXPECTED) == (
        False, "pbs_mom rejected the config: %s" % line)
    assert md.reload_outcome(PID, text, []) == (
        False, "pbs_mom rejected the config: %s" % line)


@pytest.mark.parametrize("expected", [EXPECTED, []])
def test_a_mom_that_died_after_the_reload_failed_it(mom, expected):
    mom.alive = False
    assert md.reload_outcome(PID, HUP + READ_45, expected) == (
        False, "pbs_mom (pid 4242) died after the reload")


def test_another_failure_in_the_log_does_not_fail_the_reload(mom):
    assert md.reload_outcome(PID, HUP + CHOWN_LINE + "\n" + READ_45, EXPECTED) == (True, None)


# -- waiting for the mom to exit ---------------------------------------------------------

def test_the_wait_for_the_exit_ends_once_the_mom_has_exited(monkeypatch, clock):
    # the mom exits 2 s after the wait started, the grace is 5 s (EXIT_GRACE_SECONDS)
    monkeypatch.setattr(md, "process_alive", lambda pid: clock[0] < 2)
    assert md.wait_for_exit(PID, 5) is True
    assert 2 <= clock[0] < 5


def test_a_mom_already_gone_is_not_waited_for(monkeypatch, clock):
    monkeypatch.setattr(md, "process_alive", lambda pid: False)
    assert md.wait_for_exit(PID, 5) is True
    assert clock[0] == 0


# -- pbs_mom -p ------------------------------------------------------------------------------

class Launcher(object):
    """``run_command`` of the module: records the commands, answers ``answer``
    (``(rc, out, err)`` or an exception), and may write ``mom.lock`` when run."""

    def __init__(self, answer=(0, "", ""), lock=None, writes=None):
        self.answer = answer
        self.lock = lock
        self.writes = writes
        self.calls = []

    def __call__(self, cmd, environ_update=None):
        self.calls.append((cmd, environ_update))
        if isinstance(self.answer, Exception):
            raise self.answer
        if self.writes is not None:
            self.lock.write_text(self.writes)
        return self.answer


@pytest.fixture
def paths(tmp_path):
    sbin = tmp_path / "exec" / "sbin"
    sbin.mkdir(parents=True)
    (sbin / "pbs_mom").write_text("#!/bin/sh\nexit 0\n")
    (sbin / "pbs_mom").chmod(0o755)
    (tmp_path / "mom_priv").mkdir()
    return types.SimpleNamespace(pbs_mom=str(sbin / "pbs_mom"), conf_file=str(tmp_path / "pbs.conf"),
                                 mom_lock=str(tmp_path / "mom_priv" / "mom.lock"))


@pytest.mark.parametrize("mode", [0o644, None], ids=["not_executable", "missing"])
def test_a_pbs_mom_that_cannot_be_executed_is_not_run(paths, mode):
    if mode is None:
        paths.pbs_mom += ".missing"
    else:
        os.chmod(paths.pbs_mom, mode)
    launcher = Launcher()
    assert md.restart_mom(launcher, paths, 3) == (
        False, "pbs_mom could not be started again: %s is not executable" % paths.pbs_mom)
    assert launcher.calls == []


def test_a_pbs_mom_that_cannot_run_fails_the_restart(paths):
    launcher = Launcher(answer=OSError(8, "Exec format error"))
    assert md.restart_mom(launcher, paths, 3) == (
        False, "%s -p could not run: [Errno 8] Exec format error" % paths.pbs_mom)


@pytest.mark.parametrize("out, err, quoted", [
    ("", "pbs_mom: another mom is running\n", "pbs_mom: another mom is running"),
    ("pbs_mom: cannot bind to port 15003\n", "", "pbs_mom: cannot bind to port 15003"),
    ("ignored\n", " the error \n", "the error"),
], ids=["error", "output", "error_first"])
def test_a_pbs_mom_that_exits_non_zero_fails_the_restart_quoting_it(paths, out, err, quoted):
    launcher = Launcher(answer=(1, out, err))
    assert md.restart_mom(launcher, paths, 3) == (
        False, "%s -p exited 1: %s" % (paths.pbs_mom, quoted))


def test_a_lock_file_left_by_a_dead_mom_is_no_restart(paths, clock, monkeypatch):
    # pbs_mom -p returned 0, but mom.lock still names the mom that died
    monkeypatch.setattr(md, "process_alive", lambda pid: False)
    launcher = Launcher(lock=pathlib.Path(paths.mom_lock), writes="%d\n" % PID)
    assert md.restart_mom(launcher, paths, 3) == (
        False, "%s -p returned 0 but no live pid appeared in %s within 3 s"
        % (paths.pbs_mom, paths.mom_lock))
    assert clock[0] >= 3


def test_no_lock_file_after_pbs_mom_returned_is_no_restart(paths, clock, monkeypatch):
    monkeypatch.setattr(md, "process_alive", lambda pid: True)
    assert md.restart_mom(Launcher(), paths, 3) == (
        False, "%s -p returned 0 but no live pid appeared in %s within 3 s"
        % (paths.pbs_mom, paths.mom_lock))


def test_a_live_pid_in_the_lock_file_is_the_restarted_mom(paths, clock, monkeypatch):
    monkeypatch.setattr(md, "process_alive", lambda pid: pid == 4343)
    launcher = Launcher(lock=pathlib.Path(paths.mom_lock), writes="4343\n")
    assert md.restart_mom(launcher, paths, 3) == (
        True, "pbs_mom was started again with -p (running jobs kept), pid 4343")
    assert launcher.calls == [([paths.pbs_mom, "-p"], dict(C_LOCALE, PBS_CONF_FILE=paths.conf_file))]
