"""The bundled cgroup_resize hook under the ``pbs`` emulator, on a temporary directory tree.

Seed: pp-928-reliable-job-startup.txt, interface 9 (execjob_resize) and "Case of Reliable
Job Startup". Each test runs the unchanged hook file through :mod:`mockpbs.harness` (a
child process, as pbs_python would) with ``root`` and ``mounts_file`` pointing at a tree
laid out like cgroup v1 (``<root>/cpuset``, ``<root>/memory``) or cgroup v2 (``<root>``),
so the logic is covered where no writable cgroup hierarchy exists. The same events on the
real kernel: test_cgroup_resize_kernel.py.
"""
import json
import os
import signal
import subprocess
from pathlib import Path

import jsonschema
import pytest

from mockpbs.harness import run_hook

REPO = Path(__file__).resolve().parents[3]
HOOK_SOURCE = (REPO / "files" / "hooks" / "cgroup_resize.py").read_text()
DEFAULT_CONFIG = json.loads((REPO / "files" / "hooks" / "cgroup_resize.json").read_text())
SCHEMA = json.loads((REPO / "files" / "hooks" / "cgroup_resize.schema.json").read_text())
HOOK_NAME = "cgroup_resize"
GB = 1024 ** 3
MB = 1024 ** 2


class FakeHierarchy:
    """A cgroup hierarchy as plain files: ``version`` 1 or 2, ``cpus`` the root's CPU list."""

    def __init__(self, base, version, cpus="0-7", prefix="pbs_jobs"):
        self.version = version
        self.prefix = prefix
        self.root = base / "cgroup"
        self.mounts_file = base / "mounts"
        if version == 1:
            for controller in ("cpuset", "memory"):
                (self.root / controller).mkdir(parents=True)
                (self.root / controller / "cgroup.procs").write_text("")
            (self.root / "cpuset" / "cpuset.cpus").write_text(cpus + "\n")
            (self.root / "cpuset" / "cpuset.mems").write_text("0\n")
            (self.root / "unified").mkdir()
            # A hybrid host: v1 controllers plus an empty v2 mount beside them.
            self.mounts_file.write_text(
                "tmpfs %s tmpfs rw 0 0\n"
                "cgroup %s/cpuset cgroup rw,nosuid,nodev,noexec,relatime,cpuset 0 0\n"
                "cgroup %s/memory cgroup rw,nosuid,nodev,noexec,relatime,memory 0 0\n"
                "cgroup2 %s/unified cgroup2 rw,nosuid,nodev,noexec,relatime 0 0\n"
                % (self.root, self.root, self.root, self.root))
        else:
            self.root.mkdir(parents=True)
            (self.root / "cgroup.subtree_control").write_text("")
            (self.root / "cgroup.procs").write_text("")
            (self.root / "cpuset.cpus.effective").write_text(cpus + "\n")
            (self.root / "cpuset.mems.effective").write_text("0\n")
            self.mounts_file.write_text("cgroup2 %s cgroup2 rw,nosuid,nodev,noexec,relatime 0 0\n" % self.root)

    def config(self, **extra):
        return dict(DEFAULT_CONFIG, root=str(self.root), prefix=self.prefix,
                    mounts_file=str(self.mounts_file), **extra)

    def job_dir(self, controller, jobid):
        base = self.root / controller if self.version == 1 else self.root
        return base / self.prefix / jobid

    def exists(self, jobid):
        return self.job_dir("cpuset", jobid).exists() or self.job_dir("memory", jobid).exists()

    def cpus(self, jobid):
        return parse_cpus((self.job_dir("cpuset", jobid) / "cpuset.cpus").read_text())

    def memory_limit(self, jobid):
        name = "memory.limit_in_bytes" if self.version == 1 else "memory.max"
        return int((self.job_dir("memory", jobid) / name).read_text())

    def procs(self, jobid, controller="cpuset"):
        return [int(p) for p in (self.job_dir(controller, jobid) / "cgroup.procs").read_text().split()]


def parse_cpus(text):
    cpus = []
    for piece in text.strip().split(","):
        if "-" in piece:
            low, high = piece.split("-")
            cpus.extend(range(int(low), int(high) + 1))
        elif piece:
            cpus.append(int(piece))
    return cpus


@pytest.fixture(params=[1, 2], ids=["cgroup_v1", "cgroup_v2"])
def tree(request, tmp_path):
    return FakeHierarchy(tmp_path, request.param)


