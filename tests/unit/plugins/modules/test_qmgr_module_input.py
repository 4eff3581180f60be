"""hpc.pbs.qmgr, hpc.pbs.hook and hpc.pbs.tolerate_node_failures fed hostile and mistaken
input: every case is refused with a message that says what is wrong and what is accepted,
before qmgr runs (or after reads only), and nothing changes. Several objects are reached
only through the explicit ``names`` list."""
import copy

import pytest

from ansible_collections.hpc.pbs.plugins.modules import hook as hook_module
from ansible_collections.hpc.pbs.plugins.modules import qmgr as qmgr_module
from hpc_pbs_module_fakes import run_module

SERVER = {"server_state": "Active", "server_host": "vm", "scheduling": "True",
          "default_queue": "workq", "scheduler_iteration": "600",
          "resources_default.ncpus": "1"}
SCHED = {"sched_host": "vm", "throughput_mode": "True", "job_run_wait": "runjob_hook"}
HOOK = {"type": "site", "enabled": "true", "event": "queuejob", "user": "pbsadmin",
        "alarm": "30", "order": "1", "debug": "false", "fail_action": "none"}
NODE = {"Mom": "mom1", "state": "free", "resources_available.ncpus": "2"}


@pytest.fixture
def pbs(fake_qmgr, tmp_path):
    fake = fake_qmgr()
    fake.add("server", "vm", SERVER)
    fake.add("sched", "default", SCHED)
    fake.add("queue", "workq", {"queue_type": "Execution", "enabled": "True"})
    fake.add("queue", "fastq", {"queue_type": "Execution", "enabled": "True"})
    fake.add("hook", "reliable_job_startup", HOOK, body=b"import pbs\n")
    for name in ("mom1", "mom2", "mom3"):
        fake.add("node", name, dict(NODE, Mom=name))
    fake.tmp = tmp_path / "moduletmp"
    fake.tmp.mkdir()
    return fake


def run(pbs, main=qmgr_module.main, check_mode=False, **args):
    args.setdefault("pbs_conf_file", pbs.conf)
    return run_module(main, args, check_mode=check_mode, tmpdir=pbs.tmp)


def assert_refused(pbs, result, code, *texts):
    """Refused, saying why and what is accepted, with nothing written."""
    assert code == 1, result
    for text in texts:
        assert text in result["msg"], (text, result["msg"])
    assert "accepted" in result["msg"], result["msg"]
    assert not pbs.writes()


# ------------------------------------------------------------------ the known attacks

def test_attribute_name_with_commands_after_newlines_is_refused(pbs):
    before = copy.deepcopy(pbs.objects)
    code, result = run(pbs, object_type="server", attributes={
        "comment = x\ndelete hook reliable_job_startup\nset server comment": "y"})
    assert_refused(pbs, result, code, "attribute name", "Nothing was changed")
    assert not pbs.calls
    assert pbs.objects == before
    assert pbs.hook_file("reliable_job_startup", "PY") == b"import pbs\n"


def test_attribute_name_with_a_second_assignment_is_refused(pbs):
    code, result = run(pbs, object_type="server",
                       attributes={"scheduling = False, comment": "x"})
    assert_refused(pbs, result, code, "'scheduling = False, comment'", "attribute name")
    assert not pbs.calls
    assert pbs.objects[("server", "vm")]["scheduling"] == "True"


def test_comma_separated_node_name_is_refused(pbs):
    code, result = run(pbs, object_type="node", name="mom1,mom2",
                       attributes={"state": "offline"}, list_mode="append")
    assert_refused(pbs, result, code, "node name 'mom1,mom2'", "comma", "names")
    assert not pbs.calls
    assert all(pbs.objects[("node", n)]["state"] == "free" for n in ("mom1", "mom2"))


def test_several_nodes_through_the_names_list_in_one_read_and_one_write(pbs):
    code, result = run(pbs, object_type="node", names=["mom1", "mom2"], list_mode="append",
                       attributes={"state": "offline"})
    assert code == 0, result
    assert [c[0][1:] for c in pbs.calls] == [["-c", "list node mom1,mom2"], ["-a"]]
    assert result["commands"] == ["set node mom1 state += offline",
                                  "set node mom2 state += offline", "list node mom1,mom2"]
    assert sorted(result["objects"]) == ["mom1", "mom2"]
    assert result["objects"]["mom1"]["state"] == "free,offline"
    assert pbs.objects[("node", "mom3")]["state"] == "free"
    pbs.calls = []
    code, result = run(pbs, object_type="node", names=["mom1", "mom2"], list_mode="append",
                       attributes={"state": "offline"})
    assert result["changed"] is False and not pbs.writes()


def test_names_with_a_missing_object_fail_naming_it_and_change_nothing(pbs):
    code, result = run(pbs, object_type="node", names=["mom1", "nosuch"],
                       attributes={"comment": "x"})
    assert code == 1 and "node nosuch does not exist" in result["msg"]
    assert not pbs.writes()


def test_names_list_items_are_checked_too(pbs):
    code, result = run(pbs, object_type="node", names=["mom1", "mom2\nset server x"],
                       attributes={"comment": "x"})
    assert_refused(pbs, result, code, "newline")
    assert not pbs.calls


