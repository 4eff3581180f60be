"""The hpc.pbs.hook action plugin: config_schema is checked on the controller.

The module run and the slurp of config_src are faked at ``_execute_module`` (the boundary
to the managed host); the validation is the real one of module_utils/common/json_schema.
"""
import base64
import json
from unittest import mock

import pytest

from ansible_collections.hpc.pbs.plugins.action import hook as hook_action
from ansible_collections.hpc.pbs.plugins.filter.schema import json_schema_errors

SCHEMA = {"type": "object", "required": ["alpha"], "additionalProperties": False,
          "properties": {"alpha": {"type": "integer", "minimum": 1,
                                   "description": "how many"}}}


class FakeHost(object):
    """Records the modules run on the managed host; answers slurp from ``files``."""

    def __init__(self, files=None):
        self.files = files or {}
        self.calls = []

    def execute_module(self, module_name=None, module_args=None, task_vars=None, **kwargs):
        self.calls.append((module_name, dict(module_args)))
        if module_name == "ansible.builtin.slurp":
            if module_args["src"] not in self.files:
                return {"failed": True, "msg": "file not found"}
            return {"content": base64.b64encode(self.files[module_args["src"]]).decode()}
        return {"changed": True, "ran": module_name}

    def modules(self):
        return [name for name, _args in self.calls]


def run_action(args, host):
    task = mock.MagicMock(args=args, action="hpc.pbs.hook", resolved_action="hpc.pbs.hook",
                          async_val=0, check_mode=False)
    connection = mock.MagicMock(has_native_async=False)
    connection._shell.tmpdir = None
    action = hook_action.ActionModule(task, connection, mock.MagicMock(), mock.MagicMock(),
                                      mock.MagicMock(), mock.MagicMock())
    action._execute_module = host.execute_module
    action._early_needs_tmp_path = lambda: False
    action._remove_tmp_path = lambda path: None
    return action.run(task_vars={})


@pytest.mark.parametrize("config", [{"alpha": 0}, json.dumps({"alpha": 0}), {"beta": 1}])
def test_config_breaking_the_schema_fails_before_the_module_runs(config):
    host = FakeHost()
    result = run_action({"name": "h1", "config": config, "config_schema": SCHEMA}, host)
    assert result["failed"] is True and result["changed"] is False
    assert "does not satisfy config_schema" in result["msg"]
    assert "checked on the controller" in result["msg"]
    assert host.calls == []


def test_messages_are_those_of_the_json_schema_errors_filter():
    host = FakeHost()
    config = {"alpha": 0, "beta": 1}
    result = run_action({"name": "h1", "config": config, "config_schema": SCHEMA}, host)
    assert result["schema_errors"] == json_schema_errors(config, SCHEMA)
    assert "alpha: 0 is less than the minimum of 1 (how many)" in result["msg"]


def test_valid_config_runs_the_module_without_the_schema():
    host = FakeHost()
    result = run_action({"name": "h1", "config": {"alpha": 2}, "config_schema": SCHEMA}, host)
    assert result.get("failed") is not True and result["ran"] == "hpc.pbs.hook"
    assert host.calls == [("hpc.pbs.hook", {"name": "h1", "config": {"alpha": 2}})]


def test_config_src_is_read_from_the_managed_host_and_checked_here():
    host = FakeHost({"/etc/h1.json": b'{"alpha": -3}'})
    result = run_action({"name": "h1", "config_src": "/etc/h1.json", "config_schema": SCHEMA}, host)
    assert result["failed"] is True and "alpha" in result["msg"]
    assert host.modules() == ["ansible.builtin.slurp"]
    host = FakeHost({"/etc/h1.json": b'{"alpha": 3}'})
    result = run_action({"name": "h1", "config_src": "/etc/h1.json", "config_schema": SCHEMA}, host)
    assert host.modules() == ["ansible.builtin.slurp", "hpc.pbs.hook"]
    assert "config_schema" not in host.calls[-1][1]


@pytest.mark.parametrize("args", [
    {"name": "h1", "config": "{not json", "config_schema": SCHEMA},
    {"name": "h1", "config_src": "/nowhere.json", "config_schema": SCHEMA},
])
def test_config_that_is_not_json_or_unreadable_is_left_to_the_module(args):
    host = FakeHost()
    run_action(dict(args), host)
    assert host.calls[-1] == ("hpc.pbs.hook", args)   # config_schema kept: the module refuses


def test_an_invalid_schema_is_refused_on_the_controller():
    host = FakeHost()
    result = run_action({"name": "h1", "config": {"a": 1}, "config_schema": {"type": "nonsense"}}, host)
    assert result["failed"] is True and "invalid JSON Schema" in result["msg"] and host.calls == []


def test_without_config_schema_the_module_runs_unchanged():
    host = FakeHost()
    run_action({"name": "h1", "config": "x: y", "config_format": "raw"}, host)
    assert host.calls == [("hpc.pbs.hook", {"name": "h1", "config": "x: y", "config_format": "raw"})]
