"""module_utils/hooks/hook_preflight: the pieces that need no PBS (the module tests run the
compile and load through real interpreters)."""
import sys

import pytest

from ansible_collections.hpc.pbs.plugins.module_utils.hooks import hook_preflight


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


# ---------------------------------------------------------------- the events' synthetic inputs
def input_lines(event, alarm=None):
    return hook_preflight.event_input_text("h1", event, alarm).splitlines()


def test_queuejob_input_is_a_qsub_reliable_job_startup_pads():
    lines = input_lines("queuejob")
    assert "pbs.event().job.Resource_List[select]=2:ncpus=1" in lines
    assert "pbs.event().job.tolerate_node_failures=job_start" in lines
    assert "pbs.event().job.Resource_List[place]=scatter" in lines
    assert not [line for line in lines if line.startswith("pbs.event().job.id=")]  # no id yet at qsub
    assert not [line for line in lines if "vnode_list" in line or "get_local_nodename" in line]
    assert lines[-7:] == ["pbs.event().type=queuejob", "pbs.event().hook_name=h1",
                          "pbs.event().hook_type=site", "pbs.event().requestor=root",
                          "pbs.event().requestor_host=hpc-pbs-preflight",
                          "pbs.event().user=pbsadmin", "pbs.event().alarm=30"]


def test_launch_input_is_a_padded_job_whose_second_sister_failed():
    lines = input_lines("execjob_launch", "120")
    one, two, three = hook_preflight.PREFLIGHT_HOSTS
    assert "pbs.event().job.exec_vnode=(%s:ncpus=1)+(%s:ncpus=1)+(%s:ncpus=1)" % (one, two, three) in lines
    assert "pbs.event().job.Resource_List[select]=1:ncpus=1+2:ncpus=1" in lines
    assert "pbs.event().job.Resource_List[site]=1:ncpus=1+1:ncpus=1" in lines
    for host in (one, two, three):
        assert 'pbs.event().vnode_list["%s"].resources_assigned[host]=%s' % (host, host) in lines
    assert [line for line in lines if "vnode_list_fail" in line] == [
        'pbs.event().vnode_list_fail["%s"].resources_assigned[ncpus]=1' % two,
        'pbs.event().vnode_list_fail["%s"].resources_assigned[host]=%s' % (two, two)]
    assert "pbs.event().job.failed_mom_list=%s" % two in lines
    assert [line for line in lines if "succeeded_mom_list" in line] == [
        "pbs.event().job.succeeded_mom_list=%s" % one, "pbs.event().job.succeeded_mom_list=%s" % three]
    assert "pbs.event().job._msmom=True" in lines  # the primary mom: job.in_ms_mom() is true
    assert "pbs.get_local_nodename()=%s" % one in lines
    assert any(line.startswith('pbs.event().env="""') and "PBS_NODEFILE=" in line for line in lines)
    assert "pbs.event().alarm=120" in lines and "pbs.event().requestor=pbs_mom" in lines


@pytest.mark.parametrize("event, chunks", [
    ("execjob_begin", 3), ("execjob_prologue", 3), ("execjob_epilogue", 3), ("execjob_end", 3),
    ("execjob_preterm", 3), ("execjob_abort", 3), ("execjob_postsuspend", 3),
    ("execjob_preresume", 3), ("execjob_resize", 2)])
def test_mom_job_events_have_a_job_of_a_few_chunks(event, chunks):
    lines = input_lines(event)
    exec_vnode = [line for line in lines if line.startswith("pbs.event().job.exec_vnode=")]
    assert len(exec_vnode) == 1 and exec_vnode[0].count("ncpus=1") == chunks
    assert "pbs.event().job.Resource_List[select]=%d:ncpus=1" % chunks in lines
    assert "pbs.event().job.id=%s" % hook_preflight.PREFLIGHT_JOB_ID in lines
    assert len([line for line in lines if "].resources_assigned[host]=" in line]) == chunks
    assert not [line for line in lines if "vnode_list_fail" in line or "mom_list" in line]
    assert "pbs.event().type=%s" % event in lines


