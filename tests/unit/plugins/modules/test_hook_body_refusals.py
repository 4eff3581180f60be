"""hpc.pbs.hook refuses a body that is not UTF-8 text or is over the size limit before any
qmgr call (not even the read), so nothing is created, not even a disabled hook; a body PBS
runs is preflighted with its events only when the task writes (never in check mode)."""
import os
import sys

import pytest
from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpc.pbs.plugins.module_utils.hooks import hooks
from ansible_collections.hpc.pbs.plugins.modules import hook as hook_module
from hpc_pbs_module_fakes import FakeQmgr, run_module

BODY = 'import pbs\npbs.event().accept()\n'


@pytest.fixture
def pbs(tmp_path, monkeypatch):
    home, exec_dir = tmp_path / "home", tmp_path / "exec"
    conf = tmp_path / "pbs.conf"
    conf.write_text("PBS_HOME=%s\nPBS_EXEC=%s\n" % (home, exec_dir))
    for var in ("PBS_HOME", "PBS_EXEC", "PBS_CONF_FILE"):
        monkeypatch.delenv(var, raising=False)
    fake = FakeQmgr(str(exec_dir / "bin" / "qmgr"), str(home))
    real_run_command = AnsibleModule.run_command
    fake.interpreter_calls = []

    def run_command(self, args, **kw):
        if args[0] == fake.qmgr_path:
            return fake.run_command(self, args, **kw)
        fake.interpreter_calls.append(args)
        return real_run_command(self, args, **kw)

    monkeypatch.setattr(AnsibleModule, "run_command", run_command)
    fake.conf = str(conf)
    fake.tmp = tmp_path / "moduletmp"
    fake.tmp.mkdir()
    return fake


def run(pbs, check_mode=False, **args):
    args.setdefault("pbs_conf_file", pbs.conf)
    args.setdefault("events", ["queuejob"])
    return run_module(hook_module.main, args, check_mode=check_mode, tmpdir=pbs.tmp)


def assert_nothing_ran(pbs):
    assert pbs.calls == [] and pbs.interpreter_calls == [] and ("hook", "h1") not in pbs.objects


def test_a_body_src_that_is_not_utf8_is_refused_before_any_qmgr_call(pbs, tmp_path):
    src = tmp_path / "latin1_hook.py"
    src.write_bytes(b"import pbs\n# caf\xe9\npbs.event().accept()\n")
    code, result = run(pbs, name="h1", body_src=str(src))
    assert code == 1, result
    assert result["msg"].startswith("body_src: the hook body is not UTF-8 text (byte 0xe9 at "
                                    "offset 16, line 2)")
    assert "Nothing was changed: hook h1 was neither created nor touched" in result["msg"]
    assert_nothing_ran(pbs)


def test_an_oversized_body_src_is_refused_from_its_size_unread(pbs, tmp_path):
    src = tmp_path / "big_hook.py"
    with open(str(src), "wb") as handle:
        handle.truncate(hooks.HOOK_BODY_MAX_BYTES + 1)   # sparse: never read
    code, result = run(pbs, name="h1", body_src=str(src))
    assert code == 1, result
    assert result["msg"] == ("body_src: the hook body is %d bytes, over the %d bytes (100 MiB) a "
                             "hook body may have here (the default jobscript_max_size PBS puts on "
                             "the scripts it ships to the moms). Nothing was changed."
                             % (hooks.HOOK_BODY_MAX_BYTES + 1, hooks.HOOK_BODY_MAX_BYTES))
    assert_nothing_ran(pbs)


def test_an_oversized_body_string_is_refused(pbs):
    code, result = run(pbs, name="h1", body="#" * (hooks.HOOK_BODY_MAX_BYTES + 1))
    assert code == 1 and result["msg"].startswith("body: the hook body is %d bytes, over the"
                                                  % (hooks.HOOK_BODY_MAX_BYTES + 1)), result["msg"][:200]
    assert_nothing_ran(pbs)


def test_the_size_limit_is_inclusive():
    assert hooks.body_size_problem("body", hooks.HOOK_BODY_MAX_BYTES) is None
    assert hooks.body_size_problem("body", hooks.HOOK_BODY_MAX_BYTES + 1)
    assert hooks.HOOK_BODY_MAX_BYTES == 104857600   # jobscript_max_size's default, "100mb"
    assert hooks.body_problem("body", "caf\u00e9 = 1\n".encode("utf-8")) is None


# A stand-in pbs_python: logs each --hook run's mode ("load", or "1" for an event), runs
# the loader with this Python (the body must not import pbs) and, for an event, writes
# pbs_python's reject lines to -o.
FAKE_PBS_PYTHON = '''#!%s
import os, subprocess, sys
args = sys.argv[1:]
if args[:1] != ["--hook"]:
    os.execv(sys.executable, [sys.executable] + args)
with open(os.path.join(os.path.dirname(args[-1]), "..", "runs"), "a") as log:
    log.write((os.environ.get("HPC_PBS_PREFLIGHT_EVENT", "") or "load") + "\\n")
rc = subprocess.call([sys.executable, args[-1]])
if os.environ.get("HPC_PBS_PREFLIGHT_EVENT"):
    with open(args[args.index("-o") + 1], "w") as out:
        out.write("pbs.event().accept=False\\npbs.event().reject_msg=not today\\n")
sys.exit(rc)
'''


def install_fake_pbs_python(pbs):
    os.makedirs(os.path.dirname(pbs.qmgr_path), exist_ok=True)
    path = os.path.join(os.path.dirname(pbs.qmgr_path), "pbs_python")
    with open(path, "w") as handle:
        handle.write(FAKE_PBS_PYTHON % sys.executable)
    os.chmod(path, 0o755)


def runs(pbs):
    path = pbs.tmp / "runs"
    return path.read_text().split() if path.exists() else []


def test_check_mode_only_loads_and_a_write_runs_each_event_and_warns_its_reject(pbs):
    install_fake_pbs_python(pbs)
    code, result = run(pbs, check_mode=True, name="h1", body="x = 1\n",
                       events=["queuejob", "execjob_begin", "periodic"])
    assert code == 0, result
    assert runs(pbs) == ["load"] and "events" not in result["preflight"]
    assert not result.get("warnings")
    (pbs.tmp / "runs").unlink()
    code, result = run(pbs, name="h1", body="x = 1\n", events=["queuejob", "execjob_begin", "periodic"])
    assert code == 0 and result["changed"], result
    assert runs(pbs) == ["load", "1", "1"]
    events = result["preflight"]["events"]
    assert events["queuejob"] == {"ran": True, "accepted": False, "reject_message": "not today"}
    assert events["periodic"]["ran"] is False
    assert result["warnings"] == [
        "hook h1 rejects its synthetic execjob_begin event at the preflight: not today",
        "hook h1 rejects its synthetic queuejob event at the preflight: not today"]
