"""PP-928 interface 6 as real OpenPBS 23.06 applies it: a mom hook's vnode changes reach the
server in two requests, the ``vnode_list`` ones (IS_UPDATE_FROM_HOOK) and the
``vnode_list_fail`` ones (IS_UPDATE_FROM_HOOK2); the server applies the first only to
vnodes the sending mom owns (``update2_to_vnode()``, src/server/node_manager.c: "Not
allowed to update vnode '<name>', as it is owned by a different mom", DEBUG2, under the
sending mom), the second to any vnode. Seen on the openpbs backend: a launch hook on the
primary offlining a sister's vnode through ``vnode_list`` leaves it free."""
import glob
import os
import re

import pytest

from mockpbs import pbs, testaddr
from mockpbs.cli import pbsnodes, qmgr
from mockpbs.testing import server as testing
from mockpbs.testing.mom import WAITING_SCRIPT

REFUSAL = "Not allowed to update vnode 'hostB', as it is owned by a different mom"


@pytest.fixture
def server(tmp_path, monkeypatch):
    """``(daemon, report)``: a mock server with free nodes hostA and hostB (``Mom`` their
    addresses, ``resources_available.host`` their names); ``report(message)`` sends a
    mom request."""
    with testaddr.reserved_addresses(3) as (server_address, address_a, address_b):
        daemon = testing.start_server(tmp_path, monkeypatch, address=server_address)
        moms = [testing.FakeMom(address, name, server_address=server_address, verdict=lambda job: None)
                for address, name in ((address_a, "hostA"), (address_b, "hostB"))]
        for mom in moms:
            assert testing.run_cli(qmgr.main, ["-c", "create node %s Mom=%s" % (mom.name, mom.address)])[0] == 0
            mom.report({"op": "mom_hello", "node": mom.name, "host": mom.name,
                        "resources_available": {"host": mom.name}})
        testing.wait_for(lambda: testing.run_cli(pbsnodes.main, ["-a"])[1].count("state = free") == 2,
                         "2 vnodes free")
        yield daemon, moms[0].report
        for mom in moms:
            mom.close()
        daemon.stop()


def node_attrs(name):
    _unused, out, _unused = testing.run_cli(pbsnodes.main, [name])
    return dict(re.findall(r"^     (\S+) = (.*)$", out, re.M))


def server_log_text(tmp_path):
    return "".join(open(path).read() for path in sorted(glob.glob(os.path.join(
        str(tmp_path), "pbs_home", "server_logs", "*"))))


def offline(vnode, hook_list, mom="hostA"):
    return {"op": "mom_node_update", "vnode": vnode, "mom": mom, "hook_list": hook_list,
            "state": "offline", "comment": "by hook"}


def test_pp928_i6_vnode_list_change_of_another_moms_vnode_refused(server, tmp_path):
    _unused, report = server
    reply = report(offline("hostB", "vnode_list"))
    assert reply.get("refused") == REFUSAL
    assert node_attrs("hostB")["state"] == "free" and "comment" not in node_attrs("hostB")
    assert ";0100;Server@vm;Node;hostA;%s\n" % REFUSAL in server_log_text(tmp_path)


def test_pp928_i6_vnode_list_change_of_own_vnode_applied(server):
    _unused, report = server
    assert "refused" not in report(offline("hostA", "vnode_list"))
    assert (node_attrs("hostA")["state"], node_attrs("hostA")["comment"]) == ("offline", "by hook")


def test_pp928_i6_vnode_list_fail_change_of_another_moms_vnode_applied(server):
    _unused, report = server
    assert "refused" not in report(offline("hostB", "vnode_list_fail"))
    assert node_attrs("hostB")["state"] == "offline"


def test_pp928_i6_hook_result_splits_vnode_changes_per_list():
    vnode = {"host": "momb", "state": "free", "resources_available": {}, "resources_assigned": {}}
    pbs._start({"name": "h"}, "execjob_launch", {"job": {"id": "1.vm"}, "daemon": "mom",
                                                 "vnode_list": {"momb": dict(vnode)},
                                                 "vnode_list_fail": {"momb": dict(vnode)}})
    event = pbs.event()
    event.vnode_list["momb"].state = pbs.ND_OFFLINE
    event.vnode_list_fail["momb"].comment = "failed"
    outcome = pbs._outcome()
    assert outcome["vnodes_by_list"] == {"vnode_list": {"momb": {"state": "offline"}},
                                         "vnode_list_fail": {"momb": {"comment": "failed"}}}
    assert outcome["vnodes"] == {"momb": {"state": "offline", "comment": "failed"}}


OFFLINE_SISTER = '''import pbs
e = pbs.event()
if "PBS_NODEFILE" in e.env:
    e.vnode_list["momb"].state = pbs.ND_OFFLINE
'''


def test_pp928_i6_mom_reports_a_vnode_list_change_naming_itself_and_the_list(mom_cluster):
    c = mom_cluster(names=("moma", "momb"))
    c.hook("launch", "execjob_launch", OFFLINE_SISTER, on=["moma"])
    c.start()
    job = c.job(exec_vnode="(moma:ncpus=1)+(momb:ncpus=1)", exec_host="moma/0+momb/0",
                schedselect="1:ncpus=1+1:ncpus=1", script=WAITING_SCRIPT,
                Resource_List={"select": "1:ncpus=1+1:ncpus=1", "ncpus": "2", "nodect": "2"})
    c.run_job(job)
    c.server.wait_for("mom_job_started")
    updates = [m for m in c.server.requests if m.get("op") == "mom_node_update"]
    assert updates == [{"op": "mom_node_update", "vnode": "momb", "mom": "moma", "hook_list": "vnode_list",
                        "state": "offline"}], updates


SET_SERVER_ATTRIBUTE = '''import pbs
if "PBS_NODEFILE" in pbs.event().env:
    pbs.server().scheduling = False
'''


def test_pp928_i6_mom_logs_a_launch_hook_exception_as_real_pbs_mom(mom_cluster):
    """Setting a server attribute at execjob_launch: pbs_python's lines, run_hook's exit
    status 254, the rejection for the job and 'job not started, Failure -17' (a launch
    reject without job.rerun()), as a real mom logs them."""
    c = mom_cluster(names=("moma",))
    c.hook("launch", "execjob_launch", SET_SERVER_ATTRIBUTE)
    c.start()
    c.run_job(c.job(exec_vnode="(moma:ncpus=1)", exec_host="moma/0", schedselect="1:ncpus=1",
                    Resource_List={"select": "1:ncpus=1", "ncpus": "1", "nodect": "1"}))
    c.server.wait_for("mom_job_obit")  # a launch reject without job.rerun() ends the job
    log = c.log("moma")
    error = "0001;pbs_python;Svr;pbs_python;PBS server internal error (15011) in Error evaluating Python script, "
    rejected = "execjob_launch hook 'launch' encountered an exception, request rejected"
    first = log.index(error + "<class 'AssertionError'>")
    assert log[first:first + 6] == [
        error + "<class 'AssertionError'>",
        error + "Can only set progname, argv, env event parameters as well as job, resource, vnode "
                "under execjob_launch hook.",
        "0100;pbs_python;Hook;launch;" + rejected,
        "0001;pbs_mom;Svr;pbs_mom;run_hook, execv of /opt/pbs/bin/pbs_python resulted in nonzero exit status=254",
        "0008;pbs_mom;Job;17.srv;" + rejected,
        "0001;pbs_mom;Job;17.srv;job not started, Failure -17"], log[first:]
