"""cluster_info's hook plans (module_utils/server/server_plans.hook_plan) refuse the bodies
hpc.pbs.hook refuses before anything runs (module_utils/hooks/hooks.body_problem: over the size
limit, not UTF-8): a failed plan with the module's own reason, no qmgr call, no preflight."""
import pytest

from ansible_collections.hpc.pbs.plugins.module_utils.hooks import hooks

from ansible_collections.hpc.pbs.plugins.module_utils.server import server_plans
from ansible_collections.hpc.pbs.plugins.modules import hook as hook_module
from hpc_pbs_module_fakes import run_module

RJS = dict(name="rjs", events=["queuejob", "execjob_launch"], enabled=True, order=1, alarm=30)
LATIN1 = "import pbs\n# caf\udce9\n"   # the byte 0xe9, as Ansible passes undecodable bytes


class RecordingQmgr(object):
    """Fails the test if the plan reads the server."""

    def list_object(self, kind, name):
        raise AssertionError("the server was read for %s %s" % (kind, name))


class Module(object):
    tmpdir = "/nonexistent"

    def run_command(self, args, **kwargs):
        raise AssertionError("a command was run: %r" % (args,))


def plan_params(**wanted):
    params = {name: None for name in server_plans.HOOK_PLAN_OPTIONS}
    params.update(type="site", config_format="json")
    params.update(wanted)
    return params


@pytest.fixture
def small_limit(monkeypatch):
    monkeypatch.setattr(hooks, "HOOK_BODY_MAX_BYTES", 64)


@pytest.mark.parametrize("body, expected", [
    (LATIN1, "body: the hook body is not UTF-8 text (byte 0xe9 at offset 16, line 2)"),
    ("x = 1\n" * 20, "body: the hook body is 120 bytes, over the 64 bytes"),
], ids=["not-utf8", "too-big"])
def test_a_body_the_hook_module_refuses_is_a_failed_plan_made_without_the_server(small_limit, body, expected):
    plan = server_plans.hook_plan(Module(), {}, RecordingQmgr(), plan_params(**dict(RJS, body=body)))
    assert plan["failed"] is True and plan["changed"] is False and plan["commands"] == [], plan
    assert plan["msg"].startswith(expected) and "hook rjs would be neither created nor touched" in plan["msg"]
    assert "preflight" not in plan


def test_the_plan_gives_the_hook_modules_reason(small_limit, pbs_install, fake_qmgr):
    pbs_install.write_conf("PBS_SERVER=vm\n")
    fake = fake_qmgr()
    body = "x = 1\n" * 20
    code, result = run_module(hook_module.main, dict(RJS, body=body, pbs_conf_file=pbs_install.conf),
                              check_mode=True)
    assert code == 1 and not fake.writes(), result
    assert result["msg"].startswith("body: the hook body is 120 bytes"), result
    plan = server_plans.hook_plan(Module(), {}, RecordingQmgr(), plan_params(**dict(RJS, body=body)))
    reason = result["msg"].split(". Nothing was changed")[0]
    assert plan["msg"].startswith(reason + ". ")


def test_a_utf8_body_under_the_limit_is_planned_as_before(small_limit):
    class Listed(RecordingQmgr):
        def list_object(self, kind, name):
            raise server_plans.QmgrError("listed %s %s" % (kind, name), None, None, "", "")
    plan = server_plans.hook_plan(Module(), {}, Listed(), plan_params(**dict(RJS, body="x = 1\n")))
    assert plan["msg"].startswith("listed hook rjs"), plan   # got past the body checks to the server
