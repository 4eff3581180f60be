"""module_utils/hook_preflight: the pieces that need no PBS (the module tests run the
compile and load through real interpreters)."""
import sys

import pytest

from ansible_collections.hpc.pbs.plugins.module_utils import hook_preflight


@pytest.mark.parametrize("events,expected", [
    (["queuejob", "execjob_launch"], "queuejob"),
    (["periodic", "execjob_end"], "execjob_end"),
    (["periodic"], "queuejob"),
    ([], "queuejob"),
    (None, "queuejob"),
])
def test_load_event_is_the_first_event_pbs_python_can_build(events, expected):
    assert hook_preflight.load_event(events) == expected


def test_load_input_is_pbs_python_hook_input():
    assert hook_preflight.load_input_text("h1", "execjob_launch", None) == (
        "pbs.event().type=execjob_launch\npbs.event().hook_name=h1\n"
        "pbs.event().hook_type=site\npbs.event().alarm=30\n")
    assert "pbs.event().alarm=120\n" in hook_preflight.load_input_text("h1", "queuejob", "120")


def test_syntax_error_message_names_file_line_column_and_text():
    error = {"lineno": 3, "offset": 7, "msg": "invalid syntax", "text": "x = = 1"}
    assert hook_preflight.syntax_error_message("/srv/h.py", error) == \
        "/srv/h.py line 3, column 7: invalid syntax: 'x = = 1'"
    assert hook_preflight.syntax_error_message("h.PY", {"msg": "source code cannot contain null bytes"}) \
        == "h.PY: source code cannot contain null bytes"


def test_interpreter_is_pbs_python_only_when_it_is_executable(tmp_path):
    assert hook_preflight.hook_interpreter(str(tmp_path)) == (sys.executable, False)
    (tmp_path / "bin").mkdir()
    pbs_python = tmp_path / "bin" / "pbs_python"
    pbs_python.write_text("#!/bin/sh\n")
    assert hook_preflight.hook_interpreter(str(tmp_path)) == (sys.executable, False)
    pbs_python.chmod(0o755)
    assert hook_preflight.hook_interpreter(str(tmp_path)) == (str(pbs_python), True)


def test_null_bytes_are_refused_by_the_compile(tmp_path):
    def run_command(args, cwd=None, environ_update=None):
        import subprocess
        proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False)
        return proc.returncode, proc.stdout, proc.stderr

    preflight = hook_preflight.Preflight(run_command, str(tmp_path), str(tmp_path))
    try:
        with pytest.raises(hook_preflight.HookBodyRefused, match="h1.PY: source code"):
            preflight.check(b"x = 1\x00\n", "h1.PY", "h1", ["queuejob"], 30)
        report = preflight.check(b"x = 1\n", "h1.PY", "h1", ["queuejob"], 30)
    finally:
        preflight.close()
    assert report["compiled"] and not report["loaded"]
    assert report["python_version"] == "%d.%d.%d" % sys.version_info[:3]
    assert list(tmp_path.iterdir()) == []   # the private directory is removed
