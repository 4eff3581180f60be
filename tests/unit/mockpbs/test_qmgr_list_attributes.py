"""qmgr ``list OBJECT NAME ATTR[,ATTR...]`` for every object type, and ``list hook`` /
``list pbshook`` without a name (reference/openpbs transcripts a, b, e): the requested
attributes come back in reverse request order (qmgr prepends each to its list), unset
ones are left out, resources match by prefix; attributes separated by blanks are a
syntax error, as in qmgr's ``attributes()``."""
import pytest

from mockpbs import testaddr
from mockpbs.cli import qmgr
from mockpbs.testing import server as testing


@pytest.fixture
def mom_address():
    """An address for a node's Mom where nothing listens and no other test run's mom
    can be (the server pings it and pushes hooks to it)."""
    with testaddr.reserved_addresses(1) as (reserved,):
        yield reserved


def run(command):
    return testing.run_cli(qmgr.main, ["-c", command])


def test_list_server_and_sched_attributes(server):
    assert run("list server scheduling,default_queue") == \
        (0, "Server vm\n    default_queue = workq\n    scheduling = True\n\n", "")
    assert run("list sched default job_run_wait,throughput_mode") == \
        (0, "Sched default\n    throughput_mode = True\n    job_run_wait = runjob_hook\n\n", "")
    assert run("list server default_qsub_arguments") == (0, "Server vm\n\n", "")


def test_list_queue_node_and_hook_attributes(server, mom_address):
    assert run("list queue workq enabled,started") == \
        (0, "Queue workq\n    started = True\n    enabled = True\n\n", "")
    assert run("create node n1 Mom=%s" % mom_address)[0] == 0
    rc, out, err = run("list node n1 resources_available,state")
    assert (rc, err) == (0, "")
    assert out.startswith("Node n1\n    state = ")
    assert "    resources_available.host = n1\n    resources_available.vnode = n1\n" in out
    assert run("create hook h1 event=execjob_begin")[0] == 0
    assert run("set hook h1 alarm=45,order=5")[0] == 0
    assert run("list hook h1 alarm,order") == (0, "Hook h1\n    order = 5\n    alarm = 45\n\n", "")
    assert run("list pbshook PBS_cray_atom enabled") == (0, "Hook PBS_cray_atom\n    enabled = false\n\n", "")


def test_blank_separated_attributes_are_a_syntax_error(server):
    rc, out, err = run("list hook PBS_power alarm order")
    assert (rc, out) == (4, "")
    assert err == "qmgr: Syntax error\nlist hook PBS_power alarm order\n" + " " * 26 + "^\n"


def test_list_hook_and_pbshook_without_name(server):
    assert run("create hook h1 event=execjob_begin")[0] == 0
    rc, out, _unused = run("list hook")
    names = [line.split()[1] for line in out.splitlines() if line.startswith("Hook ")]
    assert rc == 0 and names == ["pbs_cgroups", "h1"]
    assert "Hook h1\n    type = site\n    enabled = true\n    event = execjob_begin\n" in out
    rc, out, _unused = run("list pbshook")
    names = [line.split()[1] for line in out.splitlines() if line.startswith("Hook ")]
    assert rc == 0 and names == ["PBS_alps_inventory_check", "PBS_power", "PBS_cray_atom"]
    assert all(block.split("\n")[1] == "    type = pbs" for block in out.strip().split("\n\n"))
