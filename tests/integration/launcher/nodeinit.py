"""PID 1 of a node (``cluster _node-init``, run by ``unshare`` in the node's new namespaces):
the node's mounts and cgroups, its host name, ``sshd`` and the PBS daemons of its backend,
then reaping children until SIGTERM, when it stops every process of the node.  Also
``_enter-cgroups``, which a command run by ``cluster exec`` goes through."""
import ctypes
import json
import os
import signal
import socket
import subprocess

from . import mock, openpbs
from .cgroups import write_value
from .common import NODE_READY_TIMEOUT, ROOT_PATH, ClusterError
from .nodecmd import clean_env, pbs_conf_env
from .procs import host_pids, proc_state, signal_all, start_daemon, unblock_signals, wait_until
from .workdir import write_file

MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC = 1, 32, 4096, 16384
MNT_DETACH = 2
HANDLED_SIGNALS = {signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGHUP}


def node_init(workdir, name):
    """PID 1 of node ``name``: mount, set the host name, start sshd and the PBS daemons,
    then reap children until SIGTERM, when it stops every process of the node.  Progress
    goes to ``nodes/<name>/init-status.json`` (``phase``: starting, sshd, ready or failed
    with ``error``), which ``cluster up`` polls.  Returns 0."""
    base = workdir.node(name)
    status_path = os.path.join(base, "init-status.json")
    with open(os.path.join(base, "node.json")) as handle:
        config = json.load(handle)
    # Blocked and fetched with sigtimedwait: no race between reaping and sleeping.
    signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED_SIGNALS)
    status = {"phase": "starting", "pid": os.getpid()}

    def report(**fields):
        status.update(fields)
        write_file(status_path, json.dumps(status) + "\n")

    try:
        _enter_node(base, name, config)
        env = clean_env(dict({"HOME": "/root", "PATH": ROOT_PATH}, **pbs_conf_env(config)))
        _start_sshd(config, env)
        report(phase="sshd")
        report(phase="ready", daemons=_start_daemons(config, env))
    except (Exception, openpbs.BackendError) as exc:  # reported to `up` through the status file
        detail = exc.stderr.strip() if isinstance(exc, subprocess.CalledProcessError) else ""
        report(phase="failed", error="%s %s" % (exc, detail))

    while True:
        reap()
        info = signal.sigtimedwait(HANDLED_SIGNALS, 5)
        if info is not None and info.si_signo in (signal.SIGTERM, signal.SIGINT):
            # Said in init.log, which `cluster exec` shows when it finds the node down: a
            # node stopped by anything but `cluster down` must be traceable to its sender.
            print("node %s: %s from pid %d (uid %d; 0: outside the node), stopping every process"
                  % (name, signal.Signals(info.si_signo).name, info.si_pid, info.si_uid), flush=True)
            stop_all_processes()
            return 0


def _enter_node(base, name, config):
    """Make the node's mounts, join its cgroups, set its host name and (openpbs backend)
    wait until the launcher has wired its network namespace.  Raises ClusterError."""
    if os.getpid() != 1:
        raise ClusterError("_node-init must run as PID 1 of a new PID namespace")
    os.chdir("/")
    for kind, source, target in config["mounts"]:
        mount(kind, source, target)
    for directory in config.get("cgroups") or []:
        # Into the node's own cgroups before anything else starts: every process inherits.
        write_value(os.path.join(directory, "cgroup.procs"), os.getpid())
    socket.sethostname(name)
    if config.get("netns"):
        # The launcher wires the node's network namespace, then writes net-ready.
        net_ready = os.path.join(base, "net-ready")
        if not wait_until(lambda: os.path.exists(net_ready), NODE_READY_TIMEOUT):
            raise ClusterError("the launcher did not set up the node's network")


