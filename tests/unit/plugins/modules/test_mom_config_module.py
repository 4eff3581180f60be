"""hpc.pbs.mom_config on a temporary PBS_HOME, with a real child process as pbs_mom."""
import os
import stat
import subprocess
import sys
import types

import pytest

from ansible_collections.hpc.pbs.plugins.modules import mom_config as mom_module
from hpc_pbs_module_fakes import FAKE_MOM_SOURCE, run_module

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
    assert "PP-928 interface 4" in result["msg"] and ">= 1" in result["msg"]


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
    code, result = run(home, reload="never", options={"clienthost": ["pbs-server", "pbs-backup"]})
    text = home.config.read_bytes()
    assert text.count(b"$clienthost ") == 2
    assert text.index(b"$clienthost pbs-server\n") < text.index(b"# site comment") + 100
    assert result["options"]["clienthost"] == ["pbs-server", "pbs-backup"]


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
    code, result = run(home, options={"job_launch_delay": 45})
    assert code == 1
    assert "rejected the config" in result["msg"] or "died" in result["msg"]
    assert "command name no_such_option not found" in result["mom_log_tail"]
    assert result["changed"] is True
    assert proc.wait() == 1


def test_reload_fails_when_the_mom_does_not_log(home, mom):
    mom("silent")
    code, result = run(home, options={"job_launch_delay": 45}, reload_timeout=1)
    assert code == 1 and "did not log job_launch_delay;45" in result["msg"]
    assert "catch_hup" in result["mom_log_tail"]


def test_no_running_mom_warns(home):
    code, result = run(home, options={"job_launch_delay": 45})
    assert code == 0 and result["reloaded"] is False
    assert any("not running" in w for w in result["warnings"])