def run(tree, event, job, host, vnodes=None, config=None, config_text=None):
    hook_config = config_text if config_text is not None else (config or tree.config())
    result = run_hook(HOOK_SOURCE, event=event, job=job, vnodes=vnodes, local_host=host,
                      hook_config=hook_config, hook_name=HOOK_NAME)
    assert result.exception is None, result.exception
    assert not result.alarm
    return result


def padded_job(jobid="7.pbs-server", hosts=("n1", "n2", "n3", "n4", "n5"), ncpus=2, mem="1gb"):
    """A job padded to ``hosts`` (one chunk each, the first the primary mom)."""
    return {"id": jobid,
            "exec_vnode": "+".join("(%s:ncpus=%d:mem=%s)" % (h, ncpus, mem) for h in hosts),
            "exec_host": "+".join("%s/0*%d" % (h, ncpus) for h in hosts),
            "tolerate_node_failures": "job_start"}


# ---------------------------------------------------------------- execjob_begin
def test_begin_creates_cgroups_with_the_hosts_assignment(tree):
    job = padded_job(ncpus=3, mem="1536mb")
    result = run(tree, "execjob_begin", job, "n2")
    assert result.accepted, result.reject_message
    assert tree.cpus(job["id"]) == [0, 1, 2]
    assert tree.memory_limit(job["id"]) == 1536 * MB
    assert (tree.job_dir("cpuset", job["id"]) / "cpuset.mems").read_text().strip() == "0"
    assert any("cgroup v%d of pbs_jobs/7.pbs-server on n2: cpus=0-2 mem=%d bytes" % (tree.version, 1536 * MB) in line
               for line in result.log)
    if tree.version == 2:
        # Children get the controllers only when every level enables them.
        assert (tree.root / "cgroup.subtree_control").read_text() == "+cpuset +memory"
        assert (tree.root / "pbs_jobs" / "cgroup.subtree_control").read_text() == "+cpuset +memory"
    else:
        assert (tree.root / "cpuset" / "pbs_jobs" / "cpuset.cpus").read_text().strip() == "0-7"


def test_begin_sums_the_vnodes_of_a_multi_vnode_host_and_ignores_other_hosts(tree):
    job = {"id": "8.pbs-server",
           "exec_vnode": "(n1:ncpus=1:mem=1gb)+(big[0]:ncpus=2:mem=2gb+big[1]:ncpus=2:mem=1gb)+(big[1]:ncpus=1)",
           "exec_host": "n1/0+big/0*4+big/1"}
    vnodes = {"n1": {"host": "n1", "ncpus": 4}, "big[0]": {"host": "big", "ncpus": 4},
              "big[1]": {"host": "big", "ncpus": 4}}
    result = run(tree, "execjob_begin", job, "big", vnodes=vnodes)
    assert result.accepted, result.reject_message
    assert tree.cpus(job["id"]) == [0, 1, 2, 3, 4]
    assert tree.memory_limit(job["id"]) == 3 * GB


def test_begin_on_a_host_without_vnodes_of_the_job_makes_no_cgroup_at_all(tree):
    job = padded_job(hosts=("n1", "n2"))
    result = run(tree, "execjob_begin", job, "pbs-server")
    assert result.accepted, result.reject_message
    assert not (tree.root / "pbs_jobs").exists() and not (tree.root / "cpuset" / "pbs_jobs").exists()
    assert any("job has no vnode on pbs-server, no cgroup made" in line for line in result.log)


def test_two_jobs_on_one_host_get_disjoint_cpus_and_a_third_that_does_not_fit_is_rejected(tree):
    first, second, third = (padded_job("%d.pbs-server" % i, ncpus=n) for i, n in ((1, 3), (2, 4), (3, 2)))
    assert run(tree, "execjob_begin", first, "n1").accepted
    assert run(tree, "execjob_begin", second, "n1").accepted
    assert tree.cpus("1.pbs-server") == [0, 1, 2]
    assert tree.cpus("2.pbs-server") == [3, 4, 5, 6]
    result = run(tree, "execjob_begin", third, "n1")
    assert not result.accepted
    assert "needs 2 CPUs here but only 1 of 0-7 are free (other jobs hold 0-6)" in result.reject_message
    assert not tree.job_dir("cpuset", "3.pbs-server").exists()


