"""hpc.pbs.qmgr task checks and plans the other tests leave unchecked: every problem of a task is
reported, not only the first, and one attribute already as wanted does not stop the plan of the
next; the argument spec's required options and choices."""
import pytest

from ansible_collections.hpc.pbs.plugins.module_utils.server import qmgr_plan
from ansible_collections.hpc.pbs.plugins.modules import qmgr as qmgr_module
from hpc_pbs_module_fakes import run_module


def test_every_problem_of_a_task_is_reported_in_order():
    attributes = {"bad name": 1, "comment": {"a": 1}, "scheduling": None,
                  "default_queue": "no such,q"}
    problems = qmgr_plan.task_problems("server", ["vm"], attributes, "present", "replace")
    assert len(problems) == 3
    assert problems[0].startswith("server attribute name 'bad name' is not accepted")
    assert problems[1] == ("attribute comment: a dict is not a qmgr value; give a string, "
                           "number, boolean or list")
    assert problems[2].startswith("server attribute default_queue: queue name 'no such,q'")


def test_the_several_objects_hint_is_only_for_a_name_with_a_comma():
    plain, = qmgr_plan.task_problems("server", ["bad name"], {}, "present", "replace")
    listed, = qmgr_plan.task_problems("server", ["bad,name"], {}, "present", "replace")
    assert "to change several objects" not in plain
    assert listed.endswith("; to change several objects list them in the option names")


def test_a_replaced_list_is_checked_as_the_one_value_written():
    problems = qmgr_plan.task_problems("node", ["n1"], {"state": ["free", "offline"]},
                                       "present", "replace")
    assert problems == ["node attribute state: free cannot be combined with other states; "
                        "accepted: a comma separated list of free, offline, down, sleep, "
                        "offline_by_mom"]


def test_an_attribute_already_as_wanted_does_not_stop_the_plan():
    commands, predicted = qmgr_plan.plan_changes(
        "server", "vm", {"comment": "same", "scheduler_iteration": 600},
        {"comment": "same", "scheduler_iteration": "300"}, "present", "replace")
    assert [str(c) for c in commands] == ["set server vm scheduler_iteration = 600"]
    assert predicted == {"comment": "same", "scheduler_iteration": "600"}


@pytest.mark.parametrize("args, message", [
    ({"attributes": {"comment": "x"}}, "missing required arguments: object_type"),
    ({"object_type": "server"}, "missing required arguments: attributes"),
    ({"object_type": "bogus", "attributes": {}}, "value of object_type must be one of"),
    ({"object_type": "server", "attributes": {}, "state": "bogus"}, "value of state must be one of"),
    ({"object_type": "server", "attributes": {}, "list_mode": "bogus"},
     "value of list_mode must be one of"),
], ids=["no-object-type", "no-attributes", "object-type", "state", "list-mode"])
def test_the_argument_spec_refuses_a_task_before_qmgr_runs(pbs, args, message):
    args["pbs_conf_file"] = pbs.conf
    code, result = run_module(qmgr_module.main, args)
    assert code == 1 and message in result["msg"], result
    assert not pbs.calls
