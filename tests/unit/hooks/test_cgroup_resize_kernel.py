"""The bundled cgroup_resize hook on the real kernel's cgroup v1 hierarchy.

Seed: pp-928-reliable-job-startup.txt, interface 9 (execjob_resize). Needs root and
writable cgroup v1 ``cpuset`` and ``memory`` controllers at ``/sys/fs/cgroup/<controller>``
(skipped, saying why, elsewhere; the same logic on a directory tree:
test_cgroup_resize.py). Every test works under its own prefix
``hpcpbs_test_<pid>_<n>`` and the fixture removes everything under it, killing what runs
there, whether the test passed or not. Each simulated host gets its own sub-prefix, as
every mom owns its own cgroup subtree.
"""
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mockpbs.harness import run_hook

REPO = Path(__file__).resolve().parents[3]
HOOK_SOURCE = (REPO / "files" / "hooks" / "cgroup_resize.py").read_text()
CGROUP_ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("cpuset", "memory")
MB = 1024 ** 2
_counter = itertools.count()


def writable_v1_problem():
    """Why the real-kernel tests cannot run here, or None."""
    if os.geteuid() != 0:
        return "not root"
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError as exc:
        return "cannot read /proc/self/mounts: %s" % exc
    for controller in CONTROLLERS:
        wanted = str(CGROUP_ROOT / controller)
        if not any(line.split()[1:3] == [wanted, "cgroup"] and controller in line.split()[3].split(",")
                   for line in mounts if len(line.split()) > 3):
            return "no cgroup v1 %s controller mounted at %s" % (controller, wanted)
        if not os.access(wanted, os.W_OK):
            return "%s is not writable" % wanted
    return None


def host_cpus():
    return parse_cpus((CGROUP_ROOT / "cpuset" / "cpuset.effective_cpus").read_text())


def parse_cpus(text):
    cpus = []
    for piece in text.strip().split(","):
        if "-" in piece:
            low, high = piece.split("-")
            cpus.extend(range(int(low), int(high) + 1))
        elif piece:
            cpus.append(int(piece))
    return cpus


def _remove_subtree(controller_root, path):
    """Kill the processes of every cgroup under ``path`` (this test process is moved back
    to ``controller_root`` instead) and remove the cgroups, deepest first."""
    if not path.is_dir():
        return
    for sub, _dirs, _files in os.walk(path, topdown=False):
        procs = Path(sub) / "cgroup.procs"
        for pid in procs.read_text().split() if procs.exists() else []:
            try:
                if int(pid) == os.getpid():
                    (controller_root / "cgroup.procs").write_text(pid)
                else:
                    os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
        for _attempt in range(200):  # killed processes take a moment to leave
            try:
                os.rmdir(sub)
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.05)


class KernelPrefix:
    def __init__(self):
        self.prefix = "hpcpbs_test_%d_%d" % (os.getpid(), next(_counter))

    def config(self, host):
        return {"root": str(CGROUP_ROOT), "prefix": "%s/%s" % (self.prefix, host),
                "mounts_file": "/proc/self/mounts", "kill_timeout": 10}

    def job_dir(self, controller, host, jobid):
        return CGROUP_ROOT / controller / self.prefix / host / jobid

    def exists(self, host, jobid):
        return any(self.job_dir(c, host, jobid).exists() for c in CONTROLLERS)

    def cpus(self, host, jobid):
        return parse_cpus((self.job_dir("cpuset", host, jobid) / "cpuset.cpus").read_text())

    def memory_limit(self, host, jobid):
        return int((self.job_dir("memory", host, jobid) / "memory.limit_in_bytes").read_text())

    def tasks(self, host, jobid, controller):
        return [int(p) for p in (self.job_dir(controller, host, jobid) / "cgroup.procs").read_text().split()]

    def cleanup(self):
        for controller in CONTROLLERS:
            _remove_subtree(CGROUP_ROOT / controller, CGROUP_ROOT / controller / self.prefix)


