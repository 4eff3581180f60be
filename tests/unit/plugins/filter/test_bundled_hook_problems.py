"""Filters hpc.pbs.bundled_hook_problems and hpc.pbs.bundled_hook: the one validate step
of the three roles that install a bundled hook, and the one place that finds files/hooks."""
import json
from pathlib import Path

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.hpc.pbs.plugins.filter.bundled_hook_problems import FilterModule, bundled_hook_problems
from ansible_collections.hpc.pbs.plugins.filter import bundled_hook as bundled_hook_filter
from ansible_collections.hpc.pbs.plugins.filter import bundled_hook_problems as bundled_hook_problems_module
from ansible_collections.hpc.pbs.plugins.plugin_utils import bundled_hooks

REPO = Path(__file__).resolve().parents[4]
HOOKS = tuple(bundled_hooks.bundled_hook_names())


def test_the_bundled_hooks_are_those_of_files_hooks():
    hooks_dir = REPO / "files" / "hooks"
    assert list(HOOKS) == sorted(path.name[:-len(".schema.json")] for path in hooks_dir.glob("*.schema.json"))
    assert {"reliable_job_startup", "cray_atom", "cgroup_resize"} <= set(HOOKS)
    assert Path(bundled_hooks.HOOKS_DIR).resolve() == REPO / "files" / "hooks"


@pytest.mark.parametrize("hook", HOOKS)
def test_good_settings_and_the_default_config_have_no_problem(hook):
    settings = {"hook_name": "site_" + hook, "hook_order": 100, "hook_alarm": "30", "config": None,
                "hook_fail_action": ["offline_vnodes", "scheduler_restart_cycle"]}
    assert bundled_hook_problems(settings, hook) == []
    assert bundled_hook_problems({"config": {}}, hook) == []


@pytest.mark.parametrize("settings, problems", [
    ({"hook_name": "PBS_x"}, ['cray_atom_hook_name "PBS_x": ']),
    ({"hook_name": "a b"}, ['cray_atom_hook_name "a b": ']),
    ({"hook_order": 0}, ["cray_atom_hook_order must be 1-1000, not 0"]),
    ({"hook_order": "1001"}, ['cray_atom_hook_order must be 1-1000, not "1001"']),
    ({"hook_alarm": 0}, ["cray_atom_hook_alarm must be at least 1 second, not 0"]),
    ({"hook_order": True, "hook_alarm": None}, ["cray_atom_hook_order must be 1-1000, not true",
                                                "cray_atom_hook_alarm must be at least 1 second, not null"]),
    ({"hook_fail_action": []}, ["cray_atom_hook_fail_action is empty: give [none] or a list of actions, not []"]),
    ({"hook_fail_action": ["none", "offline_vnodes"]},
     ["cray_atom_hook_fail_action 'none' cannot be combined with other actions, not [\"none\", \"offline_vnodes\"]"]),
    ({"hook_fail_action": ["offline"]}, ["cray_atom_hook_fail_action offline is not one of none, offline_vnodes, "
                                         'clear_vnodes_upon_recovery, scheduler_restart_cycle, not ["offline"]']),
    ({"hook_fail_action": "offline_vnodes"}, ["cray_atom_hook_fail_action must be a list of none, offline_vnodes, "
                                              'clear_vnodes_upon_recovery, scheduler_restart_cycle, not "offline_vnodes"']),
], ids=["reserved-name", "name-with-space", "order-0", "order-text-1001", "alarm-0", "order-and-alarm",
        "fail-action-empty", "fail-action-none-and-more", "fail-action-unknown", "fail-action-not-a-list"])
def test_each_bad_setting_is_named_by_its_variable(settings, problems):
    found = bundled_hook_problems(settings, "cray_atom")
    assert len(found) == len(problems)
    for text, start in zip(found, problems):
        assert text.startswith(start), found


def test_the_prefix_names_other_variables():
    assert bundled_hook_problems({"hook_order": 0}, "cray_atom", prefix="site_atom") == [
        "site_atom_hook_order must be 1-1000, not 0"]