def _start_sshd(config, env):
    """Check the node's sshd_config (``sshd -t``) and start sshd; ClusterError if either fails."""
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
    sshd_log = os.path.join(config["logs"], "sshd.log")
    check = subprocess.run(["/usr/sbin/sshd", "-t", "-f", "/etc/ssh/sshd_config"],
                           capture_output=True, text=True, env=env, check=False)
    if check.returncode != 0:
        raise ClusterError("sshd -t failed: %s" % check.stderr.strip())
    rc = subprocess.call(["/usr/sbin/sshd", "-f", "/etc/ssh/sshd_config", "-E", sshd_log],
                         stdin=subprocess.DEVNULL, env=env, preexec_fn=unblock_signals)
    if rc != 0:
        raise ClusterError("sshd exited %d; see %s" % (rc, sshd_log))


def _start_daemons(config, env):
    """Start the PBS daemons of the node's backend, then the mock ATOM service (moms).
    Returns ``{daemon: rc}`` (``{"pbs": 0}`` for real OpenPBS's ``pbs_init.d``)."""
    daemons = {}
    if not config["daemons"]:
        return daemons
    log_path = os.path.join(config["logs"], "daemons.log")
    if config.get("backend") == "openpbs":
        openpbs.start_pbs(env, log_path, config.get("vnode_definition"))
        daemons["pbs"] = 0
    else:
        daemons.update(mock.start_pbs(env, log_path))
    if config.get("atom"):
        rc, output = start_daemon([config["python"], "-m", "mockpbs", "atomd"], log_path, env)
        daemons["atomd"] = rc
        if rc != 0:
            raise ClusterError("atomd exited %d:\n%s" % (rc, output))
    return daemons


def mount(kind, source, target):
    """mount(2) one entry of node.json's ``mounts``: ``bind``, ``rbind``, ``ro-bind`` (bind,
    then remount read-only), ``tmpfs`` or ``cgroup2`` (what is mounted at ``target`` is
    detached first, with every mount below it: a cgroup v2 only host).  The syscall, not mount(8): libmount would keep its
    lock and utab files under the host's /run.  Raises ClusterError."""
    libc = ctypes.CDLL(None, use_errno=True)

    def call(src, flags, fstype=None, data=None):
        if libc.mount(src.encode() if src else None, target.encode(),
                      fstype.encode() if fstype else None, ctypes.c_ulong(flags),
                      data.encode() if data else None) != 0:
            err = ctypes.get_errno()
            raise ClusterError("mount %s %s on %s: %s" % (kind, src, target, os.strerror(err)))

    if kind == "tmpfs":
        call("tmpfs", 0, "tmpfs", "mode=1777" if target == "/dev/shm" else "mode=755")
    elif kind == "cgroup2":
        while os.path.ismount(target):
            if libc.umount2(target.encode(), MNT_DETACH) != 0:
                err = ctypes.get_errno()
                raise ClusterError("umount %s: %s" % (target, os.strerror(err)))
        call("cgroup2", 0, "cgroup2")
    else:
        call(source, MS_BIND | (MS_REC if kind == "rbind" else 0))
        if kind == "ro-bind":
            call(None, MS_REMOUNT | MS_BIND | MS_RDONLY)


def enter_cgroups(args):
    """``_enter-cgroups DIR... -- CMD...`` (inside a node): join the cgroups, exec CMD."""
    for directory in args.directories:
        write_value(os.path.join(directory, "cgroup.procs"), os.getpid())
    os.execvp(args.argv[0], args.argv)


def reap():
    """Collect every exited child without blocking."""
    while True:
        try:
            pid, _unused = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _other_processes():
    """Live PIDs of the node other than its init (the node's /proc is its own)."""
    reap()
    return [pid for pid in host_pids() if pid != 1 and proc_state(pid) not in (None, "Z", "X")]


def stop_all_processes():
    """SIGTERM (then SIGCONT, for frozen ones) every other process of the node, wait up to
    10 s, SIGKILL the rest.  The node's /proc is its own (--mount-proc)."""
    for sig in (signal.SIGTERM, signal.SIGCONT):
        signal_all(_other_processes(), sig)
    if not wait_until(lambda: not _other_processes(), 10):
        signal_all(_other_processes(), signal.SIGKILL)
        wait_until(lambda: not _other_processes(), 5)
