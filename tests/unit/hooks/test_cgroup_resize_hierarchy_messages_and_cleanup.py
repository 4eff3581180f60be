"""The bundled cgroup_resize hook (files/hooks/cgroup_resize.py), its hierarchy and event code.
Which cgroup v1 mounts are used, an existing prefix cgroup, the memory nodes a job gets, a host
where the job has no CPUs, the hook's messages (its own name, the cgroups used or removed) and
removing a cgroup that the kernel still calls busy (kill_timeout).

Whole events run through :mod:`mockpbs.harness` on the directory trees of
test_cgroup_resize.py; the removal and mkdir failures load the hook file in-process (with a
stand-in ``pbs`` module) to give it a kernel that answers EBUSY or EAGAIN and a fake clock.
"""
import errno
import os
import sys
import types
from pathlib import Path

import pytest

from mockpbs.harness import run_hook

# the helpers and fixtures of the hook's own tests (their directory, not on sys.path under
# --import-mode=importlib)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_cgroup_resize import FakeHierarchy, padded_job, tree  # noqa: E402,F401  (tree: a fixture)  pylint: disable=unused-import

REPO = Path(__file__).resolve().parents[3]
HOOK_FILE = REPO / "files" / "hooks" / "cgroup_resize.py"
HOOK_SOURCE = HOOK_FILE.read_text()
NAME = "site_cgroups"  # not the default name: messages must carry pbs.event().hook_name
GB = 1024 ** 3
MB = 1024 ** 2
NO_HIERARCHY = "no cgroup v2 file system at %s and no cgroup v1 cpuset and memory controllers under it in %s"


def run(tree, event, job, host, config=None):
    result = run_hook(HOOK_SOURCE, event=event, job=job, local_host=host,
                      hook_config=config or tree.config(), hook_name=NAME)
    assert result.exception is None, result.exception
    assert not result.alarm
    return result


def messages(result):
    return [record[3] for record in result.records]


def fake_cpuset(directory, cpus="0-7", mems="0"):
    """A cgroup v1 cpuset hierarchy's top directory, as the kernel shows it."""
    directory.mkdir(parents=True)
    (directory / "cpuset.cpus").write_text(cpus + "\n")
    (directory / "cpuset.mems").write_text(mems + "\n")
    (directory / "cgroup.procs").write_text("")


def v1_mounts(tree, cpuset_mounts, memory_mount):
    lines = ["cgroup %s cgroup rw,nosuid,nodev,noexec,relatime,cpuset 0 0" % m for m in cpuset_mounts]
    lines.append("cgroup %s cgroup rw,nosuid,nodev,noexec,relatime,memory 0 0" % memory_mount)
    tree.mounts_file.write_text("\n".join(lines) + "\n")


# ---------------------------------------------------------------- which v1 mounts
def test_a_cpuset_hierarchy_mounted_outside_root_is_not_used(tmp_path):
    """cpuset(7): the legacy place of the cpuset file system is /dev/cpuset. Only
    controllers mounted under ``root`` count; with cpuset mounted elsewhere only, the event
    is rejected and nothing is created there."""
    tree = FakeHierarchy(tmp_path, 1)
    legacy = tmp_path / "dev" / "cpuset"
    fake_cpuset(legacy)
    v1_mounts(tree, [legacy], tree.root / "memory")
    result = run(tree, "execjob_begin", padded_job(hosts=("n1",), ncpus=1), "n1")
    assert not result.accepted
    assert result.reject_message.endswith(NO_HIERARCHY % (tree.root, tree.mounts_file))
    assert not (legacy / "pbs_jobs").exists()


def test_a_cpuset_hierarchy_mounted_under_another_name_below_root_is_used(tmp_path):
    """A hierarchy co-mounting controllers is named after them (as systemd mounts
    ``cpu,cpuacct``): ``<root>/cpu,cpuset`` holds the cpuset controller."""
    tree = FakeHierarchy(tmp_path, 1)
    comounted = tree.root / "cpu,cpuset"
    fake_cpuset(comounted)
    tree.mounts_file.write_text(
        "cgroup %s cgroup rw,nosuid,nodev,noexec,relatime,cpu,cpuset 0 0\n"
        "cgroup %s/memory cgroup rw,nosuid,nodev,noexec,relatime,memory 0 0\n" % (comounted, tree.root))
    job = padded_job(hosts=("n1",), ncpus=2)
    result = run(tree, "execjob_begin", job, "n1")
    assert result.accepted, result.reject_message
    assert (comounted / "pbs_jobs" / job["id"] / "cpuset.cpus").read_text() == "0-1"
    assert not (tree.root / "cpuset" / "pbs_jobs").exists()


