"""The role hpc.pbs.cgroup_resize, run by the real ansible-playbook against a mock server.

Seed: pp-928-reliable-job-startup.txt, interface 9 (execjob_resize is for pbs_cgroups).
Each test starts an in-process mock pbs_server (mockpbs.server.daemon, the fresh OpenPBS
23.06 state: ``pbs_cgroups`` shipped as a disabled site hook with execjob_resize among its
events, transcript b_pbshook_cray_atom_and_cgroups.txt) on its own loopback address, and
runs ``playbooks/cgroup_resize.yml`` on localhost (group pbs_server, local connection)
whose modules reach it through ``$PBS_EXEC/bin/qmgr`` = the mock's qmgr.
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mockpbs.server.daemon import ServerDaemon

REPO = Path(__file__).resolve().parents[3]
PLAYBOOK = REPO / "playbooks" / "cgroup_resize.yml"
HOOK_BODY = (REPO / "files" / "hooks" / "cgroup_resize.py").read_bytes()
DEFAULT_CONFIG = json.loads((REPO / "files" / "hooks" / "cgroup_resize.json").read_text())
RECAP_RE = re.compile(r"^localhost\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M)
BUNDLED_EVENTS = "execjob_begin,execjob_end,execjob_launch,execjob_resize"


class MockServer:
    """A mock pbs_server on a free N.N.N.M loopback address (the network of
    HPC_PBS_CLUSTER_NET, default 127.0.1) with pbs.conf, PBS_HOME and a qmgr."""

    def __init__(self, base):
        self.base = base
        self.home = base / "pbs_home"
        exec_bin = base / "pbs_exec" / "bin"
        exec_bin.mkdir(parents=True)
        qmgr = exec_bin / "qmgr"
        qmgr.write_text('#!/bin/sh\nexec "%s" -m mockpbs qmgr "$@"\n' % sys.executable)
        qmgr.chmod(0o755)
        self.daemon = None
        last_error = None
        for last_octet in range(150 + os.getpid() % 50, 250):
            address = "%s.%d" % (os.environ.get("HPC_PBS_CLUSTER_NET") or "127.0.1", last_octet)
            try:
                self.daemon = ServerDaemon(str(self.home), address, address,
                                           ping_interval=5.0, sched_interval=5.0).start()
                break
            except OSError as exc:
                last_error = exc
        if self.daemon is None:
            raise RuntimeError("no free loopback address for the mock server: %s" % last_error)
        self.conf = base / "pbs.conf"
        self.conf.write_text("PBS_SERVER=%s\nPBS_HOME=%s\nPBS_EXEC=%s\nPBS_START_SERVER=1\n"
                             % (address, self.home, base / "pbs_exec"))
        self.env = dict(os.environ, PBS_CONF_FILE=str(self.conf))
        for key in ("PBS_SERVER", "PBS_HOME", "PBS_EXEC"):
            self.env.pop(key, None)

    def qmgr(self, command):
        proc = subprocess.run([str(self.base / "pbs_exec" / "bin" / "qmgr"), "-c", command], env=self.env,
                              capture_output=True, text=True, timeout=60, check=False)
        return proc.returncode, proc.stdout, proc.stderr

    def hook(self, name):
        """``{attribute: value}`` of ``list hook NAME`` (wrapped lists joined); None if missing."""
        rc, out, err = self.qmgr("list hook %s" % name)
        if rc == 1 and not out:
            return None
        assert rc == 0, err
        attrs = {}
        for line in out.replace(",\n\t", ",").splitlines()[1:]:
            if " = " in line:
                key, value = line.strip().split(" = ", 1)
                attrs[key] = value
        return attrs

    def hook_file(self, name, ext):
        path = self.home / "server_priv" / "hooks" / ("%s.%s" % (name, ext))
        return path.read_bytes() if path.exists() else None

    def stop(self):
        self.daemon.stop()


@pytest.fixture
def server(tmp_path):
    mock = MockServer(tmp_path)
    yield mock
    mock.stop()


def playbook(server, tmp_path, extra_vars=None, check=False):
    """Run playbooks/cgroup_resize.yml; returns ``(rc, output, changed count or None)``."""
    collections = tmp_path / "collections" / "ansible_collections" / "hpc"
    if not collections.exists():
        collections.mkdir(parents=True)
        (collections / "pbs").symlink_to(REPO)
    inventory = tmp_path / "inventory.ini"
    inventory.write_text("[pbs_server]\nlocalhost ansible_connection=local ansible_python_interpreter=%s\n"
                         % sys.executable)
    env = dict(server.env, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_COLLECTIONS_PATH=str(tmp_path / "collections"),
               ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", ANSIBLE_LOCAL_TEMP=str(tmp_path / "ansible_tmp"),
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory), str(PLAYBOOK),
            "-e", json.dumps(extra_vars or {}), "-v"]
    if check:
        argv.append("--check")
    proc = subprocess.run(argv, cwd=str(REPO), env=env, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL, check=False)
    output = proc.stdout + proc.stderr
    match = RECAP_RE.search(output)
    return proc.returncode, output, int(match.group(2)) if match else None


def enable_pbs_cgroups_without_resize(server):
    before = server.hook("pbs_cgroups")
    events = [e for e in before["event"].split(",") if e != "execjob_resize"]
    assert server.qmgr("set hook pbs_cgroups event = '%s'" % ",".join(events))[0] == 0
    assert server.qmgr("set hook pbs_cgroups enabled = true")[0] == 0
    return server.hook("pbs_cgroups")


def test_auto_installs_the_bundled_hook_when_pbs_cgroups_is_disabled_and_is_idempotent(server, tmp_path):
    shipped = server.hook("pbs_cgroups")
    assert shipped["enabled"] == "false"
    rc, output, changed = playbook(server, tmp_path)
    assert rc == 0, output
    assert changed == 1, output
    hook = server.hook("cgroup_resize")
    assert hook["event"] == BUNDLED_EVENTS
    assert (hook["enabled"], hook["order"], hook["alarm"]) == ("true", "100", "30")
    assert server.hook_file("cgroup_resize", "PY") == HOOK_BODY
    assert json.loads(server.hook_file("cgroup_resize", "CF")) == DEFAULT_CONFIG
    assert server.hook("pbs_cgroups") == shipped
    rc, output, changed = playbook(server, tmp_path)
    assert rc == 0 and changed == 0, output


def test_auto_adds_execjob_resize_to_an_enabled_pbs_cgroups_in_one_qmgr_call(server, tmp_path):
    before = enable_pbs_cgroups_without_resize(server)
    body = server.hook_file("pbs_cgroups", "PY")
    config = server.hook_file("pbs_cgroups", "CF")
    assert "execjob_resize" not in before["event"]
    rc, output, changed = playbook(server, tmp_path, check=True)
    assert rc == 0 and changed == 1, output
    assert server.hook("pbs_cgroups") == before
    rc, output, changed = playbook(server, tmp_path)
    assert rc == 0 and changed == 1, output
    after = server.hook("pbs_cgroups")
    assert set(after["event"].split(",")) == set(before["event"].split(",")) | {"execjob_resize"}
    assert {k: v for k, v in after.items() if k != "event"} == {k: v for k, v in before.items() if k != "event"}
    assert server.hook_file("pbs_cgroups", "PY") == body and server.hook_file("pbs_cgroups", "CF") == config
    assert server.hook("cgroup_resize") is None
    # One qmgr call: the module's batch is the append and the listing after it.
    assert '"commands": ["set hook pbs_cgroups event += execjob_resize", "list hook pbs_cgroups"]' in output
    rc, output, changed = playbook(server, tmp_path)
    assert rc == 0 and changed == 0, output


def test_pbs_cgroups_source_extends_a_disabled_pbs_cgroups_and_says_so(server, tmp_path):
    events = [e for e in server.hook("pbs_cgroups")["event"].split(",") if e != "execjob_resize"]
    assert server.qmgr("set hook pbs_cgroups event = '%s'" % ",".join(events))[0] == 0
    rc, output, changed = playbook(server, tmp_path, {"cgroup_resize_hook_source": "pbs_cgroups"})
    assert rc == 0 and changed == 1, output
    hook = server.hook("pbs_cgroups")
    assert "execjob_resize" in hook["event"].split(",") and hook["enabled"] == "false"
    assert "pbs_cgroups now has execjob_resize but is disabled" in output
    assert server.hook("cgroup_resize") is None


def test_pbs_cgroups_source_without_pbs_cgroups_fails_and_changes_nothing(server, tmp_path):
    assert server.qmgr("delete hook pbs_cgroups")[0] == 0
    rc, output, _changed = playbook(server, tmp_path, {"cgroup_resize_hook_source": "pbs_cgroups"})
    assert rc != 0
    assert "the server has no hook pbs_cgroups; use auto or bundled" in output
    assert server.hook("cgroup_resize") is None


def test_bundled_source_is_refused_while_pbs_cgroups_is_enabled(server, tmp_path):
    enable_pbs_cgroups_without_resize(server)
    rc, output, _changed = playbook(server, tmp_path, {"cgroup_resize_hook_source": "bundled"})
    assert rc != 0
    assert "the hook pbs_cgroups is enabled and manages the same cgroups" in output
    assert server.hook("cgroup_resize") is None


def test_switching_to_pbs_cgroups_removes_the_bundled_hook(server, tmp_path):
    rc, output, _changed = playbook(server, tmp_path)
    assert rc == 0 and server.hook("cgroup_resize") is not None, output
    enable_pbs_cgroups_without_resize(server)
    rc, output, changed = playbook(server, tmp_path)
    assert rc == 0 and changed == 2, output
    assert server.hook("cgroup_resize") is None
    assert "execjob_resize" in server.hook("pbs_cgroups")["event"].split(",")


def test_bundled_install_in_check_mode_changes_nothing(server, tmp_path):
    rc, output, changed = playbook(server, tmp_path, {"cgroup_resize_hook_source": "bundled"}, check=True)
    assert rc == 0 and changed == 1, output
    assert server.hook("cgroup_resize") is None


def test_config_is_merged_over_the_default(server, tmp_path):
    rc, output, _changed = playbook(server, tmp_path, {"cgroup_resize_config": {"prefix": "pbs/jobs",
                                                                                "exclude_cpus": [0]}})
    assert rc == 0, output
    assert json.loads(server.hook_file("cgroup_resize", "CF")) == dict(DEFAULT_CONFIG, prefix="pbs/jobs",
                                                                       exclude_cpus=[0])


@pytest.mark.parametrize("extra_vars, message", [
    ({"cgroup_resize_config": {"prefix": "../x"}}, "cgroup_resize_config is not a valid config of the cgroup_resize hook"),
    ({"cgroup_resize_config": {"kill_timeout": -1}}, "kill_timeout: -1 is less than the minimum of 0"),
    ({"cgroup_resize_config": {"cpus": [1]}}, "Additional properties are not allowed ('cpus' was unexpected)"),
    ({"cgroup_resize_hook_name": "PBS_resize"}, "starts with PBS, which is reserved"),
    ({"cgroup_resize_hook_order": 0}, "cgroup_resize_hook_order must be 1-1000"),
    ({"cgroup_resize_hook_source": "both"}, "value of cgroup_resize_hook_source must be one of"),
    ({"cgroup_resize_hook_body_src": "/nonexistent/own_cg.py"},
     'cgroup_resize_hook_body_src "/nonexistent/own_cg.py": no such file on the controller'),
    ({"cgroup_resize_hook_source": "pbs_cgroups", "cgroup_resize_hook_body_src": str(PLAYBOOK)},
     "is set but cgroup_resize_hook_source is pbs_cgroups"),
])
def test_bad_inputs_fail_before_anything_changes(server, tmp_path, extra_vars, message):
    before = server.hook("pbs_cgroups")
    rc, output, _changed = playbook(server, tmp_path, extra_vars)
    assert rc != 0
    assert message in output, output
    # The checks stop the run before the role reads the server.
    assert "Read the server's hooks" not in output, output
    assert server.hook("cgroup_resize") is None and server.hook("pbs_cgroups") == before


def test_an_own_body_is_installed_kept_and_refused_where_pbs_cgroups_would_run(server, tmp_path):
    own = tmp_path / "own_cg.py"
    own.write_bytes(HOOK_BODY + b"# site\n")
    extra = {"cgroup_resize_hook_body_src": str(own)}
    rc, output, changed = playbook(server, tmp_path, extra)
    assert rc == 0 and changed == 1, output
    assert server.hook_file("cgroup_resize", "PY") == own.read_bytes()
    rc, output, changed = playbook(server, tmp_path, extra, check=True)
    assert rc == 0 and changed == 0, output
    # Without the variable the bundled body comes back (check mode: nothing changes).
    rc, output, changed = playbook(server, tmp_path, check=True)
    assert rc == 0 and changed == 1, output
    # auto would choose an enabled pbs_cgroups, which does not take the body: refused.
    before = enable_pbs_cgroups_without_resize(server)
    rc, output, _changed = playbook(server, tmp_path, extra)
    assert rc != 0
    assert "cgroup_resize_hook_source=auto chose the enabled hook pbs_cgroups" in output, output
    assert server.hook("pbs_cgroups") == before
    assert server.hook_file("cgroup_resize", "PY") == own.read_bytes()
