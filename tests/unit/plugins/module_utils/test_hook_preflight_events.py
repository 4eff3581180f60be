"""module_utils/hooks/hook_preflight: each event of a hook run once on its synthetic event.

Two interpreters: a stand-in ``pbs_python`` (this file's ``FAKE_PBS_PYTHON``, which does
what the hook mode does with the parts the preflight reads: runs the script in a namespace
of ``__builtins__`` only, gives it a ``pbs`` module whose ``accept()`` / ``reject()`` raise
SystemExit, writes ``pbs.event().accept`` / ``reject_msg`` to ``-o``), and, where a build
exists (marker ``real_pbs``), the real ``pbs_python --hook`` of OpenPBS 23.06.06 and 22.05.11
(``tests/openpbs/build --where [--version]``) running the bundled hooks of files/hooks.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_collections.hpc.pbs.plugins.module_utils.hooks import hook_preflight
from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hook_preflight import (
    HookBodyRefused, Preflight)

REPO = Path(__file__).resolve().parents[4]
HOOKS = REPO / "files" / "hooks"
sys.path.insert(0, str(REPO / "tests" / "openpbs"))
import pbs_python as real_pbs_python  # noqa: E402  pylint: disable=wrong-import-position

FAKE_PBS_PYTHON = '''#!%s
import builtins, os, sys, types
args = sys.argv[1:]
if args[:1] != ["--hook"]:
    os.execv(sys.executable, [sys.executable] + args)
fields = {}
for line in open(args[args.index("-i") + 1]):
    key, _sep, value = line.rstrip("\\n").partition("=")
    fields[key] = value
with open(os.path.join(os.path.dirname(args[-1]), "types.log"), "a") as log:
    log.write(fields["pbs.event().type"] + "\\n")
state = {"accept": True, "msg": ""}
pbs = types.ModuleType("pbs")
class Event(object):
    type = fields["pbs.event().type"]
    def accept(self):
        raise SystemExit(0)
    def reject(self, msg=""):
        state.update(accept=False, msg=msg)
        raise SystemExit(0)
pbs.event = Event
pbs.hook_config_filename = os.environ.get("PBS_HOOK_CONFIG_FILE")
sys.modules["pbs"] = pbs
try:
    exec(compile(open(args[-1]).read(), args[-1], "exec"), {"__builtins__": builtins})
except SystemExit:
    pass
with open(args[args.index("-o") + 1], "w") as out:
    out.write("pbs.event().accept=%%s\\n" %% state["accept"])
    if not state["accept"]:
        out.write("pbs.event().reject_msg=%%s\\n" %% state["msg"])
'''


def subprocess_runner(env=None):
    def run_command(args, cwd=None, environ_update=None):
        full = dict(env if env is not None else os.environ)
        full.update(environ_update or {})
        proc = subprocess.run(args, cwd=cwd, env=full, capture_output=True, text=True, check=False)
        return proc.returncode, proc.stdout, proc.stderr
    return run_command


@pytest.fixture
def fake_exec(tmp_path):
    """A PBS_EXEC whose bin/pbs_python is :data:`FAKE_PBS_PYTHON`."""
    exec_dir = tmp_path / "exec"
    (exec_dir / "bin").mkdir(parents=True)
    path = exec_dir / "bin" / "pbs_python"
    path.write_text(FAKE_PBS_PYTHON % sys.executable)
    path.chmod(0o755)
    return exec_dir


def check(exec_dir, body, events, env=None, **kwargs):
    """``(report or the refusal, event types pbs_python was run with)``."""
    workroot = exec_dir.parent / "work"
    workroot.mkdir(exist_ok=True)
    preflight = Preflight(subprocess_runner(env), str(exec_dir), str(workroot))
    types_log = Path(preflight.workdir) / "types.log"
    try:
        try:
            outcome = preflight.check(body.encode(), "h1.PY", "h1", events, 30, **kwargs)
        except HookBodyRefused as exc:
            outcome = exc
        ran = types_log.read_text().split() if types_log.exists() else []
    finally:
        preflight.close()
    return outcome, ran


EVENT_ECHO = '''import pbs
if __name__ == "builtins":
    event = pbs.event()
    if event.type == "execjob_end":
        event.reject("end refused: %s" % event.type)
    event.accept()
'''


def test_each_runnable_event_runs_once_in_order_and_the_rest_say_why(fake_exec):
    report, ran = check(fake_exec, EVENT_ECHO, ["queuejob", "execjob_end", "periodic",
                                                "execjob_begin", "modifyjob", "execjob_launch"])
    # the module-level load first (as queuejob), then every event in the order a job meets them
    assert ran == ["queuejob", "queuejob", "execjob_launch", "execjob_begin", "execjob_end"]
    assert report["loaded"] is True and report["load_event"] == "queuejob"
    assert report["events"] == {
        "queuejob": {"ran": True, "accepted": True, "reject_message": ""},
        "execjob_launch": {"ran": True, "accepted": True, "reject_message": ""},
        "execjob_begin": {"ran": True, "accepted": True, "reject_message": ""},
        "execjob_end": {"ran": True, "accepted": False, "reject_message": "end refused: execjob_end"},
        "periodic": {"ran": False, "not_run_because": hook_preflight.NO_HOOK_MODE_REASON % "periodic"},
        "modifyjob": {"ran": False, "not_run_because": hook_preflight.SERVER_JOB_REASON % "modifyjob"},
    }


def test_without_run_events_only_the_module_level_is_loaded(fake_exec):
    report, ran = check(fake_exec, EVENT_ECHO, ["queuejob", "execjob_end"], run_events=False)
    assert ran == ["queuejob"] and report["loaded"] is True and "events" not in report


def test_a_body_raising_at_an_event_is_refused_naming_the_event(fake_exec):
    body = EVENT_ECHO.replace('    event.accept()', '    if event.type == "execjob_begin":\n'
                              '        {}["missing"]\n    event.accept()')
    refusal, ran = check(fake_exec, body, ["queuejob", "execjob_begin", "execjob_end"])
    assert isinstance(refusal, HookBodyRefused), refusal
    assert ran == ["queuejob", "queuejob", "execjob_begin"]   # stops at the first failure
    assert "raises an exception at its first execjob_begin event" in str(refusal)
    assert "KeyError: 'missing'" in str(refusal) and 'File "h1.PY", line 7' in str(refusal)


def test_a_body_failing_at_module_level_is_refused_as_a_load_failure(fake_exec):
    refusal, ran = check(fake_exec, "import pbs\nLIMIT = undefined_limit\n", ["execjob_begin"])
    assert isinstance(refusal, HookBodyRefused) and ran == ["execjob_begin"]
    assert "fails when pbs_python loads it (execjob_begin event" in str(refusal)


def test_the_events_see_the_config(fake_exec):
    body = ('import json, pbs\nif __name__ == "builtins":\n'
            '    pbs.event().reject(json.load(open(pbs.hook_config_filename))["tag"])\n')
    report, _ran = check(fake_exec, body, ["queuejob"], config=b'{"tag": "from config"}')
    assert report["events"]["queuejob"] == {"ran": True, "accepted": False,
                                            "reject_message": "from config"}


# ---------------------------------------------------------------- the real pbs_python
def real_roots():
    roots = []
    for version in ("23.06.06", "22.05.11"):
        where = subprocess.run([str(real_pbs_python.BUILD_SCRIPT), "--where", "--version", version],
                               capture_output=True, text=True, check=False)
        if where.returncode == 0 and where.stdout.strip():
            roots.append(pytest.param(Path(where.stdout.strip()), id=version,
                                      marks=pytest.mark.real_pbs))
        else:
            roots.append(pytest.param(None, id=version, marks=[pytest.mark.real_pbs, pytest.mark.skip(
                reason="no OpenPBS %s build (tests/openpbs/build --version %s)" % (version, version))]))
    return roots


@pytest.fixture(params=real_roots())
def real_exec(request, tmp_path):
    """``(PBS_EXEC of a real build, the environment pbs_python needs)``."""
    exec_dir = request.param / "opt" / "pbs"
    work = tmp_path / "env"
    work.mkdir()
    return exec_dir, real_pbs_python.hook_environment(exec_dir, work)


def real_check(real_exec, body, events, config=None, alarm=30):
    exec_dir, env = real_exec
    workroot = Path(env["PBS_CONF_FILE"]).parent
    preflight = Preflight(subprocess_runner(env), str(exec_dir), str(workroot))
    try:
        return preflight.check(body, "h1.PY", "h1", events, alarm, config=config)
    finally:
        preflight.close()


BUNDLED = [("reliable_job_startup", ["queuejob", "execjob_launch"]),
           ("cray_atom", ["execjob_begin", "execjob_end"])]


@pytest.mark.parametrize("name, events", BUNDLED)
def test_bundled_hooks_pass_every_event_on_the_real_pbs_python(real_exec, name, events):
    report = real_check(real_exec, (HOOKS / ("%s.py" % name)).read_bytes(), events,
                        config=(HOOKS / ("%s.json" % name)).read_bytes())
    assert report["loaded"] is True
    assert report["events"] == {e: {"ran": True, "accepted": True, "reject_message": ""} for e in events}


def test_every_synthetic_event_is_read_by_the_real_pbs_python(real_exec):
    body = b'import pbs\nif __name__ == "builtins":\n    e = pbs.event()\n    e.reject("%s %s" % (e.type, e.job.id if hasattr(e, "job") else ""))\n'
    events = list(hook_preflight.EVENT_RUN_ORDER)
    report = real_check(real_exec, body, events)
    assert sorted(report["events"]) == sorted(events)
    for event, outcome in report["events"].items():
        assert outcome["ran"] and not outcome["accepted"], (event, outcome)
    # pbs_python numbers the event types; the job id of each mom job is the synthetic one
    assert report["events"]["execjob_begin"]["reject_message"] == "64 0.hpc-pbs-preflight"
    assert report["events"]["queuejob"]["reject_message"] == "1"   # no job id before the server queues it


def test_a_hook_raising_at_its_first_queuejob_is_refused_by_the_real_pbs_python(real_exec):
    body = (b'import pbs\nif __name__ == "builtins":\n'
            b'    pbs.event().job.Resource_List["select"].nonexistent()\n')
    with pytest.raises(HookBodyRefused) as refusal:
        real_check(real_exec, body, ["queuejob", "execjob_launch"])
    assert "raises an exception at its first queuejob event" in str(refusal.value)
    assert "AttributeError: 'select' object has no attribute 'nonexistent'" in str(refusal.value)


def test_a_launch_that_prunes_runs_release_nodes_on_the_real_pbs_python(real_exec):
    body = (b'import pbs\nif __name__ == "builtins":\n'
            b'    e = pbs.event()\n'
            b'    j = e.job.release_nodes(keep_select=e.job.Resource_List["site"])\n'
            b'    e.reject("failed=%s kept=%s" % (sorted(e.vnode_list_fail.keys()), j.exec_vnode))\n')
    report = real_check(real_exec, body, ["execjob_launch"])
    assert report["events"]["execjob_launch"]["reject_message"] == (
        "failed=['hpc-pbs-preflight-2'] kept=(hpc-pbs-preflight-1:ncpus=1)+(hpc-pbs-preflight-3:ncpus=1)")


def test_a_hook_running_past_its_alarm_at_an_event_is_refused(real_exec):
    body = b'import pbs, time\nif __name__ == "builtins":\n    time.sleep(5)\n'
    with pytest.raises(HookBodyRefused) as refusal:
        real_check(real_exec, body, ["execjob_begin"], alarm=1)
    assert "runs past its alarm (1 s) at its first execjob_begin event" in str(refusal.value)
