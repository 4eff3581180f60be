"""Filter hpc.pbs.effective_timeout_changes: the lines the roles print before a hook change
that moves the $sister_join_job_alarm / $job_launch_delay the moms derive from their hooks."""
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.hpc.pbs.plugins.filter.effective_timeout_changes import (
    FilterModule, effective_timeout_changes)

# As cluster_info's server.hooks lists them.
SERVER_HOOKS = {
    "reliable_job_startup": {"type": "site", "events": ["queuejob", "execjob_launch"], "enabled": True, "alarm": 30},
    "pbs_cgroups": {"type": "pbs", "events": ["execjob_begin", "execjob_end"], "enabled": False, "alarm": 90},
}


def test_registered():
    assert FilterModule().filters()["effective_timeout_changes"] is effective_timeout_changes


def test_enabling_a_90_s_begin_hook_names_it_and_30_to_90():
    lines = effective_timeout_changes(SERVER_HOOKS, "pbs_cgroups", {"enabled": True})
    assert lines == [
        "hook pbs_cgroups: on every mom whose mom_priv/config has no $sister_join_job_alarm line, "
        "$sister_join_job_alarm goes from 30 s to 90 s (the sum of the alarms of the enabled "
        "execjob_begin hooks: pbs_cgroups 90 s)"]


def test_nothing_when_nothing_changes():
    assert effective_timeout_changes(SERVER_HOOKS, "reliable_job_startup",
                                     {"events": ["queuejob", "execjob_launch"], "enabled": True, "alarm": "45"}) == []
    assert effective_timeout_changes(None, "cgroup_resize", None) == []


def test_a_new_begin_hook_beside_an_enabled_one_adds_its_alarm():
    hooks = dict(SERVER_HOOKS, pbs_cgroups=dict(SERVER_HOOKS["pbs_cgroups"], enabled=True))
    lines = effective_timeout_changes(hooks, "cgroup_resize",
                                      {"events": ["execjob_begin", "execjob_launch"], "enabled": True, "alarm": "30"})
    assert len(lines) == 1 and "from 90 s to 120 s" in lines[0] and "cgroup_resize 30 s + pbs_cgroups 90 s" in lines[0]


@pytest.mark.parametrize("hooks, name, change, words", [
    ([], "h", {}, "hooks must be a dict"),
    ({}, "", {}, "name must be a hook name"),
    ({}, "h", "enabled", "change must be a dict"),
    ({}, "h", {"order": 3}, "change has order; accepted keys: events, event, enabled, alarm"),
    ({}, "h", {"alarm": "soon"}, "change.alarm must be whole seconds"),
])
def test_bad_input_is_refused_naming_it(hooks, name, change, words):
    with pytest.raises(AnsibleFilterError, match=words):
        effective_timeout_changes(hooks, name, change)


def test_several_hooks_changed_in_one_step():
    """The built-in ATOM hook enabled and the bundled one removed: 300 s, the bundled hook's
    alarm gone."""
    hooks = dict(SERVER_HOOKS, PBS_cray_atom={"events": ["execjob_begin", "execjob_end"], "enabled": False, "alarm": 300},
                 cray_atom={"events": ["execjob_begin", "execjob_end"], "enabled": True, "alarm": 45})
    lines = effective_timeout_changes(hooks, {"PBS_cray_atom": {"enabled": True}, "cray_atom": None})
    assert len(lines) == 1 and lines[0].startswith("hook PBS_cray_atom, cray_atom: ") and "from 45 s to 300 s" in lines[0]
    assert effective_timeout_changes(hooks, {"cray_atom": {"enabled": True}}) == []
    with pytest.raises(AnsibleFilterError, match="not an empty dict"):
        effective_timeout_changes(hooks, {})
