"""The ``--pbs openpbs`` backend of the cluster launcher: real OpenPBS daemons in the nodes.

A real PBS refuses host names that resolve to loopback and tracks a sister's failure per host,
so each node of this backend also gets a network namespace of its own (``unshare --net``)
with one non-loopback address: ``198.18.<X>.<N>`` where ``127.0.<X>.<N>`` is the node's
loopback address (RFC 2544's benchmarking range, used nowhere else here).  The namespaces
are joined by a bridge that lives in the server node's network namespace (a veth pair per
mom), so they die with the nodes and the host's network namespace gets no address, link or
route.  The host reaches each node's ``sshd`` through a forwarder process that listens on
the node's loopback address (the same ``127.0.1.N:22`` as the mock backend, so inventories
and tests are the same) and connects from inside the node's network namespace.

The PBS installation comes from ``tests/openpbs/build`` (``--prefix=/opt/pbs``, installed
under a DESTDIR outside git): each node bind-mounts it read-only on its own ``/opt/pbs``.
The node's ``/var/spool`` starts empty and its ``/etc/pbs.conf`` final, so the first
``pbs_init.d start`` runs ``pbs_habitat``/``pbs_postinstall`` and (on the server) initialises
the PostgreSQL data service, exactly as on a fresh installation.
"""
import contextlib
import ctypes
import fcntl
import os
import pwd
import select
import signal
import socket
import subprocess
import threading
import time

from .common import DEFAULT_OPENPBS_RELEASE, REPO

BUILD_SCRIPT = os.path.join(REPO, "tests", "openpbs", "build")
INTERNAL_PREFIX = "198.18"
BRIDGE = "br0"
NODE_LINK = "eth0"
CLONE_NEWNET = 0x40000000
SERVER_READY_TIMEOUT = 240.0
# Job output and error files go back to the submission host's /home, which every node
# shares (as on a cluster with NFS homes): cp, not scp (pbs_mom's $usecp).
MOM_CONFIG_EXTRA = "$usecp *:/home/ /home/\n"
# pbs_habitat's data service set-up (pbs_db_utility) waits for ``pg_ctl status`` only, then
# runs createdb, which on a loaded machine can still find no socket ("createdb: error:
# connection to server on socket ... failed", seen in full test runs, three tries in a row
# failing within 3 s once); it removes what it made, so the set-up is tried again, this
# many times in all, on that failure only, after a pause that grows with each try
# (HABITAT_PAUSE seconds times the tries so far: 2, 4, 6, 8 s).
HABITAT_TRIES = 5
HABITAT_PAUSE = 2.0
DATASERVICE_INIT_FAILED = "Error initializing the PBS dataservice"


class BackendError(Exception):
    """A problem of the real-PBS backend, reported as ``cluster: <message>``."""


