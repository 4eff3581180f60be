"""Host processes seen through ``/proc``: states, command lines, PID namespaces, the node
processes of a work dir, PID translation into a node, polling, mounts, log tails, and the
start of a daemonizing command."""
import os
import signal
import subprocess
import time

import polling


def proc_state(pid):
    """Return the one-letter state of host process ``pid`` (``R``, ``S``, ``T``, ``Z``...),
    or None if it does not exist."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            data = handle.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return data[data.rindex(")") + 2:].split()[0]


def alive(pid):
    """True if ``pid`` exists and is not a zombie."""
    return pid is not None and proc_state(pid) not in (None, "Z", "X")


def proc_cmdline(pid):
    """``argv`` of ``pid`` as a list of str; ``[]`` when it is gone."""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as handle:
            return [part.decode(errors="replace") for part in handle.read().split(b"\0") if part]
    except OSError:
        return []


def proc_ppid(pid):
    """Parent PID of ``pid``; None when it is gone."""
    try:
        with open("/proc/%d/status" % pid) as handle:
            for line in handle:
                if line.startswith("PPid:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def pid_namespace(pid):
    """``pid:[<inode>]`` of ``pid``'s PID namespace; None when it is gone."""
    try:
        return os.readlink("/proc/%d/ns/pid" % pid)
    except OSError:
        return None


def hold_pid_namespace(pid):
    """An open descriptor of ``pid``'s PID namespace, or None when it is gone. While it is
    open the namespace, and so its ``pid:[<inode>]`` name, stays taken: the kernel gives a
    freed namespace number to the next namespace made, maybe another cluster's node."""
    try:
        return os.open("/proc/%d/ns/pid" % pid, os.O_RDONLY)
    except OSError:
        return None


def host_pids():
    """Every PID of this process's PID namespace."""
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def is_node_process(pid, workdir, kinds=("_node-init", "_forward")):
    """True if host PID ``pid``'s command line is a ``_node-init`` (or its ``unshare``) or
    an ssh ``_forward`` of ``workdir`` (a :class:`~launcher.workdir.Workdir`)."""
    argv = proc_cmdline(pid)
    if not any(kind in argv for kind in kinds) or "--workdir" not in argv:
        return False
    index = argv.index("--workdir")
    return index + 1 < len(argv) and argv[index + 1] == workdir.root


def node_processes(workdir, kinds=("_node-init", "_forward")):
    """Host PIDs of :func:`is_node_process`."""
    return [pid for pid in host_pids() if is_node_process(pid, workdir, kinds)]


def is_node_init(pid, workdir):
    """True if host PID ``pid`` is a live node init of ``workdir`` (guards against PID reuse)."""
    return bool(pid) and alive(pid) and is_node_process(pid, workdir, ("_node-init",)) \
        and pid_namespace(pid) != pid_namespace(os.getpid())


def processes_in_namespace(pidns):
    """Live host PIDs in PID namespace ``pidns``."""
    return [pid for pid in host_pids() if pidns and pid_namespace(pid) == pidns and alive(pid)]


def host_pid_of(init_pid, ns_pid):
    """Translate PID ``ns_pid`` of the node whose init has host PID ``init_pid`` into a host
    PID (through the ``NSpid`` line of /proc/<pid>/status); None if no such process."""
    pidns = pid_namespace(init_pid)
    for pid in host_pids():
        if pid_namespace(pid) != pidns:
            continue
        try:
            with open("/proc/%d/status" % pid) as handle:
                for line in handle:
                    if line.startswith("NSpid:"):
                        if int(line.split()[-1]) == ns_pid:
                            return pid
                        break
        except OSError:
            continue
    return None


def wait_until(predicate, timeout, interval=0.1):
    """Poll ``predicate`` until it returns a true value or ``timeout`` seconds pass; that
    value or the last false one (:func:`polling.poll`)."""
    return polling.poll(predicate, timeout, interval)


def host_mounts_under(path):
    """Mount points of the launcher's own mount namespace at or below ``path``."""
    found = []
    with open("/proc/self/mountinfo") as handle:
        for line in handle:
            mount_point = line.split()[4].replace("\\040", " ")
            if mount_point == path or mount_point.startswith(path + "/"):
                found.append(mount_point)
    return found


def tail(path, lines=20):
    """The last ``lines`` lines of the file ``path`` (``(no <path>)`` if unreadable)."""
    try:
        with open(path, errors="replace") as handle:
            return "".join(handle.readlines()[-lines:])
    except OSError:
        return "(no %s)\n" % path


def latest_log(directory):
    """Path of the newest dated PBS log (``YYYYMMDD``) in ``directory``."""
    try:
        names = sorted(n for n in os.listdir(directory) if n.isdigit())
    except OSError:
        return os.path.join(directory, "(none)")
    return os.path.join(directory, names[-1] if names else "(none)")


def unblock_signals():
    """``preexec_fn`` of children of a node's init, which blocks the signals it waits for."""
    signal.pthread_sigmask(signal.SIG_SETMASK, set())


def start_daemon(argv, log_path, env):
    """Run a PBS daemon start command (it daemonizes), appending its output to ``log_path``
    after a dated ``==== argv`` line; return ``(rc, the log's last 15 lines)``."""
    with open(log_path, "a") as out:
        out.write("==== %s %s\n" % (time.strftime("%Y-%m-%d %H:%M:%S"), " ".join(argv)))
        out.flush()
        rc = subprocess.call(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env,
                             preexec_fn=unblock_signals)
    return rc, tail(log_path, 15)


def signal_all(pids, sig):
    """Send ``sig`` to each of ``pids``, skipping those already gone."""
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass
