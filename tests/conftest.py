"""What the unit and integration tiers share: the test-cluster network of a parallel run.

``make test`` runs pytest with pytest-xdist (``-n 3 --dist loadfile``): each worker process
runs whole test files, and each starts its own test clusters.  The nodes of a cluster sit
on fixed loopback addresses of one /24 (``HPC_PBS_CLUSTER_NET``, default ``127.0.1``), so
every worker gets a /24 of its own, derived from the base one and the worker's number:
worker ``gwK`` uses third octet ``base + 10*K`` (``127.0.1`` -> ``127.0.1``, ``127.0.11``,
``127.0.21``).  This file sets ``HPC_PBS_CLUSTER_NET`` in the worker's environment when it
is imported, before any test module or the launcher (which reads the variable at import)
is imported, and every process the worker starts inherits it.  Without xdist (``-n 0`` or
no ``-n``) nothing changes.
"""
import os
import re

import pytest

DEFAULT_CLUSTER_NET = "127.0.1"
# Distance between the third octets of two workers' networks: base 127.0.1 gives 127.0.11,
# 127.0.21 ...; a second run on base 127.0.2 gets 127.0.12, 127.0.22 ... with no overlap as
# long as each run has fewer than 10 bases below it (see docs/testing.md).
WORKER_NET_STRIDE = 10


def worker_cluster_net(base, worker):
    """The /24 (``"127.A.B"``) of xdist worker ``worker`` (``"gw0"``, ``"gw1"`` ... or None
    when not under xdist) for the base /24 ``base`` (``HPC_PBS_CLUSTER_NET``).

    Raises ValueError naming HPC_PBS_CLUSTER_NET when ``base`` is not a loopback /24 or the
    worker's /24 would be past 127.A.255."""
    base = (base or DEFAULT_CLUSTER_NET).rstrip(".")
    match = re.match(r"^127\.(\d{1,3})\.(\d{1,3})$", base)
    if not match or int(match.group(1)) > 255 or int(match.group(2)) > 255:
        raise ValueError("HPC_PBS_CLUSTER_NET must be a loopback /24 such as 127.0.2, not %r" % base)
    if not worker:
        return base
    number = re.match(r"^gw(\d+)$", worker)
    if not number:
        raise ValueError("unexpected pytest-xdist worker id %r (expected gw0, gw1, ...)" % worker)
    third = int(match.group(2)) + WORKER_NET_STRIDE * int(number.group(1))
    if third > 255:
        raise ValueError("HPC_PBS_CLUSTER_NET=%s leaves no /24 for xdist worker %s (127.%s.%d is past "
                         "127.%s.255): choose a lower base or fewer workers (-n)"
                         % (base, worker, match.group(1), third, match.group(1)))
    return "127.%s.%d" % (match.group(1), third)


# The order in which xdist hands out the test files (``make test`` passes
# --no-loadscope-reorder, which keeps the collection's order; xdist's own order, most tests
# first, would start the integration files, a few long tests each, last): the slow tiers
# first, so that the many short unit files fill the workers at the end and no long file
# starts last while the other workers idle.  Paths relative to the repository root; a file
# matching none comes after them all, in collection order.
SLOW_FIRST = ("tests/integration/", "tests/unit/roles/", "tests/unit/test_sanity_gates.py")


def file_rank(nodeid):
    """Position of test ``nodeid`` in SLOW_FIRST (``len(SLOW_FIRST)`` when no prefix matches)."""
    for rank, prefix in enumerate(SLOW_FIRST):
        if nodeid.startswith(prefix):
            return rank
    return len(SLOW_FIRST)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):  # pylint: disable=unused-argument
    """Under xdist: the tests of the slow tiers first (a stable sort: within a tier the order
    pytest chose, its grouping by backend included, is kept).  After every other hook, so
    that pytest's own reordering for fixture scopes cannot undo it."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=lambda item: file_rank(item.nodeid))


def pytest_configure(config):
    """In the run's main process (xdist's controller, or the only process): refuse a base
    net that is no loopback /24 or leaves no /24 for the last worker, before any worker
    starts (a worker that fails to start is only replaced by xdist, and its tests never
    run)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    base = os.environ.get("HPC_PBS_CLUSTER_NET")
    workers = getattr(config.option, "numprocesses", None)
    try:
        worker_cluster_net(base, None)
        if isinstance(workers, int) and workers > 1:
            worker_cluster_net(base, "gw%d" % (workers - 1))
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None


def _set_worker_net():
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return
    try:
        os.environ["HPC_PBS_CLUSTER_NET"] = worker_cluster_net(os.environ.get("HPC_PBS_CLUSTER_NET"), worker)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None


_set_worker_net()
