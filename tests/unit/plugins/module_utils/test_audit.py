"""module_utils/cluster/audit.py, the audit's rules: the plans' changes (carried as data by
qmgr_plan.object_diffs and hook_plan.hook_diffs) into drift rows, a failed plan into one
row, a skipped plan into none, hook bodies and copies by sha256, a hook config as text, the
moms' tunables by mom_config's grammar (the last line wins), the effective timeouts."""
import hashlib

import pytest

from ansible_collections.hpc.pbs.plugins.module_utils.cluster.audit import (
    AuditInputError, audited_hooks, mom_rows, plan_rows, server_rows, timeout_rows)
from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hook_plan import hook_diffs
from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hooks import NEW_SITE_HOOK
from ansible_collections.hpc.pbs.plugins.module_utils.server.qmgr_plan import object_diffs

SERVER = "pbs-server"
HOOK_ATTRS = dict(NEW_SITE_HOOK, event="queuejob,execjob_launch", enabled="true")


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def hook_plan(before, after, files=(), name="rjs"):
    return {"object": "hook " + name, "failed": False, "changed": True,
            "diff": hook_diffs(name, before, after, files)}


def sched_plan(before, after):
    return {"object": "sched default", "failed": False, "changed": before != after,
            "diff": object_diffs("sched", ["default"], {"default": before}, {"default": after})}


def row(obj, item, desired, actual, host=SERVER):
    return {"host": host, "object": obj, "item": item, "desired": desired, "actual": actual}


# -- the diffs carry their changes as data --------------------------------------------------

def test_object_diff_carries_each_attribute_change_and_keeps_its_text():
    diff = object_diffs("sched", ["default"], {"default": {"job_run_wait": "none", "a": "1"}},
                        {"default": {"job_run_wait": "runjob_hook", "a": "1", "b": "x"}})
    assert diff["before"] == "job_run_wait = none\na = 1\n"
    assert diff["after"] == "job_run_wait = runjob_hook\na = 1\nb = x\n"
    assert diff["changes"] == [
        {"object": "sched default", "item": "job_run_wait", "before": "none", "after": "runjob_hook"},
        {"object": "sched default", "item": "b", "before": None, "after": "x"}]


def test_hook_diff_carries_attribute_and_file_changes_in_its_first_entry():
    body, old_body = b"import pbs\n", b"import pbs  # old\n"
    diffs = hook_diffs("rjs", dict(HOOK_ATTRS, order="5"), dict(HOOK_ATTRS, order="1"),
                       (("PY", body, old_body), ("CF", b'{"a": 1}\n', b"")))
    assert [d["after_header"] for d in diffs] == ["hook rjs attributes", "rjs.PY", "rjs.CF"]
    assert all("changes" not in d for d in diffs[1:])  # the file entries stay as they were
    assert diffs[0]["changes"] == [
        {"object": "hook rjs", "item": "order", "before": "5", "after": "1"},
        {"object": "hook rjs", "item": "body", "file": "rjs.PY",
         "before_sha256": sha256(old_body), "after_sha256": sha256(body)},
        {"object": "hook rjs", "item": "config", "file": "rjs.CF", "before_sha256": None,
         "after_sha256": sha256(b'{"a": 1}\n'), "before": None, "after": '{"a": 1}\n'}]


def test_a_builtin_hook_is_named_pbshook_in_its_changes():
    diffs = hook_diffs("PBS_cray_atom", {"type": "pbs", "enabled": "false"},
                       {"type": "pbs", "enabled": "true"}, ())
    assert diffs[0]["changes"] == [{"object": "pbshook PBS_cray_atom", "item": "enabled",
                                    "before": "false", "after": "true"}]


# -- plans into rows ------------------------------------------------------------------------

def test_attribute_drift_rows_show_unset_for_a_missing_value():
    rows = plan_rows(SERVER, "sched", sched_plan({"job_run_wait": "none", "gone": "1"},
                                                 {"job_run_wait": "runjob_hook"}))
    assert rows == [row("sched", "job_run_wait", "runjob_hook", "none"),
                    row("sched", "gone", "(unset)", "1")]


def test_a_plan_that_changes_nothing_gives_no_row():
    assert plan_rows(SERVER, "sched", sched_plan({"job_run_wait": "none"}, {"job_run_wait": "none"})) == []


def test_a_failed_plan_is_one_row_with_its_message_on_one_line_cut_at_200():
    message = "order 0 is outside\n the acceptable   range " + "x" * 300
    rows = plan_rows(SERVER, "hook rjs", {"failed": True, "msg": message})
    assert rows == [row("hook rjs", "(plan)", "(could not plan)",
                        ("order 0 is outside the acceptable range " + "x" * 300)[:200])]
    assert plan_rows(SERVER, "sched", {"failed": True}) == [row("sched", "(plan)", "(could not plan)", "failed")]


