"""module_utils/hooks/hook_preflight through the mock's ``pbs_python --hook``
(tests/mockpbs/mockpbs/hookrun.py ``pbs_python_hook_mode``): the events run on the mock as
on a real PBS (tests/unit/mockpbs/test_pbs_python_hook_mode.py compares the two)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_collections.hpc.pbs.plugins.module_utils.hooks import hook_preflight
from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hook_preflight import HookBodyRefused, Preflight

REPO = Path(__file__).resolve().parents[4]
MOCK_PARENT = REPO / "tests" / "mockpbs"
HOOKS = REPO / "files" / "hooks"
WRAPPER = '#!/bin/sh\nexec "%s" -m mockpbs pbs_python "$@"\n'


def mock_env():
    env = {k: v for k, v in os.environ.items() if k != "PBS_HOOK_CONFIG_FILE"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(MOCK_PARENT), env.get("PYTHONPATH")) if p)
    return env


@pytest.fixture
def mock_exec(tmp_path):
    """A PBS_EXEC whose bin/pbs_python is the mock's (as the mock cluster installs it)."""
    exec_dir = tmp_path / "exec"
    (exec_dir / "bin").mkdir(parents=True)
    wrapper = exec_dir / "bin" / "pbs_python"
    wrapper.write_text(WRAPPER % sys.executable)
    wrapper.chmod(0o755)
    return exec_dir


def preflight(exec_dir, body, events, config=None, alarm=30):
    env = mock_env()

    def run_command(args, cwd=None, environ_update=None):
        full = dict(env, **(environ_update or {}))
        proc = subprocess.run(args, cwd=cwd, env=full, capture_output=True, text=True, check=False)
        return proc.returncode, proc.stdout, proc.stderr

    checker = Preflight(run_command, str(exec_dir), str(exec_dir.parent))
    try:
        return checker.check(body, "h1.PY", "h1", events, alarm, config=config)
    finally:
        checker.close()


def test_the_preflight_runs_every_synthetic_event_on_the_mock(mock_exec):
    body = (b'import pbs\nif __name__ == "builtins":\n    e = pbs.event()\n'
            b'    e.reject("%s:%s" % (e.type, e.job.id if e.type not in (pbs.EXECHOST_STARTUP, '
            b'pbs.EXECHOST_PERIODIC) else "-"))\n')
    events = list(hook_preflight.EVENT_RUN_ORDER) + ["periodic"]
    report = preflight(mock_exec, body, events)
    assert report["loaded"] is True
    for event in hook_preflight.EVENT_RUN_ORDER:
        outcome = report["events"][event]
        assert outcome["ran"] and not outcome["accepted"], (event, outcome)
        _number, job = outcome["reject_message"].split(":")
        expected = {"queuejob": "", "exechost_startup": "-", "exechost_periodic": "-"}
        assert job == expected.get(event, hook_preflight.PREFLIGHT_JOB_ID), event
    assert report["events"]["periodic"]["ran"] is False


def test_the_preflight_refuses_a_body_raising_at_its_event_on_the_mock(mock_exec):
    body = b'import pbs\n\nif __name__ == "builtins":\n    pbs.event().job.Resource_List["select"].nonexistent()\n'
    with pytest.raises(HookBodyRefused) as refusal:
        preflight(mock_exec, body, ["queuejob"])
    assert "raises an exception at its first queuejob event" in str(refusal.value)
    assert "AttributeError: 'select' object has no attribute 'nonexistent'" in str(refusal.value)


def test_the_preflight_refuses_a_body_running_past_its_alarm_on_the_mock(mock_exec):
    body = b'import time\n\nif __name__ == "builtins":\n    time.sleep(30)\n'
    with pytest.raises(HookBodyRefused) as refusal:
        preflight(mock_exec, body, ["execjob_begin"], alarm=1)
    assert "runs past its alarm (1 s) at its first execjob_begin event" in str(refusal.value)
    assert "KeyboardInterrupt" in str(refusal.value)


@pytest.mark.parametrize("name, events", [("reliable_job_startup", ["queuejob", "execjob_launch"]),
                                          ("cray_atom", ["execjob_begin", "execjob_end"])])
def test_bundled_hooks_pass_every_event_on_the_mock(mock_exec, name, events):
    report = preflight(mock_exec, (HOOKS / ("%s.py" % name)).read_bytes(), events,
                       config=(HOOKS / ("%s.json" % name)).read_bytes())
    assert report["events"] == {e: {"ran": True, "accepted": True, "reject_message": ""} for e in events}
