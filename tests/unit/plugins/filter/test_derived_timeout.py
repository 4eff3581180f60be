"""hpc.pbs.derived_timeout: the mom timeout derived from the enabled hooks' alarms, by the
rule of module_utils/cluster/effective_timeouts.py."""
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.hpc.pbs.plugins.filter.derived_timeout import derived_timeout


def test_the_sum_of_the_listed_hooks_alarms():
    assert derived_timeout([{"name": "rjs", "alarm": 45}, {"name": "cray_atom", "alarm": "300"}]) == 345


def test_thirty_seconds_with_no_hook():
    assert derived_timeout([]) == 30
    assert derived_timeout({}, "job_launch_delay") == 30


def test_a_dict_of_hooks_counts_only_the_enabled_ones_of_the_options_event():
    hooks = {"begin": {"event": "execjob_begin,execjob_end", "enabled": "true", "alarm": "90"},
             "off": {"events": ["execjob_begin"], "enabled": False, "alarm": 300},
             "prologue": {"events": ["execjob_prologue"], "enabled": True, "alarm": 20}}
    assert derived_timeout(hooks) == 90
    assert derived_timeout(hooks, "job_launch_delay") == 20


def test_a_hook_without_an_alarm_counts_pbs_default():
    assert derived_timeout([{"name": "rjs"}]) == 30
    assert derived_timeout([{"name": "rjs"}, {"name": "x", "alarm": 10}]) == 40


@pytest.mark.parametrize("hooks, option", [
    ([{"alarm": 5}], "sister_join_job_alarm"),
    ("rjs", "sister_join_job_alarm"),
    ([], "join_alarm"),
])
def test_bad_input_is_refused_naming_what_is_accepted(hooks, option):
    with pytest.raises(AnsibleFilterError, match="derived_timeout: "):
        derived_timeout(hooks, option)
