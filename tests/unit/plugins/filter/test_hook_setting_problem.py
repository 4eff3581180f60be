"""Filter hpc.pbs.hook_setting_problem: the hook module's name, order and alarm rules, for the roles."""
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.hpc.pbs.plugins.filter.hook_name_problem import hook_name_problem
from ansible_collections.hpc.pbs.plugins.filter.hook_setting_problem import (
    FilterModule, hook_setting_problem)
from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hooks import alarm_accepted, site_order_accepted


@pytest.mark.parametrize("value", [1, 500, 1000, "1000", " 7 ", 12.7])
def test_orders_pbs_takes_for_a_site_hook_give_an_empty_string(value):
    assert hook_setting_problem(value, "order") == ""


@pytest.mark.parametrize("value", [0, -1, 1001, "1001", True, False, None, "abc", "", [5], 0.5])
def test_other_orders_say_the_range(value):
    assert hook_setting_problem(value, "order") == "must be 1-1000"


@pytest.mark.parametrize("value", [1, 30, 86400, "300"])
def test_alarms_of_one_second_or_more_give_an_empty_string(value):
    assert hook_setting_problem(value, "alarm") == ""


@pytest.mark.parametrize("value", [0, -30, "0", True, None, "soon"])
def test_other_alarms_say_the_minimum(value):
    assert hook_setting_problem(value, "alarm") == "must be at least 1 second"


@pytest.mark.parametrize("name", ["reliable_job_startup", "_private", "PBS_rjs", "a b\n", 12])
def test_names_are_the_hook_name_problem_filter(name):
    assert hook_setting_problem(name, "name") == hook_name_problem(name)


@pytest.mark.parametrize("number", range(-2, 1004))
def test_the_filter_and_the_hook_module_share_one_rule(number):
    assert (hook_setting_problem(number, "order") == "") is site_order_accepted(number)
    assert (hook_setting_problem(number, "alarm") == "") is alarm_accepted(number)


def test_an_unknown_setting_is_an_error():
    with pytest.raises(AnsibleFilterError, match="setting must be one of name, order, alarm, not 'freq'"):
        hook_setting_problem(5, "freq")


def test_registered_under_its_name():
    assert FilterModule().filters()["hook_setting_problem"] is hook_setting_problem