@pytest.mark.parametrize("conventional_first", [True, False], ids=["conventional_first", "other_first"])
def test_the_conventional_mount_wins_over_another_mount_of_the_same_controller(tmp_path, conventional_first):
    """A v1 hierarchy may be mounted twice (a second mount of it, a bind mount):
    ``<root>/cpuset`` is used whichever line comes first."""
    tree = FakeHierarchy(tmp_path, 1)
    other = tree.root / "cpuset_too"
    fake_cpuset(other)
    cpusets = [tree.root / "cpuset", other]
    v1_mounts(tree, cpusets if conventional_first else cpusets[::-1], tree.root / "memory")
    job = padded_job(hosts=("n1",), ncpus=1)
    assert run(tree, "execjob_begin", job, "n1").accepted
    assert tree.cpus(job["id"]) == [0]
    assert not (other / "pbs_jobs").exists()


def test_a_v1_host_without_the_memory_controller_is_rejected(tmp_path):
    """Booted with ``cgroup_disable=memory`` (kernel-parameters.txt), a v1 host has a
    cpuset hierarchy and no memory one: the hook needs both."""
    tree = FakeHierarchy(tmp_path, 1)
    tree.mounts_file.write_text("cgroup %s/cpuset cgroup rw,nosuid,nodev,noexec,relatime,cpuset 0 0\n" % tree.root)
    result = run(tree, "execjob_begin", padded_job(hosts=("n1",), ncpus=1), "n1")
    assert not result.accepted
    assert result.reject_message == "%s: job 7.pbs-server on n1: %s" % (
        NAME, NO_HIERARCHY % (tree.root, tree.mounts_file))
    assert not (tree.root / "cpuset" / "pbs_jobs").exists()


# ---------------------------------------------------------------- the prefix cgroup (v1)
@pytest.mark.parametrize("cpus, mems, after, job_cpus", [
    # A v1 cpuset made by someone else (or by a run that stopped half-way) starts with empty
    # cpuset.cpus and cpuset.mems, and no task can enter a cpuset without them: the hook
    # fills them in from the parent as it does for one it creates.
    ("", "", ("0-7", "0"), [0, 1]),
    # The CPUs jobs may get are the prefix cgroup's: one the admin set to 4-7 stays so and
    # the job gets its lowest free CPUs.
    ("4-7", "0", ("4-7", "0"), [4, 5]),
], ids=["empty-gets-its-parents", "narrowed-by-the-admin-is-kept"])
def test_an_existing_prefix_cpuset(tmp_path, cpus, mems, after, job_cpus):
    tree = FakeHierarchy(tmp_path, 1)
    prefix = tree.root / "cpuset" / "pbs_jobs"
    prefix.mkdir()
    (prefix / "cpuset.cpus").write_text(cpus + "\n")
    (prefix / "cpuset.mems").write_text(mems + "\n")
    job = padded_job(hosts=("n1",), ncpus=2)
    assert run(tree, "execjob_begin", job, "n1").accepted
    assert ((prefix / "cpuset.cpus").read_text().strip(), (prefix / "cpuset.mems").read_text().strip()) == after
    assert tree.cpus(job["id"]) == job_cpus


def test_the_job_gets_every_memory_node_of_the_host(tree):
    """cpuset.mems of the job = the prefix cgroup's memory nodes (two NUMA nodes here)."""
    if tree.version == 1:
        (tree.root / "cpuset" / "cpuset.mems").write_text("0-1\n")
    else:
        (tree.root / "cpuset.mems.effective").write_text("0-1\n")
    job = padded_job(hosts=("n1",), ncpus=1)
    assert run(tree, "execjob_begin", job, "n1").accepted
    assert (tree.job_dir("cpuset", job["id"]) / "cpuset.mems").read_text().strip() == "0-1"


