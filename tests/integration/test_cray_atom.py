"""Issue 4 point 4: the Cray ATOM hook on the mock cluster, installed by the cray_atom role
through ansible-playbook, against the mock ATOM service (``atomd``) the launcher starts in
every mom node.

The role runs with ``cray_atom_hook_source: bundled``: the mock's built-in ``PBS_cray_atom``
pbshook is a stand-in body that talks to no service, so only the bundled hook exercises the
real code path.  Faults are injected per node with ``python -m mockpbs atomd --inject``
inside the node, as an admin would with ``cluster exec``.
"""
import json
import os
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rjs_demo  # noqa: E402  (run_playbook, parse_qstat_f, wait_for)

pytestmark = pytest.mark.integration

SERVER = "pbs-server"
MOMS = ("mom1", "mom2", "mom3")
PYTHON = sys.executable
TIMEOUTS = {"post_timeout": 3, "delete_timeout": 3}
OFFLINE_COMMENT = "offlined by hook 'cray_atom' due to hook error"


@pytest.fixture(scope="module")
def cluster(cluster_factory, tmp_path_factory):
    cluster = cluster_factory(moms=len(MOMS))
    extra = tmp_path_factory.mktemp("atom") / "vars.json"
    extra.write_text(json.dumps({"cray_atom_hook_source": "bundled", "cray_atom_config": TIMEOUTS}))
    rc, output, recap = rjs_demo.run_playbook(cluster.inventory, "playbooks/cray_atom.yml", str(extra))
    assert rc == 0, output[-3000:]
    assert all(r["failed"] == 0 for r in recap.values()), recap
    yield cluster
    cluster.down()


@pytest.fixture(autouse=True)
def clean_faults(cluster):
    yield
    for mom in MOMS:
        atomd(cluster, mom, "--inject", "clear")
        cluster.exec(SERVER, ["pbsnodes", "-r", mom])


def atomd(cluster, node, *args):
    return cluster.exec(node, [PYTHON, "-m", "mockpbs", "atomd"] + list(args), check=True).stdout


def registered(cluster, node):
    return [record["jobid"] for record in json.loads(atomd(cluster, node, "--jobs"))]


def requests_for(cluster, node, jobid):
    """[(method, status)] the node's atomd logged for ``jobid``."""
    text = cluster.exec(node, ["cat", "/var/run/atomd/atomd.sock.log"]).stdout
    out = []
    for line in text.splitlines():
        entry = json.loads(line)
        if entry.get("jobid") == jobid:
            out.append((entry["method"], entry["status"]))
    return out


def submit(cluster, script="sleep 6\n", select="ncpus=1+ncpus=1+ncpus=1", extra=()):
    proc = cluster.exec(SERVER, ["qsub", "-l", "select=" + select, "-l", "place=scatter"] + list(extra),
                        user="pbsuser", input=script, check=True)
    return proc.stdout.strip()


def qstat(cluster, jobid):
    proc = cluster.exec(SERVER, ["qstat", "-f", jobid])
    return rjs_demo.parse_qstat_f(proc.stdout) if proc.returncode == 0 else None


def gone(cluster, jobid):
    return cluster.exec(SERVER, ["qstat", jobid]).returncode != 0


def running_pruned(cluster, jobid):
    """qstat -f of ``jobid`` once it runs and its ``s`` accounting record exists, else None."""
    attrs = qstat(cluster, jobid) or {}
    text = cluster.exec(SERVER, ["sh", "-c", "cat /var/spool/pbs/server_priv/accounting/*"]).stdout
    pruned = any(l.split(";")[1:3] == ["s", jobid] for l in text.splitlines() if l.count(";") >= 3)
    return attrs if attrs.get("job_state") == "R" and pruned else None


def node(cluster, name):
    proc = cluster.exec(SERVER, ["pbsnodes", name], check=True)
    return rjs_demo.parse_qstat_f("Job Id: x\n" + "\n".join(proc.stdout.splitlines()[1:]))


def mom_log(cluster, mom):
    return cluster.exec(mom, ["sh", "-c", "cat /var/spool/pbs/mom_logs/*"]).stdout


def test_job_registered_on_every_host_while_running_and_removed_at_end(cluster):
    jobid = submit(cluster, "sleep 8\n")
    rjs_demo.wait_for(lambda: (qstat(cluster, jobid) or {}).get("job_state") == "R", 60, "job running")
    for mom in MOMS:
        rjs_demo.wait_for(lambda: jobid in registered(cluster, mom), 30, "%s registered on %s" % (jobid, mom))
    record = [r for r in json.loads(atomd(cluster, "mom2", "--jobs")) if r["jobid"] == jobid][0]
    assert record["uid"] == 1500 and record["exclusive"] is False
    rjs_demo.wait_for(lambda: gone(cluster, jobid), 90, "job end")
    for mom in MOMS:
        rjs_demo.wait_for(lambda: jobid not in registered(cluster, mom), 30, "%s removed on %s" % (jobid, mom))
        assert requests_for(cluster, mom, jobid) == [("POST", 200), ("DELETE", 204)]


