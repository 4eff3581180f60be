"""``cluster up``: build the nodes' file trees, start each node (``unshare`` running
``cluster _node-init``), wait until every node is ready and answers ssh, create the moms in
the server and wait until they are free, then write the inventory."""
import json
import os
import re
import shutil
import socket
import subprocess
import sys

from . import mock, openpbs
from .cgroups import setup_cgroups
from .common import (DEFAULT_PBS_CONF, ENTRY_POINT, NODE_READY_TIMEOUT, RELOCATED_PBS_CONF_DIR,
                     SERVER_NAME, SSH_PORT, ClusterError, log)
from .down import teardown
from .nodecmd import clean_env, run_in_node
from .nodefiles import build_home, build_node, needed_rebinds, write_inventory
from .procs import alive, host_pids, latest_log, pid_namespace, proc_ppid, tail, wait_until
from .workdir import Workdir, default_workdir, node_names, write_file


def spawn_node(workdir, name, netns=False):
    """Start node ``name``'s unshare + init (``netns``: in a network namespace of its own
    too); return (unshare_pid, init_pid, pidns)."""
    log_path = os.path.join(workdir.node(name), "logs", "init.log")
    # --ipc: PostgreSQL (the real server's data service) keys its SysV shared memory by
    # port, so two real clusters' data services must not share an IPC namespace.
    argv = ["unshare", "--mount", "--uts", "--ipc", "--pid", "--fork", "--mount-proc"]
    argv += ["--net"] if netns else []
    argv += ["--propagation", "private", sys.executable, ENTRY_POINT, "_node-init",
             "--workdir", workdir.root, "--node", name]
    with open(log_path, "a") as out:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                   env=clean_env(), start_new_session=True, close_fds=True)
    unshare_pid = process.pid

    def child():
        for pid in host_pids():
            if proc_ppid(pid) == unshare_pid and pid_namespace(pid) != pid_namespace(unshare_pid):
                return pid
        if process.poll() is not None:
            raise ClusterError("unshare for %s exited %s:\n%s" % (name, process.returncode, tail(log_path)))
        return None

    init_pid = wait_until(child, 10, 0.02)
    if not init_pid:
        raise ClusterError("init of %s did not start; see %s" % (name, log_path))
    return unshare_pid, init_pid, pid_namespace(init_pid)


def wait_node_ready(workdir, name, init_pid, timeout):
    """Wait until node ``name``'s init reports ``ready``; ClusterError (with the tail of its
    init.log) when it reports ``failed``, exits, or ``timeout`` seconds pass."""
    status_path = os.path.join(workdir.node(name), "init-status.json")

    def status():
        try:
            with open(status_path) as handle:
                current = json.load(handle)
        except (FileNotFoundError, ValueError):
            current = {}
        if current.get("phase") in ("ready", "failed"):
            return current
        if not alive(init_pid):
            return {"phase": "failed", "error": "init exited"}
        return None

    current = wait_until(status, timeout)
    if not current:
        raise ClusterError("node %s not ready within %ss; see %s" % (name, timeout, workdir.node(name) + "/logs"))
    if current["phase"] == "failed":
        init_log = os.path.join(workdir.node(name), "logs", "init.log")
        message = "node %s failed to start: %s" % (name, current.get("error", "").strip())
        if os.path.exists(init_log) and os.path.getsize(init_log):
            message += "\n(last lines of %s:\n%s)" % (init_log, tail(init_log, 10))
        raise ClusterError(message)


def sshd_answers(address):
    """True if an SSH server greets on ``address``:22 within 2 s."""
    try:
        with socket.create_connection((address, SSH_PORT), timeout=2) as conn:
            conn.settimeout(2)
            return conn.recv(64).startswith(b"SSH-")
    except OSError:
        return False


def port_in_use(address):
    """True if something accepts connections on ``address``:22."""
    try:
        with socket.create_connection((address, SSH_PORT), timeout=1):
            return True
    except OSError:
        return False


def parse_pbsnodes(text):
    """``{node: state}`` from ``pbsnodes -a`` output."""
    states, current = {}, None
    for line in text.splitlines():
        if line and not line[0].isspace():
            current = line.strip()
            states.setdefault(current, None)
        elif current and line.strip().startswith("state ="):
            states[current] = line.split("=", 1)[1].strip()
    return states