# ---------------------------------------------------------------- events and their messages
def test_a_host_where_the_job_has_no_cpus_gets_no_cpuset(tree):
    """A chunk of ncpus=0 (memory only): the host gets the memory limit and no cpuset."""
    job = {"id": "7.pbs-server", "exec_vnode": "(n1:ncpus=1)+(n2:ncpus=0:mem=1gb)", "exec_host": "n1/0+n2/0"}
    result = run(tree, "execjob_begin", job, "n2")
    assert result.accepted, result.reject_message
    assert messages(result) == ["%s: cgroup v%d of pbs_jobs/7.pbs-server on n2: cpus=none mem=%d bytes"
                                % (NAME, tree.version, GB)]
    assert tree.memory_limit(job["id"]) == GB
    if tree.version == 1:
        assert not tree.job_dir("cpuset", job["id"]).exists()
    else:
        assert not (tree.job_dir("cpuset", job["id"]) / "cpuset.cpus").exists()


def job_dirs_text(tree, jobid):
    dirs = [tree.job_dir("cpuset", jobid), tree.job_dir("memory", jobid)]
    return ", ".join(str(d) for d in (dirs if tree.version == 1 else dirs[:1]))


def test_launch_says_where_it_put_the_process(tree):
    job = padded_job(hosts=("n1",), ncpus=1)
    assert run(tree, "execjob_begin", job, "n1").accepted
    result = run(tree, "execjob_launch", job, "n1")
    assert result.accepted, result.reject_message
    assert messages(result) == ["%s: process %d put in %s" % (NAME, os.getpid(), job_dirs_text(tree, job["id"]))]


def test_launch_of_a_job_without_cgroups_leaves_the_process_alone(tree):
    result = run(tree, "execjob_launch", padded_job(hosts=("n1",), ncpus=1), "n1")
    assert result.accepted, result.reject_message
    assert messages(result) == ["%s: job has no cgroup on n1 (started before the hook?), process %d left alone"
                                % (NAME, os.getpid())]
    assert not tree.exists("7.pbs-server")


def test_resize_says_what_it_kept(tree):
    job = padded_job(hosts=("n1", "n2"), ncpus=2)
    assert run(tree, "execjob_begin", job, "n1").accepted
    result = run(tree, "execjob_resize", dict(job, exec_vnode="(n1:ncpus=1:mem=512mb)", exec_host="n1/0"), "n1")
    assert result.accepted, result.reject_message
    assert messages(result) == ["%s: cgroups on n1 resized: cpus 0-1 -> 0, mem=%d bytes" % (NAME, 512 * MB)]


def test_a_released_host_says_which_cgroups_it_removed(tree):
    job = padded_job(hosts=("n1", "n2"), ncpus=2)
    assert run(tree, "execjob_begin", job, "n2").accepted
    removed = job_dirs_text(tree, job["id"])
    pruned = dict(job, exec_vnode="(n1:ncpus=2:mem=1gb)", exec_host="n1/0*2")
    result = run(tree, "execjob_resize", pruned, "n2")
    assert result.accepted, result.reject_message
    assert messages(result) == ["%s: job has nothing left on n2, cgroups removed: %s" % (NAME, removed)]
    assert not tree.exists(job["id"])
    again = run(tree, "execjob_resize", pruned, "n2")
    assert messages(again) == ["%s: job has nothing left on n2, cgroups removed: none" % NAME]


# ---------------------------------------------------------------- in-process: a kernel that refuses
@pytest.fixture
def hook(load_hook):
    """The hook file as a module, importing a minimal stand-in ``pbs`` (conftest.py)."""
    return load_hook(HOOK_FILE)


class Kernel:
    """os.kill, os.rmdir and the clock, as a kernel whose cgroup stays busy ``busy_for``
    rmdir calls (None: for ever) would answer; time passes only in sleep()."""

    def __init__(self, monkeypatch, hook, busy_path, busy_for=None, pids=""):
        self.killed, self.slept, self.now = [], [], 1000.0
        self.busy_path, self.busy_left, self.pids = str(busy_path), busy_for, pids
        self.rmdir = os.rmdir
        monkeypatch.setattr(hook.os, "kill", lambda pid, sig: self.killed.append((pid, sig)))
        monkeypatch.setattr(hook.os, "rmdir", self.fake_rmdir)
        monkeypatch.setattr(hook, "time", types.SimpleNamespace(time=lambda: self.now, sleep=self.sleep))

    def fake_rmdir(self, path):
        if str(path) == self.busy_path and self.busy_left != 0:
            if self.busy_left is not None:
                self.busy_left -= 1
            (Path(path) / "cgroup.procs").write_text(self.pids)
            raise OSError(errno.EBUSY, "Device or resource busy")
        self.rmdir(path)

    def sleep(self, seconds):
        assert len(self.slept) < 1000, "still polling long after kill_timeout"
        self.slept.append(seconds)
        self.now += seconds