def test_name_and_names_are_mutually_exclusive(pbs):
    code, result = run(pbs, object_type="node", name="mom1", names=["mom2"],
                       attributes={"comment": "x"})
    assert code == 1 and "mutually exclusive" in result["msg"]
    assert not pbs.calls


def test_hook_name_with_a_trailing_newline_is_refused_by_the_hook_module(pbs):
    code, result = run(pbs, main=hook_module.main, name="reliable_job_startup\n",
                       state="absent")
    assert_refused(pbs, result, code, "newline", "hook name")
    assert not pbs.calls
    assert ("hook", "reliable_job_startup") in pbs.objects


@pytest.mark.parametrize("name", ["PBS_cray_atom\ndelete hook reliable_job_startup",
                                  "PBS_cray_atom,reliable_job_startup", "PBS cray"])
def test_pbshook_names_are_checked_as_well(pbs, name):
    code, result = run(pbs, main=hook_module.main, name=name, type="pbs", enabled=False)
    assert_refused(pbs, result, code, "pbshook name")
    assert not pbs.calls


def test_hook_name_with_a_newline_through_the_qmgr_module_is_refused(pbs):
    code, result = run(pbs, object_type="hook", name="reliable_job_startup\n",
                       attributes={"enabled": False})
    assert_refused(pbs, result, code, "hook name", "newline")
    assert not pbs.calls


# ------------------------------------------------------------------ typed values

@pytest.mark.parametrize("object_type,name,attributes,texts", [
    ("server", None, {"default_qsub_arguments": "-W tolerate_node_failures=bogus"},
     ["default_qsub_arguments", "tolerate_node_failures must be one of all, job_start, none"]),
    ("server", None, {"default_qsub_arguments": "-W foo"},
     ["default_qsub_arguments", "name=value"]),
    ("server", None, {"scheduler_iteration": -5}, ["scheduler_iteration", "-5 is out of range"]),
    ("server", None, {"scheduling": "maybe"}, ["scheduling", "not a PBS boolean"]),
    ("server", None, {"default_queue": "workq, scheduling = False"},
     ["default_queue", "queue name"]),
    ("sched", None, {"job_run_wait": "sometimes"}, ["job_run_wait", "execjob_hook"]),
    ("sched", None, {"scheduler_iteration": True}, ["scheduler_iteration", "'True'"]),
    ("node", "mom1", {"resources_available.ncpus": "abc"}, ["resources_available.ncpus"]),
    ("node", "mom1", {"state": "bogus"}, ["state", "'bogus'"]),
    ("hook", "reliable_job_startup", {"alarm": 0}, ["alarm", "out of range"]),
])
def test_values_of_the_wrong_type_are_refused_before_qmgr_runs(
        pbs, object_type, name, attributes, texts):
    before = copy.deepcopy(pbs.objects)
    code, result = run(pbs, object_type=object_type, name=name, attributes=attributes)
    assert_refused(pbs, result, code, "Nothing was changed", *texts)
    assert not pbs.calls
    assert pbs.objects == before


def test_list_items_are_typed_in_append_mode(pbs):
    code, result = run(pbs, object_type="node", name="mom1", list_mode="append",
                       attributes={"state": ["offline", "bogus"]})
    assert_refused(pbs, result, code, "'bogus'")


def test_valid_default_qsub_arguments_are_written(pbs):
    value = "-r n -W tolerate_node_failures=job_start"
    code, result = run(pbs, object_type="server", attributes={"default_qsub_arguments": value})
    assert code == 0, result
    assert pbs.objects[("server", "vm")]["default_qsub_arguments"] == value


def test_default_queue_must_name_an_existing_queue(pbs):
    code, result = run(pbs, object_type="server", attributes={"default_queue": "nosuchq"})
    assert code == 1
    assert "queue 'nosuchq' does not exist" in result["msg"]
    assert "accepted: the name of an existing queue" in result["msg"]
    assert [c[0][1:] for c in pbs.calls] == [["-c", "list server"],
                                             ["-c", "list queue nosuchq"]]
    assert pbs.objects[("server", "vm")]["default_queue"] == "workq"


def test_default_queue_of_an_existing_queue_is_written_after_one_read(pbs):
    code, result = run(pbs, object_type="server", attributes={"default_queue": "fastq"})
    assert code == 0, result
    assert [c[0][1:] for c in pbs.calls] == [["-c", "list server"],
                                             ["-c", "list queue fastq"], ["-a"]]
    assert pbs.objects[("server", "vm")]["default_queue"] == "fastq"
    pbs.calls = []
    code, result = run(pbs, object_type="server", attributes={"default_queue": "fastq"})
    assert result["changed"] is False and len(pbs.calls) == 1


def test_a_number_for_a_boolean_compares_by_truth(pbs):
    code, result = run(pbs, object_type="server", attributes={"scheduling": 1})
    assert code == 0 and result["changed"] is False and not pbs.writes()


def test_unknown_attributes_still_go_to_qmgr(pbs):
    code, result = run(pbs, object_type="server", attributes={"no_such_attr": "x"})
    assert code == 1 and "qmgr: Syntax error" in result["msg"]
    assert len(pbs.writes()) == 1
