"""hpc.pbs.mom_config on a temporary PBS_HOME, with a real child process as pbs_mom."""
import os
import stat
import subprocess
import sys
import types

import pytest

from ansible_collections.hpc.pbs.plugins.modules import mom_config as mom_module
from hpc_pbs_module_fakes import FAKE_MOM_SOURCE, kill_stand_in_mom, run_module

ORIGINAL = (b"$restrict_user_maxsysid 999\n"
            b"# site comment: keep me\n"
            b"$clienthost pbs-server\n"
            b"$job_launch_delay 20\n"
            b"static_res !/bin/echo 1\n")


@pytest.fixture
def home(tmp_path, monkeypatch):
    pbs_home = tmp_path / "home"
    (pbs_home / "mom_priv").mkdir(parents=True)
    (pbs_home / "mom_logs").mkdir()
    (pbs_home / "mom_priv" / "config").write_bytes(ORIGINAL)
    conf = tmp_path / "pbs.conf"
    conf.write_text("PBS_HOME=%s\nPBS_EXEC=%s\n" % (pbs_home, tmp_path / "exec"))
    for var in ("PBS_HOME", "PBS_EXEC", "PBS_CONF_FILE"):
        monkeypatch.delenv(var, raising=False)
    return types.SimpleNamespace(root=pbs_home, conf=str(conf), config=pbs_home / "mom_priv" / "config")


@pytest.fixture
def mom(home, tmp_path):
    """Start a stand-in pbs_mom (real child process); yields a starter taking a mode."""
    started = []
    script = tmp_path / "fake_mom.py"
    script.write_text(FAKE_MOM_SOURCE)

    def start(mode="normal"):
        proc = subprocess.Popen([sys.executable, str(script), str(home.root), mode],
                                stdout=subprocess.PIPE, text=True)
        started.append(proc)
        assert proc.stdout.readline() == "ready\n"   # SIGHUP handler installed
        (home.root / "mom_priv" / "mom.lock").write_text("%d\n" % proc.pid)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()


def run(home, check_mode=False, diff=False, **args):
    args.setdefault("pbs_conf_file", home.conf)
    return run_module(mom_module.main, args, check_mode=check_mode, diff=diff)


BAD = [
    ("job_launch_delay", 0), ("job_launch_delay", -5), ("job_launch_delay", 1.5),
    ("job_launch_delay", "abc"), ("job_launch_delay", "30 # comment"), ("job_launch_delay", "1.5"),
    ("job_launch_delay", "-5"), ("job_launch_delay", True), ("job_launch_delay", ""),
    ("sister_join_job_alarm", 0), ("sister_join_job_alarm", -5), ("sister_join_job_alarm", 1.5),
    ("sister_join_job_alarm", "abc"), ("sister_join_job_alarm", "60 # comment"),
    ("no_such_option", 1), ("clienthost", "host # comment"), ("clienthost", "a\nb"),
]


@pytest.mark.parametrize("name,value", BAD)
def test_bad_values_fail_naming_the_option_and_leave_the_file_alone(home, name, value):
    before = os.stat(str(home.config))
    code, result = run(home, options={"restrict_user_maxsysid": 1000, name: value}, reload="never")
    assert code == 1
    assert name in result["msg"]
    assert home.config.read_bytes() == ORIGINAL
    assert os.stat(str(home.config)).st_ino == before.st_ino


def test_unknown_option_message_lists_valid_names(home):
    code, result = run(home, options={"no_such_option": 1}, reload="never")
    assert "command name no_such_option not found" in result["msg"]
    assert "job_launch_delay" in result["msg"] and "sister_join_job_alarm" in result["msg"]


def test_seconds_message_names_the_seed_section(home):
    code, result = run(home, options={"job_launch_delay": 0}, reload="never")
    assert "PP-928 interface 4" in result["msg"] and "whole seconds 1-86400" in result["msg"]