def test_begin_again_keeps_the_same_cpus(tree):
    job = padded_job(ncpus=2)
    assert run(tree, "execjob_begin", job, "n3").accepted
    assert run(tree, "execjob_begin", job, "n3").accepted
    assert tree.cpus(job["id"]) == [0, 1]


def test_begin_leaves_excluded_cpus_alone(tree):
    job = padded_job(ncpus=2)
    result = run(tree, "execjob_begin", job, "n1", config=tree.config(exclude_cpus=[0, 2]))
    assert result.accepted, result.reject_message
    assert tree.cpus(job["id"]) == [1, 3]


def test_begin_without_mem_writes_no_memory_limit(tree):
    job = {"id": "9.pbs-server", "exec_vnode": "(n1:ncpus=1)", "exec_host": "n1/0"}
    assert run(tree, "execjob_begin", job, "n1").accepted
    limit_file = "memory.limit_in_bytes" if tree.version == 1 else "memory.max"
    assert not (tree.job_dir("memory", job["id"]) / limit_file).exists()
    assert tree.cpus(job["id"]) == [0]


# ---------------------------------------------------------------- execjob_resize
KEPT_HOSTS = ("n1", "n3", "n4")


def test_padded_job_pruned_from_5_to_3_hosts(tree):
    """Every host has its own hierarchy (as every mom has its own kernel); the released
    hosts n2, n5 end without a job cgroup, the kept ones with the kept assignment."""
    job = padded_job(ncpus=2, mem="1gb")
    trees = {}
    for index, host in enumerate(job["exec_host"].split("+")):
        host = host.split("/")[0]
        trees[host] = FakeHierarchy(tree.root.parent / ("host_" + host), tree.version)
        assert run(trees[host], "execjob_begin", job, host).accepted
    pruned = {"id": job["id"], "exec_vnode": "(n1:ncpus=2:mem=1gb)+(n3:ncpus=1:mem=512mb)+(n4:ncpus=2:mem=1gb)",
              "exec_host": "n1/0*2+n3/0+n4/0*2", "tolerate_node_failures": "job_start"}
    for host, host_tree in trees.items():
        result = run(host_tree, "execjob_resize", pruned, host)
        assert result.accepted, (host, result.reject_message)
    for host in ("n2", "n5"):
        assert not trees[host].exists(job["id"]), host
        assert any("job has nothing left on %s, cgroups removed" % host in line for line in run(
            trees[host], "execjob_resize", pruned, host).log)
    assert trees["n1"].cpus(job["id"]) == [0, 1] and trees["n1"].memory_limit(job["id"]) == GB
    assert trees["n3"].cpus(job["id"]) == [0] and trees["n3"].memory_limit(job["id"]) == 512 * MB
    assert trees["n4"].cpus(job["id"]) == [0, 1] and trees["n4"].memory_limit(job["id"]) == GB


def test_multi_vnode_host_keeping_part_of_its_allocation_shrinks(tree):
    vnodes = {"n1": {"host": "n1", "ncpus": 8}, "big[0]": {"host": "big", "ncpus": 4},
              "big[1]": {"host": "big", "ncpus": 4}}
    job = {"id": "11.pbs-server", "exec_vnode": "(n1:ncpus=1)+(big[0]:ncpus=3:mem=2gb+big[1]:ncpus=2:mem=2gb)",
           "exec_host": "n1/0+big/0*5"}
    assert run(tree, "execjob_begin", job, "big", vnodes=vnodes).accepted
    assert tree.cpus(job["id"]) == [0, 1, 2, 3, 4]
    pruned = dict(job, exec_vnode="(n1:ncpus=1)+(big[0]:ncpus=3:mem=2gb)", exec_host="n1/0+big/0*3")
    result = run(tree, "execjob_resize", pruned, "big", vnodes=vnodes)
    assert result.accepted, result.reject_message
    assert tree.cpus(job["id"]) == [0, 1, 2]
    assert tree.memory_limit(job["id"]) == 2 * GB
    assert any("resized: cpus 0-4 -> 0-2, mem=%d bytes" % (2 * GB) in line for line in result.log)


