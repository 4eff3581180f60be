"""Parallel test workers (``make test`` runs pytest-xdist): a nested ``pytest -n 2`` run of
two small test files with this suite's own conftests, on the mock backend.  Each worker
starts a cluster on its own /24; one worker's test fails while the other's cluster is up
and that cluster keeps running, answering over SSH, after the failing worker has taken its
own cluster down; at the end nothing of either cluster is left (no node process, mount or
cgroup).  A harness test: it runs once, whatever ``--backend`` selects."""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from launcher import cgroups, common  # noqa: E402  pylint: disable=wrong-import-position

pytestmark = [pytest.mark.integration]

NESTED_CONFTEST = '''
import importlib.util


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_root = _load("hpc_pbs_root_conftest", %(root)r)
_integration = _load("hpc_pbs_integration_conftest", %(integration)r)
globals().update({k: v for k, v in vars(_integration).items() if not k.startswith("__")})


def pytest_configure(config):
    _root.pytest_configure(config)
    _integration.pytest_configure(config)
'''

WAIT = '''
import json
import os
import time

from launcher import cgroups
from launcher.workdir import Workdir

SHARED = %(shared)r


def cluster_cgroups(workdir):
    """The cluster's cgroup directories that exist now (one per cgroup v1 controller)."""
    name = cgroups.cluster_cgroup_name(Workdir(workdir))
    return sorted(os.path.join(mount, name) for mount in cgroups.cgroup_v1_mounts().values()
                  if os.path.isdir(os.path.join(mount, name)))


def wait_for(name, seconds=240):
    deadline = time.monotonic() + seconds
    while not os.path.exists(os.path.join(SHARED, name)):
        assert time.monotonic() < deadline, "no %%s after %%d s: the files did not run on two workers" %% (name, seconds)
        time.sleep(0.2)
    with open(os.path.join(SHARED, name)) as handle:
        return handle.read()


def tell(name, text):
    with open(os.path.join(SHARED, name + ".tmp"), "w") as handle:
        handle.write(text)
    os.rename(os.path.join(SHARED, name + ".tmp"), os.path.join(SHARED, name))
'''

FAILING = '''
import json

from waiting import cluster_cgroups, tell, wait_for


def test_fails_while_the_other_worker_has_a_cluster(cluster_factory):
    cluster = cluster_factory(moms=1, up_args=["--no-atom"])
    tell("failing-cgroups", json.dumps(cluster_cgroups(cluster.workdir)))
    tell("failing-workdir", cluster.workdir)
    tell("failing-address", cluster.addresses["pbs-server"])
    wait_for("surviving-up")
    assert False, "failed on purpose"
'''

SURVIVING = '''
import json
import os
import time

from waiting import cluster_cgroups, tell, wait_for


def test_cluster_outlives_the_other_workers_failure(cluster_factory):
    cluster = cluster_factory(moms=1, up_args=["--no-atom"])
    mine = cluster_cgroups(cluster.workdir)
    tell("surviving-cgroups", json.dumps(mine))
    tell("surviving-workdir", cluster.workdir)
    tell("surviving-address", cluster.addresses["pbs-server"])
    tell("surviving-up", "")
    failing = wait_for("failing-workdir")
    deadline = time.monotonic() + 240
    while os.path.exists(os.path.join(failing, "state.json")):   # the other worker's cluster down
        assert time.monotonic() < deadline, "the failing worker's cluster is still up"
        time.sleep(0.2)
    assert cluster.launcher("status").returncode == 0
    for node in ("pbs-server", "mom1"):
        proc = cluster.ssh(node, "hostname")
        assert proc.returncode == 0 and proc.stdout.strip() == node, (node, proc.stdout, proc.stderr)
    proc = cluster.exec("pbs-server", ["qstat", "-B"])
    assert proc.returncode == 0, proc.stderr
    assert cluster_cgroups(cluster.workdir) == mine
'''


def leftovers(prefix):
    """Host processes whose command line names ``prefix`` and mounts under it."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as handle:
                argv = handle.read().decode(errors="replace")
        except OSError:
            continue
        if prefix in argv:
            found.append("process %s: %s" % (pid, argv.replace("\0", " ")))
    with open("/proc/self/mountinfo") as handle:
        for line in handle:
            if prefix in line.split()[4]:
                found.append("mount %s" % line.split()[4])
    return found


def test_two_workers_two_nets_and_a_failure_stays_in_its_worker(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "conftest.py").write_text(NESTED_CONFTEST % {
        "root": os.path.join(TESTS, "conftest.py"), "integration": os.path.join(HERE, "conftest.py")})
    (tests / "waiting.py").write_text(WAIT % {"shared": str(shared)})
    (tests / "test_a_failing.py").write_text(FAILING)
    (tests / "test_b_surviving.py").write_text(SURVIVING)
    has_cgroup_v1 = set(cgroups.cgroup_v1_mounts()) == set(common.CGROUP_CONTROLLERS)
    third = int(common.ADDRESS_PREFIX.split(".")[2])
    base = "127.1.%d" % (third % 200)  # 127.1.x: no other cluster of this suite's scheme
    env = dict(os.environ, HPC_PBS_CLUSTER_NET=base)
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID",
                 "PYTEST_CURRENT_TEST", "PYTEST_ADDOPTS"):
        env.pop(name, None)
    basetemp = tmp_path / "nested-tmp"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-c", os.devnull,
                           "--rootdir", str(tests), "--basetemp", str(basetemp), "--backend", "mock",
                           "-n", "2", "--dist", "loadfile", "-rA", "-q", str(tests)],
                          capture_output=True, text=True, cwd=str(tests), env=env, timeout=900, check=False)
    output = proc.stdout + proc.stderr
    assert "1 failed, 1 passed" in proc.stdout, output
    assert "FAILED test_a_failing.py::test_fails_while_the_other_worker_has_a_cluster[mock]" in proc.stdout, output
    assert "failed on purpose" in proc.stdout, output
    assert "PASSED test_b_surviving.py::test_cluster_outlives_the_other_workers_failure[mock]" in proc.stdout, output
    failing_net = (shared / "failing-address").read_text().rsplit(".", 1)[0]
    surviving_net = (shared / "surviving-address").read_text().rsplit(".", 1)[0]
    assert {failing_net, surviving_net} == {base, "127.1.%d" % (third % 200 + 10)}, (failing_net, surviving_net)
    for name in ("failing-workdir", "surviving-workdir"):
        workdir = (shared / name).read_text()
        assert workdir.startswith(str(basetemp)), workdir
        assert not os.path.exists(os.path.join(workdir, "state.json")), workdir
    assert leftovers(str(basetemp)) == []
    for name in ("failing-cgroups", "surviving-cgroups"):
        made = json.loads((shared / name).read_text())
        if has_cgroup_v1:   # made while up (cgroups auto), gone after down
            assert len(made) == len(common.CGROUP_CONTROLLERS), (name, made)
        assert [path for path in made if os.path.exists(path)] == [], (name, made)
