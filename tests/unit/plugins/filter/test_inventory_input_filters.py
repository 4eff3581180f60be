"""Filters of the inventory's checks (playbooks/tasks/inventory_checks.yml):
hpc.pbs.inventory_problems, which runs the others: host_value_problems, bool_problem,
node_name_problem, writable_path_problem."""
import os

import pytest
from ansible.module_utils.parsing.convert_bool import BOOLEANS_FALSE, BOOLEANS_TRUE

from ansible_collections.hpc.pbs.plugins.filter import (bool_problem, host_value_problems, inventory_problems,
                                                        node_name_problem, writable_path_problem)
from ansible_collections.hpc.pbs.plugins.module_utils.server.qmgr import object_name_problem

HOSTS = ["srv", "mom1", "mom2"]


# ------------------------------------------------------------------ host_value_problems

def problems(hostvars, names=("order",), every_host=False):
    return host_value_problems.host_value_problems(HOSTS, hostvars, list(names), "srv", "on srv only", every_host)


def test_a_value_for_every_host_gives_nothing():
    assert problems({h: {"order": 5} for h in HOSTS}) == []
    assert problems({h: {"order": {"b": 1, "a": [2]}} for h in HOSTS}, every_host=True) == []


def test_a_value_given_to_one_mom_only_is_named_with_both_values():
    found = problems({"srv": {}, "mom1": {}, "mom2": {"order": 5}})
    assert found == ["order is 5 for mom2, but this playbook reads it on srv only, where it is not set "
                     "(the default applies): the value given for mom2 would not be used; accepted: the same "
                     "value for every host (group all, or -e), or a value set only for srv"]


def test_a_different_value_on_a_mom_is_named():
    found = problems({"srv": {"order": 1}, "mom1": {"order": 1}, "mom2": {"order": "1"}})
    assert len(found) == 1 and 'order is "1" for mom2' in found[0] and "where it is 1:" in found[0]


def test_a_value_for_the_reader_alone_is_accepted_unless_every_host_needs_it():
    hostvars = {"srv": {"order": 5}, "mom1": {}, "mom2": {}}
    assert problems(hostvars) == []
    found = problems(hostvars, every_host=True)
    assert [p.split(",")[0] for p in found] == ["order is not set for mom1", "order is not set for mom2"]
    assert "the value (not set) for mom1 would not be used" in found[0]
    assert "or a value set only for" not in found[0]


def test_dicts_compare_by_content_and_names_keep_their_order():
    hostvars = {"srv": {"a": {"x": 1, "y": 2}, "b": 1}, "mom1": {"a": {"y": 2, "x": 1}, "b": 2}, "mom2": {}}
    found = problems(hostvars, names=("b", "a"))
    assert len(found) == 1 and found[0].startswith("b is 2 for mom1")


# ------------------------------------------------------------------ bool_problem

@pytest.mark.parametrize("value", sorted(BOOLEANS_TRUE | BOOLEANS_FALSE, key=repr)
                         + ["YES", "Off", " true ", "T", "N", True, False])
def test_what_ansible_strict_boolean_accepts_is_accepted(value):
    assert bool_problem.bool_problem(value) == ""


@pytest.mark.parametrize("value, shown", [
    ("yes please", "'yes please'"), ("enabled", "'enabled'"), ("2", "'2'"), ("", "''"),
    (2, "2"), (None, "None"), ([True], "[True]"), ({"a": 1}, "{'a': 1}"),
])
def test_other_values_are_refused_naming_them_and_what_is_accepted(value, shown):
    assert bool_problem.bool_problem(value) == (
        "%s is not a boolean; accepted: true/false, yes/no, on/off, y/n, t/f or 1/0 (any case)" % shown)


# ------------------------------------------------------------------ node_name_problem

@pytest.mark.parametrize("name", ["mom1", "node001", "10.0.0.5", "n_1.cluster-a", "vn[0]"])
def test_node_names_qmgr_takes_are_accepted(name):
    assert node_name_problem.node_name_problem(name) == ""


