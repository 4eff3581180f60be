"""Filter hpc.pbs.mom_option_problem: the mom_config module's option rules, for the roles."""
import pytest

from ansible_collections.hpc.pbs.plugins.filter.mom_option_problem import FilterModule, mom_option_problem
from ansible_collections.hpc.pbs.plugins.module_utils.moms.mom_config_options import (
    RULES, MomConfigValueError, plan, value_problem)

TUNABLES = ("job_launch_delay", "sister_join_job_alarm")


@pytest.mark.parametrize("option", TUNABLES)
@pytest.mark.parametrize("value", [1, 30, 86400, "30", " 7 ", None])
def test_values_the_module_accepts_give_an_empty_string(option, value):
    assert mom_option_problem(value, option) == ""


@pytest.mark.parametrize("option", TUNABLES)
@pytest.mark.parametrize("value", [0, -3, 86401, "010", 5.0, 2.7, True, "1e3", "abc", "10 # ten", ""])
def test_other_values_give_the_module_message(option, value):
    with pytest.raises(MomConfigValueError) as refused:
        plan({option: value}, "present")
    assert mom_option_problem(value, option) == str(refused.value)
    assert mom_option_problem(value, option).startswith("%s: %r is refused (" % (option, value))


@pytest.mark.parametrize("option", TUNABLES)
def test_a_list_gets_the_module_message(option):
    assert mom_option_problem([5], option) == "%s takes one value, not a list; accepted: %s" % (
        option, RULES[option].accepts)


@pytest.mark.parametrize("option", TUNABLES)
def test_the_message_says_what_is_accepted(option):
    assert mom_option_problem(0, option).endswith("accepted: " + RULES[option].accepts)


@pytest.mark.parametrize("number", [-2, -1, 0, 1, 2, 59, 3600, 86399, 86400, 86401, 86402, 10 ** 25])
def test_the_filter_and_the_module_share_one_rule(number):
    for option in TUNABLES:
        assert mom_option_problem(number, option) == value_problem(option, number)
        assert (mom_option_problem(number, option) == "") is (1 <= number <= 86400)


def test_an_unknown_option_gets_the_module_message():
    assert mom_option_problem(5, "no_such_option").startswith("unknown mom config option 'no_such_option'")


def test_registered_under_its_name():
    assert FilterModule().filters()["mom_option_problem"] is mom_option_problem