def wait_nodes_free(workdir, moms, timeout):
    """Wait until ``pbsnodes -a`` on the server shows every mom ``state = free``;
    ClusterError naming the first mom that is not, with the tail of its mom log."""
    last = {"states": {}, "output": ""}

    def all_free():
        try:
            result = run_in_node(workdir, SERVER_NAME, ["pbsnodes", "-a"], timeout=30)
        except subprocess.TimeoutExpired:
            last["output"] = "(pbsnodes -a did not answer within 30s)"
            return False
        last["output"] = result.stdout + result.stderr
        last["states"] = parse_pbsnodes(result.stdout) if result.returncode == 0 else {}
        return all(last["states"].get(m) == "free" for m in moms)

    if wait_until(all_free, timeout, 0.5):
        return
    for mom in moms:
        state = last["states"].get(mom)
        if state != "free":
            mom_log = latest_log(os.path.join(workdir.node(mom), "spool", "pbs", "mom_logs"))
            raise ClusterError(
                "node %s not free within %ss (state = %s); pbsnodes -a said:\n%s\n"
                "last lines of %s:\n%s" % (mom, timeout, state, last["output"].strip(), mom_log, tail(mom_log)))


# pbs_mom logs each address the server sends it (its ReplyHello, IS_CLUSTER_ADDRS): a mom
# takes a sister's reply to a job's join only from such an address.
AUTHORIZED = re.compile(r"Adding IP address (\S+) as authorized")
SISTERS_KNOWN_TIMEOUT = 10


def unknown_sisters(workdir, state):
    """{mom: sorted PBS addresses of the other moms that its mom log has not authorized}
    for the moms of an openpbs cluster that lack some."""
    moms = [n for n in state["nodes"] if n["role"] == "mom"]
    missing = {}
    for mom in moms:
        directory = os.path.join(workdir.node(mom["name"]), "spool", "pbs", "mom_logs")
        known = set()
        for name in sorted(os.listdir(directory)) if os.path.isdir(directory) else []:
            if name.isdigit():
                with open(os.path.join(directory, name), errors="replace") as handle:
                    known.update(AUTHORIZED.findall(handle.read()))
        lacking = sorted(m["pbs_address"] for m in moms if m is not mom and m["pbs_address"] not in known)
        if lacking:
            missing[mom["name"]] = lacking
    return missing


def wait_moms_know_each_other(workdir, state, timeout):
    """``--pbs openpbs``: wait until every mom has the addresses of the others. A mom whose
    hello the server answered before the other moms' nodes were created may never get them
    (the server's later IS_CLUSTER_ADDRS can miss it), and every job it is the primary mom
    of then loses its sisters ("could not JOIN_JOB successfully"): such a mom's pbs_mom is
    restarted once, so that its new hello brings every address. ClusterError naming the
    moms that still lack some."""
    from .control import restart_mom  # control imports this module
    if wait_until(lambda: not unknown_sisters(workdir, state), SISTERS_KNOWN_TIMEOUT, 0.5):
        return
    lacking = unknown_sisters(workdir, state)
    for mom, addresses in sorted(lacking.items()):
        log("mom %s has not the addresses of %s: restarting its pbs_mom" % (mom, ", ".join(addresses)))
        restart_mom(workdir, mom)
    wait_nodes_free(workdir, sorted(lacking), timeout)
    if not wait_until(lambda: not unknown_sisters(workdir, state), timeout, 0.5):
        raise ClusterError("moms without the addresses of other moms after a restart: %s"
                           % unknown_sisters(workdir, state))


def start_real_nodes(workdir, state, nodes):
    """``--pbs openpbs``: start every node (each waits for its network), wire the network
    namespaces, start the ssh forwarders, then wait until each node has started PBS."""
    for name, address, role in nodes:
        unshare_pid, init_pid, pidns = spawn_node(workdir, name, netns=True)
        state["nodes"].append({"name": name, "address": address, "role": role,
                               "pbs_address": openpbs.internal_address(address),
                               "unshare_pid": unshare_pid, "init_pid": init_pid, "pidns": pidns})
        workdir.save_state(state)
    try:
        openpbs.setup_network(state["nodes"][0], state["nodes"][1:])
    except openpbs.BackendError as exc:
        raise ClusterError(str(exc))
    for entry in state["nodes"]:
        write_file(os.path.join(workdir.node(entry["name"]), "net-ready"), "\n")
        log_path = os.path.join(workdir.node(entry["name"]), "logs", "forward.log")
        with open(log_path, "a") as out:
            subprocess.Popen([sys.executable, ENTRY_POINT, "_forward", "--workdir", workdir.root,
                              "--node", entry["name"]], stdin=subprocess.DEVNULL, stdout=out,
                             stderr=out, env=clean_env(), start_new_session=True, close_fds=True)
    for entry in state["nodes"]:
        wait_node_ready(workdir, entry["name"], entry["init_pid"], openpbs.SERVER_READY_TIMEOUT)
        log("node %s up (%s, PBS at %s)" % (entry["name"], entry["address"], entry["pbs_address"]))