@pytest.mark.parametrize("result", [None, {"skipped": True, "changed": False}])
def test_a_plan_that_did_not_run_gives_no_row(result):
    assert plan_rows(SERVER, "server", result) == []


def test_hook_body_rows_by_sha256_and_missing_when_the_server_has_none():
    body = b"import pbs\npbs.event().accept()\n"
    plan = hook_plan(HOOK_ATTRS, HOOK_ATTRS, (("PY", body, b"import pbs\n"),))
    assert plan_rows(SERVER, "hook rjs", plan) == [
        row("hook rjs", "body", "sha256 " + sha256(body), "sha256 " + sha256(b"import pbs\n"))]
    plan = hook_plan(HOOK_ATTRS, HOOK_ATTRS, (("PY", body, b""),))
    assert plan_rows(SERVER, "hook rjs", plan) == [row("hook rjs", "body", "sha256 " + sha256(body), "(missing)")]


def test_hook_config_rows_show_the_texts_on_one_line():
    plan = hook_plan(HOOK_ATTRS, HOOK_ATTRS, (("CF", b'{\n  "increment": 2\n}\n', b'{"increment": 3}\n'),))
    assert plan_rows(SERVER, "hook rjs", plan) == [
        row("hook rjs", "config", '{ "increment": 2 }', '{"increment": 3}')]
    plan = hook_plan(HOOK_ATTRS, HOOK_ATTRS, (("CF", b'{"increment": 2}\n', None),))
    assert plan_rows(SERVER, "hook rjs", plan) == [row("hook rjs", "config", '{"increment": 2}', "(missing)")]


def test_a_new_hook_is_every_attribute_then_its_files():
    body = b"import pbs\n"
    after = dict(NEW_SITE_HOOK, event="queuejob")
    plan = hook_plan({}, after, (("PY", body, b""),))
    rows = plan_rows(SERVER, "hook rjs", plan)
    assert rows[:-1] == [row("hook rjs", key, value or "(unset)", "(unset)") for key, value in after.items()]
    assert rows[-1] == row("hook rjs", "body", "sha256 " + sha256(body), "(missing)")


def test_a_plan_without_changes_is_refused_rather_than_read_as_no_drift():
    text_only = {"failed": False, "diff": {"before": "a = 1\n", "after": "a = 2\n"}}
    with pytest.raises(AuditInputError, match="carries no changes"):
        plan_rows(SERVER, "sched", text_only)
    with pytest.raises(AuditInputError, match="has no diff"):
        plan_rows(SERVER, "sched", {"failed": False, "changed": True})


def test_server_rows_in_plan_order_each_once_with_tolerate_and_role_plans():
    info = {"hook_plans": [hook_plan(dict(HOOK_ATTRS, order="5"), dict(HOOK_ATTRS, order="1"))],
            "object_plans": [sched_plan({"job_run_wait": "none"}, {"job_run_wait": "runjob_hook"}),
                             sched_plan({"job_run_wait": "none"}, {"job_run_wait": "runjob_hook"})]}
    tolerate = {"changed": True, "previous": "-r n -W tolerate_node_failures=none",
                "default_qsub_arguments": "-r n -W tolerate_node_failures=job_start", "diff": {}}
    cray = {"object": "pbshook PBS_cray_atom", "result": {"failed": True, "msg": "no such hook"}}
    cgroup = {"object": "hook cgroup_resize", "result": hook_plan(dict(HOOK_ATTRS, alarm="77"), HOOK_ATTRS,
                                                                  name="cgroup_resize")}
    assert server_rows(SERVER, info, tolerate, [cray, None, cgroup]) == [
        row("hook rjs", "order", "1", "5"),
        row("server", "default_qsub_arguments", "-r n -W tolerate_node_failures=job_start",
            "-r n -W tolerate_node_failures=none"),
        row("sched", "job_run_wait", "runjob_hook", "none"),
        row("pbshook PBS_cray_atom", "(plan)", "(could not plan)", "no such hook"),
        row("hook cgroup_resize", "alarm", "30", "77")]


def test_tolerate_unchanged_skipped_or_failed():
    same = {"changed": False, "previous": "-r n", "default_qsub_arguments": "-r n"}
    assert server_rows(SERVER, {}, same) == []
    assert server_rows(SERVER, {}, {"skipped": True}) == []
    assert server_rows(SERVER, None, {"failed": True, "msg": "cannot parse"}) == [
        row("server", "(plan)", "(could not plan)", "cannot parse")]
    unset = {"changed": True, "previous": "", "default_qsub_arguments": "-W tolerate_node_failures=all"}
    assert server_rows(SERVER, {}, unset) == [
        row("server", "default_qsub_arguments", "-W tolerate_node_failures=all", "(unset)")]


