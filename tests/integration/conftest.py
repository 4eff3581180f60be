"""Shared fixtures of the integration tests: the cluster launcher ``tests/integration/cluster``.

- fixture ``pbs_backend`` (session scope, parametrized): ``mock`` (the mock PBS) and
  ``openpbs`` (a real OpenPBS 23.06.06 built by ``tests/openpbs/build``).  Every cluster
  fixture depends on it, so each integration test runs once per backend, ids ``[mock]`` and
  ``[openpbs]``.  The tests marked ``release_smoke`` also run on ``openpbs-22.05.11`` (the
  older release, pbs_python on CPython 3.6): the smoke tier of that release.  ``--backend
  mock`` (or another; repeatable) or ``HPC_PBS_BACKENDS=mock`` selects; without a source
  tarball or its Python the tests of that release are skipped with one line saying so, and
  a failed build is an error.
- marker ``integration``: tests that start the mock cluster (Linux namespaces, root).
- marker ``cluster_moms(N)``: number of moms the module's ``pbs_cluster`` gets (default 2).
- fixture ``pbs_cluster`` (module scope): a running cluster with PBS daemons, every mom
  ``free``; torn down (``cluster down``) at the end of the module.
- fixture ``cluster_factory`` (session scope): ``cluster_factory(moms=N, daemons=True)``
  starts a cluster in a fresh workdir and returns a :class:`MockCluster`; every cluster it
  started is torn down at the end of the session.

All nodes of a run use the same addresses (127.0.1.10... or the /24 named by
HPC_PBS_CLUSTER_NET), so only one cluster runs at a time per net: a module-scoped cluster
is down before the next module starts its own.  Under pytest-xdist (``make test`` runs
``-n 3 --dist loadfile``) each worker runs whole files and has a /24 of its own, set in
``tests/conftest.py`` before this file imports the launcher: base, base+10, base+20 in the
third octet; ``_STARTED`` holds the clusters of this worker process only.
"""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
CLUSTER_SCRIPT = os.path.join(HERE, "cluster")
sys.path.insert(0, HERE)
from launcher import openpbs as cluster_openpbs  # noqa: E402

BACKENDS = ("mock", "openpbs", "openpbs-22.05.11")
# The backends every integration test runs on; the others only run the release_smoke tests.
# HPC_PBS_FULL_BACKENDS=mock,openpbs,openpbs-22.05.11 runs everything on the older release
# too (how its differences are found; not part of make test, for time).
FULL_BACKENDS = tuple(b.strip() for b in os.environ.get("HPC_PBS_FULL_BACKENDS", "mock,openpbs").split(",")
                      if b.strip())
# Every cluster of the session, whichever backend: they share the loopback addresses, so
# starting one stops all the others first.
_STARTED = []
SSH_OPTIONS = ["-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no",
               "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
               "-o", "ConnectTimeout=10"]


def pytest_addoption(parser):
    parser.addoption("--backend", action="append", choices=BACKENDS, default=None,
                     help="run the integration tests on this test-cluster backend only "
                     "(repeatable; default both, or $HPC_PBS_BACKENDS)")


def selected_backends(config):
    chosen = config.getoption("--backend")
    if not chosen:
        chosen = [b.strip() for b in os.environ.get("HPC_PBS_BACKENDS", ",".join(BACKENDS)).split(",")
                  if b.strip()]
    unknown = [b for b in chosen if b not in BACKENDS]
    if unknown:
        raise pytest.UsageError("unknown backend(s) %s; accepted: %s" % (unknown, ", ".join(BACKENDS)))
    return [b for b in BACKENDS if b in chosen]


def pytest_generate_tests(metafunc):
    if "pbs_backend" in metafunc.fixturenames:
        smoke = metafunc.definition.get_closest_marker("release_smoke") is not None
        backends = [b for b in selected_backends(metafunc.config) if smoke or b in FULL_BACKENDS]
        metafunc.parametrize("pbs_backend", backends, indirect=True, scope="session")


_REAL_PBS = {}


@pytest.fixture(scope="session")
def pbs_backend(request):
    """``"mock"`` or ``"openpbs"``.  For ``openpbs`` the build is made first if needed (a few
    minutes, once per tarball); no tarball: skipped; a failed build: an error."""
    backend = request.param
    if backend.startswith("openpbs"):
        release = backend.partition("-")[2] or cluster_openpbs.DEFAULT_OPENPBS_RELEASE
        if release not in _REAL_PBS:
            try:
                _REAL_PBS[release] = (cluster_openpbs.install_root(build=True, release=release), None)
            except cluster_openpbs.BackendError as exc:
                _REAL_PBS[release] = (None, str(exc))
        root, error = _REAL_PBS[release]
        if root is None:
            if "is skipped" in error:  # no tarball, or no Python to build it with
                pytest.skip(error)
            pytest.fail("the OpenPBS %s build failed: %s" % (release, error))
    return backend


def pytest_collection_modifyitems(config, items):
    """``@pytest.mark.openpbs_differs("what real OpenPBS did")``: a known case where the mock
    does not yet behave as real OpenPBS; on the openpbs backend the test is a strict xfail
    (it must fail there, and turns red the day the behaviours agree), on the mock it runs."""
    for item in items:
        marker = item.get_closest_marker("openpbs_differs")
        callspec = getattr(item, "callspec", None)
        if marker and callspec and str(callspec.params.get("pbs_backend")).startswith("openpbs"):
            item.add_marker(pytest.mark.xfail(strict=True, reason="real OpenPBS differs from the mock: "
                                              + marker.args[0]))


