"""Hook preflight edges the other tests leave unchecked: the ``__name__`` the body is loaded with,
what a failed compile hands to ``fail_json``, why a body was not loaded without pbs_python, and
a repeated ``close``."""
import json

import pytest

from ansible_collections.hpc.pbs.plugins.module_utils.hooks import hook_preflight
from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hook_preflight import (
    HookPreflightError, Preflight)


def run_loader(tmp_path, monkeypatch, body):
    """Run the loader script (what ``pbs_python --hook`` runs) on ``body``; its result."""
    body_path, result_path = tmp_path / "body.py", tmp_path / "load.json"
    body_path.write_text(body)
    monkeypatch.setenv("HPC_PBS_PREFLIGHT_BODY", str(body_path))
    monkeypatch.setenv("HPC_PBS_PREFLIGHT_NAME", "h1.PY")
    monkeypatch.setenv("HPC_PBS_PREFLIGHT_RESULT", str(result_path))
    exec(compile(hook_preflight.LOADER_SOURCE, "loader.py", "exec"), {"__name__": "builtins"})
    return json.loads(result_path.read_text())


def test_the_body_is_loaded_under_its_own_name_not_builtins(tmp_path, monkeypatch):
    assert run_loader(tmp_path, monkeypatch, 'if __name__ == "builtins":\n    raise RuntimeError\n') \
        == {"loaded": True}
    result = run_loader(tmp_path, monkeypatch, "raise RuntimeError('name=%r' % (__name__,))\n")
    assert not result["loaded"]
    assert "RuntimeError: name=%r" % (hook_preflight.LOAD_MODULE_NAME,) in result["error"]
    assert 'File "h1.PY", line 1' in result["error"]


def fake_compiler(rc, out, err, calls=None):
    def run_command(args, cwd=None, environ_update=None):
        if calls is not None:
            calls.append(args)
        return rc, out, err
    return run_command


@pytest.mark.parametrize("rc, out, err, shown", [
    (1, "", "Traceback: boom\n", "Traceback: boom"),
    (0, "not json\n", "", "not json"),
    (1, "out text", "err text", "err text"),
])
def test_an_interpreter_that_cannot_compile_fails_with_the_command(tmp_path, rc, out, err, shown):
    calls = []
    preflight = Preflight(fake_compiler(rc, out, err, calls), str(tmp_path), str(tmp_path))
    try:
        with pytest.raises(HookPreflightError) as error:
            preflight.check(b"x = 1\n", "h1.PY", "h1", ["queuejob"], 30)
    finally:
        preflight.close()
    msg = "cannot compile the hook body with %s (rc %s): %s" % (preflight.interpreter, rc, shown)
    assert error.value.fail_kwargs() == dict(msg=msg, cmd=calls[0], rc=rc, stdout=out, stderr=err)


def test_without_pbs_python_the_report_says_why_the_body_was_not_loaded(tmp_path):
    preflight = Preflight(fake_compiler(0, '{"version": "3.6.8"}', ""), str(tmp_path), str(tmp_path))
    try:
        report = preflight.check(b"x = 1\n", "h1.PY", "h1", ["queuejob"], 30)
    finally:
        preflight.close()
    assert report == {
        "interpreter": preflight.interpreter, "python_version": "3.6.8", "compiled": True,
        "loaded": False,
        "not_loaded_because": "no pbs_python in PBS_EXEC/bin: the body was compiled by %s"
        % preflight.interpreter}


def test_close_twice_is_harmless(tmp_path):
    preflight = Preflight(fake_compiler(0, "{}", ""), str(tmp_path), str(tmp_path))
    preflight.close()
    preflight.close()
    assert list(tmp_path.iterdir()) == []