def test_set_replaces_in_place_appends_keeps_other_lines(home):
    home.config.chmod(0o640)
    inode = os.stat(str(home.config)).st_ino
    code, result = run(home, diff=True, reload="never",
                       options={"job_launch_delay": "45", "sister_join_job_alarm": 60})
    assert code == 0 and result["changed"] is True
    expected = ORIGINAL.replace(b"$job_launch_delay 20\n", b"$job_launch_delay 45\n") + \
        b"$sister_join_job_alarm 60\n"
    assert home.config.read_bytes() == expected
    assert os.stat(str(home.config)).st_ino != inode          # replaced by rename
    assert stat.S_IMODE(os.stat(str(home.config)).st_mode) == 0o640
    assert not [f for f in os.listdir(str(home.root / "mom_priv")) if f.startswith(".config.")]
    assert result["options"] == {"restrict_user_maxsysid": "999", "clienthost": "pbs-server",
                                 "job_launch_delay": "45", "sister_join_job_alarm": "60"}
    assert result["diff"]["before"] == ORIGINAL.decode() and result["diff"]["after"] == expected.decode()
    assert result["reloaded"] is False

    code, result = run(home, reload="never", options={"job_launch_delay": 45, "sister_join_job_alarm": "60"})
    assert result["changed"] is False and home.config.read_bytes() == expected


def test_check_mode_changes_nothing(home, mom):
    proc = mom()
    code, result = run(home, check_mode=True, options={"job_launch_delay": 45})
    assert code == 0 and result["changed"] is True and result["reloaded"] is False
    assert home.config.read_bytes() == ORIGINAL
    assert os.listdir(str(home.root / "mom_logs")) == []   # no SIGHUP reached the mom
    assert proc.poll() is None


def test_absent_and_null_remove_lines(home):
    code, result = run(home, reload="never", state="absent", options={"job_launch_delay": 99})
    assert home.config.read_bytes() == ORIGINAL.replace(b"$job_launch_delay 20\n", b"")
    code, result = run(home, reload="never", options={"clienthost": None})
    assert b"$clienthost" not in home.config.read_bytes()
    assert b"# site comment: keep me\n" in home.config.read_bytes()


def test_list_value_writes_repeated_option(home):
    # $clienthost names must resolve on the mom's host (addclient() fails otherwise)
    code, result = run(home, reload="never", options={"clienthost": ["localhost", "127.0.0.1"]})
    assert code == 0, result
    assert home.config.read_bytes() == ORIGINAL.replace(
        b"$clienthost pbs-server\n", b"$clienthost localhost\n") + b"$clienthost 127.0.0.1\n"
    assert result["options"]["clienthost"] == ["localhost", "127.0.0.1"]


def test_new_file_gets_mode_0644(home):
    target = home.root / "mom_priv" / "config.new"
    code, result = run(home, reload="never", path=str(target), options={"job_launch_delay": 45})
    assert code == 0 and target.read_bytes() == b"$job_launch_delay 45\n"
    assert stat.S_IMODE(os.stat(str(target)).st_mode) == 0o644


def test_reload_sends_sighup_and_waits_for_the_logged_values(home, mom):
    proc = mom()
    code, result = run(home, options={"job_launch_delay": 45, "sister_join_job_alarm": 60})
    assert code == 0, result
    assert result["reloaded"] is True and result["changed"] is True
    log = "".join(open(os.path.join(str(home.root / "mom_logs"), f)).read()
                  for f in os.listdir(str(home.root / "mom_logs")))
    assert ";pbs_mom;Svr;job_launch_delay;45" in log and ";pbs_mom;Svr;sister_join_job_alarm;60" in log
    assert proc.poll() is None

    code, result = run(home, options={"job_launch_delay": 45})
    assert result["changed"] is False and result["reloaded"] is False


def test_reload_fails_with_log_tail_when_the_mom_dies(home, mom):
    home.config.write_bytes(ORIGINAL + b"$no_such_option 1\n")
    proc = mom()
    code, result = run(home, options={"job_launch_delay": 45}, recover=False)
    assert code == 1
    assert "rejected the config" in result["msg"] or "died" in result["msg"]
    assert "command name no_such_option not found" in result["mom_log_tail"]
    assert proc.wait() == 1
    # the previous file is back, and the task says so; no restart was asked for
    assert home.config.read_bytes() == ORIGINAL + b"$no_such_option 1\n"
    assert result["restored"] is True and result["restarted"] is False
    assert "previous" in result["msg"] and "recover=false" in result["msg"]
    assert result["changed"] is False


