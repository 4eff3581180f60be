"""PP-928 interface 6: execjob_launch hooks may modify job and vnode attributes; setting
anything else refuses as OpenPBS's is_attrib_val_settable does (an AssertionError, which
fails the hook like any exception it lets escape)."""
import time

from mockpbs import harness, pbs

JOB = {"id": "5.vm", "exec_vnode": "(vm:ncpus=1)+(vm-m2:ncpus=1)", "exec_host": "vm/0+vm-m2/0",
       "schedselect": "1:ncpus=1+1:ncpus=1", "tolerate_node_failures": "job_start", "run_count": "1",
       "Hold_Types": "n", "Resource_List": {"select": "1:ncpus=1+1:ncpus=1", "ncpus": "2"}}
REFUSED = ("Can only set progname, argv, env event parameters as well as job, resource, vnode "
           "under execjob_launch hook.")


def launch(body, **kwargs):
    return harness.run_hook(body, event="execjob_launch", job=JOB, **kwargs)


def test_pp928_i6_launch_may_set_hold_types():
    result = launch("import pbs\ne = pbs.event()\ne.job.Hold_Types = pbs.hold_types('s')\ne.reject('bad node')\n")
    assert result.accepted is False and result.reject_message == "bad node"
    assert result.job["Hold_Types"] == "s" and result.changes == {"Hold_Types": "s"}


def test_pp928_i6_launch_may_set_execution_time_in_the_future():
    later = int(time.time()) + 3600
    result = launch("import pbs, time\npbs.event().job.Execution_Time = time.time() + 3600\n")
    assert result.accepted is True, result.exception
    assert later - 5 <= int(result.job["Execution_Time"]) <= later + 5


def test_pp928_i6_launch_execution_time_in_the_past_refused():
    result = launch("import pbs\ntry:\n    pbs.event().job.Execution_Time = 1\n"
                    "except pbs.BadAttributeValueError as exc:\n    pbs.event().reject(str(exc))\n")
    assert result.reject_message.startswith("exec_time '") and result.reject_message.endswith("' not in the future")
    assert "Execution_Time" not in result.changes


def test_pp928_i6_launch_may_set_run_count_and_resources_used():
    result = launch("import pbs\nj = pbs.event().job\nj.run_count = 3\n"
                    "j.resources_used['cput'] = '00:00:10'\n")
    assert result.accepted is True, result.exception
    assert result.job["run_count"] == "3" and result.job["resources_used"] == {"cput": "00:00:10"}


def test_pp928_i6_launch_negative_run_count_refused():
    result = launch("import pbs\ntry:\n    pbs.event().job.run_count = -1\n"
                    "except pbs.BadAttributeValueError as exc:\n    pbs.event().reject(str(exc))\n")
    assert result.reject_message == "run_count value must be >= 0" and result.changes == {}


def test_pp928_i6_launch_may_offline_a_vnode_and_change_its_resources():
    body = ("import pbs\ne = pbs.event()\ne.vnode_list['vm-m2'].state = pbs.ND_OFFLINE\n"
            "e.vnode_list['vm-m2'].comment = 'offlined by launch'\n"
            "e.vnode_list['vm'].resources_available['ncpus'] = 8\n")
    result = launch(body)
    assert result.accepted is True, result.exception
    assert result.vnodes == {"vm-m2": {"state": "offline", "comment": "offlined by launch"},
                             "vm": {"resources_available": {"ncpus": "8"}}}


def test_pp928_i6_launch_setting_server_attribute_raises_assertion_error():
    body = ("import pbs\ntry:\n    pbs.server().scheduling = False\n"
            "except AssertionError as exc:\n    pbs.event().reject(type(exc).__name__ + ': ' + str(exc))\n")
    result = launch(body, server_attributes={"scheduling": "True"})
    assert result.reject_message == "AssertionError: " + REFUSED
    # Caught by the hook: nothing reaches the log.
    assert not any(REFUSED in line for line in result.log)


def test_pp928_i6_launch_uncaught_refusal_is_an_exception_of_the_hook():
    """As real pbs_python logs it (seen on the openpbs backend): the exception's class and
    text as errors, then the hook's DEBUG2 'encountered an exception' line."""
    result = launch("import pbs\npbs.logmsg(pbs.LOG_DEBUG, 'before')\npbs.server().scheduling = False\n")
    assert result.accepted is False
    assert "AssertionError: " + REFUSED in result.exception
    error = "0001;pbs_python;Svr;pbs_python;PBS server internal error (15011) in Error evaluating Python script, "
    assert [line[20:] for line in result.log] == [
        "0006;pbs_python;Hook;pbs_python;before",
        error + "<class 'AssertionError'>",
        error + REFUSED,
        "0100;pbs_python;Hook;hook;execjob_launch hook 'hook' encountered an exception, request rejected"]


def test_pp928_i6_launch_event_parameters_other_than_launch_ones_stay_read_only():
    body = ("import pbs\ne = pbs.event()\ne.progname = '/bin/sh'\ntry:\n    e.vnode_list = {}\n"
            "except pbs.BadAttributeValueError as exc:\n    e.reject(str(exc))\n")
    result = launch(body)
    assert result.reject_message == "event attribute 'vnode_list' is readonly"
    assert result.progname == "/bin/sh"


def test_pp928_i6_other_mom_events_refuse_server_attributes_with_their_own_text():
    body = ("import pbs\ntry:\n    pbs.server().scheduling = False\n"
            "except AssertionError as exc:\n    pbs.event().reject(str(exc))\n")
    result = harness.run_hook(body, event="execjob_prologue", job=JOB)
    assert result.reject_message == "Can only set job,resource,vnode attributes under mom hook event."
    assert not any("under execjob_launch hook" in line for line in result.log)


def test_pp928_i6_server_object_reads_given_attributes():
    result = launch("import pbs\ns = pbs.server()\npbs.event().reject('%s %s' % (s, s.scheduling))\n",
                    server_attributes={"scheduling": "True"})
    assert result.reject_message == "vm True"


def test_pp928_i6_readonly_object_refused_with_pbs_text():
    pbs._start({"name": "h"}, "execjob_launch", {"job": {"id": "1.vm"}, "daemon": "mom"})
    job = pbs.event().job
    object.__setattr__(job, "_readonly", True)
    try:
        job.comment = "x"
    except pbs.BadAttributeValueError as exc:
        assert str(exc) == "attribute 'comment' is part of a readonly object"
    else:
        raise AssertionError("a read-only job accepted a set")
