"""The ``pbs`` emulator where it used to differ from OpenPBS 23.06.06 (read in its source,
measured under its pbs_python by tests/unit/hooks/test_real_pbs_python.py):

- ``pbs.select`` accepts what OpenPBS's select type accepts (``decode_select``), a chunk
  count of 0 included, and ``increment_chunks`` works on such specs;
- mom hooks have ``pbs.event().job.delete()``;
- at execjob_prologue and execjob_launch, ``vnode_list`` still holds the failed vnodes;
- hooks run without the ``site`` module, as pbs_python runs them;
- a pbs_python input file (``pbs_python --hook -i``) can be run on the emulator.
"""
import json
import re
from pathlib import Path

import pytest

from mockpbs import harness, pbs

REPO = Path(__file__).resolve().parents[3]
INPUTS = REPO / "tests" / "unit" / "hooks" / "pbs_python_inputs"
SELECT_SPECS = json.loads((INPUTS / "select_specs.json").read_text())
JOB = {"id": "20.borg", "exec_vnode": "(borg:ncpus=1)+(federer:ncpus=1)+(lendl:ncpus=1)",
       "exec_host": "borg/0+federer/0+lendl/0", "schedselect": "1:ncpus=1+2:ncpus=1",
       "tolerate_node_failures": "job_start"}


# ---------------------------------------------------------------- pbs.select
@pytest.mark.parametrize("spec", SELECT_SPECS["accepted"])
def test_select_accepts_what_openpbs_accepts(spec):
    assert pbs.select(spec) == spec


@pytest.mark.parametrize("spec", SELECT_SPECS["refused"])
def test_select_refuses_what_openpbs_refuses_with_its_text(spec):
    with pytest.raises(pbs.BadResourceValueError) as caught:
        pbs.select(spec)
    assert str(caught.value) == "input value %s not of the right format for 'select'" % spec


def test_select_of_a_non_string_is_a_type_error():
    with pytest.raises(TypeError):
        pbs.select(2)


@pytest.mark.parametrize("spec, increment, expected", SELECT_SPECS["increment_chunks"])
def test_increment_chunks_on_specs_with_zero_counts(spec, increment, expected):
    if expected == "BadResourceValueError":
        with pytest.raises(pbs.BadResourceValueError):
            pbs.select(spec).increment_chunks(increment)
    else:
        result = pbs.select(spec).increment_chunks(increment)
        assert result == expected and isinstance(result, pbs.select)


# ---------------------------------------------------------------- job.delete()
DELETE_HOOK = "import pbs\npbs.event().job.delete()\n"


@pytest.mark.parametrize("event", ["execjob_begin", "execjob_prologue", "execjob_launch", "execjob_end"])
def test_mom_hooks_can_ask_for_the_job_to_be_deleted(event):
    result = harness.run_hook(DELETE_HOOK, event=event, job=JOB)
    assert result.accepted, result.exception
    assert result.delete is True and result.rerun is False
    assert result.raw["delete"] is True


def test_delete_is_reported_whether_the_hook_accepts_or_rejects():
    body = "import pbs\npbs.event().job.delete()\npbs.event().reject('gone')\n"
    result = harness.run_hook(body, event="execjob_prologue", job=JOB)
    assert not result.accepted and result.delete is True


def test_delete_outside_mom_hooks_is_not_implemented():
    result = harness.run_hook(DELETE_HOOK, event="queuejob", job={"Resource_List": {"select": "ncpus=1"}})
    assert not result.accepted
    assert "NotImplementedError: delete(): only for mom hooks" in result.exception


def test_without_delete_nothing_is_asked():
    result = harness.run_hook("import pbs\n", event="execjob_begin", job=JOB)
    assert result.delete is False and result.raw["delete"] is False


# ---------------------------------------------------------------- vnode_list at prologue/launch
LIST_BOTH = ("import pbs\ne = pbs.event()\n"
             "e.reject('%s|%s' % (','.join(sorted(e.vnode_list)), ','.join(sorted(e.vnode_list_fail))))\n")


