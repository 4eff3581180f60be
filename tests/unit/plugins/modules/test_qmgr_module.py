"""hpc.pbs.qmgr with qmgr faked at the process boundary (run_command)."""
import pytest

from ansible_collections.hpc.pbs.plugins.modules import qmgr as qmgr_module
from hpc_pbs_module_fakes import render_listing, run_module

SERVER = {"server_state": "Active", "server_host": "vm", "scheduling": "True",
          "default_queue": "workq", "scheduler_iteration": "600",
          "resources_default.ncpus": "1"}
SCHED = {"sched_host": "vm", "throughput_mode": "True", "job_run_wait": "runjob_hook",
         "preempt_prio": "express_queue, normal_jobs"}


@pytest.fixture
def pbs(fake_qmgr, tmp_path):
    fake = fake_qmgr()
    fake.add("server", "vm", SERVER)
    fake.add("sched", "default", SCHED)
    fake.tmp = tmp_path
    return fake


def run(pbs, check_mode=False, diff=False, **args):
    args.setdefault("pbs_conf_file", pbs.conf)
    return run_module(qmgr_module.main, args, check_mode=check_mode, diff=diff, tmpdir=pbs.tmp)


def test_set_sched_attribute_one_read_one_write_and_idempotent(pbs):
    code, result = run(pbs, object_type="sched", attributes={"job_run_wait": "none"}, diff=True)
    assert code == 0, result
    assert result["changed"] is True
    assert result["commands"] == ["set sched default job_run_wait = none", "list sched default"]
    assert len(pbs.reads()) == 1 and len(pbs.writes()) == 1
    assert pbs.reads()[0][0][1:] == ["-c", "list sched default"]
    assert pbs.writes()[0][0][1:] == ["-a"]
    assert result["attributes"]["job_run_wait"] == "none"
    assert "job_run_wait = runjob_hook" in result["diff"]["before"]
    assert "job_run_wait = none" in result["diff"]["after"]

    pbs.calls = []
    code, result = run(pbs, object_type="sched", attributes={"job_run_wait": "none"})
    assert result["changed"] is False and result["commands"] == []
    assert len(pbs.calls) == 1 and not pbs.writes()


def test_check_mode_writes_nothing(pbs):
    code, result = run(pbs, check_mode=True, object_type="server",
                       attributes={"comment": "hello world", "scheduler_iteration": 300})
    assert code == 0 and result["changed"] is True
    assert result["commands"][:2] == ['set server comment = "hello world"',
                                      "set server scheduler_iteration = 300"]
    assert not pbs.writes()
    assert "comment" not in pbs.objects[("server", "vm")]
    assert result["attributes"]["comment"] == "hello world"


def test_values_are_quoted_and_round_trip(pbs):
    values = {"comment": 'say "hi", ok', "default_qsub_arguments": "-W tolerate_node_failures=job_start"}
    code, result = run(pbs, object_type="server", attributes=values)
    assert code == 0, result
    assert result["commands"][:2] == ["set server comment = 'say \"hi\", ok'",
                                      'set server default_qsub_arguments = "-W tolerate_node_failures=job_start"']
    for key, value in values.items():
        assert pbs.objects[("server", "vm")][key] == value
        assert result["attributes"][key] == value
    code, result = run(pbs, object_type="server", attributes=values)
    assert result["changed"] is False


def test_value_with_both_quotes_fails_before_qmgr_writes(pbs):
    code, result = run(pbs, object_type="server", attributes={"comment": "it's \"x\""})
    assert code == 1 and "both" in result["msg"]
    assert not pbs.writes()


def test_bool_and_list_comparisons(pbs):
    code, result = run(pbs, object_type="server", attributes={"scheduling": True})
    assert result["changed"] is False
    code, result = run(pbs, object_type="sched",
                       attributes={"preempt_prio": ["normal_jobs", "express_queue"]})
    assert result["changed"] is False
    code, result = run(pbs, object_type="sched", attributes={"preempt_prio": "express_queue,normal_jobs"})
    assert result["changed"] is True


def test_list_modes_append_and_remove(pbs):
    code, result = run(pbs, object_type="server", list_mode="append",
                       attributes={"managers": ["pbsuser@*", "root@vm"]})
    assert result["commands"][:2] == ["set server managers += pbsuser@*", "set server managers += root@vm"]
    assert pbs.objects[("server", "vm")]["managers"] == "pbsuser@*,root@vm"
    code, result = run(pbs, object_type="server", list_mode="append", attributes={"managers": "root@vm"})
    assert result["changed"] is False
    code, result = run(pbs, object_type="server", list_mode="remove", attributes={"managers": "pbsuser@*"})
    assert result["commands"][0] == "set server managers -= pbsuser@*"
    assert pbs.objects[("server", "vm")]["managers"] == "root@vm"
    code, result = run(pbs, object_type="server", list_mode="remove", attributes={"managers": "pbsuser@*"})
    assert result["changed"] is False


def test_state_absent_unsets_only_present_attributes(pbs):
    pbs.objects[("server", "vm")]["comment"] = "maintenance"
    code, result = run(pbs, object_type="server", state="absent",
                       attributes={"max_run": None, "comment": None})
    assert result["commands"] == ["unset server comment", "list server"]
    assert "comment" not in pbs.objects[("server", "vm")]
    assert "comment" not in result["attributes"]
    code, result = run(pbs, object_type="server", state="absent", attributes={"comment": None})
    assert result["changed"] is False


