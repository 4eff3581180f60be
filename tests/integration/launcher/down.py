"""``cluster down``, and the teardown that ``up`` runs first (stale state) and after a failed
start: every process, mount and cgroup of the work dir's nodes goes away."""
import os
import signal
import subprocess

from .cgroups import remove_cgroups
from .common import STOP_TIMEOUT, ClusterError, log
from .procs import (alive, hold_pid_namespace, host_mounts_under, is_node_init, node_processes,
                    pid_namespace, proc_cmdline, processes_in_namespace, signal_all, wait_until)
from .workdir import Workdir, default_workdir


def teardown(workdir, quiet=False):
    """Stop every node of ``workdir``: SIGTERM each node's init (which stops all processes
    of its node), SIGKILL what is left after STOP_TIMEOUT, unmount anything under the workdir
    in the host's namespace and remove state.json.  Raises ClusterError if a process
    survives."""
    # The namespaces of live inits, each held open until the end: when a node ends, the
    # number of its namespace is free, and a node that another cluster starts meanwhile
    # may get it (the processes of that number would be killed below as leftovers).
    namespaces = set()
    inits = set()
    held = []
    try:
        for pid in node_processes(workdir):
            if pid_namespace(pid) != pid_namespace(os.getpid()):
                descriptor = hold_pid_namespace(pid)
                if descriptor is None:
                    continue
                held.append(descriptor)
                if is_node_init(pid, workdir):  # still ours, not a PID reused meanwhile
                    inits.add(pid)
                    namespaces.add("pid:[%d]" % os.fstat(descriptor).st_ino)
            elif "_forward" in proc_cmdline(pid):
                inits.add(pid)  # an ssh forwarder of the openpbs backend: SIGTERM ends it
        if inits and not quiet:
            log("stopping %d node(s) in %s" % (len(inits), workdir.root))
        stop_processes(workdir, inits, namespaces)
    finally:
        for descriptor in held:
            os.close(descriptor)
    for mount_point in sorted(host_mounts_under(workdir.root), reverse=True):
        subprocess.call(["umount", "-l", mount_point])
    remove_cgroups(workdir, quiet)
    if os.path.exists(workdir.state):
        os.unlink(workdir.state)


def stop_processes(workdir, inits, namespaces):
    """SIGTERM ``inits``; SIGKILL what is left of ``workdir``'s node processes and of the
    PID ``namespaces`` after STOP_TIMEOUT. Raises ClusterError if a process survives."""
    signal_all(inits, signal.SIGTERM)

    def leftovers():
        pids = set(p for p in node_processes(workdir) if alive(p))
        for pidns in namespaces:
            pids.update(processes_in_namespace(pidns))
        return pids

    if not wait_until(lambda: not leftovers(), STOP_TIMEOUT):
        signal_all(leftovers(), signal.SIGKILL)
        if not wait_until(lambda: not leftovers(), STOP_TIMEOUT):
            raise ClusterError("processes survived SIGKILL: %s" % sorted(leftovers()))


def cmd_down(args):
    """``cluster down``: teardown under the work dir's lock; ClusterError if a node process
    is left."""
    workdir = Workdir(args.workdir or default_workdir())
    _lock = workdir.lock()
    teardown(workdir)
    left = node_processes(workdir)
    if left:
        raise ClusterError("processes left: %s" % left)
    log("cluster in %s is down" % workdir.root)
    return 0
