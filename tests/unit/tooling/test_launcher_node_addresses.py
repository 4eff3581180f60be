"""The test cluster's node addresses: the server at ``<net>.10``, the moms after it, a
cluster of more than 244 moms (the 256 of ``make bench`` on the mock) going on into the next
loopback /24 with no address repeated and none ending in .0 or .255."""
import ipaddress
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "integration"))
from launcher import common, workdir  # noqa: E402  pylint: disable=wrong-import-position


@pytest.fixture
def net(monkeypatch):
    monkeypatch.setattr(workdir, "ADDRESS_PREFIX", "127.0.142.")


def test_the_server_and_the_first_moms_are_in_the_clusters_own_net(net):
    assert workdir.node_names(2) == [("pbs-server", "127.0.142.10", "server"),
                                     ("mom1", "127.0.142.11", "mom"), ("mom2", "127.0.142.12", "mom")]


def test_256_moms_go_on_into_the_next_net_without_repeating_an_address(net):
    nodes = workdir.node_names(256)
    addresses = [address for _name, address, _role in nodes]
    assert len(set(addresses)) == 257
    assert addresses[244] == "127.0.142.254" and addresses[245] == "127.0.143.1"
    assert addresses[-1] == "127.0.143.12"
    assert all(ipaddress.IPv4Address(a).is_loopback and a.rsplit(".", 1)[1] not in ("0", "255") for a in addresses)


def test_a_cluster_that_would_leave_loopback_is_refused(monkeypatch):
    monkeypatch.setattr(workdir, "ADDRESS_PREFIX", "127.255.255.")
    assert workdir.node_names(244)[-1][1] == "127.255.255.254"
    with pytest.raises(common.ClusterError, match="outside loopback"):
        workdir.node_names(245)