def test_unset_of_an_attribute_listed_at_its_default_is_idempotent(pbs):
    """Real PBS lists scheduler_iteration = 600 right after unsetting it: that counts as
    unset, so the second run changes nothing."""
    pbs.objects[("server", "vm")]["scheduler_iteration"] = "300"
    code, result = run(pbs, object_type="server", state="absent",
                       attributes={"scheduler_iteration": None})
    assert code == 0 and result["changed"] is True
    assert result["commands"] == ["unset server scheduler_iteration", "list server"]
    assert pbs.objects[("server", "vm")]["scheduler_iteration"] == "600"
    code, result = run(pbs, object_type="server", state="absent",
                       attributes={"scheduler_iteration": None})
    assert result["changed"] is False and result["commands"] == []
    assert not pbs.writes()[1:]


def test_unset_prediction_in_check_mode_shows_the_listed_default(pbs):
    pbs.objects[("server", "vm")]["scheduler_iteration"] = "300"
    code, result = run(pbs, check_mode=True, object_type="server",
                       attributes={"scheduler_iteration": None})
    assert result["changed"] is True
    assert result["attributes"]["scheduler_iteration"] == "600"
    assert not pbs.writes()


def test_unknown_attribute_fails_with_qmgr_text_and_rc(pbs):
    code, result = run(pbs, object_type="server", attributes={"no_such_attr": 1})
    assert code == 1
    assert "qmgr: Syntax error" in result["stderr"] and "qmgr: Syntax error" in result["msg"]
    assert result["rc"] == 1  # qmgr -a: syntax error aborts with 1
    assert result["cmd"][1:] == ["-a"]
    assert result["commands"][0] == "set server no_such_attr = 1"


def test_illegal_value_fails_with_server_error_naming_object_attribute_and_value(pbs):
    """An attribute this collection does not type goes to qmgr; its refusal comes back
    naming what was refused, not only qmgr's ``qmgr obj= svr=default: ...``."""
    code, result = run(pbs, object_type="server", attributes={"rpp_retry": "abc"})
    assert code == 1
    assert "Illegal attribute or resource value" in result["msg"]
    assert "server attribute rpp_retry, value 'abc'" in result["msg"]
    assert "set server rpp_retry = abc" in result["msg"]
    assert result["rejected"] == {"command": "set server rpp_retry = abc",
                                  "object_type": "server", "name": None,
                                  "attribute": "rpp_retry", "value": "abc"}


def test_typed_value_is_refused_before_qmgr_runs(pbs):
    code, result = run(pbs, object_type="server", attributes={"scheduler_iteration": "abc"})
    assert code == 1 and not pbs.calls
    assert "server attribute scheduler_iteration" in result["msg"]
    assert "accepted: a whole number >= 1" in result["msg"]


def test_missing_object_fails_without_write(pbs):
    code, result = run(pbs, object_type="queue", name="nosuchq", attributes={"enabled": True})
    assert code == 1 and "does not exist" in result["msg"]
    assert not pbs.writes()


def test_fake_renders_wrapped_lists_exactly_like_the_transcript():
    import os
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(here, "fixtures", "qmgr_list", "list_02.txt")) as handle:
        expected = handle.read()
    attrs = {"type": "site", "enabled": "false",
             "event": "execjob_begin,execjob_epilogue,execjob_end,execjob_launch,execjob_attach,"
                      "execjob_resize,execjob_abort,execjob_postsuspend,execjob_preresume,"
                      "exechost_periodic,exechost_startup",
             "user": "pbsadmin", "alarm": "90", "freq": "120", "order": "100",
             "debug": "false", "fail_action": "offline_vnodes"}
    assert render_listing("hook", "pbs_cgroups", attrs) == expected


def test_half_applied_batch_reports_the_exact_split(pbs):
    code, result = run(pbs, object_type="server",
                       attributes={"comment": "a, b", "rpp_retry": "abc",
                                   "mail_from": "adm"})
    assert code == 1
    assert result["applied"] == ['set server comment = "a, b"']
    assert result["not_applied"] == ["set server rpp_retry = abc",
                                     "set server mail_from = adm"]
    assert result["rejected"]["command"] == "set server rpp_retry = abc"
    assert "server attribute rpp_retry, value 'abc'" in result["msg"]
    assert result["changed"] is True
    assert pbs.objects[("server", "vm")]["comment"] == "a, b"
    assert "mail_from" not in pbs.objects[("server", "vm")]
    assert len(pbs.writes()) == 1


@pytest.mark.parametrize("value", ["x; rm -rf /tmp/y", "$(touch /tmp/z)", "a|b&c`d`"])
def test_shell_metacharacters_are_passed_literally(pbs, value):
    code, result = run(pbs, object_type="server", attributes={"comment": value})
    assert code == 0, result
    assert pbs.objects[("server", "vm")]["comment"] == value
    assert all(isinstance(args, list) for args, data in pbs.calls)


@pytest.mark.parametrize("args", [
    {"object_type": "cluster", "attributes": {"a": 1}},
    {"object_type": "server", "attributes": "comment"},
    {"object_type": "server", "attributes": {"comment": "two\nlines"}},
    {"object_type": "server", "attributes": {"comment": "both ' and \""}},
    {"object_type": "server", "attributes": {"comment": {"nested": 1}}},
    {"object_type": "queue", "attributes": {"max_run": 1}},
    {"object_type": "server", "attributes": {"comment": "x"}, "list_mode": "merge"},
])
def test_bad_input_writes_nothing(pbs, args):
    code, result = run(pbs, **args)
    assert code == 1 and result["msg"]
    assert not pbs.writes()


def test_missing_pbs_conf_fails_clearly(tmp_path, monkeypatch):
    monkeypatch.setenv("PBS_CONF_FILE", str(tmp_path / "none"))
    code, result = run_module(qmgr_module.main, {"object_type": "server",
                                                 "attributes": {"comment": "x"}})
    assert code == 1 and "does not seem to be installed" in result["msg"]
