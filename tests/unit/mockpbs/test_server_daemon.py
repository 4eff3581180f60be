"""``pbs_server`` as a real daemon (double fork, readiness pipe, lock file, SIGTERM) and
state kept across a restart; queuejob hooks run through mockpbs.hookrun."""
import os
import signal
import subprocess
import sys
import time

import pytest

from mockpbs import testaddr, wire
from mockpbs.cli import qmgr, qstat, qsub
from mockpbs.testing import server as testing


@pytest.fixture
def address():
    """The server's address (also its name in pbs.conf), reserved for the test."""
    with testaddr.reserved_addresses(1) as (reserved,):
        yield reserved


def _conf(tmp_path, address):
    home = tmp_path / "home"
    conf = tmp_path / "pbs.conf"
    conf.write_text("PBS_SERVER=%s\nPBS_HOME=%s\nPBS_EXEC=/opt/pbs\n" % (address, home))
    env = dict(os.environ, PBS_CONF_FILE=str(conf))
    env.pop("PBS_SERVER", None)
    env.pop("PBS_HOME", None)
    return home, env


def _start(env):
    return subprocess.run([sys.executable, "-m", "mockpbs", "pbs_server"], env=env, capture_output=True,
                          text=True, timeout=60, check=False)


def _stop(home):
    pid = int((home / "server_priv" / "server.lock").read_text())
    os.kill(pid, signal.SIGTERM)
    end = time.time() + 20
    while time.time() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    raise AssertionError("pbs_server %d did not stop on SIGTERM" % pid)


def test_pbs_server_returns_once_listening_and_keeps_state_across_restart(tmp_path, address):
    home, env = _conf(tmp_path, address)
    result = _start(env)
    assert (result.returncode, result.stderr) == (0, "")
    try:
        reply = wire.request(address, wire.SERVER_PORT, {"op": "qmgr", "command": "set", "object": "server",
                                                         "attrs": [["comment", "=", "kept"]], "user": "root"})
        assert reply["ok"]
        assert sorted(os.listdir(home / "server_logs"))
        hk = home / "server_priv" / "hooks" / "PBS_cray_atom.HK"
        assert oct(os.stat(hk).st_mode & 0o777) == "0o644"
    finally:
        _stop(home)
    assert _start(env).returncode == 0
    try:
        reply = wire.request(address, wire.SERVER_PORT, {"op": "stat_server", "user": "root"})
        assert dict(reply["items"])["comment"] == "kept"
        log = open(home / "server_logs" / sorted(os.listdir(home / "server_logs"))[0]).read()
        assert ";Server@%s;" % address in log
    finally:
        _stop(home)


def test_pbs_server_fails_when_port_is_taken(tmp_path, address):
    home, env = _conf(tmp_path, address)
    blocker = wire.serve(address, wire.SERVER_PORT, lambda m, p: {"ok": True})
    try:
        result = _start(env)
        assert result.returncode == 1 and "pbs_server:" in result.stderr
    finally:
        blocker.shutdown()
        blocker.server_close()


def test_queuejob_hook_changes_select_and_reject_reaches_qsub(server, tmp_path):
    body = tmp_path / "qj.py"
    body.write_text(
        "import pbs\n"
        "e = pbs.event()\n"
        "j = e.job\n"
        "if j.Job_Name == 'bad':\n"
        "    e.reject('no bad jobs here')\n"
        "j.Resource_List['site'] = str(j.Resource_List['select'])\n"
        "j.Resource_List['select'] = pbs.select('1:ncpus=1+2:ncpus=1')\n"
        "e.accept()\n")
    for line in ("create hook qj event=queuejob", "import hook qj application/x-python default %s" % body):
        assert testing.run_cli(qmgr.main, ["-c", line])[0] == 0
    rc, out, err = testing.run_cli(qsub.main, ["-l", "select=1:ncpus=1+1:ncpus=1", "--", "/bin/true"])
    assert (rc, err) == (0, "")
    full = testing.run_cli(qstat.main, ["-f", out.strip()])[1]
    assert "    Resource_List.select = 1:ncpus=1+2:ncpus=1\n" in full
    assert "    Resource_List.site = 1:ncpus=1+1:ncpus=1\n" in full
    assert "    Resource_List.ncpus = 3\n" in full and "    Resource_List.nodect = 3\n" in full
    rc, out, err = testing.run_cli(qsub.main, ["-N", "bad", "--", "/bin/true"])
    assert out == "" and err == "qsub: no bad jobs here\n" and rc != 0