def write_fake_pbs_mom(home, tmp_path):
    """PBS_EXEC/sbin/pbs_mom that starts the stand-in mom in the background, writes
    mom.lock and records its arguments, then returns 0 as a daemonizing pbs_mom does."""
    script = tmp_path / "fake_mom.py"
    script.write_text(FAKE_MOM_SOURCE)
    sbin = tmp_path / "exec" / "sbin"
    sbin.mkdir(parents=True)
    launcher = sbin / "pbs_mom"
    launcher.write_text(
        "#!%s\nimport subprocess, sys\n"
        "open(%r, 'w').write(' '.join(sys.argv[1:]))\n"
        "p = subprocess.Popen([sys.executable, %r, %r], stdout=subprocess.PIPE, text=True,"
        " start_new_session=True)\n"
        "assert p.stdout.readline() == 'ready\\n'\n"
        "open(%r, 'w').write('%%d\\n' %% p.pid)\n"
        % (sys.executable, str(tmp_path / "pbs_mom.args"), str(script), str(home.root),
           str(home.root / "mom_priv" / "mom.lock")))
    launcher.chmod(0o755)
    return tmp_path / "pbs_mom.args"


def test_mom_dying_on_the_new_file_is_restored_and_restarted_with_p(home, mom, tmp_path):
    args_file = write_fake_pbs_mom(home, tmp_path)
    proc = mom()
    # usecp with a value the stand-in mom does not know makes it exit, like a real mom
    code, result = run(home, options={"job_launch_delay": 45, "alien_kill": "true"})
    assert code == 1, result
    assert proc.wait() == 1
    assert home.config.read_bytes() == ORIGINAL
    assert args_file.read_text() == "-p"
    assert result["restored"] is True and result["restarted"] is True
    assert "started again with -p" in result["msg"]
    new_pid = int((home.root / "mom_priv" / "mom.lock").read_text())
    try:
        assert new_pid != proc.pid
        os.kill(new_pid, 0)
    finally:
        kill_stand_in_mom(new_pid, tmp_path / "fake_mom.py")


def test_warns_when_below_the_enabled_hook_alarms(home):
    hooks = home.root / "mom_priv" / "hooks"
    hooks.mkdir()
    (hooks / "a.HK").write_text("type=site\nevent=execjob_prologue\nalarm=40\n")
    (hooks / "b.HK").write_text("type=site\nevent=execjob_prologue,execjob_begin\nalarm=30\n")
    (hooks / "off.HK").write_text("enabled=false\nevent=execjob_begin\nalarm=500\n")
    code, result = run(home, reload=False,
                       options={"job_launch_delay": 60, "sister_join_job_alarm": 30})
    assert code == 0
    assert result["alarm_sums"] == {"job_launch_delay": 70, "sister_join_job_alarm": 30}
    below = [w for w in result["warnings"] if "is below" in w]
    assert len(below) == 1 and "$job_launch_delay 60 is below the 70 s" in below[0]


def test_reload_accepts_booleans_and_refuses_other_words(home):
    code, result = run(home, reload=False, options={"job_launch_delay": 45})
    assert code == 0 and result["changed"] is True and result["reloaded"] is False
    code, result = run(home, reload="sometimes", options={"job_launch_delay": 46})
    assert code == 1 and "reload must be" in result["msg"]
    assert b"$job_launch_delay 45" in home.config.read_bytes()


