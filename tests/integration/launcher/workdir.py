"""The cluster's work dir (layout in the package docstring): paths, ``state.json``, the lock
that serializes launchers, atomic file writes, and the nodes' names and addresses."""
import fcntl
import ipaddress
import json
import os

from .common import ADDRESS_PREFIX, REPO, SERVER_NAME, SERVER_OCTET, ClusterError, log


def node_address(index):
    """The loopback address of node ``index`` (0: the server, N: momN): the server at
    ``<HPC_PBS_CLUSTER_NET>.10``, the moms after it, on into the next /24 past ``.254``
    (``.0`` and ``.255`` are skipped), so that a cluster of more than 244 moms also takes
    the /24 after its own."""
    prefix = ipaddress.IPv4Address(ADDRESS_PREFIX + "0")
    per_net = 254  # .1 ... .254 of each /24
    offset = SERVER_OCTET - 1 + index
    address = prefix + (offset // per_net) * 256 + offset % per_net + 1
    if not address.is_loopback:
        raise ClusterError("node %d of a cluster on %s would be at %s, outside loopback"
                           % (index, ADDRESS_PREFIX.rstrip("."), address))
    return str(address)


def node_names(moms):
    """Return ``[(name, address, role)]`` for the server and ``moms`` mom nodes."""
    nodes = [(SERVER_NAME, node_address(0), "server")]
    for index in range(1, moms + 1):
        nodes.append(("mom%d" % index, node_address(index), "mom"))
    return nodes


def default_workdir():
    """``$HPC_PBS_CLUSTER_DIR``, else ``<repo>/.cluster``."""
    return os.environ.get("HPC_PBS_CLUSTER_DIR") or os.path.join(REPO, ".cluster")


class Workdir:
    """Paths inside a cluster workdir (see the package docstring)."""

    def __init__(self, path):
        self.root = os.path.abspath(path)
        self.state = os.path.join(self.root, "state.json")
        self.inventory = os.path.join(self.root, "inventory.ini")
        self.key = os.path.join(self.root, "id_ed25519")
        self.home = os.path.join(self.root, "home")
        self.nodes = os.path.join(self.root, "nodes")

    def node(self, name):
        """``nodes/<name>``: the node's own files on the host."""
        return os.path.join(self.nodes, name)

    def load_state(self):
        """The parsed ``state.json``, or None when missing or unreadable (logged)."""
        try:
            with open(self.state) as handle:
                return json.load(handle)
        except FileNotFoundError:
            return None
        except ValueError as exc:
            log("ignoring unreadable %s: %s" % (self.state, exc))
            return None

    def save_state(self, state):
        write_file(self.state, json.dumps(state, indent=2) + "\n")

    def lock(self):
        """Hold an exclusive lock on the workdir for the life of the process."""
        os.makedirs(self.root, exist_ok=True)
        handle = open(os.path.join(self.root, ".lock"), "w")
        fcntl.flock(handle, fcntl.LOCK_EX)
        return handle


def write_file(path, text, mode=0o644, owner=None):
    """Write ``text`` to ``path`` atomically (temp file + rename), with ``mode``/``owner``."""
    tmp = "%s.tmp%d" % (path, os.getpid())
    with open(tmp, "w") as handle:
        handle.write(text)
    os.chmod(tmp, mode)
    if owner is not None:
        os.chown(tmp, owner[0], owner[1])
    os.replace(tmp, path)