def install_root(build=True, release=DEFAULT_OPENPBS_RELEASE):
    """The DESTDIR of the OpenPBS build of ``release`` (one of :data:`OPENPBS_RELEASES`;
    ``<root>/opt/pbs`` is PBS_EXEC).

    ``build``: build it first when missing (minutes; Debian packages installed as needed).
    Raises BackendError with the build script's message when there is no source tarball, no
    Python to link it to, or the build failed."""
    argv = [BUILD_SCRIPT, "--version", release] + ([] if build else ["--where"])
    if build:
        # Parallel test workers (pytest -n) each ask for the build at their start: the first
        # builds, the others wait for it here and then find it made.
        with _build_lock():
            result = subprocess.run(argv, capture_output=True, text=True, check=False)
    else:
        result = subprocess.run(argv, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise BackendError(result.stderr.strip().splitlines()[-1] if result.stderr.strip()
                           else "%s exited %d" % (BUILD_SCRIPT, result.returncode))
    return result.stdout.strip().splitlines()[-1]


def build_cache_dir():
    """Where ``tests/openpbs/build`` keeps its builds: ``$HPC_PBS_OPENPBS_CACHE``, default
    ``~/.cache/hpc-pbs/openpbs`` (as the script computes it)."""
    return os.environ.get("HPC_PBS_OPENPBS_CACHE") or os.path.join(
        os.environ.get("HOME") or "/root", ".cache", "hpc-pbs", "openpbs")


@contextlib.contextmanager
def _build_lock():
    """``with _build_lock():`` holds an exclusive flock on ``<cache>/.build.lock``, so that
    one process at a time runs the build script (the kernel drops the lock with the process)."""
    os.makedirs(build_cache_dir(), exist_ok=True)
    with open(os.path.join(build_cache_dir(), ".build.lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def linked_paths(root):
    """The shared libraries ``pbs_python`` of the build at ``root`` loads from outside the
    system's library directories (``libpython3.6m.so`` of a pyenv CPython for 22.05.11):
    the nodes must see them (list of str)."""
    result = subprocess.run(["ldd", os.path.join(root, "opt", "pbs", "bin", "pbs_python")],
                            capture_output=True, text=True, check=False)
    paths = []
    for line in result.stdout.splitlines():
        target = line.split("=>", 1)[-1].split("(", 1)[0].strip()
        if target.startswith("/") and not target.startswith(("/lib", "/usr/")):
            paths.append(target)
    return paths


def version(root):
    """``23.06.06``: the version ``qstat --version`` of the build reports."""
    result = subprocess.run([os.path.join(root, "opt", "pbs", "bin", "qstat"), "--version"],
                            capture_output=True, text=True, check=False)
    return result.stdout.strip().rsplit("=", 1)[-1].strip()


def internal_address(loopback_address):
    """``127.0.1.11`` -> ``198.18.1.11``: the node's address inside its network namespace."""
    octets = loopback_address.split(".")
    return "%s.%s.%s" % (INTERNAL_PREFIX, octets[2], octets[3])


def _ip(init_pid, *args):
    """Run ``ip ARGS`` in the network namespace of host PID ``init_pid``."""
    argv = ["nsenter", "--target", str(init_pid), "--net", "--", "ip"] + list(args)
    result = subprocess.run(argv, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise BackendError("%s failed: %s" % (" ".join(argv), result.stderr.strip()))


def setup_network(server, moms):
    """Wire the nodes' network namespaces: a bridge with the server's address in the server
    node's namespace, and per mom a veth pair (``v-<mom>`` on the bridge, ``eth0`` with the
    mom's address in the mom's namespace).  ``server``/``moms``: state entries with
    ``init_pid``, ``name`` and ``pbs_address``."""
    spid = server["init_pid"]
    _ip(spid, "link", "set", "lo", "up")
    _ip(spid, "link", "add", BRIDGE, "type", "bridge")
    _ip(spid, "addr", "add", server["pbs_address"] + "/24", "dev", BRIDGE)
    _ip(spid, "link", "set", BRIDGE, "up")
    for mom in moms:
        port = ("v-" + mom["name"])[:15]
        _ip(spid, "link", "add", port, "type", "veth", "peer", "name", NODE_LINK,
            "netns", str(mom["init_pid"]))
        _ip(spid, "link", "set", port, "master", BRIDGE)
        _ip(spid, "link", "set", port, "up")
        _ip(mom["init_pid"], "link", "set", "lo", "up")
        _ip(mom["init_pid"], "addr", "add", mom["pbs_address"] + "/24", "dev", NODE_LINK)
        _ip(mom["init_pid"], "link", "set", NODE_LINK, "up")


def _run(argv, env, log_path):
    with open(log_path, "a") as out:
        out.write("==== %s %s\n" % (time.strftime("%Y-%m-%d %H:%M:%S"), " ".join(argv)))
        out.flush()
        rc = subprocess.call(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env,
                             preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_SETMASK, set()))
    if rc != 0:
        raise BackendError("%s exited %d; see %s" % (" ".join(argv), rc, log_path))


def start_pbs(env, log_path, vnode_definition=None):
    """Inside a node, as a site installs PBS: ``pbs_habitat`` (PBS_HOME, and on the server the
    data service and ``pbs_server -t create``), then the mom's site configuration
    (``$usecp`` for the shared /home, and ``vnode_definition``, a file path, installed with
    ``pbs_mom -s insert``), then ``pbs_init.d start``.  Raises BackendError."""
    _make_postgres_run_dir()
    if not os.path.exists("/var/spool/pbs/pbs_version"):
        _run_habitat(env, log_path)
    config = "/var/spool/pbs/mom_priv/config"
    if os.path.exists(config):
        with open(config) as handle:
            text = handle.read()
        if MOM_CONFIG_EXTRA not in text:
            with open(config, "a") as handle:
                handle.write(MOM_CONFIG_EXTRA)
    if vnode_definition:
        _run(["/opt/pbs/sbin/pbs_mom", "-s", "insert", "hpcpbs_vnodes", vnode_definition], env, log_path)
    _run(["/opt/pbs/libexec/pbs_init.d", "start"], env, log_path)


def _run_habitat(env, log_path):
    """``pbs_habitat``, again (up to :data:`HABITAT_TRIES` runs in all) when what it logged
    says its data service set-up failed; any other failure, or the last one, raises
    BackendError."""
    for attempt in range(1, HABITAT_TRIES + 1):
        logged_before = os.path.getsize(log_path) if os.path.exists(log_path) else 0
        try:
            _run(["/opt/pbs/libexec/pbs_habitat"], env, log_path)
            return
        except BackendError:
            with open(log_path, errors="replace") as handle:
                handle.seek(logged_before)
                logged = handle.read()
            if attempt == HABITAT_TRIES or DATASERVICE_INIT_FAILED not in logged:
                raise
            time.sleep(HABITAT_PAUSE * attempt)


def _make_postgres_run_dir():
    """``/run/postgresql`` (postgres:postgres 2775), as Debian's tmpfiles.d makes it at boot:
    the data service puts its socket lock there, and a node's ``/run`` starts empty."""
    try:
        account = pwd.getpwnam("postgres")
    except KeyError:
        return  # no data service user: pbs_habitat says so itself
    os.makedirs("/run/postgresql", exist_ok=True)
    os.chown("/run/postgresql", account.pw_uid, account.pw_gid)
    os.chmod("/run/postgresql", 0o2775)


# ---------------------------------------------------------------------------- ssh forwarder

def _relay(left, right):
    """Copy bytes both ways between two connected sockets until either side closes."""
    sockets = [left, right]
    try:
        while True:
            readable, _unused, _unused = select.select(sockets, [], [], 300)
            if not readable:
                continue
            for source in readable:
                data = source.recv(65536)
                if not data:
                    return
                (right if source is left else left).sendall(data)
    except OSError:
        pass
    finally:
        for sock in sockets:
            try:
                sock.close()
            except OSError:
                pass


def forward(listen_address, port, init_pid, target_address):
    """Accept on ``listen_address:port`` (host namespace) and relay each connection to
    ``target_address:port`` inside the network namespace of ``init_pid``; return when that
    process is gone or on SIGTERM.  The listening socket is made before the setns(2), so it
    stays in the host's namespace while every later socket is made in the node's."""
    listener = socket.create_server((listen_address, port), reuse_port=False)
    listener.settimeout(1.0)
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open("/proc/%d/ns/net" % init_pid, os.O_RDONLY)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        raise BackendError("setns into the network of %d: %s"
                           % (init_pid, os.strerror(ctypes.get_errno())))
    os.close(fd)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_unused: stop.set())
    while not stop.is_set() and os.path.exists("/proc/%d" % init_pid):
        try:
            client, _unused = listener.accept()
        except socket.timeout:
            continue
        except OSError:
            if stop.is_set():
                break
            raise
        try:
            upstream = socket.create_connection((target_address, port), timeout=10)
            upstream.settimeout(None)
        except OSError:
            client.close()
            continue
        client.settimeout(None)
        threading.Thread(target=_relay, args=(client, upstream), daemon=True).start()
    listener.close()
    return 0
