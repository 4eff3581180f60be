"""Parallel test runs (pytest-xdist, ``make test``): each worker's cluster network
(tests/conftest.py) and the lock that lets one worker at a time run the OpenPBS build."""
import importlib.util
import os
import shutil
import subprocess
import sys

import pytest

TESTS = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROOT_CONFTEST = os.path.join(TESTS, "conftest.py")
INTEGRATION = os.path.join(TESTS, "integration")
sys.path.insert(0, INTEGRATION)
from launcher import openpbs  # noqa: E402  pylint: disable=wrong-import-position


def load_root_conftest():
    spec = importlib.util.spec_from_file_location("hpc_pbs_root_conftest", ROOT_CONFTEST)
    module = importlib.util.module_from_spec(spec)
    saved = os.environ.pop("PYTEST_XDIST_WORKER", None)   # importing must not touch this run
    try:
        spec.loader.exec_module(module)
    finally:
        if saved is not None:
            os.environ["PYTEST_XDIST_WORKER"] = saved
    return module


@pytest.mark.parametrize("base, worker, expected", [
    ("127.0.1", None, "127.0.1"),
    ("127.0.1", "gw0", "127.0.1"),
    ("127.0.1", "gw1", "127.0.11"),
    ("127.0.1", "gw2", "127.0.21"),
    ("127.0.8.", "gw2", "127.0.28"),
    (None, "gw1", "127.0.11"),
    ("127.3.200", "gw5", "127.3.250"),
])
def test_each_worker_gets_its_own_net(base, worker, expected):
    assert load_root_conftest().worker_cluster_net(base, worker) == expected


@pytest.mark.parametrize("base, worker, words", [
    ("10.0.1", "gw1", ["HPC_PBS_CLUSTER_NET", "loopback /24", "10.0.1"]),
    ("127.0.1.5", "gw1", ["HPC_PBS_CLUSTER_NET", "loopback /24"]),
    ("127.0.256", None, ["HPC_PBS_CLUSTER_NET", "loopback /24"]),
    ("127.0.250", "gw1", ["HPC_PBS_CLUSTER_NET=127.0.250", "gw1", "127.0.260", "fewer workers"]),
    ("127.0.1", "master", ["worker id", "master"]),
])
def test_bad_net_or_worker_is_refused_with_its_name(base, worker, words):
    with pytest.raises(ValueError) as caught:
        load_root_conftest().worker_cluster_net(base, worker)
    for word in words:
        assert word in str(caught.value)


def test_a_parallel_run_gives_each_worker_its_net_before_the_launcher_is_imported(tmp_path):
    """A real ``pytest -n 2`` run: the workers' tests (and the launcher they import) see
    base and base+10, every test runs once."""
    shutil.copy(ROOT_CONFTEST, str(tmp_path / "conftest.py"))
    for name in ("a", "b", "c", "d"):
        (tmp_path / ("test_%s.py" % name)).write_text(
            "import os, sys\n"
            "sys.path.insert(0, %r)\n"
            "from launcher import common\n\n"
            "def test_net():\n"
            "    with open(%r, 'a') as out:\n"
            "        out.write('%%s %%s %%s\\n' %% (os.environ['PYTEST_XDIST_WORKER'],\n"
            "                  os.environ['HPC_PBS_CLUSTER_NET'], common.ADDRESS_PREFIX))\n"
            % (INTEGRATION, str(tmp_path / ("seen-%s" % name))))
    env = dict(os.environ, HPC_PBS_CLUSTER_NET="127.0.40")
    env.pop("PYTEST_XDIST_WORKER", None)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
                           "--dist", "loadfile", "-c", os.devnull, "--rootdir", str(tmp_path), str(tmp_path)],
                          capture_output=True, text=True, cwd=str(tmp_path), env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "4 passed" in proc.stdout, proc.stdout
    seen = {}
    for name in ("a", "b", "c", "d"):
        lines = (tmp_path / ("seen-%s" % name)).read_text().splitlines()
        assert len(lines) == 1, lines   # run once
        worker, net, prefix = lines[0].split()
        seen[worker] = (net, prefix)
    assert seen == {"gw0": ("127.0.40", "127.0.40."), "gw1": ("127.0.50", "127.0.50.")}, seen