@pytest.mark.parametrize("name, words", [
    ("mom2,mom1", ["'mom2,mom1'", "a comma"]),
    ("-mom1", ["'-mom1'", "a character qmgr does not take"]),
    ("mom 1", ["white space"]),
    ("mom1\nset server scheduling = False", ["newline"]),
    ("", ["nothing"]),
    ("m" * 256, ["256 characters"]),
    (7, ["not a string"]),
])
def test_other_node_names_are_refused_with_the_qmgr_rule(name, words):
    problem = node_name_problem.node_name_problem(name)
    assert problem == object_name_problem("node", name)
    for word in words + ["accepted: a letter or digit"] if isinstance(name, str) else words:
        assert word in problem, (name, problem)


# ------------------------------------------------------------------ writable_path_problem

def test_a_new_or_existing_file_in_a_writable_directory_is_accepted(tmp_path):
    assert writable_path_problem.writable_path_problem(str(tmp_path / "report.json")) == ""
    (tmp_path / "old.json").write_text("[]")
    assert writable_path_problem.writable_path_problem(str(tmp_path / "old.json")) == ""


def test_a_relative_path_is_taken_from_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert writable_path_problem.writable_path_problem("report.json") == ""
    assert "the directory %s does not exist" % (tmp_path / "missing") in (
        writable_path_problem.writable_path_problem("missing/report.json"))


@pytest.mark.parametrize("make, words", [
    (lambda d: str(d / "nosuch" / "r.json"), ["the directory", "nosuch does not exist"]),
    (str, ["is a directory"]),
    (lambda d: os.symlink("/nonexistent", str(d / "link")) or str(d / "link"), ["is not a regular file"]),
    (lambda d: (d / "fifo").is_dir() or os.mkfifo(str(d / "fifo")) or str(d / "fifo"), ["is not a regular file"]),
    (lambda d: "", ["is not a file path"]),
    (lambda d: None, ["is not a file path"]),
    (lambda d: "a\0b", ["NUL"]),
])
def test_paths_that_cannot_be_written_are_refused_saying_why(tmp_path, make, words):
    problem = writable_path_problem.writable_path_problem(make(tmp_path))
    assert problem.endswith("accepted: a file path whose directory exists and is writable on the controller"), problem
    for word in words:
        assert word in problem, problem


def test_a_directory_no_file_can_be_made_in_is_refused_whoever_runs():
    """/proc: its permission bits let root write, the kernel does not."""
    problem = writable_path_problem.writable_path_problem("/proc/hpc-pbs-report.json")
    assert problem.startswith("the directory /proc cannot be written ("), problem


