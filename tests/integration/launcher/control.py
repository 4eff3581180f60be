"""Commands on a running cluster: ``exec``, ``stop-mom``, ``start-mom``, ``status``, and the
internal ``_forward`` (the openpbs backend's ssh relay into a node)."""
import os
import signal
import sys

from . import openpbs
from .common import PBS_EXEC, SSH_PORT, ClusterError, log
from .nodecmd import clean_env, node_argv, running_node
from .procs import alive, host_pid_of, is_node_init, proc_state, start_daemon, wait_until
from .up import sshd_answers
from .workdir import Workdir, default_workdir


def cmd_exec(args):
    """``cluster exec NODE [--user U] -- CMD...``: replace this process with CMD run inside
    NODE as U, in U's home directory; the exit code is CMD's."""
    workdir = Workdir(args.workdir or default_workdir())
    argv = list(args.argv)
    if not argv:
        raise ClusterError("exec needs a command after --")
    command = node_argv(workdir, args.node, argv, args.user)
    sys.stdout.flush()
    os.execvp(command[0], command)


def mom_pid(workdir, node):
    """``(ns_pid, host_pid)`` of the mom in ``mom_priv/mom.lock`` of ``node``; host_pid is None
    if that process is gone."""
    entry = running_node(workdir, node)
    lock = os.path.join(workdir.node(node), "spool", "pbs", "mom_priv", "mom.lock")
    try:
        with open(lock) as handle:
            ns_pid = int(handle.read().split()[0])
    except (FileNotFoundError, IndexError, ValueError):
        return None, None
    host_pid = host_pid_of(entry["init_pid"], ns_pid)
    return ns_pid, host_pid if alive(host_pid) else None


def stop_mom(workdir, node, freeze=False):
    """SIGTERM the node's pbs_mom and wait until it is gone (30 s), or with ``freeze``
    SIGSTOP it (state T within 10 s). ClusterError when no mom runs or it does not stop."""
    ns_pid, host_pid = mom_pid(workdir, node)
    if host_pid is None:
        raise ClusterError("no running mom on %s (mom.lock: %s)" % (node, ns_pid))
    if freeze:
        try:
            os.kill(host_pid, signal.SIGSTOP)
        except ProcessLookupError:
            raise ClusterError("mom %d on %s exited before it could be frozen" % (ns_pid, node))
        if not wait_until(lambda: proc_state(host_pid) in ("T", None), 10, 0.05):
            raise ClusterError("mom %d on %s did not stop" % (ns_pid, node))
        log("froze mom %d on %s" % (ns_pid, node))
        return
    for sig in (signal.SIGTERM, signal.SIGCONT):  # a frozen mom must run to handle SIGTERM
        try:
            os.kill(host_pid, sig)
        except ProcessLookupError:
            break
    if not wait_until(lambda: not alive(host_pid), 30, 0.05):
        raise ClusterError("mom %d on %s still running 30s after SIGTERM" % (ns_pid, node))
    log("stopped mom %d on %s" % (ns_pid, node))


def start_mom(workdir, node):
    """SIGCONT a frozen pbs_mom, or start ``pbs_mom`` in the node when none runs (output
    appended to the node's logs/daemons.log). ClusterError when it does not run."""
    ns_pid, host_pid = mom_pid(workdir, node)
    if host_pid is not None:
        if proc_state(host_pid) in ("T", "t"):
            try:
                os.kill(host_pid, signal.SIGCONT)
            except ProcessLookupError:
                raise ClusterError("mom %d on %s exited while frozen" % (ns_pid, node))
            if not wait_until(lambda: proc_state(host_pid) not in ("T", "t"), 10, 0.05):
                raise ClusterError("mom %d on %s did not resume" % (ns_pid, node))
            log("thawed mom %d on %s" % (ns_pid, node))
        else:
            log("mom %d on %s is already running" % (ns_pid, node))
        return
    log_path = os.path.join(workdir.node(node), "logs", "daemons.log")
    argv = node_argv(workdir, node, [os.path.join(PBS_EXEC, "sbin", "pbs_mom")])
    rc, output = start_daemon(argv, log_path, clean_env())
    if rc != 0:
        raise ClusterError("pbs_mom on %s exited %d:\n%s" % (node, rc, output))
    log("started pbs_mom on %s" % node)


def restart_mom(workdir, node):
    """Stop the node's pbs_mom (SIGTERM) and start it again: it says hello to the server
    anew. ClusterError as :func:`stop_mom` / :func:`start_mom`."""
    stop_mom(workdir, node)
    start_mom(workdir, node)


def cmd_stop_mom(args):
    """``cluster stop-mom NODE [--freeze]``: :func:`stop_mom`."""
    stop_mom(Workdir(args.workdir or default_workdir()), args.node, freeze=args.freeze)
    return 0


def cmd_start_mom(args):
    """``cluster start-mom NODE``: :func:`start_mom`."""
    start_mom(Workdir(args.workdir or default_workdir()), args.node)
    return 0


def cmd_status(args):
    """``cluster status``: one line per node (name, address, up/down); 0 when all are up,
    1 otherwise or without a cluster."""
    workdir = Workdir(args.workdir or default_workdir())
    state = workdir.load_state()
    if not state:
        print("no cluster in %s" % workdir.root)
        return 1
    all_up = True
    for node in state["nodes"]:
        up = is_node_init(node.get("init_pid"), workdir) and sshd_answers(node["address"])
        all_up = all_up and up
        print("%-12s %-15s %s" % (node["name"], node["address"], "up" if up else "down"))
    return 0 if all_up else 1


def cmd_forward(args):
    """``_forward --node NAME``: relay ``<node address>:22`` into the node's network."""
    workdir = Workdir(args.workdir)
    state = workdir.load_state() or {}
    for entry in state.get("nodes", []):
        if entry["name"] == args.node:
            return openpbs.forward(entry["address"], SSH_PORT, entry["init_pid"], entry["pbs_address"])
    raise ClusterError("no node %s in %s" % (args.node, workdir.state))
