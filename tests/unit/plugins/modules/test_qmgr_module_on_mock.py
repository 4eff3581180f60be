"""hpc.pbs.qmgr driving the mock PBS: the module's ``run_command`` runs the mock's qmgr
``main()`` in process against an in-process mock server (``mockpbs.testing.server``), so the
module meets qmgr's real output, exit codes and ``-a`` behaviour as the mock reproduces them
from OpenPBS (the unset of an attribute OpenPBS keeps listing at its default, a refused
value, several objects in one call)."""
import pytest
from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpc.pbs.plugins.modules import qmgr as qmgr_module
from hpc_pbs_module_fakes import run_module
from mockpbs import testaddr
from mockpbs.cli import qmgr as mock_qmgr
from mockpbs.testing import server as testing

QMGR = "/opt/pbs/bin/qmgr"  # PBS_EXEC of the pbs.conf start_server writes
NODES = ("n1", "n2")


@pytest.fixture
def mock_pbs(tmp_path, monkeypatch):
    calls = []

    def run_command(module, args, data=None, binary_data=False, **kwargs):
        assert isinstance(args, list) and args[0] == QMGR, args
        calls.append(list(args))
        return testing.run_cli(mock_qmgr.main, args[1:], stdin=data or "")

    daemon = testing.start_server(tmp_path, monkeypatch)
    monkeypatch.setattr(AnsibleModule, "run_command", run_command)
    with testaddr.reserved_addresses(len(NODES)) as addresses:
        for name, address in zip(NODES, addresses):
            assert testing.run_cli(mock_qmgr.main,
                                   ["-c", "create node %s Mom=%s" % (name, address)])[0] == 0
        daemon.calls = calls
        daemon.tmp = tmp_path
        yield daemon
        daemon.stop()


def run(mock_pbs, **args):
    return run_module(qmgr_module.main, args, tmpdir=mock_pbs.tmp)


def listed(command):
    rc, out, err = testing.run_cli(mock_qmgr.main, ["-c", command])
    assert rc == 0, err
    return out


def test_unset_of_scheduler_iteration_is_idempotent_on_the_mock(mock_pbs):
    code, result = run(mock_pbs, object_type="server", attributes={"scheduler_iteration": 300})
    assert code == 0 and result["changed"] is True
    code, result = run(mock_pbs, object_type="server", state="absent",
                       attributes={"scheduler_iteration": None})
    assert code == 0 and result["changed"] is True
    assert result["attributes"]["scheduler_iteration"] == "600"
    mock_pbs.calls[:] = []
    code, result = run(mock_pbs, object_type="server", state="absent",
                       attributes={"scheduler_iteration": None})
    assert code == 0 and result["changed"] is False
    assert mock_pbs.calls == [[QMGR, "-c", "list server"]]


def test_unset_of_an_attribute_without_default_is_idempotent_on_the_mock(mock_pbs):
    assert run(mock_pbs, object_type="server", attributes={"comment": "x y"})[1]["changed"]
    code, result = run(mock_pbs, object_type="server", attributes={"comment": None})
    assert code == 0 and result["changed"] is True
    assert "comment" not in result["attributes"]
    code, result = run(mock_pbs, object_type="server", attributes={"comment": None})
    assert result["changed"] is False


def test_a_value_qmgr_refuses_is_reported_with_its_attribute(mock_pbs):
    code, result = run(mock_pbs, object_type="server",
                       attributes={"comment": "first", "rpp_retry": "abc",
                                   "mail_from": "root"})
    assert code == 1
    assert "server attribute rpp_retry, value 'abc'" in result["msg"]
    assert "Illegal attribute or resource value" in result["msg"]
    assert result["applied"] == ["set server comment = first"]
    assert result["not_applied"] == ["set server rpp_retry = abc",
                                     "set server mail_from = root"]
    assert "mail_from = adm" in listed("list server mail_from")


def test_several_nodes_through_names_on_the_mock(mock_pbs):
    code, result = run(mock_pbs, object_type="node", names=list(NODES),
                       attributes={"comment": "maintenance"})
    assert code == 0, result
    assert result["objects"]["n1"]["comment"] == "maintenance"
    assert result["objects"]["n2"]["comment"] == "maintenance"
    code, result = run(mock_pbs, object_type="node", names=list(NODES),
                       attributes={"comment": "maintenance"})
    assert result["changed"] is False


def test_names_with_a_missing_node_change_nothing_on_the_mock(mock_pbs):
    code, result = run(mock_pbs, object_type="node", names=["n1", "nosuch"],
                       attributes={"comment": "x"})
    assert code == 1 and "node nosuch does not exist" in result["msg"]
    assert "comment" not in listed("list node n1")


def test_default_queue_of_a_missing_queue_is_refused_on_the_mock(mock_pbs):
    code, result = run(mock_pbs, object_type="server", attributes={"default_queue": "nosuchq"})
    assert code == 1 and "queue 'nosuchq' does not exist" in result["msg"]
    assert "default_queue = workq" in listed("list server default_queue")


def test_unknown_scheduler_is_reported_missing(mock_pbs):
    code, result = run(mock_pbs, object_type="sched", name="nosuch",
                       attributes={"scheduling": True})
    assert code == 1 and "sched nosuch does not exist" in result["msg"]
