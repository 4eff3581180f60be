"""Filter hpc.pbs.hook_name_problem: the hook module's name rule, for the roles."""
import pytest

from ansible_collections.hpc.pbs.plugins.filter.hook_name_problem import FilterModule, hook_name_problem
from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hooks import site_hook_name_problem


@pytest.mark.parametrize("name", ["reliable_job_startup", "cray-atom", "pbs_cgroups", "h1"])
def test_accepted_names_give_an_empty_string(name):
    assert hook_name_problem(name) == ""


@pytest.mark.parametrize("name, words", [
    ("reliable_job_startup\n", ["newline"]),
    ("rjs other", ["whitespace"]),
    ("_private", ["start with a letter"]),
    ("1hook", ["start with a letter"]),
    ("PBS_rjs", ["PBS", "reserved"]),
    ("a,b", ["only letters, digits"]),
    ("", ["start with a letter"]),
])
def test_refused_names_say_why(name, words):
    problem = hook_name_problem(name)
    assert problem == site_hook_name_problem(name)
    for word in words:
        assert word in problem, (name, problem)


def test_a_non_string_is_refused():
    assert "string" in hook_name_problem(12)


def test_registered_under_its_name():
    assert FilterModule().filters()["hook_name_problem"] is hook_name_problem