@pytest.mark.parametrize("event", ["exechost_startup", "exechost_periodic"])
def test_host_events_have_the_local_vnode_only(event):
    lines = input_lines(event)
    assert not [line for line in lines if line.startswith("pbs.event().job.")]
    assert 'pbs.event().vnode_list["hpc-pbs-preflight-1"].resources_available[ncpus]=1' in lines


@pytest.mark.parametrize("event, reason", [
    ("periodic", "pbs_python's hook mode has no periodic event"),
    ("resv_begin", "pbs_python's hook mode has no resv_begin event"),
    ("modifyjob", "asks the PBS server for the job of a modifyjob event"),
    ("runjob", "asks the PBS server for the job of a runjob event"),
    ("resvsub", "builds no synthetic resvsub event"),
    ("execjob_attach", "builds no synthetic execjob_attach event"),
    ("postqueuejob", "builds no synthetic postqueuejob event"),
])
def test_events_not_run_say_why(event, reason):
    assert hook_preflight.event_input_text("h1", event, 30) is None
    assert reason in hook_preflight.event_not_run_reason(event)


def test_every_pbs_event_is_either_run_or_has_a_reason():
    from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hooks import EVENTS
    for event in EVENTS:
        runs = hook_preflight.event_input_text("h1", event, 30) is not None
        assert runs is (hook_preflight.event_not_run_reason(event) is None), event


def test_events_run_in_the_order_a_job_meets_them():
    events = ["execjob_end", "execjob_begin", "periodic", "execjob_resize", "execjob_launch",
              "queuejob", "execjob_abort", "execjob_prologue", "execjob_epilogue"]
    assert hook_preflight.events_to_run(events) == [
        "queuejob", "execjob_launch", "execjob_begin", "execjob_prologue", "execjob_resize",
        "execjob_epilogue", "execjob_end", "execjob_abort"]
    assert hook_preflight.events_to_run(None) == []


@pytest.mark.parametrize("text, outcome", [
    ("pbs.event().reject=True\npbs.event().accept=False\npbs.event().reject_msg=no thanks\n",
     (False, "no thanks")),
    ("pbs.event().accept=True\npbs.event().job.Resource_List[select,string]=3:ncpus=1\n", (True, "")),
    ("", (True, "")),
])
def test_outcome_is_read_from_pbs_python_output(text, outcome):
    assert hook_preflight.read_outcome(text) == outcome


# ---------------------------------------------------------------- the loader in event mode
def run_loader(tmp_path, monkeypatch, body, as_event):
    import json
    body_path, result_path = tmp_path / "body.py", tmp_path / "load.json"
    body_path.write_text(body)
    monkeypatch.setenv("HPC_PBS_PREFLIGHT_BODY", str(body_path))
    monkeypatch.setenv("HPC_PBS_PREFLIGHT_NAME", "h1.PY")
    monkeypatch.setenv("HPC_PBS_PREFLIGHT_RESULT", str(result_path))
    monkeypatch.setenv("HPC_PBS_PREFLIGHT_EVENT", "1" if as_event else "")
    exec(compile(hook_preflight.LOADER_SOURCE, "loader.py", "exec"), {"__name__": "builtins"})
    return json.loads(result_path.read_text())


def test_an_event_runs_the_body_as_pbs_does_with_name_builtins(tmp_path, monkeypatch):
    body = 'if __name__ == "builtins":\n    raise LookupError("event code ran")\n'
    result = run_loader(tmp_path, monkeypatch, body, True)
    assert not result["loaded"] and result["alarm"] is False
    assert "LookupError: event code ran" in result["error"] and 'File "h1.PY", line 2' in result["error"]
    assert run_loader(tmp_path, monkeypatch, body, False) == {"loaded": True}
    # accept() / reject() raise SystemExit: a normal end
    assert run_loader(tmp_path, monkeypatch, "raise SystemExit(0)\n", True) == {"loaded": True}


def test_the_pbs_python_alarm_is_told_apart(tmp_path, monkeypatch):
    result = run_loader(tmp_path, monkeypatch, "raise KeyboardInterrupt\n", True)
    assert not result["loaded"] and result["alarm"] is True
