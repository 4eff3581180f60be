"""In-process server with fake moms (mockpbs.wire.serve on reserved addresses, port 15002):
node state from pings, scheduling to the first chunk's mom, pruning via mom_job_update
and the accounting records (PP-928 interface 2, transcript g)."""
import glob
import os
import re

import pytest

from mockpbs import testaddr, wire
from mockpbs.cli import pbsnodes, qmgr, qstat, qsub
from mockpbs.testing import server as testing

SEED_S_RECORD = (
    "04/07/2016 17:08:09;s;20.corretja.pbspro.com;user=bayucan group=users project=_pbs_project_default "
    "jobname=jobr.scr queue=workq ctime=1460063202 qtime=1460063202 etime=1460063202 start=1460063203  "
    "exec_host=corretja/0*3+lendl/0*2+nadal/0 exec_vnode=(corretja:ncpus=3:mem=1048576kb)+"
    "(lendl:ncpus=2:mem=2097152kb)+(nadal:ncpus=1:mem=3145728kb) Resource_List.mem=6291456kb "
    "Resource_List.ncpus=6 Resource_List.nodect=3 Resource_List.place=scatter:excl "
    "Resource_List.select=1:ncpus=3:mem=1048576kb+1:ncpus=2:mem=2097152kb+1:ncpus=1:mem=3145728kb "
    "Resource_List.site=ncpus=3:mem=1gb+ncpus=2:mem=2gb+ncpus=1:mem=3gb resource_assigned.mem=24gb "
    "resource_assigned.ncpus=9")


def wait_for(predicate, what):
    return testing.wait_for(predicate, what, deadline=20.0)


def recording_mom(address, name, server_address):
    """A mom that records every request and starts nothing (the tests play its part)."""
    return testing.FakeMom(address, name, server_address, verdict=lambda job: None)


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    with testaddr.reserved_addresses(2) as addresses:
        daemon = testing.start_server(tmp_path, monkeypatch)
        moms = [recording_mom(address, name, daemon.address) for name, address in zip(("mom1", "mom2"), addresses)]
        for mom in moms:
            assert testing.run_cli(qmgr.main, ["-c", "create node %s Mom=%s" % (mom.name, mom.address)])[0] == 0
        wait_for(lambda: testing.run_cli(pbsnodes.main, ["-a"])[1].count("state = free") == 2, "nodes free")
        yield daemon, moms
        for mom in moms:
            mom.close()
        daemon.stop()


def job_attrs(jobid):
    _unused, out, _unused = testing.run_cli(qstat.main, ["-f", jobid])
    text = out.replace("\n\t", "")
    return dict(re.findall(r"^    (\S+) = (.*)$", text, re.M))


def accounting_records(daemon, record_type, jobid):
    lines = []
    for path in sorted(glob.glob(os.path.join(daemon.core.state.priv, "accounting", "*"))):
        with open(path) as handle:
            lines += [l.rstrip("\n") for l in handle if ";%s;%s;" % (record_type, jobid) in l]
    return lines


def fields(record):
    body = record.split(";", 3)[3]
    return [item.split("=", 1)[0] for item in body.split()]


def test_node_resources_come_from_the_mom_ping_reply(cluster):
    _unused, (mom1, _unused) = cluster
    _unused, out, _unused = testing.run_cli(pbsnodes.main, ["mom1"])
    assert "     resources_available.ncpus = 2\n" in out
    assert "     resources_available.mem = 4gb\n" in out
    assert out.startswith("mom1\n     Mom = %s\n     Port = 15002\n" % mom1.address)


def test_scatter_job_runs_on_first_chunk_mom_with_pbs_exec_strings(cluster):
    daemon, (mom1, mom2) = cluster
    rc, out, err = testing.run_cli(qsub.main, ["-l", "select=1:ncpus=1+1:ncpus=1", "-l", "place=scatter",
                                               "--", "/bin/sleep", "30"])
    assert (rc, err) == (0, "")
    jobid = out.strip()
    assert jobid == "0.vm"
    sent = wait_for(lambda: mom1.ops("run_job"), "run_job at mom1")[0]
    assert sent["job"]["exec_vnode"] == "(mom1:ncpus=1)+(mom2:ncpus=1)"
    assert sent["job"]["exec_host"] == "mom1/0+mom2/0"
    assert set(sent["vnodes"]) == {"mom1", "mom2"}
    assert mom2.ops("run_job") == []
    attrs = job_attrs(jobid)
    assert (attrs["job_state"], attrs["run_count"], attrs["substate"]) == ("R", "1", "41")
    start = accounting_records(daemon, "S", jobid)
    assert len(start) == 1 and "exec_host=mom1/0+mom2/0 " in start[0]


