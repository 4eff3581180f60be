"""Server side of what the mom now reports (PROTOCOL.md): the vnodes of a multi-vnode mom
in ``mom_hello`` and chunks spread over them, ``mom_job_requeue`` with ``rerun``, late
obits, vnodes offlined by a failed hook with ``fail_action=offline_vnodes``, ``qalter -W
tolerate_node_failures`` on a running job, and a server restart keeping a pruned job."""
import glob
import os
import re

import pytest

from mockpbs import testaddr
from mockpbs.cli import pbsnodes, qalter, qmgr, qstat, qsub
from mockpbs.testing import server as testing

# pbs_mom's comment after a hook with fail_action=offline_vnodes failed (OpenPBS PTL
# tests: "offlined by hook '%s' due to hook error").
OFFLINE_COMMENT = "offlined by hook 'h1' due to hook error"


def hello_vnodes():
    return {
        "hostA": {"resources_available": {"ncpus": "0", "host": "hostA", "vnode": "hostA"}},
        "hostA[0]": {"resources_available": {"ncpus": "2", "mem": "2gb", "host": "hostA", "vnode": "hostA[0]"}},
        "hostA[1]": {"resources_available": {"ncpus": "2", "host": "hostA", "vnode": "hostA[1]"},
                     "sharing": "default_excl"},
    }


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    """``(server, mom_a, mom_b)``; the server's address is reserved here, not by
    start_server, so that a test can restart the server on it."""
    with testaddr.reserved_addresses(3) as (server_address, address_a, address_b):
        daemon = testing.start_server(tmp_path, monkeypatch, address=server_address)
        mom_a = testing.FakeMom(address_a, "hostA", resources={"ncpus": "0"}, server_address=server_address,
                                verdict=lambda job: None)
        mom_b = testing.FakeMom(address_b, "hostB", server_address=server_address, verdict=lambda job: None)
        for mom in (mom_a, mom_b):
            assert testing.run_cli(qmgr.main, ["-c", "create node %s Mom=%s" % (mom.name, mom.address)])[0] == 0
        mom_a.report({"op": "mom_hello", "node": "hostA", "host": "hostA",
                      "resources_available": {"ncpus": "0"}, "vnodes": hello_vnodes()})
        testing.wait_for(lambda: testing.run_cli(pbsnodes.main, ["-a"])[1].count("state = free") == 4,
                         "4 vnodes free")
        yield daemon, mom_a, mom_b
        mom_a.close()
        mom_b.close()
        daemon.stop()


@pytest.fixture
def report(cluster):
    """``report(message) -> reply``: send a mom request to the cluster's server."""
    return cluster[1].report


def job_attrs(jobid):
    _unused, out, _unused = testing.run_cli(qstat.main, ["-f", jobid])
    return dict(re.findall(r"^    (\S+) = (.*)$", out.replace("\n\t", ""), re.M))


def node_attrs(name):
    _unused, out, _unused = testing.run_cli(pbsnodes.main, [name])
    return dict(re.findall(r"^     (\S+) = (.*)$", out, re.M))


def test_mom_hello_vnodes_become_vnodes_shown_by_pbsnodes(cluster):
    _unused, mom_a, _unused = cluster
    names = re.findall(r"^(\S+)$", testing.run_cli(pbsnodes.main, ["-a"])[1], re.M)
    assert names == ["hostA", "hostB", "hostA[0]", "hostA[1]"]
    vnode = node_attrs("hostA[1]")
    assert (vnode["Mom"], vnode["Port"], vnode["state"]) == (mom_a.address, "15002", "free")
    assert (vnode["resources_available.host"], vnode["resources_available.vnode"]) == ("hostA", "hostA[1]")
    assert (vnode["resources_available.ncpus"], vnode["sharing"]) == ("2", "default_excl")
    assert node_attrs("hostA")["resources_available.ncpus"] == "0"


def test_chunk_spans_vnodes_of_one_host_and_run_job_names_their_host(cluster):
    _unused, mom_a, mom_b = cluster
    jobid = testing.run_cli(qsub.main, ["-l", "select=1:ncpus=3+1:ncpus=1", "-l", "place=scatter",
                                        "--", "/bin/sleep", "30"])[1].strip()
    sent = testing.wait_for(lambda: mom_a.ops("run_job"), "run_job at hostA's mom")[0]
    assert sent["job"]["exec_vnode"] == "(hostA[0]:ncpus=2+hostA[1]:ncpus=1)+(hostB:ncpus=1)"
    assert sent["job"]["exec_host"] == "hostA/0*0+hostB/0"
    assert {v: info["host"] for v, info in sent["vnodes"].items()} == \
        {"hostA[0]": "hostA", "hostA[1]": "hostA", "hostB": "hostB"}
    assert node_attrs("hostA[1]")["jobs"] == "%s/0" % jobid
    assert mom_b.ops("run_job") == []