def test_resize_keeps_a_subset_and_frees_cpus_for_the_next_job(tree):
    first = padded_job("1.pbs-server", hosts=("n1", "n2"), ncpus=2)
    filler = padded_job("2.pbs-server", hosts=("n1",), ncpus=2)
    assert run(tree, "execjob_begin", filler, "n1").accepted
    assert run(tree, "execjob_begin", first, "n1").accepted
    assert tree.cpus("2.pbs-server") == [0, 1] and tree.cpus("1.pbs-server") == [2, 3]
    pruned = dict(first, exec_vnode="(n1:ncpus=1:mem=1gb)", exec_host="n1/0")
    assert run(tree, "execjob_resize", pruned, "n1").accepted
    assert tree.cpus("1.pbs-server") == [2]
    later = padded_job("3.pbs-server", hosts=("n1",), ncpus=5)
    assert run(tree, "execjob_begin", later, "n1").accepted
    assert tree.cpus("3.pbs-server") == [3, 4, 5, 6, 7]
    all_cpus = [set(tree.cpus(j)) for j in ("1.pbs-server", "2.pbs-server", "3.pbs-server")]
    assert sum(len(c) for c in all_cpus) == len(set().union(*all_cpus))


def test_resize_write_refused_rejects_with_the_file_and_reason(tree):
    job = padded_job(ncpus=2)
    assert run(tree, "execjob_begin", job, "n1").accepted
    limit_file = "memory.limit_in_bytes" if tree.version == 1 else "memory.max"
    limit_path = tree.job_dir("memory", job["id"]) / limit_file
    limit_path.unlink()
    limit_path.mkdir()  # writing to it now fails (EISDIR) as a kernel refusal would
    pruned = dict(job, exec_vnode="(n1:ncpus=1:mem=512mb)", exec_host="n1/0")
    result = run(tree, "execjob_resize", pruned, "n1")
    assert not result.accepted
    assert result.reject_message == ("cgroup_resize: job 7.pbs-server on n1: writing %d to %s failed: [EISDIR] Is a directory"
                                     % (512 * MB, limit_path))
    assert any(result.reject_message in line and ";0006;" in line for line in result.log)


def test_resize_cannot_grow(tree):
    job = padded_job(hosts=("n1",), ncpus=1)
    assert run(tree, "execjob_begin", job, "n1").accepted
    grown = dict(job, exec_vnode="(n1:ncpus=3:mem=1gb)", exec_host="n1/0*3")
    result = run(tree, "execjob_resize", grown, "n1")
    assert not result.accepted
    assert "cannot grow the job's cpuset on n1 from 1 to 3 CPUs" in result.reject_message
    assert tree.cpus(job["id"]) == [0]


def test_resize_of_a_job_without_cgroup_is_left_alone(tree):
    job = padded_job(hosts=("n1",), ncpus=1)
    result = run(tree, "execjob_resize", job, "n1")
    assert result.accepted
    assert not tree.exists(job["id"])
    assert any("no cgroup on n1" in line for line in result.log)


def test_resize_does_not_try_to_set_job_attributes(tree):
    """PP-928 interface 9: nothing is settable under execjob_resize; the hook only reads."""
    job = padded_job(hosts=("n1",), ncpus=2)
    assert run(tree, "execjob_begin", job, "n1").accepted
    result = run(tree, "execjob_resize", dict(job, exec_vnode="(n1:ncpus=1:mem=1gb)", exec_host="n1/0"), "n1")
    assert result.accepted and result.changes == {} and result.vnodes == {}


# ---------------------------------------------------------------- execjob_launch / execjob_end
def test_launch_puts_the_hooks_parent_process_in_the_job_cgroups(tree):
    job = padded_job(hosts=("n1",), ncpus=1)
    assert run(tree, "execjob_begin", job, "n1").accepted
    result = run(tree, "execjob_launch", job, "n1")
    assert result.accepted, result.reject_message
    # The harness runs the hook as a child of this process, as PBS runs it as a child of
    # the process that becomes the job.
    assert tree.procs(job["id"], "cpuset") == [os.getpid()]
    assert tree.procs(job["id"], "memory") == [os.getpid()]


def test_end_kills_leftover_processes_and_removes_the_cgroups_but_spares_its_own_ancestors(tree):
    job = padded_job(hosts=("n1",), ncpus=1)
    assert run(tree, "execjob_begin", job, "n1").accepted
    leftover = subprocess.Popen(["sleep", "600"])
    try:
        procs = tree.job_dir("cpuset", job["id"]) / "cgroup.procs"
        procs.write_text("%d\n%d\n" % (leftover.pid, os.getpid()))
        result = run(tree, "execjob_end", job, "n1")
        assert result.accepted, result.reject_message
        assert leftover.wait() == -signal.SIGKILL
    finally:
        if leftover.poll() is None:
            leftover.kill()
            leftover.wait()
    assert not tree.exists(job["id"])
    assert (tree.root / "cpuset" if tree.version == 1 else tree.root).joinpath("pbs_jobs").is_dir()
    # This test process (an ancestor of the hook) was moved to the root, not killed.
    root_procs = (tree.root / "cpuset" if tree.version == 1 else tree.root) / "cgroup.procs"
    assert root_procs.read_text().split() == [str(os.getpid())]
    assert any("cgroups removed on n1" in line for line in result.log)


