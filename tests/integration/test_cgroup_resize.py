"""Issue 5 point 4, cluster cases: the bundled cgroup_resize hook on real cgroups (v1) of the
mock cluster, where the launcher gives every mom its own cpuset/memory subtree at the
standard paths (``/sys/fs/cgroup/<controller>`` inside the node).

The reliable_job_startup hook (site.yml with tests/integration/demo_vars.yml) pads every
multi-chunk job and prunes it back with ``release_nodes()`` at launch, which fires
execjob_resize.  The bundled hook is installed with qmgr (events execjob_begin, launch,
resize, end, abort) from files/hooks/cgroup_resize.py.  Everything the tests create under
the cluster's cgroups goes with ``cluster down`` (the launcher removes its whole subtree).

Not covered here yet (open points): a multi-vnode host keeping part of its allocation and a
refused write at resize need the server's multi-vnode support (``up --vnodes-per-mom``).
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rjs_demo  # noqa: E402

SERVER = "pbs-server"
MOMS = ["mom%d" % i for i in range(1, 6)]
HOOK = os.path.join(rjs_demo.REPO, "files", "hooks", "cgroup_resize.py")
MEM = "100mb"
MEM_BYTES = 100 * 1024 * 1024


def cgroups_writable():
    try:
        with open("/proc/self/mounts") as handle:
            mounts = [l.split() for l in handle]
    except OSError:
        return False
    found = {c: m[1] for m in mounts if m[2] == "cgroup" for c in ("cpuset", "memory") if c in m[3].split(",")}
    return len(found) == 2 and all(os.access(p, os.W_OK) for p in found.values())


pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not cgroups_writable(), reason="no writable cgroup v1 cpuset+memory hierarchy")]


@pytest.fixture(scope="module")
def cluster(cluster_factory):
    cluster = cluster_factory(moms=len(MOMS))
    rc, output, _ = rjs_demo.run_playbook(cluster.inventory)
    assert rc == 0, output[-3000:]
    for command in ["create hook cgroup_resize",
                    "set hook cgroup_resize event = 'execjob_begin,execjob_launch,execjob_resize,execjob_end,execjob_abort'",
                    "set hook cgroup_resize order = 100",
                    "import hook cgroup_resize application/x-python default %s" % HOOK,
                    "set hook cgroup_resize enabled = true"]:
        cluster.exec(SERVER, ["qmgr", "-c", command], check=True)
    yield cluster
    cluster.down()


def submit(cluster, script, select, place="scatter"):
    proc = cluster.exec(SERVER, ["qsub", "-l", "select=" + select, "-l", "place=" + place],
                        user="pbsuser", input=script, check=True)
    return proc.stdout.strip()


def qstat(cluster, jobid):
    proc = cluster.exec(SERVER, ["qstat", "-f", jobid])
    return rjs_demo.parse_qstat_f(proc.stdout) if proc.returncode == 0 else None


def running_pruned(cluster, jobid):
    attrs = qstat(cluster, jobid) or {}
    text = cluster.exec(SERVER, ["sh", "-c", "cat /var/spool/pbs/server_priv/accounting/*"]).stdout
    records = [(l.split(";")[1], l) for l in text.splitlines() if l.count(";") >= 3 and l.split(";")[2] == jobid]
    return attrs if attrs.get("job_state") == "R" and any(t == "s" for t, _ in records) else None


def job_cgroup(cluster, mom, jobid):
    """{"cpus": [..] or None, "limit": int or None, "procs": [..]} of the job on ``mom``."""
    out = {}
    for controller, name in (("cpuset", "cpuset.cpus"), ("memory", "memory.limit_in_bytes")):
        base = "/sys/fs/cgroup/%s/pbs_jobs/%s" % (controller, jobid)
        proc = cluster.exec(mom, ["cat", os.path.join(base, name)])
        value = proc.stdout.strip() if proc.returncode == 0 else None
        if controller == "cpuset":
            out["cpus"] = cpu_list(value) if value is not None else None
            procs = cluster.exec(mom, ["cat", os.path.join(base, "cgroup.procs")]).stdout.split()
            out["procs"] = [int(p) for p in procs]
        else:
            out["limit"] = int(value) if value is not None else None
    return out


def cpu_list(text):
    cpus = set()
    for part in text.split(","):
        if part:
            low, _, high = part.partition("-")
            cpus.update(range(int(low), int(high or low) + 1))
    return sorted(cpus)


def hosts_of(attrs):
    return [entry.split("/")[0] for entry in attrs["exec_host"].split("+")]


def wait_gone(cluster, jobid):
    rjs_demo.wait_for(lambda: cluster.exec(SERVER, ["qstat", jobid]).returncode != 0, 120, "end of %s" % jobid)


def test_padded_job_pruned_5_to_3_keeps_cgroups_only_where_it_runs(cluster):
    chunk = "ncpus=1:mem=%s" % MEM
    jobid = submit(cluster, "sleep 15\n", "+".join([chunk] * 3))
    attrs = rjs_demo.wait_for(lambda: running_pruned(cluster, jobid), 90, "job running pruned")
    kept = hosts_of(attrs)
    assert len(kept) == 3
    released = [m for m in MOMS if m not in kept]
    assert len(released) == 2
    for mom in released:
        rjs_demo.wait_for(lambda: job_cgroup(cluster, mom, jobid)["cpus"] is None
                          and job_cgroup(cluster, mom, jobid)["limit"] is None, 30,
                          "job cgroups gone on released %s" % mom)
    for mom in kept:
        state = job_cgroup(cluster, mom, jobid)
        assert state["cpus"] is not None and len(state["cpus"]) == 1, (mom, state)
        assert state["limit"] == MEM_BYTES, (mom, state)
    # The job's own processes (the job child that ran the launch hook) are inside on the primary.
    assert job_cgroup(cluster, kept[0], jobid)["procs"]
    wait_gone(cluster, jobid)
    for mom in MOMS:
        rjs_demo.wait_for(lambda: job_cgroup(cluster, mom, jobid)["cpus"] is None, 30, "cgroups removed on %s" % mom)


def test_two_jobs_on_one_host_never_share_cpus_before_or_after_a_resize(cluster):
    first = submit(cluster, "sleep 20\n", "ncpus=1+ncpus=1")
    attrs = rjs_demo.wait_for(lambda: running_pruned(cluster, first), 90, "first job running pruned")
    host = hosts_of(attrs)[0]
    second = submit(cluster, "sleep 10\n", "ncpus=1:host=%s" % host, place="pack")
    rjs_demo.wait_for(lambda: (qstat(cluster, second) or {}).get("job_state") == "R", 60, "second job running")
    a = job_cgroup(cluster, host, first)["cpus"]
    b = rjs_demo.wait_for(lambda: job_cgroup(cluster, host, second)["cpus"], 30, "second job cpuset")
    assert a and b and not set(a) & set(b)
    wait_gone(cluster, first)
    wait_gone(cluster, second)