def test_audited_hooks_are_those_the_server_plans():
    info = {"hook_plans": [{"object": "hook rjs"}]}
    assert audited_hooks(info, [{"object": "pbshook PBS_cray_atom", "result": {}}, None]) == ["rjs", "PBS_cray_atom"]
    assert audited_hooks({}, []) == []
    with pytest.raises(AuditInputError, match="role_plans"):
        audited_hooks(info, ["hook x"])


# -- the moms -------------------------------------------------------------------------------

EFFECTIVE = {"job_launch_delay": {"value": 16, "default": 30},
             "sister_join_job_alarm": {"value": 90, "default": 90}}


def mom_read(before, after_options, hook_files=None):
    return {"failed": False, "mom": EFFECTIVE, "health": {"hook_files": {"mom": hook_files or {}}},
            "mom_plan": {"before": before, "after": "(not read)", "options": after_options}}


def test_mom_option_rows_the_last_line_wins():
    before = "$clienthost vm\n$job_launch_delay 7\n$job_launch_delay 16\n$sister_join_job_alarm 9\n"
    read = mom_read(before, {"clienthost": "vm", "job_launch_delay": ["16", "16"], "sister_join_job_alarm": "16"})
    assert mom_rows("mom1", read, [], {}) == [
        row("mom_priv/config", "$sister_join_job_alarm", "16", "9", host="mom1")]


def test_mom_option_rows_a_missing_line_shows_the_derived_value():
    read = mom_read("  $job_launch_delay\t7  \n", {"job_launch_delay": "16", "sister_join_job_alarm": "16"})
    assert mom_rows("mom1", read, [], {}) == [
        row("mom_priv/config", "$job_launch_delay", "16", "7", host="mom1"),
        row("mom_priv/config", "$sister_join_job_alarm", "16", "(no line: default 90)", host="mom1")]
    read = mom_read("$job_launch_delay 16\n", {})
    assert mom_rows("mom1", read, [], {}) == [
        row("mom_priv/config", "$job_launch_delay", "(no line: default 30)", "16", host="mom1")]


def test_hook_copy_rows_by_sha256_for_the_audited_hooks_only():
    server = {"rjs.HK": "a" * 64, "rjs.PY": "b" * 64, "rjs.CF": "c" * 64, "other.PY": "d" * 64}
    mom = {"rjs.HK": "e" * 64, "rjs.PY": "b" * 64, "rjs.XX.CF": "f" * 64, "other.PY": "0" * 64,
           "rjs.OLD": "1" * 64}
    rows = mom_rows("mom1", {"failed": False, "health": {"hook_files": {"mom": mom}}}, ["rjs"], server)
    assert rows == [
        row("hook rjs", "copy .HK", "sha256 " + "a" * 64, "sha256 " + "e" * 64, host="mom1"),
        row("hook rjs", "copy .CF", "sha256 " + "c" * 64, "(missing)", host="mom1")]
    del server["rjs.CF"]
    assert mom_rows("mom1", {"health": {"hook_files": {"mom": dict(mom, **{"rjs.CF": "2" * 64})}}}, ["rjs"],
                    server)[1:] == [row("hook rjs", "copy .CF", "(not on the server)", "sha256 " + "2" * 64, host="mom1")]


@pytest.mark.parametrize("read", [None, {"failed": True, "msg": "unreachable"}, {"skipped": True}])
def test_a_mom_not_read_gives_no_row(read):
    assert mom_rows("mom1", read, ["rjs"], {"rjs.PY": "b" * 64}) == []
    assert timeout_rows("mom1", read) == []


def test_timeout_rows_sister_join_first():
    entry = {"value": 16, "source": "mom_config", "line": "$sister_join_job_alarm 16", "hooks": [],
             "after_sighup": 16, "why": "mom_priv/config line $sister_join_job_alarm 16", "default": 30}
    launch = {"value": 30, "source": "default", "default": 30}
    rows = timeout_rows("mom1", {"mom": {"job_launch_delay": launch, "sister_join_job_alarm": entry}})
    assert rows == [
        {"host": "mom1", "option": "sister_join_job_alarm", "seconds": 16, "source": "mom_config",
         "line": "$sister_join_job_alarm 16", "hooks": [], "after_sighup": 16,
         "why": "mom_priv/config line $sister_join_job_alarm 16"},
        {"host": "mom1", "option": "job_launch_delay", "seconds": 30, "source": "default", "line": None,
         "hooks": [], "after_sighup": None, "why": "default"}]
    assert timeout_rows("mom1", {"mom": None}) == []
