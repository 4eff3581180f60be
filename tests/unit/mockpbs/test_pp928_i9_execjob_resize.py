"""PP-928 interface 9: the execjob_resize event; its job and vnode_list cannot be modified
(OpenPBS: AssertionError "nothing is settable inside an execjob_resize hook!")."""
import pytest

from mockpbs import harness, hookdefs, pbs

JOB = {"id": "9.vm", "exec_vnode": "(vm:ncpus=1)+(vm-m2:ncpus=1)", "exec_host": "vm/0+vm-m2/0",
       "schedselect": "1:ncpus=1+1:ncpus=1", "tolerate_node_failures": "job_start",
       "Resource_List": {"select": "1:ncpus=1+1:ncpus=1", "ncpus": "2"}}
RESIZE_TEXT = "nothing is settable inside an execjob_resize hook!"
CATCH = ("try:\n    {stmt}\nexcept AssertionError as exc:\n"
         "    pbs.event().reject(type(exc).__mro__[1].__name__ + ': ' + str(exc))\n")


def resize(body):
    return harness.run_hook(body, event="execjob_resize", job=JOB, local_host="vm-m2")


def test_pp928_i9_resize_constant_and_event_name():
    assert pbs.EXECJOB_RESIZE == 0x20000 and pbs.EVENT_TYPES["execjob_resize"] == pbs.EXECJOB_RESIZE
    assert "execjob_resize" in hookdefs.EVENTS
    result = resize("import pbs\npbs.event().reject(str(pbs.event().type == pbs.EXECJOB_RESIZE))\n")
    assert result.reject_message == "True"


@pytest.mark.parametrize("stmt", [
    "pbs.event().job.Hold_Types = pbs.hold_types('s')",
    "pbs.event().job.comment = 'x'",
    "pbs.event().job.Resource_List['ncpus'] = 1",
])
def test_pp928_i9_resize_job_is_read_only(stmt):
    result = resize("import pbs\n" + CATCH.format(stmt=stmt))
    assert result.reject_message == "AssertionError: " + RESIZE_TEXT
    assert result.changes == {} and result.job == JOB


@pytest.mark.parametrize("stmt", [
    "pbs.event().vnode_list['vm'].state = pbs.ND_OFFLINE",
    "pbs.event().vnode_list['vm'].resources_available['ncpus'] = 9",
])
def test_pp928_i9_resize_vnode_list_is_read_only(stmt):
    result = resize("import pbs\n" + CATCH.format(stmt=stmt))
    assert result.reject_message == "AssertionError: " + RESIZE_TEXT
    assert result.vnodes == {}


def test_pp928_i9_resize_refusal_is_an_assertion_error():
    assert issubclass(pbs.NothingSettableError, AssertionError)


def test_pp928_i9_resize_sees_job_and_vnode_list_but_no_vnode_list_fail():
    body = ("import pbs\ne = pbs.event()\ntry:\n    e.vnode_list_fail\n    f = 'present'\n"
            "except pbs.EventIncompatibleError:\n    f = 'absent'\n"
            "e.reject('%s %s %s' % (e.job.id, ','.join(sorted(e.vnode_list)), f))\n")
    assert resize(body).reject_message == "9.vm vm,vm-m2 absent"


def test_pp928_i9_resize_uncaught_set_rejects():
    result = resize("import pbs\npbs.event().job.comment = 'x'\n")
    assert result.accepted is False and RESIZE_TEXT in result.exception


def test_pp928_i9_resize_rerun_not_reported():
    result = resize("import pbs\npbs.event().job.rerun()\npbs.event().reject('no')\n")
    assert result.accepted is False and result.rerun is False


def test_pp928_i9_resize_release_nodes_returns_none():
    result = resize("import pbs\npbs.event().reject(repr(pbs.event().job.release_nodes(keep_select='ncpus=1')))\n")
    assert result.reject_message == "None"