def test_a_bad_base_net_stops_a_parallel_run_with_its_name(tmp_path):
    """The main process refuses it: no worker is started, crashes and is replaced."""
    shutil.copy(ROOT_CONFTEST, str(tmp_path / "conftest.py"))
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    env = dict(os.environ, HPC_PBS_CLUSTER_NET="127.0.250")
    env.pop("PYTEST_XDIST_WORKER", None)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
                           "-c", os.devnull, "--rootdir", str(tmp_path), str(tmp_path)],
                          capture_output=True, text=True, cwd=str(tmp_path), env=env, timeout=300, check=False)
    assert proc.returncode == 4, proc.stdout + proc.stderr   # usage error, before any worker starts
    assert "HPC_PBS_CLUSTER_NET=127.0.250 leaves no /24 for xdist worker gw1" in proc.stderr
    assert "node down" not in proc.stdout + proc.stderr


def test_the_openpbs_build_runs_under_the_cache_lock(tmp_path, monkeypatch):
    """install_root(build=True) runs the build script while holding <cache>/.build.lock
    (a second worker waits there); ``--where`` (build=False) takes no lock."""
    script = tmp_path / "build"
    script.write_text('#!/bin/sh\nif flock -n "$HPC_PBS_OPENPBS_CACHE/.build.lock" true; then echo unlocked; '
                      'else echo locked; fi\n')
    script.chmod(0o755)
    monkeypatch.setattr(openpbs, "BUILD_SCRIPT", str(script))
    monkeypatch.setenv("HPC_PBS_OPENPBS_CACHE", str(tmp_path / "cache"))
    assert openpbs.install_root(build=True) == "locked"
    assert openpbs.install_root(build=False) == "unlocked"
    assert (tmp_path / "cache" / ".build.lock").exists()


@pytest.mark.parametrize("nodeid, rank", [
    ("tests/integration/test_demo.py::test_x[mock]", 0),
    ("tests/unit/roles/test_rollout_inputs.py::test_y", 1),
    ("tests/unit/test_sanity_gates.py::test_z", 2),
    ("tests/unit/plugins/modules/test_qmgr.py::test_w", 3),
])
def test_file_rank_puts_the_slow_tiers_first(nodeid, rank):
    assert load_root_conftest().file_rank(nodeid) == rank


def test_a_parallel_run_hands_out_the_integration_files_first(tmp_path):
    """As make test runs it (--dist loadfile --no-loadscope-reorder), with the unit tier
    named first on the command line and holding more tests: the integration file still
    runs first."""
    shutil.copy(ROOT_CONFTEST, str(tmp_path / "conftest.py"))
    order = tmp_path / "order"
    body = "def test_{0}():\n    with open({1!r}, 'a') as out:\n        out.write('{0}\\n')\n"
    for directory, names in (("tests/unit", ["u1", "u2", "u3"]), ("tests/integration", ["i1"])):
        (tmp_path / directory).mkdir(parents=True)
        (tmp_path / directory / ("test_%s.py" % names[0])).write_text(
            "".join(body.format(name, str(order)) for name in names))
    env = dict(os.environ, HPC_PBS_CLUSTER_NET="127.0.40")
    env.pop("PYTEST_XDIST_WORKER", None)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "1",
                           "--dist", "loadfile", "--no-loadscope-reorder", "-c", os.devnull,
                           "--rootdir", str(tmp_path), "tests/unit", "tests/integration"],
                          capture_output=True, text=True, cwd=str(tmp_path), env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert order.read_text().split() == ["i1", "u1", "u2", "u3"]
