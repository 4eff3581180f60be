"""Loopback addresses for tests that no other process on this machine uses at the same time.

The mock's daemons listen on PBS's fixed ports (server 15001, mom 15002, inter-mom
15003), so two servers or moms can only coexist on different addresses, and two test
runs on one machine (two checkouts, a CI job next to a developer) must never pick the
same one. Fixed addresses in tests collide with ``Address already in use``.

- :func:`reserve_address` picks a random address in 127.64.0.1 - 127.254.255.254
  (127.0.x.x is left to 127.0.0.1 and the mock clusters, 127.0.1.x, 127.0.3.x ...,
  and ``HPC_PBS_CLUSTER_NET`` networks), takes a lock on it that no other process can
  take, and checks that its ports are free.
- :func:`release_address` gives it back; :func:`reserved_addresses` does both around a
  ``with`` block.

The lock is an abstract UNIX socket named after the address: the kernel refuses a
second bind of that name from any process (this one included) and drops the name when
the socket is closed or its process ends, so nothing is ever left behind.
"""
import contextlib
import random
import socket
import threading

from mockpbs import wire

# The lock name the in-process mom helpers (mockpbs/testing/mom.py) used first: both
# spellings of the reservation must exclude each other while both exist.
LOCK_PREFIX = "\0mockpbs-inprocess-"
# The ports a reserved address must have free (server, mom service, inter-mom).
PBS_PORTS = (wire.SERVER_PORT, wire.MOM_PORT, wire.IM_PORT)
FIRST_SECOND_OCTET = 64

_random = random.SystemRandom()
_held = {}              # address -> lock socket, for as long as this process uses it
_held_lock = threading.Lock()


def ports_free(address, ports=PBS_PORTS):
    """True when every TCP port of ``ports`` can be bound on ``address`` (IPv4 string)."""
    for port in ports:
        probe = socket.socket()
        try:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((address, port))
        except OSError:
            return False
        finally:
            probe.close()
    return True


def reserve_address(attempts=1000, ports=PBS_PORTS):
    """A loopback address (IPv4 string, 127.64.0.1 - 127.254.255.254) whose TCP ``ports``
    (default: 15001, 15002, 15003) are free, reserved for this process until
    :func:`release_address` (or the process's end).

    Raises OSError when no address was found in ``attempts`` tries."""
    for _unused in range(attempts):
        address = "127.%d.%d.%d" % (_random.randint(FIRST_SECOND_OCTET, 254), _random.randint(0, 255),
                                    _random.randint(1, 254))
        lock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            lock.bind(LOCK_PREFIX + address)
        except OSError:
            lock.close()
            continue
        if not ports_free(address, ports):   # taken by something that does not reserve
            lock.close()
            continue
        with _held_lock:
            _held[address] = lock
        return address
    raise OSError("no free loopback address after %d attempts" % attempts)


def release_address(address):
    """Give back an address of :func:`reserve_address` (no error if it was not held)."""
    with _held_lock:
        lock = _held.pop(address, None)
    if lock is not None:
        lock.close()


@contextlib.contextmanager
def reserved_addresses(count, ports=PBS_PORTS):
    """``with reserved_addresses(n) as addresses:`` a list of ``n`` distinct addresses of
    :func:`reserve_address`, all released when the block ends (also on an error)."""
    addresses = []
    try:
        for _unused in range(count):
            addresses.append(reserve_address(ports=ports))
        yield addresses
    finally:
        for address in addresses:
            release_address(address)
