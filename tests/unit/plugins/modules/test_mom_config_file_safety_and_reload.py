"""hpc.pbs.mom_config behaviour the other tests leave unchecked.

The tests cover edges of ``plugins/modules/mom_config.py`` that the other unit tests leave
unchecked: the mode of a new config file under any umask (pbs_mom refuses a config others may
write: "non-secure file access mask"), the temporary file beside the config (an atomic rename),
the private lock file, the alarm warnings of a file holding an option several times (pbs_mom
keeps the last line), the argument spec (required options, choices, the documented defaults and
ranges, ``path`` expansion), idempotence without a running mom, the warnings about what the
running mom holds, the failure texts, and what the task reports after the mom died on the new
file. The running mom is faked at the module's boundary (its pid, SIGHUP outcome, exit and
restart), or is the stand-in process of ``test_mom_config_module``; waits run on a fake clock.
"""
import errno
import fcntl
import os
import stat
import sys
import tempfile
import types

import pytest

from ansible_collections.hpc.pbs.plugins.module_utils.moms import mom_daemon as md
from ansible_collections.hpc.pbs.plugins.module_utils.common import polling
from ansible_collections.hpc.pbs.plugins.modules import mom_config as mom_module

# the fixtures and helpers of the module's own tests (their directory, not on sys.path
# under --import-mode=importlib)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_mom_config_module import ORIGINAL, home, mom, run  # noqa: E402,F401  (home, mom: fixtures)  pylint: disable=unused-import

PID = 4242
RESTARTED = (True, "pbs_mom was started again with -p (running jobs kept), pid 4343")
REJECTED = (False, "pbs_mom rejected the config: 10/01/2026 08:00:00;0001;pbs_mom;Svr;"
                   "parse_config;command name alien_kill not found")


def fake_clock(monkeypatch, module):
    """Make ``module``'s waits run on a clock that only the waits' sleeps move."""
    now = [0.0]

    def wait_until(check, timeout, interval, what, timeout_text=None, **_ignored):
        return polling.wait_until(check, timeout, interval, what, timeout_text=timeout_text,
                                  clock=lambda: now[0],
                                  sleep=lambda seconds: now.__setitem__(0, now[0] + seconds))
    monkeypatch.setattr(module, "wait_until", wait_until)
    return now


@pytest.fixture
def fake_mom(monkeypatch):
    """A pbs_mom the module sees running as pid :data:`PID` (nothing is signalled):
    ``reload`` is what SIGHUP gives (``(ok, message)`` or an exception), ``alive`` its
    state at a look, ``exits`` whether it exits within the grace, ``restart`` what
    ``pbs_mom -p`` gives."""
    mom_state = types.SimpleNamespace(reload=(True, None), alive=True, exits=True,
                                      restart=RESTARTED, reload_calls=0)

    def reload_mom(pid, watcher, expected, timeout):
        mom_state.reload_calls += 1
        if isinstance(mom_state.reload, Exception):
            raise mom_state.reload
        return mom_state.reload

    monkeypatch.setattr(mom_module, "running_mom", lambda paths: PID)
    monkeypatch.setattr(mom_module, "reload_mom", reload_mom)
    monkeypatch.setattr(mom_module, "process_alive", lambda pid: mom_state.alive)
    monkeypatch.setattr(mom_module, "wait_for_exit", lambda pid, seconds: mom_state.exits)
    monkeypatch.setattr(mom_module, "restart_mom",
                        lambda run_command, paths, timeout: mom_state.restart)
    return mom_state


def log_config_read(home, **values):
    """Today's mom log: a config read (start or SIGHUP) logging ``values``."""
    lines = ["10/01/2026 08:00:00;0100;pbs_mom;Svr;parse_config;file config\n"]
    lines += ["10/01/2026 08:00:00;0002;pbs_mom;Svr;%s;%s\n" % item for item in values.items()]
    with open(md.log_path(str(home.root / "mom_logs")), "a") as handle:
        handle.write("".join(lines))


def write_hooks(home, **alarms_by_event):
    hooks = home.root / "mom_priv" / "hooks"
    hooks.mkdir()
    for event, alarm in alarms_by_event.items():
        (hooks / ("%s.HK" % event)).write_text("type=site\nevent=%s\nalarm=%d\n" % (event, alarm))


# -- the file and the lock -----------------------------------------------------------------