def test_a_held_lock_makes_the_task_wait_then_fail_without_change(home):
    import fcntl
    fd = os.open(str(home.root / "mom_priv" / ".hpc_pbs_mom_config.lock"),
                 os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        code, result = run(home, reload=False, lock_timeout=0, options={"job_launch_delay": 45})
    finally:
        os.close(fd)
    assert code == 1 and "another run holds" in result["msg"]
    assert home.config.read_bytes() == ORIGINAL


def test_missing_pbs_conf_is_a_clear_failure(tmp_path, monkeypatch):
    monkeypatch.setenv("PBS_CONF_FILE", str(tmp_path / "no" / "pbs.conf"))
    code, result = run_module(mom_module.main, {"options": {"job_launch_delay": 45}})
    assert code == 1 and "does not seem to be installed" in result["msg"]


@pytest.mark.parametrize("args", [
    {"reload_timeout": 0}, {"reload_timeout": "abc"}, {"lock_timeout": -1},
    {"state": "maybe"}, {"options": ["job_launch_delay", 45]}, {"recover": "perhaps"},
])
def test_bad_option_types_and_ranges(home, args):
    full = dict(options={"job_launch_delay": 45}, reload=False)
    full.update(args)
    code, result = run(home, **full)
    assert code == 1 and result["msg"]
    assert home.config.read_bytes() == ORIGINAL


def test_reload_fails_when_the_mom_does_not_log(home, mom):
    mom("silent")
    code, result = run(home, options={"job_launch_delay": 45}, reload_timeout=1)
    assert code == 1 and "did not log job_launch_delay;45" in result["msg"]
    assert "catch_hup" in result["mom_log_tail"]


def test_no_running_mom_fails_saying_the_file_changed_and_when_it_takes_effect(home):
    code, result = run(home, options={"job_launch_delay": 45})
    assert code == 1 and result["reloaded"] is False and result["changed"] is True
    assert "pbs_mom is not running" in result["msg"]
    assert "take effect at its next start" in result["msg"]
    assert "was changed by this task (job_launch_delay 20 -> 45)" in result["msg"]
    assert b"$job_launch_delay 45\n" in home.config.read_bytes()

    code, result = run(home, options={"job_launch_delay": 45})
    assert code == 1 and result["changed"] is False
    assert "was not changed by this task: it already held job_launch_delay 45" in result["msg"]


def test_no_running_mom_is_a_warning_with_mom_not_running_warn(home):
    code, result = run(home, options={"job_launch_delay": 45}, mom_not_running="warn")
    assert code == 0 and result["reloaded"] is False and result["changed"] is True
    assert any("not running" in w and "take effect at its next start" in w
               for w in result["warnings"])
    assert b"$job_launch_delay 45\n" in home.config.read_bytes()


def test_reload_never_does_not_look_for_the_mom(home):
    code, result = run(home, options={"job_launch_delay": 45}, reload="never")
    assert code == 0 and result["changed"] is True
    # (warnings of earlier tests stay in the list: only this PBS_HOME counts)
    assert not [w for w in result["warnings"] if str(home.root) in w], result["warnings"]


def mom_log(home):
    logs = home.root / "mom_logs"
    return "".join((logs / name).read_text() for name in sorted(os.listdir(str(logs))))


# The hostile-input report's cases: refused before any write, no signal to the mom.
REFUSED_BEFORE_ANY_WRITE = [
    {"max_check_poll": "abc"}, {"restrict_user": "maybe"}, {"usecp": "nocolon"},
    {"prologalarm": 0}, {"cputmult": 0}, {"job_launch_delay": 10 ** 25},
    {"min_check_poll": 500}, {"restart_transmogrify": True}, {"configversion": 2},
]


@pytest.mark.parametrize("options", REFUSED_BEFORE_ANY_WRITE,
                         ids=[next(iter(o)) for o in REFUSED_BEFORE_ANY_WRITE])
def test_refused_values_leave_the_file_and_the_mom_alone(home, mom, options):
    proc = mom()
    before = os.stat(str(home.config))
    code, result = run(home, options=dict(options, job_launch_delay=options.get("job_launch_delay", 45)))
    assert code == 1, result
    assert result["msg"].startswith("mom config not changed: ")
    assert "accepted" in result["msg"] or "unchecked_options" in result["msg"], result["msg"]
    assert home.config.read_bytes() == ORIGINAL
    assert os.stat(str(home.config)).st_ino == before.st_ino
    assert mom_log(home) == "" and proc.poll() is None        # never sent SIGHUP


def test_unchecked_options_are_written_as_given(home):
    code, result = run(home, reload="never", options={"configversion": 2},
                       unchecked_options=["configversion"])
    assert code == 0 and result["changed"] is True, result
    assert home.config.read_bytes().endswith(b"$configversion 2\n")
    code, result = run(home, reload="never", options={"x": 1}, unchecked_options=["bad name"])
    assert code == 1 and "is not an option name" in result["msg"]


def test_a_file_written_but_not_reloaded_is_reloaded_on_the_next_run(home, mom):
    proc = mom()
    code, result = run(home, options={"job_launch_delay": 30})
    assert code == 0 and result["reloaded"] is True, result
    # an interrupted run: the file says 45, the mom still runs with 30
    code, result = run(home, options={"job_launch_delay": 45}, reload="never")
    assert code == 0 and result["changed"] is True and result["reloaded"] is False
    # reload never again: nothing to write, but the mom lags behind the file
    code, result = run(home, options={"job_launch_delay": 45}, reload="never")
    assert code == 0 and result["changed"] is True and result["reloaded"] is False
    assert any("job_launch_delay: pbs_mom runs with 30, the file has 45 (written before "
               "this task)" in w for w in result["warnings"][-1:]), result["warnings"]
    # check mode says it would reload, without doing it
    code, result = run(home, options={"job_launch_delay": 45}, check_mode=True)
    assert result["changed"] is True and "had not loaded the file" in result["reload_reason"]
    assert mom_log(home).count("job_launch_delay;45") == 0

    code, result = run(home, options={"job_launch_delay": 45})
    assert code == 0, result
    assert result["changed"] is True and result["reloaded"] is True
    assert result["reload_reason"] == ("the running pbs_mom had not loaded the file "
                                       "(job_launch_delay: pbs_mom runs with 30, the file has 45)")
    assert ";pbs_mom;Svr;job_launch_delay;45" in mom_log(home)

    code, result = run(home, options={"job_launch_delay": 45})
    assert result["changed"] is False and result["reloaded"] is False
    assert result["reload_reason"] is None and proc.poll() is None


def test_an_option_removed_from_the_file_but_still_running_is_reloaded(home, mom):
    mom()
    code, result = run(home, options={"job_launch_delay": 30, "sister_join_job_alarm": 60})
    assert code == 0 and result["reloaded"] is True, result
    code, result = run(home, options={"sister_join_job_alarm": None}, reload="never")
    assert result["changed"] is True
    code, result = run(home, options={"sister_join_job_alarm": None})
    assert code == 0 and result["changed"] is True and result["reloaded"] is True, result
    assert "sister_join_job_alarm: pbs_mom runs with 60, the file has (not set)" \
        in result["reload_reason"]
    code, result = run(home, options={"sister_join_job_alarm": None})
    assert result["changed"] is False


def test_a_frozen_mom_after_an_earlier_write_says_the_file_was_not_changed_by_this_task(home, mom):
    code, result = run(home, options={"job_launch_delay": 45}, reload="never")
    assert result["changed"] is True
    mom("frozen")
    code, result = run(home, options={"job_launch_delay": 45}, reload="always", reload_timeout=1)
    assert code == 1 and result["changed"] is False
    assert "did not log job_launch_delay;45" in result["msg"]
    assert ("was not changed by this task: it already held job_launch_delay 45"
            in result["msg"]), result["msg"]
    assert "The mom still runs" in result["msg"]


@pytest.mark.parametrize("value, mode", [
    (True, "changed"), ("yes", "changed"), ("On", "changed"), (1, "changed"), ("1", "changed"),
    ("y", "changed"), ("t", "changed"), ("changed", "changed"), (" Always ", "always"),
    (False, "never"), ("no", "never"), ("off", "never"), (0, "never"), ("0", "never"),
    ("n", "never"), ("f", "never"), ("never", "never"),
    ("sometimes", None), (2, None), ("", None), (["yes"], None),
])
def test_reload_takes_every_boolean_spelling_ansible_takes(value, mode):
    assert mom_module.reload_mode(value) == mode