def test_offline_vnodes_from_failed_hook_show_in_pbsnodes(cluster, report):
    for vnode in ("hostA", "hostA[0]", "hostA[1]"):
        assert report({"op": "mom_node_update", "vnode": vnode, "state": "offline",
                       "comment": OFFLINE_COMMENT})["ok"]
    for vnode in ("hostA", "hostA[0]", "hostA[1]"):
        attrs = node_attrs(vnode)
        assert (attrs["state"], attrs["comment"]) == ("offline", OFFLINE_COMMENT)
    assert node_attrs("hostB")["state"] == "free"


def test_rerun_requeue_frees_nodes_and_late_obit_is_ignored(cluster, report, tmp_path):
    _unused, _unused, mom_b = cluster
    jobid = testing.run_cli(qsub.main, ["-l", "select=1:ncpus=1:vnode=hostB", "--", "/bin/true"])[1].strip()
    testing.wait_for(lambda: mom_b.ops("run_job"), "run_job")
    assert report({"op": "mom_job_started", "jobid": jobid, "session": 99})["ok"]
    assert testing.run_cli(qmgr.main, ["-c", "set server scheduling = False"])[0] == 0
    reply = report({"op": "mom_job_requeue", "jobid": jobid, "hold": None, "comment": None,
                    "reason": "lost communication with sister mom hostA", "rerun": True})
    assert reply["ok"] and not reply.get("ignored")
    attrs = job_attrs(jobid)
    assert (attrs["job_state"], attrs["run_count"]) == ("Q", "1") and "exec_vnode" not in attrs
    assert node_attrs("hostB")["resources_assigned.ncpus"] == "0"
    late = report({"op": "mom_job_obit", "jobid": jobid, "exit_status": 0, "resources_used": {}})
    assert late["ok"] and late["ignored"]
    assert job_attrs(jobid)["job_state"] == "Q"
    gone = report({"op": "mom_job_obit", "jobid": "77.vm", "exit_status": 0, "resources_used": {}})
    assert gone["ok"] and gone["ignored"]
    records = []
    for path in glob.glob(os.path.join(str(tmp_path), "pbs_home", "server_priv", "accounting", "*")):
        records += [l for l in open(path) if ";%s;" % jobid in l]
    assert [l.split(";")[1] for l in records] == ["Q", "S", "R"]


def test_qalter_tolerate_on_running_job_reaches_the_next_run(cluster, report):
    _unused, _unused, mom_b = cluster
    jobid = testing.run_cli(qsub.main, ["-W", "tolerate_node_failures=all", "-l",
                                        "select=1:ncpus=1:vnode=hostB", "--", "/bin/true"])[1].strip()
    testing.wait_for(lambda: mom_b.ops("run_job"), "first run_job")
    assert testing.run_cli(qalter.main, ["-W", "tolerate_node_failures=job_start", jobid]) == (0, "", "")
    assert testing.run_cli(qalter.main, ["-W", "tolerate_node_failures=bogus", jobid]) == \
        (166, "", "qalter: Illegal attribute or resource value %s\n" % jobid)
    assert job_attrs(jobid)["tolerate_node_failures"] == "job_start"
    report({"op": "mom_job_requeue", "jobid": jobid, "hold": None, "comment": None,
            "reason": "execjob_resize hook rejected", "rerun": True})
    second = testing.wait_for(lambda: mom_b.ops("run_job")[1:], "second run_job")[0]
    assert second["job"]["tolerate_node_failures"] == "job_start"
    assert second["job"]["run_count"] == "2"