def test_job_update_prunes_attributes_and_writes_s_record_with_seed_fields(cluster):
    daemon, (mom1, mom2) = cluster
    rc, out, _unused = testing.run_cli(qsub.main, [
        "-l", "select=1:ncpus=1:mem=1gb+2:ncpus=1:mem=1gb", "-l", "place=free",
        "-l", "site=1:ncpus=1:mem=1gb+1:ncpus=1:mem=1gb", "-W", "tolerate_node_failures=job_start",
        "--", "/bin/sleep", "30"])
    jobid = out.strip()
    sent = wait_for(lambda: mom1.ops("run_job"), "run_job")[0]["job"]
    assert sent["exec_vnode"] == "(mom1:ncpus=1:mem=1048576kb)+(mom1:ncpus=1:mem=1048576kb)+(mom2:ncpus=1:mem=1048576kb)"
    assert sent["exec_host"] == "mom1/0+mom1/1+mom2/0"
    reply = wire.request(daemon.address, wire.SERVER_PORT, {
        "op": "mom_job_update", "jobid": jobid,
        "exec_vnode": "(mom1:ncpus=1:mem=1048576kb)+(mom1:ncpus=1:mem=1048576kb)",
        "exec_host": "mom1/0+mom1/1", "schedselect": "1:ncpus=1:mem=1gb+1:ncpus=1:mem=1gb"})
    assert reply["ok"] and reply["applied"]
    attrs = job_attrs(jobid)
    assert attrs["exec_host"] == "mom1/0+mom1/1"
    assert attrs["Resource_List.select"] == "1:ncpus=1:mem=1gb+1:ncpus=1:mem=1gb"
    assert (attrs["Resource_List.ncpus"], attrs["Resource_List.nodect"], attrs["Resource_List.mem"]) == ("2", "2", "2gb")
    assert attrs["Resource_List.site"] == "1:ncpus=1:mem=1gb+1:ncpus=1:mem=1gb"
    assert attrs["Resource_List.place"] == "free"
    pruned = accounting_records(daemon, "s", jobid)
    assert len(pruned) == 1
    assert set(fields(pruned[0])) == set(fields(SEED_S_RECORD))
    assert "resource_assigned.ncpus=2 " in pruned[0] and "resource_assigned.mem=2gb" in pruned[0]
    node2 = testing.run_cli(pbsnodes.main, ["mom2"])[1]
    assert "resources_assigned.ncpus = 0\n" in node2
    # same values again: nothing to apply, no second record
    again = wire.request(daemon.address, wire.SERVER_PORT, {
        "op": "mom_job_update", "jobid": jobid, "exec_vnode": attrs["exec_vnode"],
        "exec_host": "mom1/0+mom1/1", "schedselect": attrs["schedselect"]})
    assert again["applied"] is False
    assert len(accounting_records(daemon, "s", jobid)) == 1
    wire.request(daemon.address, wire.SERVER_PORT, {
        "op": "mom_job_obit", "jobid": jobid, "exit_status": 0,
        "resources_used": {"cput": "00:00:00", "walltime": "00:00:15"}})
    end = accounting_records(daemon, "E", jobid)
    assert len(end) == 1 and "Exit_status=0" in end[0] and "Resource_List.ncpus=3" in end[0]
    assert len(accounting_records(daemon, "e", jobid)) == 1
    rc, _unused, err = testing.run_cli(qstat.main, [jobid])
    assert (rc, err) == (153, "qstat: Unknown Job Id %s\n" % jobid)


def test_requeue_with_hold_puts_job_in_h_with_system_hold_and_frees_nodes(cluster):
    daemon, (mom1, _unused) = cluster
    jobid = testing.run_cli(qsub.main, ["--", "/bin/true"])[1].strip()
    wait_for(lambda: mom1.ops("run_job"), "run_job")
    wire.request(daemon.address, wire.SERVER_PORT, {
        "op": "mom_job_requeue", "jobid": jobid, "hold": "s", "comment": "job held, too many failed attempts to run",
        "reason": "hook rejected request, requiring job to be rerun"})
    attrs = job_attrs(jobid)
    assert (attrs["job_state"], attrs["Hold_Types"], attrs["run_count"]) == ("H", "s", "1")
    assert "exec_vnode" not in attrs
    assert "resources_assigned.ncpus = 0\n" in testing.run_cli(pbsnodes.main, ["mom1"])[1]


def test_mom_node_update_offlines_vnode_with_comment(cluster):
    daemon, _unused = cluster
    wire.request(daemon.address, wire.SERVER_PORT, {
        "op": "mom_node_update", "vnode": "mom2", "state": "offline", "comment": "offlined by hook"})
    out = testing.run_cli(pbsnodes.main, ["mom2"])[1]
    assert "     state = offline\n" in out and "     comment = offlined by hook\n" in out


def test_down_mom_is_marked_down_and_hooks_reach_moms(cluster):
    daemon, (mom1, mom2) = cluster
    assert testing.run_cli(qmgr.main, ["-c", "create hook h1 event=execjob_begin"])[0] == 0
    copies = wait_for(lambda: [m for m in mom1.ops("hook_copy") if m["name"] == "h1"], "hook_copy")
    assert "HK" in copies[0]["files"]
    mom2.close()
    wait_for(lambda: "state = down" in testing.run_cli(pbsnodes.main, ["mom2"])[1], "mom2 down")


def test_non_manager_cannot_change_server(cluster, monkeypatch):
    from mockpbs.cli import common
    monkeypatch.setattr(common, "identity", lambda: {"user": "pbsuser", "group": "pbsuser", "host": "vm"})
    rc, _unused, err = testing.run_cli(qmgr.main, ["-c", "set server scheduling = False"])
    assert rc == 159 and "Unauthorized Request" in err