def test_end_of_a_job_without_cgroups_is_accepted(tree):
    result = run(tree, "execjob_end", padded_job(hosts=("n1",)), "n1")
    assert result.accepted
    assert any("cgroups removed on n1: none" in line for line in result.log)


def test_other_events_are_ignored(tree):
    result = run(tree, "execjob_prologue", padded_job(hosts=("n1",)), "n1")
    assert result.accepted and result.log == []
    assert not (tree.root / "cpuset" / "pbs_jobs").exists() and not (tree.root / "pbs_jobs").exists()


# ---------------------------------------------------------------- config and detection
def test_no_cgroup_hierarchy_in_the_mount_table_rejects(tmp_path):
    tree = FakeHierarchy(tmp_path, 1)
    tree.mounts_file.write_text("proc /proc proc rw 0 0\n")
    result = run(tree, "execjob_begin", padded_job(hosts=("n1",)), "n1")
    assert not result.accepted
    assert "no cgroup v2 file system at %s and no cgroup v1 cpuset and memory controllers under it in %s" % (
        tree.root, tree.mounts_file) in result.reject_message


def test_v1_mount_points_with_escaped_names_are_found(tmp_path):
    base = tmp_path / "with space"
    base.mkdir()
    tree = FakeHierarchy(base, 1)
    # The kernel writes a space in a mount point as \040.
    tree.mounts_file.write_text(tree.mounts_file.read_text().replace(str(base), str(base).replace(" ", "\\040")))
    job = padded_job(hosts=("n1",), ncpus=1)
    result = run(tree, "execjob_begin", job, "n1")
    assert result.accepted, result.reject_message
    assert tree.cpus(job["id"]) == [0]


@pytest.mark.parametrize("config_text, problem", [
    ("{not json", "is not valid JSON"),
    (json.dumps({"rooot": "/x"}), "unknown key(s) rooot"),
    (json.dumps({"root": "sys/fs/cgroup"}), "root must be an absolute path"),
    (json.dumps({"prefix": "../escape"}), "prefix must be a relative cgroup path"),
    (json.dumps({"exclude_cpus": [-1]}), "exclude_cpus[0] must be a CPU number >= 0, not -1"),
    (json.dumps({"kill_timeout": "10"}), "kill_timeout must be a number of seconds >= 0"),
])
def test_bad_config_rejects_naming_the_file(tmp_path, config_text, problem):
    tree = FakeHierarchy(tmp_path, 1)
    result = run(tree, "execjob_begin", padded_job(hosts=("n1",)), "n1", config_text=config_text)
    assert not result.accepted
    assert result.reject_message.startswith("cgroup_resize: ")
    assert "cgroup_resize.CF" in result.reject_message and problem in result.reject_message
    assert not (tree.root / "cpuset" / "pbs_jobs").exists()


def test_bundled_default_config_is_valid_under_its_schema():
    jsonschema.validate(DEFAULT_CONFIG, SCHEMA)


@pytest.mark.parametrize("config, valid", [
    ({}, True),
    ({"prefix": "pbs/jobs", "exclude_cpus": [0, 1], "kill_timeout": 2.5}, True),
    ({"root": "relative"}, False),
    ({"prefix": "a/../b"}, False),
    ({"prefix": "/abs"}, False),
    ({"exclude_cpus": [0, 0]}, False),
    ({"exclude_cpus": [-2]}, False),
    ({"kill_timeout": -1}, False),
    ({"extra": 1}, False),
])
def test_schema_and_hook_agree_on_configs(tmp_path, config, valid):
    errors = list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(config))
    assert (not errors) is valid, errors
    tree = FakeHierarchy(tmp_path, 1)
    merged = dict(tree.config(), **config)
    result = run(tree, "execjob_end", padded_job(hosts=("n1",)), "n1", config_text=json.dumps(merged))
    if valid:
        assert result.accepted, result.reject_message
    else:
        assert not result.accepted
