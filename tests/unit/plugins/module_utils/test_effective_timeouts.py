"""module_utils.effective_timeouts: how pbs_mom derives $sister_join_job_alarm and
$job_launch_delay from its hooks' alarms when mom_priv/config does not set them
(OpenPBS 22.05.11 / 23.06.06 src/resmom/mom_main.c, requests.c, linux/mom_func.c)."""
from ansible_collections.hpc.pbs.plugins.module_utils.cluster import effective_timeouts as et

BEGIN90 = {"event": "execjob_begin", "enabled": "true", "alarm": "90"}
ATOM = {"event": "execjob_begin,execjob_end", "enabled": "true", "alarm": "300"}
PROLOGUE = {"event": "execjob_prologue", "enabled": "true", "alarm": "20"}
BOTH = {"event": "execjob_begin,execjob_prologue", "enabled": "true", "alarm": "40"}


def test_no_hook_gives_30_s_for_both_options():
    values = et.effective_values({}, {})
    for option in et.OPTIONS:
        assert values[option]["value"] == 30
        assert values[option]["source"] == "default"
        assert values[option]["hooks"] == []


def test_the_enabled_hooks_alarms_are_summed_per_event():
    hooks = {"pbs_cgroups": BEGIN90, "PBS_cray_atom": ATOM, "pro": PROLOGUE,
             "off": dict(BEGIN90, enabled="false"), "launch": {"event": "execjob_launch", "alarm": "7"}}
    values = et.effective_values({}, hooks)
    assert values["sister_join_job_alarm"]["value"] == 390
    assert values["sister_join_job_alarm"]["source"] == "hooks"
    assert values["sister_join_job_alarm"]["hooks"] == [dict(name="PBS_cray_atom", alarm=300),
                                                        dict(name="pbs_cgroups", alarm=90)]
    assert values["job_launch_delay"]["value"] == 20
    assert values["job_launch_delay"]["hooks"] == [dict(name="pro", alarm=20)]


def test_at_start_a_hook_with_both_events_counts_for_both_options():
    values = et.effective_values({}, {"both": BOTH, "b": BEGIN90})
    assert values["sister_join_job_alarm"]["value"] == 130
    assert values["job_launch_delay"]["value"] == 40


def test_the_config_line_wins_and_the_last_of_repeated_lines():
    values = et.effective_values({"sister_join_job_alarm": ["10", "45"], "job_launch_delay": "12"},
                                 {"pbs_cgroups": BEGIN90})
    join = values["sister_join_job_alarm"]
    assert (join["value"], join["source"], join["line"], join["default"]) == (
        45, "mom_config", "$sister_join_job_alarm 45", 90)
    assert join["after_sighup"] == 45
    assert values["job_launch_delay"]["value"] == 12


def test_after_a_sighup_a_derived_option_is_30_whatever_the_hooks():
    values = et.effective_values({}, {"pbs_cgroups": BEGIN90})
    assert values["sister_join_job_alarm"]["value"] == 90
    assert values["sister_join_job_alarm"]["after_sighup"] == 30


def test_a_hook_without_alarm_or_enabled_takes_pbs_defaults():
    assert et.derived_value({"h": {"event": "execjob_begin"}}, "sister_join_job_alarm") == (30, [("h", 30)])
    assert et.derived_value({"h": {"event": "execjob_begin", "alarm": "x"}},
                            "sister_join_job_alarm") == (30, [("h", 30)])
    # cluster_info's summaries: events as a list, enabled and alarm typed
    assert et.derived_value({"h": {"events": ["execjob_begin"], "enabled": True, "alarm": 90},
                             "g": {"events": ["execjob_begin"], "enabled": False, "alarm": 5}},
                            "sister_join_job_alarm") == (90, [("h", 90)])


def test_a_hook_copy_counts_a_hook_with_both_events_for_the_join_alarm_only():
    hooks = {"both": BOTH, "pro": PROLOGUE}
    assert et.value_after_hook_copy(hooks, "sister_join_job_alarm", 30, et.OPTIONS) == 40
    assert et.value_after_hook_copy(hooks, "job_launch_delay", 30, et.OPTIONS) == 20
    # with $sister_join_job_alarm set in the config, both count for the launch delay
    assert et.value_after_hook_copy(hooks, "job_launch_delay", 30, ("job_launch_delay",)) == 60


def test_a_hook_copy_with_no_enabled_hook_of_the_event_keeps_the_value():
    assert et.value_after_hook_copy({"b": dict(BEGIN90, enabled="false")},
                                    "sister_join_job_alarm", 90, et.OPTIONS) == 90


def test_enabling_a_90_s_begin_hook_is_announced_30_to_90():
    before = {"rjs": {"event": "queuejob,execjob_launch", "alarm": "30"},
              "pbs_cgroups": dict(BEGIN90, enabled="false")}
    after = et.hooks_with_change(before, "pbs_cgroups", {"enabled": True})
    assert before["pbs_cgroups"]["enabled"] == "false"
    found = et.changes(before, after, "pbs_cgroups")
    assert [(c["option"], c["old"], c["new"], c["running"]) for c in found] == [
        ("sister_join_job_alarm", 30, 90, None)]
    assert found[0]["line"] == (
        "hook pbs_cgroups: on every mom whose mom_priv/config has no $sister_join_job_alarm line, "
        "$sister_join_job_alarm goes from 30 s to 90 s (the sum of the alarms of the enabled "
        "execjob_begin hooks: pbs_cgroups 90 s)")


def test_nothing_is_announced_when_nothing_changes():
    before = {"rjs": {"event": "queuejob,execjob_launch", "alarm": "30"}}
    assert et.changes(before, et.hooks_with_change(before, "rjs", {"enabled": True, "alarm": 60}), "rjs") == []
    assert et.changes(before, et.hooks_with_change(before, "new", {"events": ["execjob_launch"]}), "new") == []


def test_an_alarm_change_and_a_new_hook_are_announced():
    before = {"PBS_cray_atom": ATOM}
    after = et.hooks_with_change(before, "PBS_cray_atom", {"alarm": 120})
    assert [(c["old"], c["new"]) for c in et.changes(before, after, "PBS_cray_atom")] == [(300, 120)]
    after = et.hooks_with_change(before, "cg", {"events": ["execjob_begin", "execjob_prologue"], "alarm": 60})
    found = et.changes(before, after, "cg")
    assert [(c["option"], c["old"], c["new"], c["running"]) for c in found] == [
        ("job_launch_delay", 30, 60, 30), ("sister_join_job_alarm", 300, 360, None)]
    assert found[0]["line"].endswith("; a pbs_mom that keeps running holds 30 s until it restarts")


def test_disabling_the_last_hook_says_the_running_mom_keeps_its_value():
    before = {"PBS_cray_atom": ATOM}
    found = et.changes(before, et.hooks_with_change(before, "PBS_cray_atom", {"enabled": False}),
                       "PBS_cray_atom")
    assert [(c["old"], c["new"], c["running"]) for c in found] == [(300, 30, 300)]
    assert "no enabled execjob_begin hook is left" in found[0]["line"]
    assert et.changes(before, et.hooks_with_change(before, "PBS_cray_atom", None), "PBS_cray_atom")[0]["new"] == 30
