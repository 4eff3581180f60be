"""Issue 5 point 4, cluster cases: the bundled cgroup_resize hook on real cgroups (v1) of the
mock cluster, where the launcher gives every mom its own cpuset/memory subtree at the
standard paths (``/sys/fs/cgroup/<controller>`` inside the node).

The cluster's moms have two vnodes each (``up --vnodes-per-mom 2``: ``momN[0]``, ``momN[1]``,
natural vnode ``momN`` with no CPUs), so a chunk can land on one vnode of a host and a host
can hold several chunks of one job. The reliable_job_startup hook (site.yml with
tests/integration/demo_vars.yml) pads every multi-chunk job and prunes it back with
``release_nodes()`` at launch, which fires execjob_resize. The bundled hook is installed by
the ``hpc.pbs.cgroup_resize`` role (``cgroup_resize_hook_source: bundled``). Everything the
tests create under the cluster's cgroups goes with ``cluster down`` (the launcher removes
its whole subtree).
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pbsjobs  # noqa: E402
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


CGROUP_PLAYBOOK = """---
- name: Install the bundled cgroup_resize hook
  hosts: pbs_server
  gather_facts: false
  roles:
    - role: hpc.pbs.cgroup_resize
      vars:
        cgroup_resize_hook_source: bundled
"""


@pytest.fixture(scope="module")
def cluster(cluster_factory):
    cluster = cluster_factory(moms=len(MOMS), up_args=["--vnodes-per-mom", "2"])
    rc, output, _unused = rjs_demo.run_playbook(cluster.inventory)
    assert rc == 0, output[-3000:]
    playbook = os.path.join(cluster.workdir, "cgroup_resize.yml")
    with open(playbook, "w") as handle:
        handle.write(CGROUP_PLAYBOOK)
    rc, output, _unused = rjs_demo.run_playbook(cluster.inventory, playbook=playbook, extra_vars_file=None)
    assert rc == 0, "role hpc.pbs.cgroup_resize failed:\n" + output[-3000:]
    settle_hook(cluster, "cgroup_resize")
    yield cluster
    cluster.down()


def settle_hook(cluster, name):
    """Work around a mock server gap: it pushes a hook's files once per vnode, each change
    from its own thread, so a mom can keep an older ``.HK`` (``enabled=false`` from the
    hook's creation) than the server's. One more ``set ... enabled = true`` pushes the
    current file alone; wait until every mom has it."""
    cluster.exec(SERVER, ["qmgr", "-c", "set hook %s enabled = true" % name], check=True)
    path = "/var/spool/pbs/mom_priv/hooks/%s.HK" % name
    for mom in MOMS:
        rjs_demo.wait_for(lambda: "enabled=false" not in cluster.exec(mom, ["cat", path], check=True).stdout,
                          30, "hook %s enabled on %s" % (name, mom))


def submit(cluster, script, select, place="scatter", held=False):
    proc = cluster.exec(SERVER, ["qsub", "-l", "select=" + select, "-l", "place=" + place]
                        + (["-h"] if held else []), user="pbsuser", input=script, check=True)
    return proc.stdout.strip()


def mom_log(cluster, mom, jobid):
    """The messages (field 6 on) of ``mom``'s log lines about ``jobid``, in order."""
    text = cluster.exec(mom, ["sh", "-c", "cat /var/spool/pbs/mom_logs/*"]).stdout
    return [";".join(fields[5:]) for fields in (line.split(";") for line in text.splitlines())
            if len(fields) > 5 and fields[4] == jobid]


def accounting_types(cluster, jobid):
    text = cluster.exec(SERVER, ["sh", "-c", "cat /var/spool/pbs/server_priv/accounting/*"]).stdout
    return [l.split(";")[1] for l in text.splitlines() if l.count(";") >= 3 and l.split(";")[2] == jobid]


def qstat(cluster, jobid):
    proc = cluster.exec(SERVER, ["qstat", "-f", jobid])
    return rjs_demo.parse_qstat_f(proc.stdout) if proc.returncode == 0 else None


def running_pruned(cluster, jobid):
    """``qstat -f`` of ``jobid`` once it runs on the exec_host of its last pruning, else None
    (:func:`pbsjobs.running_pruned`)."""
    return pbsjobs.running_pruned(cluster, jobid)


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
            low, _unused, high = part.partition("-")
            cpus.update(range(int(low), int(high or low) + 1))
    return sorted(cpus)


def hosts_of(attrs):
    return [entry.split("/")[0] for entry in attrs["exec_host"].split("+")]


def wait_gone(cluster, jobid):
    rjs_demo.wait_for(lambda: cluster.exec(SERVER, ["qstat", jobid]).returncode != 0, 120, "end of %s" % jobid)


# The jobs sleep long enough for every probe of the running job to see it running on a
# loaded machine (each probe is a few `cluster exec` calls, 2 s each at load 10).
def test_padded_job_pruned_5_to_3_keeps_cgroups_only_where_it_runs(cluster):
    chunk = "ncpus=1:mem=%s" % MEM
    jobid = submit(cluster, "sleep 45\n", "+".join([chunk] * 3))
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


# Two chunks pinned to mom2 (the padding adds the second): they land on mom2[0] and mom2[1],
# and release_nodes() keeps only the first of them.
PINNED = "ncpus=1:mem=%s:host=mom1+ncpus=1:mem=%s:host=mom2" % (MEM, MEM)


def test_multi_vnode_host_keeping_part_of_its_allocation_shrinks_rather_than_disappears(cluster):
    jobid = submit(cluster, "sleep 45\n", PINNED, place="free")
    attrs = rjs_demo.wait_for(lambda: running_pruned(cluster, jobid), 90, "job running pruned")
    assert hosts_of(attrs) == ["mom1", "mom2"], attrs["exec_host"]
    primary = mom_log(cluster, "mom1", jobid)
    pruned_from = next(m for m in primary if m.startswith("pruned from exec_vnode="))
    assert "mom2[0]:" in pruned_from and "mom2[1]:" in pruned_from, pruned_from
    assert "mom2[1]" not in attrs["exec_vnode"]
    sister = rjs_demo.wait_for(lambda: [m for m in mom_log(cluster, "mom2", jobid) if "cgroups on mom2 resized" in m],
                               30, "resize on mom2")
    had, kept = sister[0].split("cpus ", 1)[1].split(",", 1)[0].split(" -> ")
    assert len(cpu_list(had)) == 2 and len(cpu_list(kept)) == 1, sister[0]
    state = job_cgroup(cluster, "mom2", jobid)
    assert state["cpus"] == cpu_list(kept) and state["limit"] == MEM_BYTES, state
    messages = mom_log(cluster, "mom2", jobid)
    assert "updated nodes info" in messages and "DELETE_JOB2 received" not in messages
    wait_gone(cluster, jobid)
    rjs_demo.wait_for(lambda: job_cgroup(cluster, "mom2", jobid)["cpus"] is None, 30, "cgroups removed on mom2")


# Before the job is released, its cpuset on mom2 gets a child cgroup holding all the node's
# CPUs: the kernel then refuses (EBUSY) to take a CPU from the job's cpuset at resize.
TRAP = """set -e
c=/sys/fs/cgroup/cpuset
mkdir -p "$c/pbs_jobs"
[ -n "$(cat "$c/pbs_jobs/cpuset.cpus")" ] || cat "$c/cpuset.cpus" > "$c/pbs_jobs/cpuset.cpus"
[ -n "$(cat "$c/pbs_jobs/cpuset.mems")" ] || cat "$c/cpuset.mems" > "$c/pbs_jobs/cpuset.mems"
for d in "$c/pbs_jobs/$1" "$c/pbs_jobs/$1/trap"; do
    mkdir "$d"
    cat "$c/pbs_jobs/cpuset.mems" > "$d/cpuset.mems"
    cat "$c/pbs_jobs/cpuset.cpus" > "$d/cpuset.cpus"
done
"""


def test_refused_write_at_resize_rejects_the_event_and_requeues_the_job(cluster):
    jobid = submit(cluster, "sleep 5\n", PINNED, place="free", held=True)
    cluster.exec("mom2", ["sh", "-c", TRAP, "trap", jobid], check=True)
    cluster.exec(SERVER, ["qrls", jobid], user="pbsuser", check=True)
    rjs_demo.wait_for(lambda: "R" in accounting_types(cluster, jobid), 90, "job requeued")
    messages = mom_log(cluster, "mom2", jobid)
    rejected = "execjob_resize hook rejected request: cgroup_resize: job %s on mom2: writing " % jobid
    line = next(m for m in messages if m.startswith(rejected))
    assert "[EBUSY]" in line, line
    text = cluster.exec("mom2", ["sh", "-c", "cat /var/spool/pbs/mom_logs/*"]).stdout
    assert "Hook;cgroup_resize;execjob_resize request rejected by 'cgroup_resize'" in text
    # The abort/end hooks removed the job's cgroups there (the trap too): the rerun runs to its end.
    wait_gone(cluster, jobid)
    types = accounting_types(cluster, jobid)
    assert types.index("R") < types.index("E"), types
    after_reject = mom_log(cluster, "mom2", jobid)[messages.index(line):]
    assert "JOIN_JOB as node 1" in after_reject