def begun_job(hook, tmp_path, kill_timeout=10):
    """A v2 host with the cgroup of job 7.pbs-server made (by execjob_begin's code)."""
    tree = FakeHierarchy(tmp_path, 2)
    hierarchy = hook.Hierarchy(hook.check_config(tree.config(kill_timeout=kill_timeout)))
    hierarchy.ensure_prefix()
    hierarchy.set_cpus("7.pbs-server", [0])
    return hierarchy, tree.job_dir("cpuset", "7.pbs-server")


def test_a_leftover_listed_after_the_moms_own_process_is_killed_too(hook, tmp_path, monkeypatch):
    hierarchy, job_dir = begun_job(hook, tmp_path)
    kernel = Kernel(monkeypatch, hook, job_dir, busy_for=0)
    (job_dir / "cgroup.procs").write_text("%d\n4242\n" % os.getpid())
    assert hierarchy.remove_job("7.pbs-server", 10) == [str(job_dir)]
    assert kernel.killed == [(4242, hook.signal.SIGKILL)]
    assert (job_dir.parent.parent / "cgroup.procs").read_text() == str(os.getpid())
    assert not job_dir.exists()


def test_a_process_of_another_pid_namespace_listed_as_0_is_never_signalled(hook, tmp_path, monkeypatch):
    """cgroup v2 lists a process the reader's PID namespace cannot see as ``0`` (a mom in a
    container): kill(0, SIGKILL) would kill the mom's own process group."""
    hierarchy, job_dir = begun_job(hook, tmp_path)
    kernel = Kernel(monkeypatch, hook, job_dir, busy_for=0)
    (job_dir / "cgroup.procs").write_text("0\n4242\n0\n")
    hierarchy.remove_job("7.pbs-server", 10)
    assert kernel.killed == [(4242, hook.signal.SIGKILL)]


def test_processes_slow_to_leave_after_sigkill_are_waited_for(hook, tmp_path, monkeypatch):
    """A killed process leaves its cgroup a moment later; rmdir is EBUSY until then."""
    hierarchy, job_dir = begun_job(hook, tmp_path)
    kernel = Kernel(monkeypatch, hook, job_dir, busy_for=2)
    assert hierarchy.remove_job("7.pbs-server", 10) == [str(job_dir)]
    assert not job_dir.exists()
    assert 0 < sum(kernel.slept) < 10


def test_a_kill_timeout_of_zero_gives_up_at_the_first_busy_rmdir(hook, tmp_path, monkeypatch):
    hierarchy, job_dir = begun_job(hook, tmp_path)
    kernel = Kernel(monkeypatch, hook, job_dir)
    with pytest.raises(hook.CgroupError, match="cannot remove cgroup %s: " % job_dir):
        hierarchy.remove_job("7.pbs-server", 0)
    assert kernel.slept == []


@pytest.mark.parametrize("pids, shown", [("4242\n", "[4242]"), ("", "none")], ids=["a_process_left", "empty"])
def test_a_cgroup_still_busy_after_kill_timeout_fails_saying_what_is_in_it(hook, tmp_path, monkeypatch, pids, shown):
    hierarchy, job_dir = begun_job(hook, tmp_path)
    kernel = Kernel(monkeypatch, hook, job_dir, pids=pids)
    with pytest.raises(hook.CgroupError) as raised:
        hierarchy.remove_job("7.pbs-server", 2)
    assert str(raised.value) == "cannot remove cgroup %s: [Errno %d] Device or resource busy (processes still in it: %s)" % (
        job_dir, errno.EBUSY, shown)
    assert 2 - 1e-6 <= kernel.now - 1000.0 < 2.5


def test_a_cgroup_the_kernel_will_not_create_is_named(hook, tmp_path, monkeypatch):
    """cgroup v2: mkdir fails with EAGAIN once cgroup.max.descendants is reached."""
    tree = FakeHierarchy(tmp_path, 2)
    hierarchy = hook.Hierarchy(hook.check_config(tree.config()))

    def refused(path, *args):
        raise OSError(errno.EAGAIN, "Resource temporarily unavailable")

    monkeypatch.setattr(hook.os, "mkdir", refused)
    with pytest.raises(hook.CgroupError) as raised:
        hierarchy.ensure_prefix()
    assert str(raised.value) == "cannot create cgroup %s: [Errno %d] Resource temporarily unavailable" % (
        tree.root / "pbs_jobs", errno.EAGAIN)
