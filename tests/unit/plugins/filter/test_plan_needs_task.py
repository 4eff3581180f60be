"""Filter hpc.pbs.plan_needs_task: a server part's task is skipped only when
hpc.pbs.cluster_info planned it and every plan changes nothing."""
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.hpc.pbs.plugins.filter.plan_needs_task import FilterModule, plan_needs_task

NOTHING = {"object": "sched default", "failed": False, "changed": False, "commands": []}
SOMETHING = {"object": "sched default", "failed": False, "changed": True,
             "commands": ["set sched default job_run_wait = none"]}
REFUSED = {"object": "hook rjs", "failed": True, "changed": False, "commands": [],
           "msg": "order must be 1-1000"}


def test_a_plan_that_changes_nothing_skips_the_task():
    assert plan_needs_task([NOTHING]) is False


def test_a_plan_with_something_to_change_runs_the_task():
    assert plan_needs_task([SOMETHING]) is True


def test_a_refused_plan_runs_the_task_so_that_it_fails_with_its_own_message():
    assert plan_needs_task([REFUSED]) is True


def test_no_plan_runs_the_task():
    # Not planned (another pbs.conf, a part the playbook did not plan): only the task tells.
    assert plan_needs_task([]) is True


def test_one_plan_with_work_among_several_runs_the_task():
    assert plan_needs_task([NOTHING, SOMETHING]) is True
    assert plan_needs_task([NOTHING, NOTHING]) is False


def test_a_plan_without_changed_counts_as_work():
    assert plan_needs_task([{"object": "server", "failed": False}]) is True


@pytest.mark.parametrize("bad", [None, {"changed": False}, [None], ["plan"]])
def test_anything_but_a_list_of_plans_is_refused(bad):
    with pytest.raises(AnsibleFilterError, match="list of plans of hpc.pbs.cluster_info"):
        plan_needs_task(bad)


def test_the_filter_is_registered():
    assert FilterModule().filters()["plan_needs_task"] is plan_needs_task
