"""Filters hpc.pbs.audit_drift_rows, hpc.pbs.audit_mom_rows and hpc.pbs.audit_timeout_rows:
what playbooks/audit.yml calls, fed as its plays feed them (plans as hpc.pbs.cluster_info,
hpc.pbs.tolerate_node_failures and the roles return them), and their refusals of other
input."""
import hashlib

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.hpc.pbs.plugins.filter.audit_drift_rows import FilterModule as DriftFilters
from ansible_collections.hpc.pbs.plugins.filter.audit_mom_rows import FilterModule as MomFilters
from ansible_collections.hpc.pbs.plugins.filter.audit_timeout_rows import FilterModule as TimeoutFilters
from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hook_plan import hook_diffs
from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hooks import NEW_SITE_HOOK
from ansible_collections.hpc.pbs.plugins.module_utils.server.qmgr_plan import object_diffs

audit_drift_rows = DriftFilters().filters()["audit_drift_rows"]
audit_mom_rows = MomFilters().filters()["audit_mom_rows"]
audit_timeout_rows = TimeoutFilters().filters()["audit_timeout_rows"]

BODY = b"import pbs\npbs.event().accept()\n"
CONFIG = b'{\n  "increment": 2\n}\n'
HOOK = dict(NEW_SITE_HOOK, event="queuejob,execjob_launch")
SERVER_READ = {
    "changed": False,
    "health": {"hook_files": {"server": {"rjs.HK": "1" * 64, "rjs.PY": "2" * 64, "rjs.CF": "3" * 64,
                                         "cgroup_resize.HK": "4" * 64}}},
    "hook_plans": [{"object": "hook rjs", "failed": False, "changed": True,
                    "diff": hook_diffs("rjs", dict(HOOK, order="5"), HOOK,
                                       (("PY", BODY, b"import pbs\n"), ("CF", CONFIG, b'{"increment": 3}\n')))}],
    "object_plans": [{"object": "sched default", "failed": False, "changed": True,
                      "diff": object_diffs("sched", ["default"], {"default": {"job_run_wait": "none"}},
                                           {"default": {"job_run_wait": "runjob_hook"}})},
                     {"object": "server", "failed": True, "msg": "attribute  bogus:\n unknown"}],
}
CGROUP_PLAN = {"object": "hook cgroup_resize", "result": {"skipped": True, "changed": False}}


def test_the_server_rows_every_rule():
    rows = audit_drift_rows(SERVER_READ, "pbs-server", tolerate={"skipped": True},
                            role_plans=[None, CGROUP_PLAN])
    assert [(r["object"], r["item"], r["desired"], r["actual"]) for r in rows] == [
        ("hook rjs", "order", "1", "5"),
        ("hook rjs", "body", "sha256 " + hashlib.sha256(BODY).hexdigest(),
         "sha256 " + hashlib.sha256(b"import pbs\n").hexdigest()),
        ("hook rjs", "config", '{ "increment": 2 }', '{"increment": 3}'),
        ("sched", "job_run_wait", "runjob_hook", "none"),
        ("server", "(plan)", "(could not plan)", "attribute bogus: unknown"),
    ]
    assert {r["host"] for r in rows} == {"pbs-server"}


def test_the_tolerate_plan_is_a_server_row():
    tolerate = {"changed": True, "previous": "-r n", "default_qsub_arguments": "-r n -W tolerate_node_failures=all",
                "value": "all", "commands": [], "diff": {"before": "", "after": ""}}
    assert audit_drift_rows({}, "pbs-server", tolerate) == [
        {"host": "pbs-server", "object": "server", "item": "default_qsub_arguments",
         "desired": "-r n -W tolerate_node_failures=all", "actual": "-r n"}]


def test_the_server_rows_without_a_read_or_plans():
    assert audit_drift_rows(None, "pbs-server") == []
    assert audit_drift_rows({"changed": False}, "pbs-server", None, []) == []


