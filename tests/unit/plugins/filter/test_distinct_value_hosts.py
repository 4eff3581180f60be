"""Filter hpc.pbs.distinct_value_hosts: one host per distinct set of input values, so that
site.yml checks each set once and still checks every host's values."""
from ansible_collections.hpc.pbs.plugins.filter.distinct_value_hosts import FilterModule, distinct_value_hosts

NAMES = ["delay", "config"]


def test_hosts_with_the_same_values_are_checked_once():
    hostvars = {h: {"delay": 10, "config": {"a": 1, "b": 2}, "ansible_host": h} for h in ("srv", "mom1", "mom2")}
    assert distinct_value_hosts(["srv", "mom1", "mom2"], hostvars, NAMES) == ["srv"]


def test_each_distinct_value_keeps_its_first_host_in_order():
    hostvars = {"srv": {"delay": 10}, "mom1": {"delay": 10}, "mom2": {"delay": 0}, "mom3": {"delay": 0},
                "mom4": {"delay": "10"}}
    assert distinct_value_hosts(["srv", "mom1", "mom2", "mom3", "mom4"], hostvars, NAMES) == ["srv", "mom2", "mom4"]


def test_a_variable_a_host_lacks_is_a_value_of_its_own():
    # mom1 leaves delay to the role's default: it is not the host that sets delay to None.
    hostvars = {"srv": {"delay": None}, "mom1": {}, "mom2": {}}
    assert distinct_value_hosts(["srv", "mom1", "mom2"], hostvars, NAMES) == ["srv", "mom1"]


def test_dicts_are_compared_by_content_not_key_order():
    hostvars = {"srv": {"config": {"a": 1, "b": 2}}, "mom1": {"config": {"b": 2, "a": 1}},
                "mom2": {"config": {"a": 1, "b": 3}}}
    assert distinct_value_hosts(["srv", "mom1", "mom2"], hostvars, NAMES) == ["srv", "mom2"]


def test_other_variables_do_not_split_the_sets():
    hostvars = {"srv": {"delay": 5, "ansible_host": "10.0.0.1"}, "mom1": {"delay": 5, "ansible_host": "10.0.0.2"}}
    assert distinct_value_hosts(["srv", "mom1"], hostvars, NAMES) == ["srv"]


def test_no_hosts_no_checks():
    assert distinct_value_hosts([], {}, NAMES) == []


def test_the_filter_is_registered():
    assert FilterModule().filters() == {"distinct_value_hosts": distinct_value_hosts}