@pytest.mark.parametrize("hook, config, problem", [
    ("cray_atom", {"post_timeout": 0}, "post_timeout: 0 is less than or equal to the minimum of 0"),
    ("cray_atom", {"version_uri": "/rm/v2"}, "'version_uri' was unexpected"),
    ("cgroup_resize", {"prefix": "../x"}, "prefix: '../x' is not allowed here"),
    ("reliable_job_startup", {"increment": "abc%"}, "increment: 'abc%' does not match"),
])
def test_a_config_that_breaks_the_schema_is_named_with_the_schema(hook, config, problem):
    (found,) = bundled_hook_problems({"config": config}, hook)
    assert found.startswith("%s_config is not a valid config of the %s hook (files/hooks/%s.schema.json): "
                            % (hook, hook, hook))
    assert problem in found


@pytest.fixture
def invalid_cray_atom_default(tmp_path, monkeypatch):
    """The bundled hooks dir replaced by a copy of cray_atom's files whose default config
    breaks its schema (post_timeout -5)."""
    hooks_dir = tmp_path / "hooks"
    hooks_dir.mkdir()
    for suffix in (".py", ".json", ".schema.json"):
        source = REPO / "files" / "hooks" / ("cray_atom" + suffix)
        (hooks_dir / ("cray_atom" + suffix)).write_text(source.read_text())
    (hooks_dir / "cray_atom.json").write_text(json.dumps({"post_timeout": -5}))
    monkeypatch.setattr(bundled_hooks, "HOOKS_DIR", str(hooks_dir))


@pytest.mark.usefixtures("invalid_cray_atom_default")
def test_the_config_is_checked_merged_over_the_hooks_default_config():
    (found,) = bundled_hook_problems({"config": {"delete_timeout": 5}}, "cray_atom")
    assert "post_timeout: -5 is less than" in found
    assert bundled_hook_problems({"config": {"post_timeout": 5}}, "cray_atom") == []


@pytest.mark.usefixtures("invalid_cray_atom_default")
@pytest.mark.parametrize("config", [None, {}])
def test_an_empty_config_is_the_default_config_and_is_not_checked_again(monkeypatch, config):
    # The default config is checked by each hook's own test (test_*_schema.py); a run that
    # leaves the config alone does not import jsonschema for it.
    monkeypatch.setattr(bundled_hook_problems_module, "schema_errors", None)
    assert bundled_hook_problems({"config": config}, "cray_atom") == []


def test_a_config_that_is_not_a_dict_is_named():
    assert bundled_hook_problems({"config": "post_timeout=5"}, "cray_atom") == [
        'cray_atom_config must be a dict of the cray_atom hook\'s config keys, not "post_timeout=5"']


@pytest.mark.parametrize("settings, hook, error", [
    ({"config": {}}, "atom", "'atom' is not a bundled hook; the bundled hooks (files/hooks) are %s" % ", ".join(HOOKS)),
    ({"hook_freq": 5}, "cray_atom", "unknown key(s) hook_freq; known keys: hook_name, hook_order, hook_alarm, hook_fail_action, config"),
    (["hook_name"], "cray_atom", "the input must be a dict"),
])
def test_a_wrong_call_fails_the_task_saying_why(settings, hook, error):
    with pytest.raises(AnsibleFilterError, match="hpc.pbs.bundled_hook_problems: .*%s" % error.replace("(", "\\(")
                       .replace(")", "\\)")):
        bundled_hook_problems(settings, hook)


def test_the_filter_is_registered():
    assert FilterModule().filters()["bundled_hook_problems"] is bundled_hook_problems


@pytest.mark.parametrize("hook", HOOKS)
def test_the_filter_reads_each_part_of_a_bundled_hook(hook):
    hooks_dir = REPO / "files" / "hooks"
    read = bundled_hook_filter.bundled_hook
    assert read(hook) == (hooks_dir / (hook + ".py")).read_text()
    assert read(hook, "config") == json.loads((hooks_dir / (hook + ".json")).read_text())
    assert read(hook, "schema") == json.loads((hooks_dir / (hook + ".schema.json")).read_text())
    assert Path(read(hook, "path")).resolve() == hooks_dir / (hook + ".py")
    assert bundled_hook_filter.FilterModule().filters()["bundled_hook"] is read


@pytest.mark.parametrize("hook, part, error", [
    ("atom", "body", "'atom' is not a bundled hook; the bundled hooks (files/hooks) are "),
    ("cray_atom", "defaults", "part must be one of body, config, schema, path, not 'defaults'"),
])
def test_the_reading_filter_refuses_another_hook_or_part(hook, part, error):
    with pytest.raises(AnsibleFilterError) as raised:
        bundled_hook_filter.bundled_hook(hook, part)
    assert str(raised.value).startswith("hpc.pbs.bundled_hook: " + error)
