"""Edges of the mom config file edits and of the pbs_mom process and log checks the other tests
leave unchecked.

The tests cover edges of ``plugins/module_utils/moms/mom_config.py`` (the file's lines) and
``mom_daemon.py`` (the pbs_mom process and its log) that the other unit tests leave unchecked:
a file without a final newline, mixed line endings, a ``mom.lock`` without a pid, a mom running
as another user, a log file that does not exist yet or changes with the day.
"""
import errno
import subprocess
import sys

import pytest

from ansible_collections.hpc.pbs.plugins.module_utils.moms import mom_config as mc
from ansible_collections.hpc.pbs.plugins.module_utils.moms import mom_daemon as md

READ_30 = ("10/01/2026 08:00:00;0100;pbs_mom;Svr;parse_config;file config\n"
           "10/01/2026 08:00:00;0002;pbs_mom;Svr;job_launch_delay;30\n")
OPENED = "10/01/2026 00:00:00;0002;pbs_mom;Svr;Log;Log opened\n"


@pytest.fixture
def logs(tmp_path):
    directory = tmp_path / "mom_logs"
    directory.mkdir()
    return directory


# -- file edits ----------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("# site\n$a 1\n$b 2", "# site\n$a 1\n$b 2\n$c 3\n"),
    ("# site\r\n$a 1\r\n$b 2", "# site\r\n$a 1\r\n$b 2\r\n$c 3\r\n"),
    ("$b 2", "$b 2\n$c 3\n"),
], ids=["lf", "crlf", "one-line"])
def test_a_file_without_a_final_newline_gets_one_before_the_appended_lines(text, expected):
    assert mc.apply_options(text, {"c": ["3"]}, set()) == expected


def test_a_changed_line_keeps_its_own_line_ending_in_a_file_of_mixed_endings():
    text = "# edited on Windows\r\n$a 1\r\n$b 2\n$c 3\n"
    assert mc.apply_options(text, {"b": ["20"]}, set()) == (
        "# edited on Windows\r\n$a 1\r\n$b 20\n$c 3\n")


# -- the mom's pid and process --------------------------------------------------------------

@pytest.mark.parametrize("content", ["", "\n", "pbs_mom 4242\n"],
                         ids=["empty", "blank-line", "no-pid-first"])
def test_a_lock_file_without_a_pid_first_gives_no_pid(tmp_path, content):
    lock = tmp_path / "mom.lock"
    lock.write_text(content)
    assert md.read_mom_pid(str(lock)) is None


def test_the_pid_is_the_first_word_of_the_lock_file(tmp_path):
    lock = tmp_path / "mom.lock"
    lock.write_text("4242\n")
    assert md.read_mom_pid(str(lock)) == 4242


def test_a_process_that_exited_and_was_reaped_is_dead():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert md.process_alive(child.pid) is False


def refuse_signal(code):
    def kill(pid, sig):
        raise OSError(code, "refused")
    return kill


def test_a_mom_of_another_user_that_cannot_be_signalled_is_alive(monkeypatch):
    monkeypatch.setattr(md.os, "kill", refuse_signal(errno.EPERM))
    assert md.process_alive(4242) is True


def test_a_pid_that_no_longer_exists_is_dead(monkeypatch):
    monkeypatch.setattr(md.os, "kill", refuse_signal(errno.ESRCH))
    assert md.process_alive(4242) is False


def test_a_signalled_process_whose_proc_entry_cannot_be_read_is_alive(monkeypatch):
    # kill(pid, 0) succeeded but /proc/<pid>/stat is unreadable (hidepid, no /proc):
    # the mom is taken as running, never restarted beside itself. Linux pids stay below
    # 2**22 (PID_MAX_LIMIT), so this /proc entry never exists.
    monkeypatch.setattr(md.os, "kill", lambda pid, sig: None)
    assert md.process_alive(2 ** 22 + 1) is True


# -- the mom's log ---------------------------------------------------------------------------

def test_the_last_config_read_is_searched_in_the_31_newest_day_files(logs):
    # 31 days: the module documentation (plugins/modules/mom_config.py, DOCUMENTATION)
    for day in range(1, 32):
        (logs / ("202610%02d" % day)).write_text(OPENED)
    (logs / "20260930").write_text(READ_30)
    assert md.last_config_read(str(logs)) is None
    (logs / "20261001").write_text(READ_30)
    assert md.logged_value(md.last_config_read(str(logs)), "Svr", "job_launch_delay") == "30"


class Calendar(object):
    """Pins ``mom_daemon.log_path`` to one day file of ``logs``; :meth:`next_day` moves
    it to the next one (a watcher created before then still holds the first)."""

    def __init__(self, monkeypatch, logs):
        self.monkeypatch = monkeypatch
        self.logs = logs
        self.set_day("20261001")

    def set_day(self, name):
        path = str(self.logs / name)
        self.monkeypatch.setattr(md, "log_path", lambda logs_dir, when=None: path)
        return path

    def next_day(self):
        return self.set_day("20261002")


@pytest.fixture
def calendar(monkeypatch, logs):
    return Calendar(monkeypatch, logs)


def write(path, text, mode="w"):
    with open(path, mode) as handle:
        handle.write(text)


def test_a_log_file_created_after_the_watcher_is_read_from_its_start(logs, calendar):
    watcher = md.MomLogWatcher(str(logs))
    write(watcher.start_path, READ_30)
    assert watcher.new_text() == READ_30


def test_the_watcher_returns_only_what_was_appended_the_same_day(logs, calendar):
    write(md.log_path(str(logs)), OPENED)
    watcher = md.MomLogWatcher(str(logs))
    write(watcher.start_path, READ_30, "a")
    assert watcher.new_text() == READ_30


def test_the_watcher_follows_the_log_into_the_next_day_file(logs, calendar):
    watcher = md.MomLogWatcher(str(logs))
    write(watcher.start_path, "before midnight\n")
    write(calendar.next_day(), "after midnight\n")
    assert watcher.new_text() == "before midnight\nafter midnight\n"


def test_the_tail_is_the_last_lines_with_their_newlines(logs, calendar):
    watcher = md.MomLogWatcher(str(logs))
    write(watcher.start_path, "one\ntwo\nthree\n")
    assert watcher.tail(2) == "two\nthree\n"


def test_the_tail_falls_back_to_the_start_file_before_the_next_day_file_exists(
        logs, calendar):
    watcher = md.MomLogWatcher(str(logs))
    write(watcher.start_path, "one\ntwo\nthree\n")
    calendar.next_day()
    assert watcher.tail(2) == "two\nthree\n"