@pytest.mark.parametrize("event", ["execjob_prologue", "execjob_launch"])
def test_failed_vnodes_are_in_vnode_list_and_in_vnode_list_fail(event):
    result = harness.run_hook(LIST_BOTH, event=event, job=JOB, failed_hosts=["federer"])
    assert result.reject_message == "borg,federer,lendl|federer"


def test_offlining_a_failed_vnode_through_either_table_is_reported_once():
    body = ("import pbs\ne = pbs.event()\ne.vnode_list['federer'].state = pbs.ND_OFFLINE\n"
            "e.vnode_list_fail['federer'].comment = 'failed'\n")
    result = harness.run_hook(body, event="execjob_launch", job=JOB, failed_hosts=["federer"])
    assert result.accepted, result.exception
    assert result.vnodes == {"federer": {"state": "offline", "comment": "failed"}}


# ---------------------------------------------------------------- no site module
NEEDS_SITE_PACKAGES = "import pbs\nimport jsonschema\n"


def test_hooks_run_without_site_packages_as_pbs_python_runs_them():
    result = harness.run_hook(NEEDS_SITE_PACKAGES, event="execjob_begin", job=JOB)
    assert not result.accepted
    assert "ModuleNotFoundError: No module named 'jsonschema'" in result.exception


def test_site_main_gives_a_hook_its_site_packages():
    result = harness.run_hook("import site\nsite.main()\n" + NEEDS_SITE_PACKAGES, event="execjob_begin", job=JOB)
    assert result.accepted, result.exception


# ---------------------------------------------------------------- pbs_python input files
def test_launch_input_file_becomes_the_emulators_context():
    event, hook_name, context = harness.read_pbs_python_input((INPUTS / "execjob_launch.in").read_text())
    assert (event, hook_name) == ("execjob_launch", "reliable_job_startup")
    assert context["job"]["exec_vnode"] == "(hostA:ncpus=1)+(hostB:ncpus=1)+(hostC:ncpus=1)"
    assert context["job"]["Resource_List"]["site"] == "1:ncpus=1+1:ncpus=1"
    assert "_msmom" not in context["job"] and context["in_ms_mom"] is True
    assert context["failed_mom_list"] == ["hostB"] and context["succeeded_mom_list"] == ["hostA", "hostC"]
    assert sorted(context["vnode_list"]) == ["hostA", "hostB", "hostC"]
    assert context["vnode_list"]["hostB"]["host"] == "hostB"
    assert context["vnode_list"]["hostA"]["resources_available"] == {"ncpus": "2"}
    assert list(context["vnode_list_fail"]) == ["hostB"]
    assert context["hostname"] == "hostA" and context["server"] == "pbs-server"
    assert context["env"]["PBS_NODEFILE"] == "/var/spool/pbs/aux/20.pbs-server"
    assert context["argv"] == ["-bash"] and context["progname"] == "/bin/bash"


def test_queuejob_input_file_is_a_server_event():
    event, _name, context = harness.read_pbs_python_input((INPUTS / "queuejob.in").read_text())
    assert event == "queuejob" and context["daemon"] == "server"
    assert context["job"]["Variable_List"]["PBS_O_WORKDIR"] == "/home/pbsuser"


def test_unknown_input_line_is_refused_as_pbs_python_does():
    with pytest.raises(ValueError, match=re.escape("line 2: unknown event attribute 'pbs.event().nosuch'")):
        harness.read_pbs_python_input("pbs.event().type=execjob_begin\npbs.event().nosuch=1\n")


def test_escaped_commas_in_env_values():
    _event, _name, context = harness.read_pbs_python_input(
        'pbs.event().type=execjob_launch\npbs.event().env="""A=1,B=x\\,y"""\n')
    assert context["env"] == {"A": "1", "B": "x,y"}