def pytest_configure(config):
    config.addinivalue_line("markers", "openpbs_differs(what): real OpenPBS is known to differ "
                            "from the mock here (strict xfail on the openpbs backend)")
    config.addinivalue_line("markers", "integration: starts the mock PBS cluster (needs root, "
                            "unshare/nsenter and /usr/sbin/sshd)")
    config.addinivalue_line("markers", "cluster_moms(n): number of moms for pbs_cluster")
    config.addinivalue_line("markers", "release_smoke: also run on the older OpenPBS release "
                            "(backend openpbs-22.05.11), the smoke tier of that release")


class MockCluster:
    """One cluster started by the launcher in ``workdir``.

    ``inventory``: path of the Ansible inventory; ``key``: the SSH private key;
    ``addresses``: ``{node name: address}`` from ``state.json``."""

    def __init__(self, workdir, python=sys.executable, backend="mock"):
        self.workdir = str(workdir)
        self.python = python
        self.backend = backend
        self.inventory = None
        self.addresses = {}

    def launcher(self, *args, check=True, **kwargs):
        """Run ``cluster ARGS... --workdir W``; CompletedProcess (text, captured).
        Raises AssertionError with the launcher's stderr if ``check`` and rc != 0."""
        argv = [self.python, CLUSTER_SCRIPT] + list(args) + ["--workdir", self.workdir]
        proc = subprocess.run(argv, capture_output=True, text=True, check=False, **kwargs)
        if check and proc.returncode != 0:
            raise AssertionError("%s failed (rc %d):\n%s" % (" ".join(args), proc.returncode,
                                                             proc.stderr))
        return proc

    def up(self, moms, daemons=True, up_args=()):
        """``cluster up``; ``up_args``: more options, e.g. ``["--vnodes-per-mom", "2"]``,
        ``["--no-atom"]``, ``["--cgroups", "off"]`` (see the launcher's docstring)."""
        backend, _dash, release = self.backend.partition("-")
        args = ["up", "--moms", str(moms), "--pbs", backend] + (["--pbs-version", release] if release else [])
        args += ([] if daemons else ["--no-daemons"]) + list(up_args)
        self.inventory = self.launcher(*args, stdin=subprocess.DEVNULL).stdout.strip()
        with open(os.path.join(self.workdir, "state.json")) as handle:
            self.addresses = {n["name"]: n["address"] for n in json.load(handle)["nodes"]}
        return self.inventory

    def down(self):
        return self.launcher("down", check=False)

    @property
    def key(self):
        return os.path.join(self.workdir, "id_ed25519")

    def exec(self, node, argv, user=None, input=None, check=False):
        """Run ``argv`` inside ``node`` (as ``user``, default root); CompletedProcess."""
        cmd = [self.python, CLUSTER_SCRIPT, "exec", node, "--workdir", self.workdir]
        if user:
            cmd += ["--user", user]
        proc = subprocess.run(cmd + ["--"] + list(argv), input=input, capture_output=True,
                              text=True, stdin=None if input is not None else subprocess.DEVNULL, check=False)
        if check and proc.returncode != 0:
            raise AssertionError("%s on %s failed (rc %d): %s" % (
                argv, node, proc.returncode, proc.stderr))
        return proc

    def ssh(self, node, command, user="root"):
        """``ssh -i key USER@<node address> COMMAND`` from the host; CompletedProcess."""
        return subprocess.run(["ssh", "-i", self.key] + SSH_OPTIONS
                              + ["%s@%s" % (user, self.addresses[node]), command],
                              capture_output=True, text=True, stdin=subprocess.DEVNULL,
                              timeout=60, check=False)

    def stop_mom(self, node, freeze=False):
        return self.launcher("stop-mom", node, *(["--freeze"] if freeze else []))

    def start_mom(self, node):
        return self.launcher("start-mom", node)


@pytest.fixture(scope="session")
def cluster_factory(tmp_path_factory, pbs_backend):
    """``cluster_factory(moms=2, daemons=True, up_args=()) -> MockCluster`` (already up), on
    the session's ``pbs_backend``."""
    mine = []

    def start(moms=2, daemons=True, up_args=()):
        for previous in _STARTED:  # one cluster at a time: they share addresses
            previous.down()
        cluster = MockCluster(tmp_path_factory.mktemp("cluster-%s" % pbs_backend), backend=pbs_backend)
        _STARTED.append(cluster)
        mine.append(cluster)
        cluster.up(moms, daemons=daemons, up_args=up_args)
        return cluster

    yield start
    for cluster in mine:
        cluster.down()


@pytest.fixture(scope="module")
def pbs_cluster(request, cluster_factory):
    """A cluster with daemons for the module; moms from ``@pytest.mark.cluster_moms(N)``."""
    marker = request.node.get_closest_marker("cluster_moms")
    cluster = cluster_factory(moms=marker.args[0] if marker else 2, daemons=True)
    yield cluster
    cluster.down()


@pytest.fixture(scope="session")
def stop_other_clusters():
    """Call it before starting a cluster outside ``cluster_factory`` (the demo, molecule):
    stops every cluster the factories started, as they share the loopback addresses."""
    def stop():
        for previous in _STARTED:
            previous.down()
    return stop