def test_server_restart_keeps_a_running_pruned_job(cluster, report, tmp_path, monkeypatch):
    daemon, mom_a, mom_b = cluster
    jobid = testing.run_cli(qsub.main, ["-l", "select=1:ncpus=1:vnode=hostB+1:ncpus=1:vnode=hostA[0]",
                                        "-W", "tolerate_node_failures=job_start", "--", "/bin/sleep", "30"])[1].strip()
    testing.wait_for(lambda: mom_b.ops("run_job"), "run_job")
    report({"op": "mom_job_started", "jobid": jobid, "session": 7})
    assert report({"op": "mom_job_update", "jobid": jobid, "exec_vnode": "(hostB:ncpus=1)",
                   "exec_host": "hostB/0", "schedselect": "1:ncpus=1:vnode=hostB"})["applied"]
    before = job_attrs(jobid)
    daemon.stop()
    restarted = testing.start_server(tmp_path, monkeypatch, address=daemon.address)
    try:
        after = job_attrs(jobid)
        for key in ("job_state", "exec_vnode", "exec_host", "schedselect", "Resource_List.select",
                    "Resource_List.ncpus", "Resource_List.nodect", "run_count", "session_id"):
            assert after[key] == before[key], key
        assert (after["exec_vnode"], after["Resource_List.ncpus"]) == ("(hostB:ncpus=1)", "1")
        assert node_attrs("hostA[0]")["resources_assigned.ncpus"] == "0"
        assert node_attrs("hostB")["resources_assigned.ncpus"] == "1"
        report({"op": "mom_job_obit", "jobid": jobid, "exit_status": 0, "resources_used": {"walltime": "00:00:01"}})
        paths = glob.glob(os.path.join(str(tmp_path), "pbs_home", "server_priv", "accounting", "*"))
        kinds = [l.split(";")[1] for p in paths for l in open(p) if ";%s;" % jobid in l]
        # the pruned phase still ends with "e" and the E record carries the original request
        assert kinds == ["Q", "S", "s", "e", "E"]
        end = [l for p in paths for l in open(p) if ";E;%s;" % jobid in l][0]
        assert "Resource_List.ncpus=2" in end
    finally:
        restarted.stop()


def server_log(tmp_path):
    paths = sorted(glob.glob(os.path.join(str(tmp_path), "pbs_home", "server_logs", "*")))
    return "".join(open(path).read() for path in paths)


def test_obit_and_requeue_of_an_earlier_run_are_ignored(cluster, report, tmp_path):
    _unused, _unused, mom_b = cluster
    jobid = testing.run_cli(qsub.main, ["-l", "select=1:ncpus=1:vnode=hostB", "--", "/bin/true"])[1].strip()
    first = testing.wait_for(lambda: mom_b.ops("run_job"), "first run_job")[0]["job"]
    assert first["run_count"] == "1"
    assert report({"op": "mom_job_started", "jobid": jobid, "session": 11})["ok"]
    reply = report({"op": "mom_job_requeue", "jobid": jobid, "hold": None, "comment": None,
                    "reason": "lost communication with sister mom hostA", "rerun": True, "run_count": "1"})
    assert reply["ok"] and not reply.get("ignored")
    second = testing.wait_for(lambda: mom_b.ops("run_job")[1:], "second run_job")[0]["job"]
    assert second["run_count"] == "2"
    # the first run's mom reports late: neither its obit nor its requeue may touch run 2
    late_requeue = report({"op": "mom_job_requeue", "jobid": jobid, "hold": None, "comment": None,
                           "reason": "execjob_begin hook rejected", "rerun": False, "run_count": "1"})
    assert late_requeue.get("ignored") is True
    late_obit = report({"op": "mom_job_obit", "jobid": jobid, "exit_status": 0, "resources_used": {},
                        "run_count": "1"})
    assert late_obit.get("ignored") is True
    attrs = job_attrs(jobid)
    assert (attrs["job_state"], attrs["run_count"], attrs["exec_vnode"]) == ("R", "2", "(hostB:ncpus=1)")
    assert node_attrs("hostB")["resources_assigned.ncpus"] == "1"
    assert ";Job;%s;Obit received momhop:1 serverhop:2 state:R substate:41\n" % jobid in server_log(tmp_path)
    current = report({"op": "mom_job_obit", "jobid": jobid, "exit_status": 0, "resources_used": {},
                      "run_count": "2"})
    assert current["ok"] and not current.get("ignored")
    assert testing.run_cli(qstat.main, [jobid])[0] == 153
    assert node_attrs("hostB")["resources_assigned.ncpus"] == "0"


def test_malformed_run_count_is_an_invalid_request(cluster, report):
    _unused, _unused, mom_b = cluster
    jobid = testing.run_cli(qsub.main, ["-l", "select=1:ncpus=1:vnode=hostB", "--", "/bin/true"])[1].strip()
    testing.wait_for(lambda: mom_b.ops("run_job"), "run_job")
    reply = report({"op": "mom_job_obit", "jobid": jobid, "exit_status": 0, "resources_used": {},
                    "run_count": "one"})
    assert (reply["ok"], reply["code"]) == (False, 15004)
    assert job_attrs(jobid)["job_state"] == "R"