@pytest.mark.parametrize("args, message", [
    (("not a read", "pbs-server"), "the input must be hpc.pbs.cluster_info's result"),
    ((SERVER_READ, ""), "host must be the server's inventory name"),
    ((SERVER_READ, "pbs-server", "job_start"), "tolerate must be"),
    ((SERVER_READ, "pbs-server", None, {"object": "hook x"}), "role_plans must be a list"),
    ((SERVER_READ, "pbs-server", None, [{"object": "hook x"}]), "expected a role's audit plan"),
    (({"hook_plans": [{"object": "hook x", "failed": False, "diff": {"before": "", "after": "a = 1\n"}}]},
      "pbs-server"), "the plan's diff carries no changes"),
])
def test_drift_rows_refuse_other_input(args, message):
    with pytest.raises(AnsibleFilterError, match=message):
        audit_drift_rows(*args)


MOM_EFFECTIVE = {"job_launch_delay": {"value": 16, "default": 30, "source": "mom_config",
                                      "line": "$job_launch_delay 16", "hooks": [], "after_sighup": 16,
                                      "why": "mom_priv/config line $job_launch_delay 16"},
                 "sister_join_job_alarm": {"value": 30, "default": 30, "source": "default", "line": None,
                                           "hooks": [], "after_sighup": 30,
                                           "why": "no config line and no enabled execjob_begin hook: 30 s"}}


def mom_read(before, options, copies):
    return {"changed": False, "mom": MOM_EFFECTIVE, "health": {"hook_files": {"mom": copies}},
            "mom_plan": {"before": before, "after": "", "options": options}}


def test_the_mom_rows_tunables_then_copies_mom_after_mom():
    reads = [
        mom_read("$job_launch_delay 16\n", {"job_launch_delay": "16", "sister_join_job_alarm": "16"},
                 {"rjs.HK": "1" * 64, "rjs.PY": "9" * 64, "rjs.CF": "3" * 64, "cgroup_resize.HK": "0" * 64}),
        {"failed": True, "msg": "unreachable"},
        mom_read("$job_launch_delay 7\n$sister_join_job_alarm 16\n",
                 {"job_launch_delay": "16", "sister_join_job_alarm": "16"},
                 {"rjs.HK": "1" * 64, "rjs.PY": "2" * 64}),
    ]
    role_plans = [None, {"object": "hook cgroup_resize", "result": {"changed": False}}]
    rows = audit_mom_rows(["mom1", "mom2", "mom3"], reads, SERVER_READ, role_plans)
    assert [(r["host"], r["object"], r["item"], r["desired"], r["actual"]) for r in rows] == [
        ("mom1", "mom_priv/config", "$sister_join_job_alarm", "16", "(no line: default 30)"),
        ("mom1", "hook rjs", "copy .PY", "sha256 " + "2" * 64, "sha256 " + "9" * 64),
        ("mom1", "hook cgroup_resize", "copy .HK", "sha256 " + "4" * 64, "sha256 " + "0" * 64),
        ("mom3", "mom_priv/config", "$job_launch_delay", "16", "7"),
        ("mom3", "hook rjs", "copy .CF", "sha256 " + "3" * 64, "(missing)"),
        ("mom3", "hook cgroup_resize", "copy .HK", "sha256 " + "4" * 64, "(missing)"),
    ]
    # No hook audited (the server part not run): no copy rows.
    assert audit_mom_rows(["mom1"], reads[:1], {"changed": False}) == [rows[0]]
    assert audit_mom_rows(["mom1"], reads[:1], None) == [rows[0]]


@pytest.mark.parametrize("args, message", [
    (("mom1", [None], None), "the input must be the list of the moms' inventory names"),
    ((["mom1", "mom2"], [None], None), "one per mom of the input"),
    ((["mom1"], [None], "pbs-server"), "server_read must be"),
    ((["mom1"], [None], None, "hook x"), "role_plans must be a list"),
])
def test_mom_rows_refuse_other_input(args, message):
    with pytest.raises(AnsibleFilterError, match=message):
        audit_mom_rows(*args)


def test_the_timeout_rows():
    reads = [mom_read("", {}, {}), None]
    rows = audit_timeout_rows(["mom1", "mom2"], reads)
    assert [(r["host"], r["option"], r["seconds"], r["source"], r["why"]) for r in rows] == [
        ("mom1", "sister_join_job_alarm", 30, "default", "no config line and no enabled execjob_begin hook: 30 s"),
        ("mom1", "job_launch_delay", 16, "mom_config", "mom_priv/config line $job_launch_delay 16")]
    with pytest.raises(AnsibleFilterError, match="one per mom of the input"):
        audit_timeout_rows(["mom1"], [])
