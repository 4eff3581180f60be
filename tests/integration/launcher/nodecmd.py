"""Commands run inside a node from the host: the node's state entry, the user's account on
the node, a login-like environment, and the ``nsenter`` command line that joins the node's
namespaces (and cgroups) as that user, in that user's home directory."""
import json
import os
import subprocess

from .common import DEFAULT_PBS_CONF, ENTRY_POINT, ROOT_PATH, SYSTEM_PATH, USER_PATH, ClusterError
from .procs import is_node_init, tail


def clean_env(extra=None):
    """A minimal environment, so no PBS_* or venv variable of the caller leaks into a node."""
    env = {"PATH": SYSTEM_PATH}
    if os.environ.get("TZ"):
        env["TZ"] = os.environ["TZ"]
    env.update(extra or {})
    return env


def pbs_conf_env(config):
    """``{"PBS_CONF_FILE": path}`` for a node (its ``node.json``) whose pbs.conf is not
    /etc/pbs.conf (``up --pbs-conf``), as a site's profile exports it; else ``{}``."""
    path = config.get("pbs_conf") or DEFAULT_PBS_CONF
    return {} if path == DEFAULT_PBS_CONF else {"PBS_CONF_FILE": path}


def login_env(user, home, shell):
    """What a login of ``user`` gets: HOME, USER, LOGNAME, SHELL, a PATH with /opt/pbs/bin
    (and sbin for root), TZ and TERM of the caller."""
    path = ROOT_PATH if user == "root" else USER_PATH
    env = clean_env({"HOME": home, "USER": user, "LOGNAME": user, "SHELL": shell, "PATH": path})
    if os.environ.get("TERM"):
        env["TERM"] = os.environ["TERM"]
    return env


def node_account(workdir, node, user):
    """``(uid, gid, home, shell)`` of ``user`` from the node's own /etc/passwd."""
    with open(os.path.join(workdir.node(node), "etc", "passwd")) as handle:
        for line in handle:
            fields = line.rstrip("\n").split(":")
            if len(fields) >= 7 and fields[0] == user:
                return int(fields[2]), int(fields[3]), fields[5] or "/", fields[6] or "/bin/sh"
    raise ClusterError("no user %s on node %s" % (user, node))


def running_node(workdir, name):
    """The state entry of node ``name``; ClusterError if the cluster or node is not up."""
    state = workdir.load_state()
    if not state:
        raise ClusterError("no cluster in %s (run: cluster up)" % workdir.root)
    for node in state["nodes"]:
        if node["name"] == name:
            if not is_node_init(node.get("init_pid"), workdir):
                raise ClusterError("node %s is down (its init %s is gone); the end of its init.log:\n%s"
                                   % (name, node.get("init_pid"), tail(os.path.join(workdir.node(name), "logs", "init.log"))))
            return node
    raise ClusterError("no node %s (nodes: %s)" % (name, ", ".join(n["name"] for n in state["nodes"])))


def node_argv(workdir, node, argv, user="root"):
    """The host command running ``argv`` inside ``node`` as ``user`` with a login-like
    environment (HOME, USER, LOGNAME, SHELL, PATH with /opt/pbs/bin), in the user's home
    (``nsenter --wdns``: the caller's working directory plays no part)."""
    entry = running_node(workdir, node)
    uid, gid, home, shell = node_account(workdir, node, user)
    with open(os.path.join(workdir.node(node), "node.json")) as handle:
        config = json.load(handle)
    env = dict(login_env(user, home, shell), **pbs_conf_env(config))
    command = ["nsenter", "--target", str(entry["init_pid"]), "--mount", "--uts", "--ipc", "--pid"]
    command += ["--net"] if config.get("netns") else []
    command += ["--wdns=" + home, "--", "/usr/bin/env", "-i"]
    command += ["%s=%s" % item for item in sorted(env.items())]
    if config.get("cgroups"):
        # Like an ssh login (sshd runs in them): the command runs in the node's cgroups.
        command += [config["python"], ENTRY_POINT, "_enter-cgroups"] + config["cgroups"] + ["--"]
    if uid != 0:
        command += ["/usr/bin/setpriv", "--reuid=%d" % uid, "--regid=%d" % gid,
                    "--init-groups", "--"]
    return command + list(argv)


def run_in_node(workdir, node, argv, timeout=60):
    """Run ``argv`` as root in ``node``; return the CompletedProcess (text, captured)."""
    return subprocess.run(node_argv(workdir, node, argv), capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=timeout, check=False)