def start_mock_nodes(workdir, state, nodes):
    """``--pbs mock``: start the server node, wait until it is ready, then the moms (so
    that they find the server when they start)."""
    for group in ([nodes[0]], nodes[1:]):
        for name, address, role in group:
            unshare_pid, init_pid, pidns = spawn_node(workdir, name)
            state["nodes"].append({"name": name, "address": address, "role": role,
                                   "unshare_pid": unshare_pid, "init_pid": init_pid,
                                   "pidns": pidns})
            workdir.save_state(state)
        names = [n for n, _unused, _role in group]
        for entry in state["nodes"]:
            if entry["name"] in names:
                wait_node_ready(workdir, entry["name"], entry["init_pid"], NODE_READY_TIMEOUT)
                log("node %s up (%s)" % (entry["name"], entry["address"]))


def _clear_workdir(workdir):
    """Stop what a previous cluster of ``workdir`` left and remove its generated files."""
    teardown(workdir)
    for generated in ("nodes", "home"):
        shutil.rmtree(os.path.join(workdir.root, generated), ignore_errors=True)
    for generated in (workdir.inventory, workdir.key, workdir.key + ".pub"):
        if os.path.exists(generated):
            os.unlink(generated)


def _openpbs_root(backend, release):
    """The OpenPBS install root of ``release`` for ``--pbs openpbs`` (None for the mock);
    ClusterError."""
    if not backend.startswith("openpbs"):
        return None
    try:
        return openpbs.install_root(release=release)
    except openpbs.BackendError as exc:
        raise ClusterError("--pbs openpbs --pbs-version %s: %s" % (release, exc))


def _wait_sshd(workdir, nodes):
    """ClusterError unless every node's sshd greets within 30 s."""
    for name, address, _unused in nodes:
        if not wait_until(lambda addr=address: sshd_answers(addr), 30, 0.2):
            raise ClusterError("sshd of %s does not answer on %s:%d; see %s" % (
                name, address, SSH_PORT, os.path.join(workdir.node(name), "logs", "sshd.log")))


def _create_moms(workdir, nodes, timeout):
    """``qmgr -c 'create node momN'`` in creation order (PBS's default node sort), then
    wait until every mom is free."""
    moms = [name for name, _unused, role in nodes if role == "mom"]
    for mom in moms:
        result = run_in_node(workdir, SERVER_NAME, ["qmgr", "-c", "create node %s" % mom])
        if result.returncode != 0:
            raise ClusterError("qmgr -c 'create node %s' failed (rc %d): %s" % (
                mom, result.returncode, (result.stdout + result.stderr).strip()))
    wait_nodes_free(workdir, moms, timeout)
    log("all %d moms free" % len(moms))


def cgroup_v2_only_moms(text, moms):
    """The mom nodes (set) of ``--cgroup-v2-only`` (``MOM[,MOM...]``); raises ClusterError
    for a name that is not a mom of this cluster."""
    chosen = set(n.strip() for n in text.split(",") if n.strip())
    unknown = sorted(chosen - set(moms))
    if unknown:
        raise ClusterError("--cgroup-v2-only: %s not among the moms (%s)" % (", ".join(unknown), ", ".join(moms)))
    return chosen