@pytest.fixture
def kernel(request):
    problem = writable_v1_problem()
    if problem:
        pytest.skip("no writable cgroup v1 hierarchy: %s" % problem)
    prefix = KernelPrefix()
    request.addfinalizer(prefix.cleanup)
    return prefix


def run(kernel, event, job, host):
    result = run_hook(HOOK_SOURCE, event=event, job=job, local_host=host,
                      hook_config=kernel.config(host), hook_name="cgroup_resize")
    assert result.exception is None, result.exception
    assert not result.alarm
    return result


def job_on(hosts, jobid="21.pbs-server", ncpus=1, mem="64mb"):
    return {"id": jobid, "exec_vnode": "+".join("(%s:ncpus=%d:mem=%s)" % (h, ncpus, mem) for h in hosts),
            "exec_host": "+".join("%s/0*%d" % (h, ncpus) for h in hosts), "tolerate_node_failures": "job_start"}


def test_padded_job_pruned_from_5_to_3_hosts_on_the_kernel(kernel):
    hosts = ("n1", "n2", "n3", "n4", "n5")
    job = job_on(hosts, ncpus=1, mem="128mb")
    for host in hosts:
        result = run(kernel, "execjob_begin", job, host)
        assert result.accepted, (host, result.reject_message)
        assert kernel.cpus(host, job["id"]) == host_cpus()[:1]
        assert kernel.memory_limit(host, job["id"]) == 128 * MB
    pruned = dict(job, exec_vnode="(n1:ncpus=1:mem=128mb)+(n3:ncpus=1:mem=64mb)+(n4:ncpus=1:mem=96mb)",
                  exec_host="n1/0+n3/0+n4/0")
    for host in hosts:
        result = run(kernel, "execjob_resize", pruned, host)
        assert result.accepted, (host, result.reject_message)
    assert not kernel.exists("n2", job["id"]) and not kernel.exists("n5", job["id"])
    assert kernel.memory_limit("n1", job["id"]) == 128 * MB
    assert kernel.memory_limit("n3", job["id"]) == 64 * MB
    assert kernel.memory_limit("n4", job["id"]) == 96 * MB
    for host in ("n1", "n3", "n4"):
        assert kernel.cpus(host, job["id"]) == host_cpus()[:1]


def test_multi_vnode_host_shrinks_on_the_kernel(kernel):
    if len(host_cpus()) < 2:
        pytest.skip("needs at least 2 CPUs in the root cpuset, has %s" % host_cpus())
    job = {"id": "22.pbs-server", "exec_vnode": "(big[0]:ncpus=1:mem=64mb+big[1]:ncpus=1:mem=64mb)",
           "exec_host": "big/0*2"}
    assert run(kernel, "execjob_begin", job, "big").accepted
    assert kernel.cpus("big", job["id"]) == host_cpus()[:2]
    assert kernel.memory_limit("big", job["id"]) == 128 * MB
    pruned = dict(job, exec_vnode="(big[0]:ncpus=1:mem=64mb)", exec_host="big/0")
    result = run(kernel, "execjob_resize", pruned, "big")
    assert result.accepted, result.reject_message
    assert kernel.cpus("big", job["id"]) == host_cpus()[:1]
    assert kernel.memory_limit("big", job["id"]) == 64 * MB