@pytest.mark.parametrize("mask", [0o000, 0o027, 0o077], ids=["umask-000", "umask-027", "umask-077"])
def test_a_new_config_file_gets_mode_0644_whatever_the_umask(home, mask):
    target = home.root / "mom_priv" / "config.new"
    old = os.umask(mask)
    try:
        code, result = run(home, reload="never", path=str(target), options={"job_launch_delay": 45})
    finally:
        os.umask(old)
    assert code == 0, result
    assert stat.S_IMODE(os.stat(str(target)).st_mode) == 0o644


def test_a_new_config_file_is_never_writable_by_others_on_its_way_in(home, monkeypatch):
    """Under umask 0, ``atomic_move`` alone leaves the new file 0666 until the module's own
    chmod: the mode as ``atomic_move`` leaves it must already be 0644, and the caller's
    umask is restored."""
    target = home.root / "mom_priv" / "config.new"
    seen = []
    real_move = mom_module.AnsibleModule.atomic_move

    def atomic_move(self, src, dest, *args, **kwargs):
        real_move(self, src, dest, *args, **kwargs)
        seen.append(stat.S_IMODE(os.stat(dest).st_mode))

    monkeypatch.setattr(mom_module.AnsibleModule, "atomic_move", atomic_move)
    old = os.umask(0)
    try:
        code, result = run(home, reload="never", path=str(target), options={"job_launch_delay": 45})
        assert os.umask(0) == 0
    finally:
        os.umask(old)
    assert code == 0, result
    assert seen == [0o644]


def test_an_existing_config_keeps_its_mode(home):
    home.config.chmod(0o600)
    code, result = run(home, reload="never", options={"job_launch_delay": 45})
    assert code == 0 and result["changed"] is True, result
    assert stat.S_IMODE(os.stat(str(home.config)).st_mode) == 0o600


def test_the_new_file_is_written_beside_the_config_and_renamed(home, monkeypatch):
    # a rename is only atomic within one file system: the temporary file must be in the
    # config's own directory, whatever the current directory is
    made = []
    real_mkstemp = tempfile.mkstemp

    def mkstemp(*args, **kwargs):
        fd, name = real_mkstemp(*args, **kwargs)
        made.append(name)
        return fd, name
    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    monkeypatch.chdir(str(home.root))
    code, result = run(home, reload="never", options={"job_launch_delay": 45})
    assert code == 0 and result["changed"] is True, result
    ours = [n for n in made if os.path.basename(n).startswith(".config.")]
    assert ours and all(os.path.dirname(n) == str(home.root / "mom_priv") for n in ours), made


def test_the_lock_file_is_private_to_root(home):
    # another user able to open the lock file could hold it and block every run
    code, result = run(home, reload="never", options={"job_launch_delay": 45})
    assert code == 0, result
    lock = home.root / "mom_priv" / ".hpc_pbs_mom_config.lock"
    assert stat.S_IMODE(os.stat(str(lock)).st_mode) == 0o600


def test_a_lock_file_that_cannot_be_created_fails_clearly(home, tmp_path):
    code, result = run(home, reload="never", path=str(tmp_path / "no" / "such" / "config"),
                       options={"job_launch_delay": 45})
    assert code == 1
    assert result["msg"].startswith("cannot create the lock file %s: " % (
        tmp_path / "no" / "such" / ".hpc_pbs_mom_config.lock"))
    assert "become: true" in result["msg"]


def test_a_config_path_that_cannot_be_read_fails_clearly(home, tmp_path):
    directory = tmp_path / "a_directory"
    directory.mkdir()
    code, result = run(home, reload="never", path=str(directory), options={"job_launch_delay": 45})
    assert code == 1
    assert result["msg"].startswith("cannot read the mom config %s: " % directory)
    assert "or fix path" in result["msg"]


def test_a_write_that_fails_names_the_file_and_the_reason(home, monkeypatch):
    def disk_full(module, path, data):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(mom_module, "write_atomically", disk_full)
    code, result = run(home, reload="never", options={"job_launch_delay": 45})
    assert code == 1
    assert result["msg"] == ("cannot write the mom config %s: [Errno 28] No space left on "
                             "device. Run the task as root (become: true)." % home.config)
    assert home.config.read_bytes() == ORIGINAL


