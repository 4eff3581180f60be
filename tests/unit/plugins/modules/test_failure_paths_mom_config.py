"""hpc.pbs.mom_config failure and idempotence paths, with a real child process as pbs_mom.

Each test pins one path that a one-line bug in the module would break silently: the
logged value must be the new one, a live but silent mom is not a dead one, a config file
that did not exist is removed again on restore, and equal lines written with other
spacing or CRLF endings are neither rewritten nor reloaded.
"""
import os
import subprocess
import sys
import types

import pytest

from ansible_collections.hpc.pbs.plugins.modules import mom_config as mom_module
from hpc_pbs_module_fakes import FAKE_MOM_SOURCE, kill_stand_in_mom, run_module

ORIGINAL = (b"$restrict_user_maxsysid 999\n"
            b"$clienthost pbs-server\n"
            b"$job_launch_delay 20\n")


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A PBS_HOME with ``mom_priv/config`` = :data:`ORIGINAL`; ``.args`` is where the
    fake ``PBS_EXEC/sbin/pbs_mom`` records its arguments when the module starts it."""
    pbs_home = tmp_path / "home"
    (pbs_home / "mom_priv").mkdir(parents=True)
    (pbs_home / "mom_logs").mkdir()
    (pbs_home / "mom_priv" / "config").write_bytes(ORIGINAL)
    conf = tmp_path / "pbs.conf"
    conf.write_text("PBS_HOME=%s\nPBS_EXEC=%s\n" % (pbs_home, tmp_path / "exec"))
    for var in ("PBS_HOME", "PBS_EXEC", "PBS_CONF_FILE"):
        monkeypatch.delenv(var, raising=False)
    script = tmp_path / "fake_mom.py"
    script.write_text(FAKE_MOM_SOURCE)
    args_file = tmp_path / "pbs_mom.args"
    write_pbs_mom_launcher(tmp_path / "exec" / "sbin", script, pbs_home, args_file)
    return types.SimpleNamespace(root=pbs_home, conf=str(conf), script=script,
                                 config=pbs_home / "mom_priv" / "config",
                                 lock=pbs_home / "mom_priv" / "mom.lock", args=args_file)


def write_pbs_mom_launcher(sbin, script, pbs_home, args_file):
    """``sbin/pbs_mom``: records its arguments, starts the stand-in mom in its own
    session, writes mom.lock and returns 0, as a daemonizing pbs_mom does."""
    sbin.mkdir(parents=True)
    launcher = sbin / "pbs_mom"
    launcher.write_text(
        "#!%s\nimport subprocess, sys\n"
        "open(%r, 'w').write(' '.join(sys.argv[1:]))\n"
        "p = subprocess.Popen([sys.executable, %r, %r], stdout=subprocess.PIPE, text=True,"
        " start_new_session=True)\n"
        "assert p.stdout.readline() == 'ready\\n'\n"
        "open(%r, 'w').write('%%d\\n' %% p.pid)\n"
        % (sys.executable, str(args_file), str(script), str(pbs_home),
           str(pbs_home / "mom_priv" / "mom.lock")))
    launcher.chmod(0o755)


@pytest.fixture
def mom(home):
    """Starter of a stand-in pbs_mom in a given mode (see hpc_pbs_module_fakes); every
    mom started, and any the module started through ``pbs_mom -p``, is killed after."""
    started = []

    def start(mode="normal"):
        proc = subprocess.Popen([sys.executable, str(home.script), str(home.root), mode],
                                stdout=subprocess.PIPE, text=True)
        started.append(proc)
        assert proc.stdout.readline() == "ready\n"   # SIGHUP handler installed
        home.lock.write_text("%d\n" % proc.pid)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()
    if home.args.exists():   # the module started a second mom: stop it
        pid = int(home.lock.read_text())
        if pid not in [p.pid for p in started]:
            kill_stand_in_mom(pid, home.script)


def run(home, **args):
    args.setdefault("pbs_conf_file", home.conf)
    return run_module(mom_module.main, args)


def mom_log(home):
    """Everything the stand-in mom logged (all day files), '' when it logged nothing."""
    logs = home.root / "mom_logs"
    return "".join((logs / name).read_text() for name in sorted(os.listdir(str(logs))))


# -- 1. the mom must log the NEW value -----------------------------------------------------
def test_a_mom_logging_its_old_value_after_sighup_fails_the_reload(home, mom):
    proc = mom("stale")
    code, result = run(home, options={"job_launch_delay": 45}, reload_timeout=1)
    assert ";pbs_mom;Svr;job_launch_delay;20" in mom_log(home)   # it did log, the old value
    assert code == 1, result
    assert "did not log job_launch_delay;45" in result["msg"]
    assert result["reloaded"] is False
    # a live mom: nothing restored, nothing restarted
    assert b"$job_launch_delay 45\n" in home.config.read_bytes()
    assert proc.poll() is None and not home.args.exists()


# -- 2. a live but frozen mom is not a dead one -------------------------------------------
def test_a_frozen_mom_is_not_treated_as_dead(home, mom):
    proc = mom("frozen")
    code, result = run(home, options={"job_launch_delay": 45}, reload_timeout=1)
    assert code == 1, result
    assert mom_log(home) == ""
    assert "still runs" in result["msg"] and "was changed" in result["msg"]
    assert "restored" not in result and "restarted" not in result
    # the new file stays, and no second pbs_mom -p was started beside the running one
    assert home.config.read_bytes() == ORIGINAL.replace(b"20", b"45")
    assert not home.args.exists()
    assert int(home.lock.read_text()) == proc.pid and proc.poll() is None


# -- 5. restore removes a config file that did not exist before ---------------------------
def test_restore_removes_a_config_file_that_did_not_exist(home, mom):
    home.config.unlink()
    proc = mom()
    # alien_kill is unknown to the stand-in mom: it exits on the new file, like a real mom
    code, result = run(home, options={"job_launch_delay": 45, "alien_kill": "true"},
                       recover=False)
    assert code == 1, result
    assert proc.wait() == 1
    assert result["restored"] is True and result["restarted"] is False
    assert "previous" in result["msg"]
    assert not home.config.exists()
    assert result["options"] == {}


# -- 8. equal values with other spacing or CRLF: no rewrite, no reload --------------------
@pytest.mark.parametrize("text", [
    b"$clienthost pbs-server\n$job_launch_delay  45\n",
    b"$clienthost pbs-server\n$job_launch_delay\t45 \n",
    b"$clienthost pbs-server\r\n$job_launch_delay 45\r\n",
    b"$clienthost pbs-server\r\n$job_launch_delay  45\r\n",
], ids=["two-spaces", "tab-and-trailing-space", "crlf", "crlf-two-spaces"])
def test_equal_value_with_other_spacing_or_crlf_is_not_rewritten_or_reloaded(home, mom, text):
    home.config.write_bytes(text)
    before = os.stat(str(home.config))
    proc = mom()
    code, result = run(home, options={"job_launch_delay": 45})
    assert code == 0, result
    assert result["changed"] is False and result["reloaded"] is False
    assert result["options"]["job_launch_delay"] == "45"
    assert home.config.read_bytes() == text
    assert os.stat(str(home.config)).st_ino == before.st_ino   # not replaced either
    assert mom_log(home) == "" and proc.poll() is None         # no SIGHUP was sent


def test_a_changed_value_in_a_crlf_file_keeps_crlf_endings(home):
    home.config.write_bytes(b"$clienthost pbs-server\r\n$job_launch_delay  20\r\n")
    code, result = run(home, options={"job_launch_delay": 45, "sister_join_job_alarm": 60},
                       reload=False)
    assert code == 0 and result["changed"] is True, result
    assert home.config.read_bytes() == (b"$clienthost pbs-server\r\n$job_launch_delay 45\r\n"
                                        b"$sister_join_job_alarm 60\r\n")