def test_400_then_200_registers_once(cluster):
    atomd(cluster, "mom2", "--inject", "POST=400")
    jobid = submit(cluster, "sleep 4\n")
    rjs_demo.wait_for(lambda: jobid in registered(cluster, "mom2"), 60, "registration on mom2")
    assert registered(cluster, "mom2").count(jobid) == 1
    assert requests_for(cluster, "mom2", jobid)[:3] == [("POST", 400), ("DELETE", 404), ("POST", 200)]
    rjs_demo.wait_for(lambda: gone(cluster, jobid), 90, "job end")
    assert node(cluster, "mom2")["state"] == "free"


@pytest.mark.parametrize("fault", ["POST=500*", "POST=delay:10*", "POST=drop*"])
def test_failed_registration_offlines_the_node_and_requeues_the_job(cluster, fault):
    atomd(cluster, "mom3", "--inject", fault)
    jobid = submit(cluster)
    rjs_demo.wait_for(lambda: node(cluster, "mom3").get("state") == "offline", 60, "mom3 offline")
    assert node(cluster, "mom3")["comment"] == OFFLINE_COMMENT
    # Requeued, and it cannot run again on the two moms left (it wants three hosts).
    rjs_demo.wait_for(lambda: (qstat(cluster, jobid) or {}).get("job_state") == "Q", 60, "job requeued")
    assert jobid not in registered(cluster, "mom3")
    assert node(cluster, "mom1")["state"] == "free" and node(cluster, "mom2")["state"] == "free"
    cluster.exec(SERVER, ["qdel", jobid], check=True)
    rjs_demo.wait_for(lambda: gone(cluster, jobid), 60, "job deleted")


def test_delete_timeout_rejects_and_the_node_stays_online(cluster):
    atomd(cluster, "mom2", "--inject", "DELETE=delay:10")
    jobid = submit(cluster, "true\n")
    rjs_demo.wait_for(lambda: gone(cluster, jobid), 90, "job end")
    rjs_demo.wait_for(lambda: "execjob_end request rejected by 'cray_atom'" in mom_log(cluster, "mom2"), 30,
                      "end hook rejection on mom2")
    assert node(cluster, "mom2")["state"] == "free"
    assert "comment" not in node(cluster, "mom2")


def test_missing_socket_is_skipped(cluster):
    atomd(cluster, "mom1", "--inject", "no-socket")
    rjs_demo.wait_for(lambda: cluster.exec("mom1", ["test", "-S", "/var/run/atomd/atomd.sock"]).returncode != 0,
                      10, "socket removed")
    jobid = submit(cluster, "true\n")
    rjs_demo.wait_for(lambda: gone(cluster, jobid), 90, "job end")
    accounting = cluster.exec(SERVER, ["sh", "-c", "cat /var/spool/pbs/server_priv/accounting/*"]).stdout
    assert any(";E;%s;" % jobid in line for line in accounting.splitlines())
    assert node(cluster, "mom1")["state"] == "free"
    assert requests_for(cluster, "mom2", jobid) == [("POST", 200), ("DELETE", 204)]


def test_subjob_id_reaches_the_service_intact(cluster):
    array = submit(cluster, "sleep 4\n", select="ncpus=1", extra=["-J", "1-2"])
    subjob = array.replace("[]", "[1]")
    rjs_demo.wait_for(lambda: any(subjob == j for m in MOMS for j in registered(cluster, m)), 60,
                      "subjob %s registered" % subjob)
    text = "".join(cluster.exec(m, ["cat", "/var/run/atomd/atomd.sock.log"]).stdout for m in MOMS)
    posts = [json.loads(l) for l in text.splitlines() if '"POST"' in l and subjob in l]
    body = posts[0]["body"] if posts else None
    body = json.loads(body) if isinstance(body, str) else body
    assert body and body["jobid"] == subjob and posts[0]["jobid"] == subjob
    rjs_demo.wait_for(lambda: gone(cluster, array), 120, "array end")
    deletes = [json.loads(l) for m in MOMS for l in cluster.exec(m, ["cat", "/var/run/atomd/atomd.sock.log"]).stdout.splitlines()
               if '"DELETE"' in l and subjob in l]
    assert deletes and deletes[0]["path"].endswith("/rm/v1/jobs/" + subjob.replace("[", "%5B").replace("]", "%5D"))
    assert deletes[0]["jobid"] == subjob and deletes[0]["status"] == 204


def test_tolerant_padded_job_starts_on_the_other_hosts(cluster):
    # Last: the reliable_job_startup hook pads and prunes every later job of this cluster.
    rc, output, _ = rjs_demo.run_playbook(cluster.inventory)
    assert rc == 0, output[-3000:]
    atomd(cluster, "mom3", "--inject", "POST=500*")
    jobid = submit(cluster, "sleep 4\n", select="ncpus=1+ncpus=1")
    attrs = rjs_demo.wait_for(lambda: running_pruned(cluster, jobid), 90, "job running pruned (s record)")
    assert "mom3" not in attrs["exec_host"] and attrs["exec_host"].count("/") == 2
    assert node(cluster, "mom3")["state"] == "offline"
    assert jobid in registered(cluster, "mom1") and jobid in registered(cluster, "mom2")
    rjs_demo.wait_for(lambda: gone(cluster, jobid), 90, "job end")