def test_the_lock_timeout_is_60_s_by_default(home, monkeypatch):
    fake_clock(monkeypatch, mom_module)
    fd = os.open(str(home.root / "mom_priv" / ".hpc_pbs_mom_config.lock"), os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        code, result = run(home, reload="never", options={"job_launch_delay": 45})
    finally:
        os.close(fd)
    assert code == 1
    assert "for more than 60 s; nothing was changed" in result["msg"], result["msg"]
    assert home.config.read_bytes() == ORIGINAL


# -- the alarms of the hooks ---------------------------------------------------------------

def test_an_option_written_several_times_is_warned_about_by_its_last_line(home):
    # pbs_mom reads the lines in order: the last one is the value it runs with
    home.config.write_bytes(ORIGINAL.replace(b"$job_launch_delay 20\n", b"") +
                            b"$job_launch_delay 100\n$job_launch_delay 100\n$job_launch_delay 10\n")
    write_hooks(home, execjob_prologue=40)
    code, result = run(home, reload="never", options={"sister_join_job_alarm": 60})
    assert code == 0, result
    assert result["options"]["job_launch_delay"] == ["100", "100", "10"]
    assert any("$job_launch_delay 10 is below the 40 s" in w for w in result["warnings"]), \
        result["warnings"]


def test_a_value_that_is_not_whole_seconds_gets_no_alarm_warning(home):
    # a line this task does not touch, written by hand
    home.config.write_bytes(ORIGINAL.replace(b"$job_launch_delay 20", b"$job_launch_delay 60s"))
    write_hooks(home, execjob_prologue=40)
    code, result = run(home, reload="never", options={"sister_join_job_alarm": 60})
    assert code == 0, result
    assert result["alarm_sums"] == {"job_launch_delay": 40, "sister_join_job_alarm": None}
    assert not [w for w in result["warnings"] if "is below" in w and str(home.root) in w]


def test_sister_join_job_alarm_is_checked_when_job_launch_delay_has_no_hooks(home):
    write_hooks(home, execjob_begin=50)
    code, result = run(home, reload="never", options={"sister_join_job_alarm": 30})
    assert code == 0, result
    assert result["alarm_sums"] == {"job_launch_delay": None, "sister_join_job_alarm": 50}
    assert any("$sister_join_job_alarm 30 is below the 50 s the enabled execjob_begin hooks"
               in w for w in result["warnings"]), result["warnings"]


# -- the argument spec ---------------------------------------------------------------------

def test_options_is_required(home):
    code, result = run(home, reload="never")
    assert code == 1 and "missing required arguments: options" in result["msg"], result["msg"]


def test_mom_not_running_takes_only_its_choices(home):
    code, result = run(home, options={"job_launch_delay": 45}, mom_not_running="maybe")
    assert code == 1 and "mom_not_running" in result["msg"] and "fail, warn" in result["msg"]
    assert home.config.read_bytes() == ORIGINAL


@pytest.mark.parametrize("option", ["reload_timeout", "lock_timeout"])
def test_timeouts_take_3600_s_and_not_more(home, option):
    code, result = run(home, reload="never", options={"job_launch_delay": 45}, **{option: 3600})
    assert code == 0, result
    code, result = run(home, reload="never", options={"job_launch_delay": 46}, **{option: 3601})
    assert code == 1 and result["msg"].startswith("%s must be " % option), result["msg"]
    assert "-3600 seconds, not 3601" in result["msg"]
    assert b"$job_launch_delay 45\n" in home.config.read_bytes()


def test_path_expands_variables(home, monkeypatch, tmp_path):
    monkeypatch.setenv("HPC_PBS_TEST_DIR", str(tmp_path))
    code, result = run(home, reload="never", path="$HPC_PBS_TEST_DIR/config.new",
                       options={"job_launch_delay": 45})
    assert code == 0, result
    assert result["path"] == str(tmp_path / "config.new")
    assert (tmp_path / "config.new").read_bytes() == b"$job_launch_delay 45\n"


def test_the_reload_timeout_is_30_s_by_default(home, mom, monkeypatch):
    fake_clock(monkeypatch, md)
    mom("frozen")
    code, result = run(home, options={"job_launch_delay": 45})
    assert code == 1
    assert "did not log job_launch_delay;45 within 30 s after SIGHUP" in result["msg"], result["msg"]


def test_diff_names_the_file_on_both_sides(home):
    code, result = run(home, diff=True, reload="never", options={"job_launch_delay": 45})
    assert code == 0, result
    assert result["diff"]["before_header"] == result["diff"]["after_header"] == str(home.config)


# -- no running mom: idempotent, nothing written in check mode -----------------------------

def test_no_mom_check_mode_writes_nothing(home):
    code, result = run(home, check_mode=True, options={"job_launch_delay": 45},
                       mom_not_running="warn")
    assert code == 0 and result["changed"] is True, result
    assert home.config.read_bytes() == ORIGINAL


def test_no_mom_and_an_unchanged_file_is_not_rewritten(home):
    inode = os.stat(str(home.config)).st_ino
    code, result = run(home, options={"job_launch_delay": 20}, mom_not_running="warn")
    assert code == 0 and result["changed"] is False, result
    assert os.stat(str(home.config)).st_ino == inode


# -- what the running mom holds ------------------------------------------------------------

def test_reload_never_and_a_change_now_is_no_written_before_warning(home, fake_mom):
    log_config_read(home, job_launch_delay=30)
    code, result = run(home, reload="never", options={"job_launch_delay": 45})
    assert code == 0 and result["changed"] is True, result
    assert not [w for w in result["warnings"] if "written before this task" in w
                and "runs with 30, the file has 45" in w], result["warnings"]


@pytest.mark.parametrize("value, warned", [(20, True), (45, False)],
                         ids=["file-unchanged", "file-changed"])
def test_a_mom_without_a_logged_config_read_is_warned_about_when_nothing_changes(
        home, fake_mom, value, warned):
    code, result = run(home, reload="never", options={"job_launch_delay": value})
    assert code == 0, result
    text = "none of its logs in %s shows a config read" % (home.root / "mom_logs")
    assert any(text in w for w in result["warnings"]) is warned


# -- the reload fails ----------------------------------------------------------------------

def test_a_mom_that_cannot_be_signalled_fails_clearly(home, fake_mom):
    fake_mom.reload = PermissionError(errno.EPERM, "Operation not permitted")
    code, result = run(home, options={"job_launch_delay": 45})
    assert code == 1
    assert result["msg"].startswith("cannot send SIGHUP to pbs_mom pid %d: [Errno 1] Operation "
                                    "not permitted. Run the task as root (become: true); " % PID)
    assert "was changed by this task (job_launch_delay 20 -> 45)" in result["msg"]


def test_a_mom_that_rejected_the_config_gets_time_to_exit(home, fake_mom):
    # alive at the first look after logging the failure, gone within the grace
    fake_mom.reload, fake_mom.alive, fake_mom.exits = REJECTED, True, True
    code, result = run(home, options={"job_launch_delay": 45})
    assert code == 1
    assert "pbs_mom exited" in result["msg"] and "still runs" not in result["msg"]
    assert result["restored"] is True and home.config.read_bytes() == ORIGINAL


def test_a_restarted_mom_reports_changed(home, fake_mom):
    fake_mom.reload, fake_mom.alive = REJECTED, False
    code, result = run(home, options={"job_launch_delay": 45})
    assert code == 1
    assert result["restored"] is True and result["restarted"] is True
    assert result["changed"] is True       # the file is as before, the mom is a new process
    assert home.config.read_bytes() == ORIGINAL


def test_recover_false_does_not_restart_and_the_default_does(home, fake_mom):
    fake_mom.reload, fake_mom.alive = REJECTED, False
    code, result = run(home, options={"job_launch_delay": 45}, recover=False)
    assert code == 1 and result["restarted"] is False and result["changed"] is False
    assert "pbs_mom was not started again (recover=false)" in result["msg"]
    code, result = run(home, options={"job_launch_delay": 45})
    assert code == 1 and result["restarted"] is True and "started again with -p" in result["msg"]


def test_a_restore_that_fails_is_reported(home, fake_mom, monkeypatch):
    fake_mom.reload, fake_mom.alive = REJECTED, False
    real_write = mom_module.write_atomically
    calls = []

    def write_atomically(module, path, data):
        calls.append(data)
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write(module, path, data)
    monkeypatch.setattr(mom_module, "write_atomically", write_atomically)
    code, result = run(home, options={"job_launch_delay": 45}, recover=False)
    assert code == 1
    assert ("putting the previous %s back FAILED ([Errno 28] No space left on device)"
            % home.config) in result["msg"]
    assert result["restored"] is False and result["changed"] is True
    assert home.config.read_bytes() == ORIGINAL.replace(b"20", b"45")


def test_a_mom_dying_on_an_unchanged_file_leaves_the_file_alone(home, fake_mom):
    fake_mom.reload, fake_mom.alive = REJECTED, False
    before = os.stat(str(home.config))
    code, result = run(home, options={"job_launch_delay": 20}, reload="always", recover=False)
    assert code == 1
    assert "%s was not changed by this task and was left as it is" % home.config in result["msg"]
    assert result["restored"] is False and result["changed"] is False
    assert os.stat(str(home.config)).st_ino == before.st_ino