def test_the_check_leaves_no_file_behind(tmp_path):
    assert writable_path_problem.writable_path_problem(str(tmp_path / "r.json")) == ""
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write any directory")
def test_a_directory_this_user_cannot_write_is_refused(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        assert "is not writable by this user" in writable_path_problem.writable_path_problem(str(locked / "r.json"))
    finally:
        locked.chmod(0o700)


def test_the_filters_are_registered_under_their_names():
    for module, name in ((host_value_problems, "host_value_problems"), (bool_problem, "bool_problem"),
                         (node_name_problem, "node_name_problem"), (writable_path_problem, "writable_path_problem"),
                         (inventory_problems, "inventory_problems")):
        assert name in module.FilterModule().filters()


# ------------------------------------------------------------------ inventory_problems

GROUPS = {"all": HOSTS, "pbs_server": ["srv"], "pbs_mom": ["mom1", "mom2"]}


class CountingHostvars(dict):
    """hostvars that count how often each host's variables are taken (Ansible merges them at
    each ``hostvars[host]``)."""

    def __init__(self, *args):
        super().__init__(*args)
        self.taken = {}

    def __getitem__(self, host):
        self.taken[host] = self.taken.get(host, 0) + 1
        return super().__getitem__(host)


def inventory(hostvars, **checks):
    return inventory_problems.inventory_problems(hostvars, GROUPS, **checks)


def test_good_inputs_give_nothing(tmp_path):
    hostvars = {h: {"order": 5, "hpc_pbs_pipelining": "yes", "switch": True, "server": "srv"} for h in HOSTS}
    assert inventory(hostvars, scopes=[{"reader": "srv", "where": "on srv only", "names": ["order"]}],
                     bools=["switch"], host_names=["server"], node_names=True,
                     paths={"report": str(tmp_path / "r.json")}) == []


def test_every_kind_of_problem_is_named_in_order(tmp_path):
    hostvars = {"srv": {"order": 1, "switch": "enabled"}, "mom1": {"order": 2, "server": "head01"},
                "mom2": {"hpc_pbs_pipelining": "sometimes", "pbs_node_name": "mom2,mom1"}}
    found = inventory(hostvars, scopes=[{"reader": "srv", "where": "on srv only", "names": ["order"]}],
                      bools=["switch"], host_names=["server"], node_names=True,
                      paths={"report": str(tmp_path / "nosuch" / "r.json")})
    assert [problem.split(" ", 1)[0] for problem in found] == [
        "order", "hpc_pbs_pipelining", "switch", "server", "the", "report"], found
    assert found[1] == "hpc_pbs_pipelining (for mom2): 'sometimes' " + bool_problem.bool_problem("sometimes").split(" ", 1)[1]
    assert found[2].startswith("switch (for srv): 'enabled' is not a boolean; accepted: true/false")
    assert found[3] == ('server (for mom1) names "head01", which is not a host of the inventory; '
                        "accepted: null or one of srv, mom1, mom2")
    assert found[4].startswith("the PBS node name of the inventory host mom2 (pbs_node_name) cannot be given to qmgr: ")
    assert found[5].startswith("report cannot be written on the controller: the directory ")


def test_a_wrong_value_given_to_every_host_is_named_once_with_the_first_host():
    hostvars = {h: {"switch": "enabled", "server": "head01"} for h in HOSTS}
    found = inventory(hostvars, bools=["switch"], host_names=["server"])
    assert [problem.split(":", 1)[0] for problem in found] == [
        "switch (for srv)", 'server (for srv) names "head01", which is not a host of the inventory; accepted']


def test_a_reader_outside_the_groups_has_its_booleans_checked():
    hostvars = {"localhost": {"fail_on_drift": "sometimes"}, "srv": {}, "mom1": {}, "mom2": {}}
    found = inventory(hostvars, scopes=[{"reader": "localhost", "where": "on the controller", "names": ["path"]}],
                      bools=["fail_on_drift"])
    assert found == ["fail_on_drift (for localhost): 'sometimes' " + bool_problem.bool_problem("sometimes").split(" ", 1)[1]]


def test_unset_host_names_and_inventory_names_are_accepted():
    hostvars = {"srv": {"server": None}, "mom1": {"server": ""}, "mom2": {}}
    assert inventory(hostvars, host_names=["server"], node_names=True) == []
    many = dict(GROUPS, all=["h%02d" % n for n in range(25)])
    found = inventory_problems.inventory_problems({"srv": {"server": 7}, "mom1": {}, "mom2": {}}, many, host_names=["server"])
    assert found == ["server (for srv) names 7, which is not a host of the inventory; accepted: null or one of "
                     + ", ".join("h%02d" % n for n in range(20)) + "..."]


def test_an_inventory_name_qmgr_refuses_is_named_as_such():
    groups = dict(GROUPS, pbs_mom=["mom1", "-mom2"])
    found = inventory_problems.inventory_problems({"srv": {}, "mom1": {}, "-mom2": {}}, groups, node_names=True)
    assert len(found) == 1 and found[0].startswith("the PBS node name of the inventory host -mom2 (its inventory name)"), found


def test_each_hosts_variables_are_taken_once_per_scope_and_once_for_the_rest():
    """Ansible merges all of a host's variables at each hostvars[host]: the count must not grow with the names."""
    hostvars = CountingHostvars({h: {"a": 1, "b": 2, "c": 3} for h in HOSTS})
    inventory(hostvars, scopes=[{"reader": "srv", "where": "on srv", "names": ["a", "b", "c"]}],
              bools=["a", "b", "c"], host_names=["a", "b", "c"], node_names=True)
    assert hostvars.taken == {"srv": 2, "mom1": 2, "mom2": 2}
