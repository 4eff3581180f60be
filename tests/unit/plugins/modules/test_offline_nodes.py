"""hpc.pbs.offline_nodes: the marks of a whole batch of nodes in ONE ``qmgr -a`` call, inputs
checked before qmgr runs, and its documentation in step with its argument spec."""
import os

import pytest
import yaml

from ansible_collections.hpc.pbs.plugins.modules import offline_nodes
from hpc_pbs_module_fakes import run_module


@pytest.fixture
def fake(fake_qmgr):
    """The fake qmgr with nodes mom1..mom3, mom2 offline; ``(fake, pbs.conf path)``."""
    qmgr = fake_qmgr()
    for name, state in (("mom1", "free"), ("mom2", "offline"), ("mom3", "free")):
        qmgr.add("node", name, {"state": state})
    return qmgr, qmgr.conf


def test_offline_marks_every_node_in_one_qmgr_call(fake):
    qmgr, conf = fake
    code, result = run_module(offline_nodes.main, dict(
        offline={"mom1": "hpc.pbs rollout x: in progress (batch 2)", "mom3": "hpc.pbs rollout x: in progress (batch 2)"},
        pbs_conf_file=conf))
    assert code == 0, result
    assert result["changed"] is True
    assert len(qmgr.calls) == 1, qmgr.calls
    assert qmgr.directives(qmgr.calls[0]) == [
        'set node mom1 comment = "hpc.pbs rollout x: in progress (batch 2)"', "set node mom1 state += offline",
        'set node mom3 comment = "hpc.pbs rollout x: in progress (batch 2)"', "set node mom3 state += offline"]
    for name in ("mom1", "mom3"):
        assert qmgr.objects[("node", name)]["comment"] == "hpc.pbs rollout x: in progress (batch 2)"
        assert "offline" in qmgr.objects[("node", name)]["state"].split(",")


def test_online_clears_comment_and_offline_in_one_call(fake):
    qmgr, conf = fake
    qmgr.objects[("node", "mom2")]["comment"] = "hpc.pbs rollout x: in progress (batch 1)"
    code, result = run_module(offline_nodes.main, dict(online=["mom2"], pbs_conf_file=conf))
    assert code == 0, result
    assert len(qmgr.calls) == 1, qmgr.calls
    assert qmgr.directives(qmgr.calls[0]) == ["unset node mom2 comment", "set node mom2 state -= offline"]
    assert "comment" not in qmgr.objects[("node", "mom2")]
    assert "offline" not in qmgr.objects[("node", "mom2")].get("state", "")


def test_check_mode_and_nothing_to_do_run_no_qmgr(fake):
    qmgr, conf = fake
    code, result = run_module(offline_nodes.main, dict(offline={"mom1": "c"}, pbs_conf_file=conf), check_mode=True)
    assert code == 0 and result["changed"] is True, result
    assert result["commands"] == ["set node mom1 comment = c", "set node mom1 state += offline"]
    code, result = run_module(offline_nodes.main, dict(pbs_conf_file=conf))
    assert code == 0 and result["changed"] is False and result["commands"] == [], result
    assert qmgr.calls == []


@pytest.mark.parametrize("args, words", [
    (dict(offline={"mom1": "c"}, online=["mom1"]), ["offline and online both name mom1"]),
    (dict(offline={"mom1,mom2": "c"}), ["offline.mom1,mom2"]),
    (dict(online=["-x"]), ["online:"]),
    (dict(offline={"mom1": "a\nb"}), ["offline.mom1"]),
    (dict(offline={"mom1": "say \"it's\""}), ["offline.mom1"]),
    (dict(offline={"mom1": 5}), ["offline.mom1: the comment must be a string"]),
])
def test_bad_input_is_refused_before_qmgr_runs(fake, args, words):
    qmgr, conf = fake
    code, result = run_module(offline_nodes.main, dict(args, pbs_conf_file=conf))
    assert code != 0 and result.get("failed"), result
    for word in words + ["Nothing was changed"]:
        assert word in result["msg"], result["msg"]
    assert qmgr.calls == []


def test_a_rejected_command_fails_naming_it(fake):
    qmgr, conf = fake
    code, result = run_module(offline_nodes.main, dict(offline={"nosuch": "c"}, pbs_conf_file=conf))
    assert code != 0 and result.get("failed"), result
    assert "nosuch" in result["msg"], result
    assert len(qmgr.calls) == 1


def test_documentation_matches_the_argument_spec():
    doc = yaml.safe_load(offline_nodes.DOCUMENTATION)
    assert set(doc["options"]) == {"offline", "online"}
    assert doc["options"]["offline"]["type"] == "dict" and doc["options"]["online"]["elements"] == "str"
    yaml.safe_load(offline_nodes.EXAMPLES)
    assert set(yaml.safe_load(offline_nodes.RETURN)) == {"commands"}
    assert os.path.basename(offline_nodes.__file__) == "offline_nodes.py"