def test_two_jobs_never_share_cpus_before_or_after_a_resize(kernel):
    cpus = host_cpus()
    if len(cpus) < 2:
        pytest.skip("needs at least 2 CPUs in the root cpuset, has %s" % cpus)
    big = job_on(("n1",), jobid="31.pbs-server", ncpus=len(cpus) - 1)
    small = job_on(("n1",), jobid="32.pbs-server", ncpus=1)
    assert run(kernel, "execjob_begin", big, "n1").accepted
    assert run(kernel, "execjob_begin", small, "n1").accepted
    assert not set(kernel.cpus("n1", big["id"])) & set(kernel.cpus("n1", small["id"]))
    third = run(kernel, "execjob_begin", job_on(("n1",), jobid="33.pbs-server", ncpus=1), "n1")
    assert not third.accepted and "only 0 of" in third.reject_message
    assert not kernel.job_dir("cpuset", "n1", "33.pbs-server").exists()
    if len(cpus) > 2:
        shrunk = dict(big, exec_vnode="(n1:ncpus=1:mem=64mb)", exec_host="n1/0")
        assert run(kernel, "execjob_resize", shrunk, "n1").accepted
        assert len(kernel.cpus("n1", big["id"])) == 1
    assert run(kernel, "execjob_end", small, "n1").accepted
    after = run(kernel, "execjob_begin", job_on(("n1",), jobid="34.pbs-server", ncpus=1), "n1")
    assert after.accepted, after.reject_message
    assert not set(kernel.cpus("n1", big["id"])) & set(kernel.cpus("n1", "34.pbs-server"))


def test_a_write_the_kernel_refuses_rejects_the_resize(kernel):
    cpus = host_cpus()
    if len(cpus) < 2:
        pytest.skip("needs at least 2 CPUs in the root cpuset, has %s" % cpus)
    job = job_on(("n1",), jobid="41.pbs-server", ncpus=2, mem="64mb")
    assert run(kernel, "execjob_begin", job, "n1").accepted
    # A child cpuset holding the CPU the resize drops: v1 wants a parent to be a superset
    # of its children, so the kernel answers EBUSY.
    child = kernel.job_dir("cpuset", "n1", job["id"]) / "task0"
    child.mkdir()
    (child / "cpuset.mems").write_text((CGROUP_ROOT / "cpuset" / "cpuset.mems").read_text())
    (child / "cpuset.cpus").write_text(str(cpus[1]))
    pruned = dict(job, exec_vnode="(n1:ncpus=1:mem=64mb)", exec_host="n1/0")
    result = run(kernel, "execjob_resize", pruned, "n1")
    assert not result.accepted
    assert "writing %d to %s failed: [EBUSY]" % (cpus[0], kernel.job_dir("cpuset", "n1", job["id"]) / "cpuset.cpus") \
        in result.reject_message
    assert kernel.cpus("n1", job["id"]) == cpus[:2]
    # execjob_end still cleans up, child cgroup included.
    assert run(kernel, "execjob_end", job, "n1").accepted
    assert not kernel.exists("n1", job["id"])


LAUNCHER = r"""
import json, os, sys
from mockpbs.harness import run_hook
request = json.loads(sys.argv[1])
result = run_hook(request["source"], event="execjob_launch", job=request["job"],
                  local_host=request["host"], hook_config=request["config"], hook_name="cgroup_resize")
sys.stdout.write(json.dumps({"accepted": result.accepted, "reject": result.reject_message,
                             "exception": result.exception}) + "\n")
sys.stdout.flush()
os.execv("/bin/sleep", ["sleep", "600"])
"""


def test_launch_puts_the_job_process_in_its_cgroups_and_end_kills_it(kernel):
    """As under PBS, the launch hook's parent is the process that then becomes the job."""
    job = job_on(("n1",), jobid="51.pbs-server", ncpus=1)
    assert run(kernel, "execjob_begin", job, "n1").accepted
    request = json.dumps({"source": HOOK_SOURCE, "job": job, "host": "n1", "config": kernel.config("n1")})
    launched = subprocess.Popen([sys.executable, "-c", LAUNCHER, request], stdout=subprocess.PIPE, text=True)
    try:
        outcome = json.loads(launched.stdout.readline())
        assert outcome == {"accepted": True, "reject": None, "exception": None}
        for controller in CONTROLLERS:
            assert kernel.tasks("n1", job["id"], controller) == [launched.pid]
        result = run(kernel, "execjob_end", job, "n1")
        assert result.accepted, result.reject_message
        assert launched.wait() == -signal.SIGKILL
    finally:
        if launched.poll() is None:
            launched.kill()
            launched.wait()
    assert not kernel.exists("n1", job["id"])
    assert (CGROUP_ROOT / "cpuset" / kernel.prefix / "n1").is_dir()
