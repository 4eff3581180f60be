"""Shared fixtures of the mock's unit tests."""
import pytest

from mockpbs.testing import server as testing
from mockpbs.testing.mom import MomCluster


@pytest.fixture
def mom_cluster(tmp_path):
    """``mom_cluster(names=("moma", "momb", "momc"), frozen=()) -> MomCluster`` (not yet
    started, see :mod:`mockpbs.testing.mom`) with its moms' homes and the jobs' working
    directory in ``tmp_path``; every cluster made is closed (its jobs released, its
    addresses given back) at the end of the test."""
    made = []

    def make(**kwargs):
        cluster = MomCluster(tmp_path, **kwargs)
        made.append(cluster)
        return cluster

    yield make
    for cluster in made:
        cluster.close()


@pytest.fixture
def server(tmp_path, monkeypatch):
    """An in-process mock server (:func:`mockpbs.testing.server.start_server`) with its
    PBS_HOME in ``tmp_path``, stopped at the end of the test. A module may define its own."""
    daemon = testing.start_server(tmp_path, monkeypatch)
    yield daemon
    daemon.stop()
