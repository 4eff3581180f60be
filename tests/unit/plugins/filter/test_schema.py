"""Filter hpc.pbs.json_schema_errors, the reliable_job_startup config schema, and the role
reliable_job_startup's input checks (files are loaded as they ship; ansible-playbook runs
only on inputs that must fail before any module runs)."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.hpc.pbs.plugins.filter import schema as schema_filter
from ansible_collections.hpc.pbs.plugins.filter.schema import json_schema_errors

REPO = Path(__file__).resolve().parents[4]
HOOKS = REPO / "files" / "hooks"
ROLE = REPO / "roles" / "reliable_job_startup"
SCHEMA_TEXT = (HOOKS / "reliable_job_startup.schema.json").read_text()
SCHEMA = json.loads(SCHEMA_TEXT)
DEFAULT_CONFIG = json.loads((HOOKS / "reliable_job_startup.json").read_text())


def config(**changes):
    return dict(DEFAULT_CONFIG, **changes)


# ---------------------------------------------------------------- the filter
def test_filter_is_registered_under_its_name():
    assert schema_filter.FilterModule().filters()["json_schema_errors"] is json_schema_errors


@pytest.mark.parametrize("valid", [
    DEFAULT_CONFIG,
    {},
    config(increment="3"),
    config(increment="50%"),
    config(increment={"0": 1, "1": "4", "2": "50%"}),
    config(tolerate="all", queues=["workq", "long"], keep_select_resource="software",
           offline_failed_vnodes=False),
])
def test_valid_config_gives_no_errors(valid):
    assert json_schema_errors(valid, SCHEMA) == []
    assert json_schema_errors(valid, SCHEMA_TEXT) == []


def test_bad_percent_increment_gets_the_pattern_message():
    errors = json_schema_errors(config(increment="abc%"), SCHEMA)
    assert len(errors) == 1
    assert errors[0].startswith("increment: 'abc%' does not match '^0*[1-9][0-9]*%?$'")
    assert "not valid under any of the given schemas" not in errors[0]
    assert "a string \"N\" or \"N%\" with N >= 1" in errors[0]  # the property's description


def test_negative_increment_gets_the_minimum_message():
    assert json_schema_errors(config(increment=-1), SCHEMA)[0].startswith(
        "increment: -1 is less than the minimum of 1")


def test_unknown_key_names_the_key_and_the_allowed_ones():
    assert json_schema_errors(config(incremnet=2), SCHEMA) == [
        "top level: Additional properties are not allowed ('incremnet' was unexpected); "
        "allowed keys: increment, keep_select_resource, offline_failed_vnodes, queues, record_failed_moms, tolerate"]


@pytest.mark.parametrize("bad, expected", [
    (config(increment="0"), "increment: '0' does not match"),
    (config(increment=0), "increment: 0 is less than the minimum of 1"),
    (config(increment=True), "increment: True has the wrong type"),
    (config(increment=1.5), "increment: 1.5 has the wrong type"),
    (config(increment={"1": 0}), "increment.1: 0 is less than the minimum of 1"),
    (config(increment={"x": 1}), "increment: 'x' does not match '^[0-9]+$'"),
    (config(tolerate="none"), "tolerate: 'none' is not one of ['job_start', 'all']"),
    (config(keep_select_resource="select"), "keep_select_resource: 'select' is not allowed here"),
    (config(keep_select_resource="1site"), "keep_select_resource: '1site' does not match"),
    (config(queues=["workq", 3]), "queues[1]: 3 is not of type 'string'"),
    (config(offline_failed_vnodes="yes"), "offline_failed_vnodes: 'yes' is not of type 'boolean'"),
    (config(record_failed_moms="yes"), "record_failed_moms: 'yes' is not of type 'boolean'"),
    ([1], "top level: [1] is not of type 'object'"),
])
def test_other_bad_configs_get_readable_messages(bad, expected):
    errors = json_schema_errors(bad, SCHEMA)
    assert len(errors) == 1, errors
    assert errors[0].startswith(expected), errors


def test_several_errors_are_all_reported_sorted_by_path():
    errors = json_schema_errors(config(tolerate="x", increment=-1), SCHEMA)
    assert [e.split(":")[0] for e in errors] == ["increment", "tolerate"]


def test_schema_as_bad_json_text_raises():
    with pytest.raises(AnsibleFilterError, match="not valid JSON"):
        json_schema_errors({}, "{not json")


def test_invalid_schema_raises():
    with pytest.raises(AnsibleFilterError, match="invalid JSON Schema"):
        json_schema_errors({}, {"type": "no-such-type"})


def test_data_that_is_not_json_raises():
    with pytest.raises(AnsibleFilterError, match="cannot be represented as JSON"):
        json_schema_errors({"a": object()}, SCHEMA)


# ---------------------------------------------------------------- the schema and its default
def test_schema_is_draft_2020_12_and_closed():
    import jsonschema
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert SCHEMA["additionalProperties"] is False
    assert set(SCHEMA["properties"]) == set(DEFAULT_CONFIG)


def test_default_config_is_the_documented_one():
    assert DEFAULT_CONFIG == {"tolerate": "job_start", "increment": 1, "keep_select_resource": "site",
                              "queues": [], "offline_failed_vnodes": True, "record_failed_moms": True}


# ---------------------------------------------------------------- the role's files
ROLE_YAML = sorted(list(ROLE.rglob("*.yml")) + [REPO / "playbooks" / "site.yml"])


@pytest.mark.parametrize("path", ROLE_YAML, ids=lambda p: str(p.relative_to(REPO)))
def test_role_yaml_loads(path):
    assert yaml.safe_load(path.read_text()) is not None


def test_argument_specs_are_well_formed_and_match_the_defaults():
    specs = yaml.safe_load((ROLE / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    defaults = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
    assert set(specs) == {"main", "validate"}
    for entry in specs.values():
        assert entry["short_description"]
        options = entry["options"]
        assert set(options) == set(defaults)
        for name, option in options.items():
            assert name.startswith("reliable_job_startup_")
            assert option["type"] in ("str", "bool", "int", "dict", "path"), name
            assert option.get("description"), name
            if "default" in option:
                assert option["default"] == defaults[name], name
            elif name.endswith("_pbs_conf_file"):
                # null unless the site-wide hpc_pbs_conf_file is set
                assert defaults[name] == "{{ hpc_pbs_conf_file | default(none) }}", name
            else:
                assert defaults[name] is None, name
    tunables = specs["main"]["options"]
    assert tunables["reliable_job_startup_job_launch_delay"]["type"] == "int"
    assert tunables["reliable_job_startup_sister_join_job_alarm"]["type"] == "int"


def test_role_installs_one_hook_and_sets_tunables_with_reload_in_the_handler():
    server = yaml.safe_load((ROLE / "tasks" / "server.yml").read_text())
    hook_tasks = [t for t in server if "hpc.pbs.hook" in t]
    assert len(hook_tasks) == 1
    # The hook as vars/main.yml describes it (audit.yml plans the same dict).
    task = yaml.safe_load((ROLE / "vars" / "main.yml").read_text())["__reliable_job_startup_hook_task"]
    assert task["events"] == ["queuejob", "execjob_launch"] and task["type"] == "site"
    assert all(hook_tasks[0]["hpc.pbs.hook"][key] == "{{ __reliable_job_startup_hook_task.%s }}" % key
               for key in task), hook_tasks[0]
    mom = yaml.safe_load((ROLE / "tasks" / "mom.yml").read_text())
    assert len(mom) == 1 and mom[0]["hpc.pbs.mom_config"]["reload"] == "never"
    handlers = yaml.safe_load((ROLE / "handlers" / "main.yml").read_text())
    assert mom[0]["notify"] == handlers[0]["name"]
    assert handlers[0]["hpc.pbs.mom_config"]["reload"] == "always"
    assert handlers[0]["hpc.pbs.mom_config"]["options"] == mom[0]["hpc.pbs.mom_config"]["options"]


# ---------------------------------------------------------------- bad input stops the role
@pytest.fixture(scope="module")
def playbook_env(tmp_path_factory):
    """An ansible.cfg-free run of playbooks/site.yml on two local hosts (server + mom)."""
    base = tmp_path_factory.mktemp("rjs")
    collections = base / "collections" / "ansible_collections" / "hpc"
    collections.mkdir(parents=True)
    (collections / "pbs").symlink_to(REPO)
    inventory = base / "inventory.ini"
    inventory.write_text(
        "[pbs_server]\nsrv ansible_connection=local ansible_python_interpreter=%s\n"
        "[pbs_mom]\nmom1 ansible_connection=local ansible_python_interpreter=%s\n" % (sys.executable, sys.executable))
    cfg = base / "ansible.cfg"
    cfg.write_text("[defaults]\nretry_files_enabled = False\n")
    env = dict(os.environ, ANSIBLE_CONFIG=str(cfg), ANSIBLE_COLLECTIONS_PATH=str(base / "collections"),
               ANSIBLE_NOCOLOR="1", ANSIBLE_HOME=str(base / "home"))
    return base, inventory, env


def run_site_expecting_failure(playbook_env, inventory, extra_vars):
    """ansible-playbook site.yml on ``inventory`` with ``extra_vars``; its output, once it
    has failed. A pbs.conf that does not exist is passed: if a module ran after all, it
    could touch nothing."""
    base, _inventory, env = playbook_env
    extra_vars = dict(extra_vars, reliable_job_startup_pbs_conf_file=str(base / "absent" / "pbs.conf"))
    ansible_playbook = Path(sys.executable).parent / "ansible-playbook"
    proc = subprocess.run([str(ansible_playbook), "-i", str(inventory), str(REPO / "playbooks" / "site.yml"),
                           "-e", json.dumps(extra_vars)],
                          env=env, cwd=str(base), capture_output=True, text=True, timeout=300, check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    return output


@pytest.mark.parametrize("extra_vars, message", [
    ({"reliable_job_startup_config": {"increment": "abc%"}}, "increment: 'abc%' does not match"),
    ({"reliable_job_startup_config": {"increment": -1}}, "increment: -1 is less than the minimum of 1"),
    ({"reliable_job_startup_config": {"increment": 2, "bogus": 1}}, "('bogus' was unexpected)"),
    ({"reliable_job_startup_job_launch_delay": 0},
     "reliable_job_startup_job_launch_delay must be null or whole seconds >= 1"),
    ({"reliable_job_startup_sister_join_job_alarm": "abc"}, "unable to convert to int"),
    ({"reliable_job_startup_hook_name": "PBS_rjs"}, "starts with PBS, which is reserved"),
    ({"reliable_job_startup_hook_order": 1001}, "reliable_job_startup_hook_order must be 1-1000"),
], ids=["bad-increment", "negative-increment", "unknown-key", "zero-delay", "text-alarm", "pbs-name", "order"])
def test_bad_input_fails_before_any_module_runs(playbook_env, extra_vars, message):
    _base, inventory, _env = playbook_env
    output = run_site_expecting_failure(playbook_env, inventory, extra_vars)
    assert message in output, output
    assert "Install the reliable_job_startup hook with its config" not in output
    assert "Set $job_launch_delay" not in output
    assert "cannot read pbs.conf" not in output


@pytest.mark.parametrize("host_vars, message", [
    ("reliable_job_startup_job_launch_delay=0", "reliable_job_startup_job_launch_delay must be null or whole seconds >= 1"),
    ("reliable_job_startup_hook_order=1001", "reliable_job_startup_hook_order must be 1-1000"),
], ids=["zero-delay", "order"])
def test_a_bad_value_on_one_host_of_many_fails_before_any_module_runs(playbook_env, host_vars, message):
    """site.yml checks each distinct set of inputs once: a value only the last mom has (its
    inventory line) is still checked, and stops the run on that mom before anything runs."""
    base = playbook_env[0]
    local = "ansible_connection=local ansible_python_interpreter=%s" % sys.executable
    inventory = base / "inventory-one-bad-mom.ini"
    inventory.write_text("[pbs_server]\nsrv %s\n[pbs_mom]\nmom1 %s\nmom2 %s\nmom3 %s %s\n"
                         % (local, local, local, local, host_vars))
    output = run_site_expecting_failure(playbook_env, inventory, {})
    assert re.search(r"fatal: \[mom3\]: FAILED!.*" + re.escape(message), output), output
    assert re.search(r"^mom3\s*:.*failed=1", output, re.M), output
    assert "Install the reliable_job_startup hook with its config" not in output
    assert "Set $job_launch_delay" not in output


def test_missing_jsonschema_on_the_controller_raises_a_filter_error(monkeypatch):
    from ansible_collections.hpc.pbs.plugins.module_utils.common import json_schema
    monkeypatch.setattr(json_schema, "jsonschema", None)
    with pytest.raises(AnsibleFilterError, match="needs jsonschema on the controller"):
        json_schema_errors({"a": 1}, {"type": "object"})


def test_the_filter_is_the_shared_validation():
    from ansible_collections.hpc.pbs.plugins.module_utils.common.json_schema import schema_errors
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1,
                                                     "description": "count"}}}
    assert json_schema_errors({"n": 0}, schema) == schema_errors({"n": 0}, schema) == [
        "n: 0 is less than the minimum of 1 (count)"]