def pbs_conf_layout(path, stale_text, names):
    """The nodes (set) of ``--stale-etc-pbs-conf`` after checking it and ``--pbs-conf``
    (``path``) against the node ``names``; raises ClusterError."""
    stale = set(n.strip() for n in stale_text.split(",") if n.strip())
    if path != DEFAULT_PBS_CONF and (os.path.dirname(path) != RELOCATED_PBS_CONF_DIR
                                     or not os.path.basename(path)):
        raise ClusterError("--pbs-conf must be %s or a file in %s, not %r"
                           % (DEFAULT_PBS_CONF, RELOCATED_PBS_CONF_DIR, path))
    if stale and path == DEFAULT_PBS_CONF:
        raise ClusterError("--stale-etc-pbs-conf needs --pbs-conf elsewhere than %s" % DEFAULT_PBS_CONF)
    unknown = sorted(stale - set(names))
    if unknown:
        raise ClusterError("--stale-etc-pbs-conf names no node of this cluster: %s (nodes: %s)"
                           % (", ".join(unknown), ", ".join(names)))
    return stale


def cmd_up(args):
    """``cluster up``: print the inventory path; on failure stop what was started (unless
    $HPC_PBS_CLUSTER_KEEP_FAILED) and raise."""
    workdir = Workdir(args.workdir or default_workdir())
    if args.moms < 1:
        raise ClusterError("--moms must be at least 1")
    python = args.python or sys.executable
    _lock = workdir.lock()
    _clear_workdir(workdir)
    nodes = node_names(args.moms)
    busy = [addr for _unused, addr, _role in nodes if port_in_use(addr)]
    if busy:
        raise ClusterError("port %d already answers on %s (another cluster running from an "
                           "other workdir?)" % (SSH_PORT, ", ".join(busy)))
    if args.vnodes_per_mom < 0:
        raise ClusterError("--vnodes-per-mom must be >= 0")
    stale = pbs_conf_layout(args.pbs_conf, args.stale_etc_pbs_conf, [n for n, _a, _r in nodes])
    cgroup_v2_only = cgroup_v2_only_moms(args.cgroup_v2_only, [n for n, _a, r in nodes if r == "mom"])
    pbs_root = _openpbs_root(args.pbs, args.pbs_version)
    probe = mock.probe_python(python)
    linked = []
    if pbs_root is not None:
        probe["version"] = openpbs.version(pbs_root)
        linked = openpbs.linked_paths(pbs_root)
    rebinds = needed_rebinds(probe["paths"] + linked + [os.path.realpath(sys.executable), sys.executable,
                                                        sys.prefix, sys.base_prefix, ENTRY_POINT])
    log("building %d nodes in %s" % (len(nodes), workdir.root))
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "mock-pbs-cluster",
                    "-f", workdir.key], check=True, capture_output=True, text=True)
    build_home(workdir)
    state = {"workdir": workdir.root, "python": python, "daemons": not args.no_daemons,
             "backend": args.pbs, "pbs_root": pbs_root,
             "openpbs_release": args.pbs_version if pbs_root is not None else None,
             "key": workdir.key, "inventory": workdir.inventory, "nodes": []}
    try:
        cgroups = setup_cgroups(workdir, [n for n, _unused, r in nodes if r == "mom" and n not in cgroup_v2_only],
                                args.cgroups)
        state["cgroups"] = cgroups
        for name, address, role in nodes:
            build_node(workdir, name, address, role, nodes, python, probe, rebinds, not args.no_daemons,
                       cgroups, args.vnodes_per_mom, args.vnode_mem, not args.no_atom, pbs_root,
                       pbs_conf=(args.pbs_conf, name in stale), cgroup_v2_only=name in cgroup_v2_only)
        workdir.save_state(state)
        (start_real_nodes if pbs_root is not None else start_mock_nodes)(workdir, state, nodes)
        _wait_sshd(workdir, nodes)
        if not args.no_daemons:
            _create_moms(workdir, nodes, args.timeout)
            if pbs_root is not None:
                wait_moms_know_each_other(workdir, state, args.timeout)
        write_inventory(workdir, nodes)
    except BaseException:
        _after_failed_start(workdir)
        raise
    print(workdir.inventory)
    return 0


def _after_failed_start(workdir):
    """Stop the nodes of a failed ``up`` (logs stay), or keep them running for inspection
    when $HPC_PBS_CLUSTER_KEEP_FAILED is set."""
    if os.environ.get("HPC_PBS_CLUSTER_KEEP_FAILED"):
        log("start failed; nodes left running for inspection (cluster down stops them)")
        return
    log("start failed; stopping what was started (logs stay in %s)" % workdir.nodes)
    try:
        teardown(workdir, quiet=True)
    except ClusterError as exc:
        log(str(exc))
