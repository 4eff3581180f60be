"""What every module of the launcher shares: the cluster's constants (names, addresses,
paths inside a node, timeouts), :class:`ClusterError` and :func:`log`."""
import os
import re
import sys

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
# The executable entry point: nodes run ``<python> ENTRY_POINT _node-init ...`` and the like.
ENTRY_POINT = os.path.join(os.path.dirname(PACKAGE_DIR), "cluster")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(PACKAGE_DIR)))
VENV_PYTHON = os.path.join(REPO, ".venv", "bin", "python")

BACKENDS = ("mock", "openpbs")
# The OpenPBS releases the real backend builds (tests/openpbs/build --version): 23.06.06 for
# the whole suite, 22.05.11 (PBS Professional 2022.1's base, pbs_python on CPython 3.6) for a
# smoke tier.
OPENPBS_RELEASES = ("23.06.06", "22.05.11")
DEFAULT_OPENPBS_RELEASE = OPENPBS_RELEASES[0]
SERVER_NAME = "pbs-server"
# The /24 of loopback the nodes live in: HPC_PBS_CLUSTER_NET=127.0.2 lets a second cluster
# (another developer's test run, say) run beside one on the default 127.0.1.
# Checked by check_address_prefix() before any command runs.
ADDRESS_PREFIX = os.environ.get("HPC_PBS_CLUSTER_NET", "127.0.1").rstrip(".") + "."
SERVER_OCTET = 10
PBS_EXEC = "/opt/pbs"
PBS_HOME = "/var/spool/pbs"
# Where PBS looks for pbs.conf without $PBS_CONF_FILE; ``up --pbs-conf`` may put a node's
# under PBS_EXEC/etc instead (and ``--stale-etc-pbs-conf`` leave an /etc/pbs.conf there that
# names STALE_SERVER, a server that does not exist, with another PBS_HOME).
DEFAULT_PBS_CONF = "/etc/pbs.conf"
RELOCATED_PBS_CONF_DIR = PBS_EXEC + "/etc"
STALE_SERVER = "pbs-retired"
JOB_USER = "pbsuser"
JOB_UID = 1500
SSH_PORT = 22
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
ROOT_PATH = "%s/bin:%s/sbin:%s" % (PBS_EXEC, PBS_EXEC, SYSTEM_PATH)
USER_PATH = "%s/bin:/usr/local/bin:/usr/bin:/bin" % PBS_EXEC
# Directories a node overmounts whole; a host path the node's Python needs under one of the
# first two is bound back into the node's copy.
REBINDABLE = ("/root", "/opt", "/tmp")
HIDDEN = ("/etc", "/var/spool", "/home", "/run", "/var/tmp")
NODE_READY_TIMEOUT = 60.0
CGROUP_CONTROLLERS = ("cpuset", "memory")
CGROUP_NODE_ROOT = "/sys/fs/cgroup"
VNODE_DEFINITION_FILE = "hpcpbs_vnodes"   # under PBS_HOME/mom_priv/config.d
STOP_TIMEOUT = 15.0


class ClusterError(Exception):
    """A failure reported to the user as ``cluster: <message>`` with exit code 1."""


def log(message):
    """Write ``cluster: <message>`` to stderr (the launcher's stdout carries only results)."""
    sys.stderr.write("cluster: %s\n" % message)
    sys.stderr.flush()


def check_address_prefix():
    """Exit (status 1, message on stderr) unless HPC_PBS_CLUSTER_NET names a loopback /24."""
    if not re.match(r"^127\.\d{1,3}\.\d{1,3}\.$", ADDRESS_PREFIX):
        sys.exit("cluster: HPC_PBS_CLUSTER_NET must be a loopback /24 such as 127.0.2, not %r"
                 % ADDRESS_PREFIX.rstrip("."))
