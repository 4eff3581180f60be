"""The cluster launcher ``tests/integration/cluster``, on both backends.

Runs with ``--no-daemons`` (sshd only) so that it depends on nothing but the launcher; the
last test brings the PBS daemons up.  On the ``openpbs`` backend the nodes also live in
network namespaces of their own (PBS addresses ``198.18.X.N``) and ``/opt/pbs`` is the
OpenPBS build; PBS_HOME only exists once PBS has started.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading

import pytest

from launcher import cgroups, cli, control, down, procs, up
from launcher.common import ClusterError
from launcher.workdir import Workdir

pytestmark = pytest.mark.integration

HERE = os.path.dirname(os.path.abspath(__file__))
NET = os.environ.get("HPC_PBS_CLUSTER_NET", "127.0.1").rstrip(".") + "."   # as the launcher
ANSIBLE_INVENTORY = os.path.join(os.path.dirname(sys.executable), "ansible-inventory")
CLUSTER = os.path.join(HERE, "cluster")
SYSTEM_PYTHON = "/usr/bin/python3"   # cannot import mockpbs


def host_fingerprint():
    """What a node must never change on the host: /etc/hostname, /etc/pbs.conf,
    /opt/pbs, /var/spool/pbs."""
    with open("/etc/hostname", "rb") as handle:
        hostname_sum = hashlib.sha256(handle.read()).hexdigest()
    links = subprocess.run(["ip", "-o", "addr", "show"], capture_output=True, text=True, check=False).stdout
    return {"hostname": hostname_sum, "pbs.conf": os.path.exists("/etc/pbs.conf"),
            "opt/pbs": os.path.exists("/opt/pbs"), "spool/pbs": os.path.exists("/var/spool/pbs"),
            # the host's own network: no address or link is ever added (openpbs backend)
            "addresses": sorted(" ".join(l.split()[1:4]) for l in links.splitlines())}


@pytest.fixture(scope="module")
def host_before():
    return host_fingerprint()


@pytest.fixture(scope="module")
def cluster(host_before, cluster_factory):
    return cluster_factory(moms=2, daemons=False)


def state_of(cluster):
    with open(os.path.join(cluster.workdir, "state.json")) as handle:
        return json.load(handle)


def processes_of(workdir, namespaces):
    """Host PIDs of `_node-init`/unshare or `_forward` of ``workdir`` or inside one of
    ``namespaces``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % name, "rb") as handle:
                argv = handle.read().split(b"\0")
            pidns = os.readlink("/proc/%s/ns/pid" % name)
            with open("/proc/%s/stat" % name) as handle:
                zombie = handle.read().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            continue
        if zombie:
            continue
        ours = b"_node-init" in argv or b"_forward" in argv   # forward: openpbs ssh relays
        if (ours and workdir.encode() in argv) or pidns in namespaces:
            found.append(int(name))
    return found


def pbs_address(cluster, octet):
    """The address node ``octet`` has for PBS: its loopback one on the mock, the one in its
    own network namespace on real OpenPBS."""
    if cluster.backend.startswith("openpbs"):
        return "198.18.%s.%d" % (NET.split(".")[2], octet)
    return NET + str(octet)


def fake_mom(cluster, node):
    """A ``sleep`` standing in for pbs_mom (no daemons here), recorded in mom.lock; its pid."""
    lock = "/var/spool/pbs/mom_priv/mom.lock"
    started = cluster.exec(node, ["sh", "-c", "mkdir -p /var/spool/pbs/mom_priv && "
                                  "{ sleep 600 </dev/null >/dev/null 2>&1 & echo $! > %s; }" % lock])
    assert started.returncode == 0, started.stderr
    return int(cluster.exec(node, ["cat", lock]).stdout)


def ps_state(cluster, node, pid):
    proc = cluster.exec(node, ["ps", "-o", "stat=", "-p", str(pid)])
    return proc.stdout.strip()


def test_up_prints_only_the_inventory_path(cluster):
    assert os.path.isabs(cluster.inventory)
    assert "\n" not in cluster.inventory
    with open(cluster.inventory) as handle:
        text = handle.read()
    assert "[pbs_server]\npbs-server ansible_host=" + NET + "10\n" in text
    assert "[pbs_mom]\nmom1 ansible_host=" + NET + "11\nmom2 ansible_host=" + NET + "12\n" in text


def test_inventory_as_ansible_reads_it(cluster):
    proc = subprocess.run([ANSIBLE_INVENTORY, "-i", cluster.inventory, "--list"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    inventory = json.loads(proc.stdout)
    assert inventory["pbs_server"]["hosts"] == ["pbs-server"]
    assert inventory["pbs_mom"]["hosts"] == ["mom1", "mom2"]
    hostvars = inventory["_meta"]["hostvars"]["mom2"]
    assert hostvars["ansible_host"] == NET + "12"
    assert hostvars["ansible_user"] == "root"
    assert hostvars["ansible_python_interpreter"] == "/usr/bin/python3"
    assert hostvars["ansible_ssh_private_key_file"] == cluster.key
    assert "StrictHostKeyChecking=no" in hostvars["ansible_ssh_common_args"]
    assert "UserKnownHostsFile=/dev/null" in hostvars["ansible_ssh_common_args"]
    with open(cluster.key + ".pub") as handle:
        assert handle.read().startswith("ssh-ed25519 ")


def test_ssh_reaches_the_node_and_its_own_etc(cluster, host_before):
    proc = cluster.ssh("mom1", "hostname")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "mom1"
    conf = cluster.ssh("mom1", "cat /etc/pbs.conf")
    assert conf.returncode == 0, conf.stderr
    assert "PBS_SERVER=pbs-server\n" in conf.stdout
    assert "PBS_START_MOM=1\n" in conf.stdout and "PBS_START_SERVER=0\n" in conf.stdout
    assert "PBS_HOME=/var/spool/pbs\n" in conf.stdout and "PBS_EXEC=/opt/pbs\n" in conf.stdout
    server_conf = cluster.ssh("pbs-server", "cat /etc/pbs.conf").stdout
    assert "PBS_START_SERVER=1\n" in server_conf and "PBS_START_MOM=0\n" in server_conf
    assert host_fingerprint() == host_before


def test_nodes_resolve_each_other_and_pbsuser_can_ssh_between_them(cluster):
    proc = cluster.ssh("mom2", "getent hosts pbs-server mom1; ssh mom1 hostname", user="pbsuser")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split("\n")
    assert lines[0].split() == [pbs_address(cluster, 10), "pbs-server"]
    assert lines[1].split() == [pbs_address(cluster, 11), "mom1"]
    assert lines[2] == "mom1"


def test_exec_as_pbsuser_gets_a_login_environment(cluster):
    proc = cluster.exec("mom1", ["id", "-un"], user="pbsuser")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "pbsuser\n"
    env = cluster.exec("mom1", ["sh", "-c", "pwd; id -u; id -g; echo $HOME $USER $LOGNAME; echo $PATH"],
                       user="pbsuser").stdout.splitlines()
    assert env[:4] == ["/home/pbsuser", "1500", "1500", "/home/pbsuser pbsuser pbsuser"]
    assert "/opt/pbs/bin" in env[4].split(":")
    home = os.stat(os.path.join(cluster.workdir, "home", "pbsuser"))
    assert (home.st_uid, home.st_gid) == (1500, 1500)


def test_exec_runs_in_the_users_home_whatever_the_callers_directory(cluster, tmp_path):
    # The caller's directory exists nowhere in the node; the system python3, as typed.
    for user, home in (("pbsuser", "/home/pbsuser"), ("root", "/root")):
        proc = subprocess.run([SYSTEM_PYTHON, CLUSTER, "exec", "mom1", "--user", user,
                               "--workdir", cluster.workdir, "--", "pwd"], cwd=str(tmp_path),
                              capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False)
        assert (proc.returncode, proc.stdout) == (0, home + "\n"), proc.stderr


def test_exec_passes_stdin_through_and_returns_the_rc(cluster):
    proc = cluster.exec("mom2", ["sh", "-c", "cat; echo err >&2; exit 7"], input="from stdin\n")
    assert proc.returncode == 7
    assert proc.stdout == "from stdin\n"
    assert proc.stderr == "err\n"


def test_pbsuser_runs_the_mockpbs_python(cluster):
    if cluster.backend.startswith("openpbs"):
        pytest.skip("real OpenPBS nodes run no mockpbs wrapper (their /opt/pbs is the build)")
    with open(os.path.join(cluster.workdir, "nodes", "mom1", "opt", "pbs", "bin", "qmgr")) as handle:
        python = handle.read().split()[2]
    proc = cluster.exec("mom1", [python, "-c", "import mockpbs; print('ok')"], user="pbsuser")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "ok\n"


def test_real_node_sees_the_openpbs_build_and_no_pbs_home_before_its_first_start(cluster, host_before):
    if not cluster.backend.startswith("openpbs"):
        pytest.skip("the mock's PBS_HOME and wrappers: test_node_sees_its_own_pbs_exec_and_pbs_home")
    version = cluster.exec("mom1", ["/opt/pbs/bin/qstat", "--version"])
    assert version.stdout.strip() == "pbs_version = 23.06.06", version.stderr
    assert cluster.exec("mom1", ["test", "-u", "/opt/pbs/sbin/pbs_iff"]).returncode == 0
    assert cluster.exec("mom1", ["test", "-e", "/var/spool/pbs"]).returncode == 1
    conf = cluster.exec("mom1", ["cat", "/etc/pbs.conf"]).stdout
    assert "PBS_SERVER=pbs-server\n" in conf and "PBS_START_MOM=1\n" in conf
    addresses = cluster.exec("mom1", ["ip", "-o", "-4", "addr", "show", "eth0"]).stdout
    assert " %s/24 " % pbs_address(cluster, 11) in addresses
    assert host_fingerprint() == host_before


def test_node_sees_its_own_pbs_exec_and_pbs_home(cluster, host_before):
    if cluster.backend.startswith("openpbs"):
        pytest.skip("a real PBS_HOME is made by pbs_habitat at the first start (no daemons here)")
    proc = cluster.exec("mom1", ["cat", "/opt/pbs/bin/qmgr"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("#!/bin/sh\nexec ")
    assert " -S -c " in proc.stdout and "from mockpbs.__main__ import main" in proc.stdout
    assert proc.stdout.endswith(' qmgr "$@"\n')
    assert cluster.exec("mom1", ["test", "-x", "/opt/pbs/sbin/pbs_mom"]).returncode == 0
    listing = cluster.exec("mom1", ["stat", "-c", "%a %n", "/var/spool/pbs/spool",
                                    "/var/spool/pbs/mom_priv", "/var/spool/pbs/server_priv/hooks/tmp"])
    assert listing.stdout.splitlines() == ["1777 /var/spool/pbs/spool", "751 /var/spool/pbs/mom_priv",
                                           "750 /var/spool/pbs/server_priv/hooks/tmp"]
    config = cluster.exec("mom1", ["cat", "/var/spool/pbs/mom_priv/config"]).stdout
    assert config == "$clienthost pbs-server\n"
    assert "PATH=/bin:/usr/bin\n" in cluster.exec("mom1", ["cat", "/var/spool/pbs/pbs_environment"]).stdout
    assert host_fingerprint() == host_before


def test_stop_mom_freeze_then_start_mom_thaws(cluster):
    pid = fake_mom(cluster, "mom1")
    assert ps_state(cluster, "mom1", pid)[:1] in ("S", "R")
    cluster.stop_mom("mom1", freeze=True)
    assert ps_state(cluster, "mom1", pid).startswith("T")
    cluster.start_mom("mom1")
    assert ps_state(cluster, "mom1", pid)[:1] in ("S", "R")
    cluster.stop_mom("mom1")
    assert ps_state(cluster, "mom1", pid) == ""
    again = cluster.launcher("stop-mom", "mom1", check=False)
    assert again.returncode == 1
    assert "no running mom on mom1" in again.stderr


def test_stop_mom_of_a_frozen_mom_terminates_it(cluster):
    pid = fake_mom(cluster, "mom2")
    cluster.stop_mom("mom2", freeze=True)
    cluster.stop_mom("mom2")
    assert ps_state(cluster, "mom2", pid) == ""


def test_status_lists_every_node_up(cluster):
    proc = cluster.launcher("status")
    rows = [line.split() for line in proc.stdout.splitlines()]
    assert rows == [["pbs-server", NET + "10", "up"], ["mom1", NET + "11", "up"],
                    ["mom2", NET + "12", "up"]]


def test_ansible_reaches_every_node_over_ssh(cluster):
    ansible = os.path.join(os.path.dirname(sys.executable), "ansible")
    proc = subprocess.run([ansible, "-i", cluster.inventory, "all", "-m", "command",
                           "-a", "cat /etc/hostname"], capture_output=True, text=True,
                          env=dict(os.environ, ANSIBLE_NOCOLOR="1"), check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for node in ("pbs-server", "mom1", "mom2"):
        assert "%s | CHANGED | rc=0 >>\n%s\n" % (node, node) in proc.stdout


def test_up_after_a_crashed_node(cluster):
    before = state_of(cluster)
    crashed = before["nodes"][1]
    os.kill(crashed["init_pid"], 9)
    status = cluster.launcher("status", check=False)
    assert status.returncode == 1
    assert [l.split()[2] for l in status.stdout.splitlines()] == ["up", "down", "up"]
    cluster.up(2, daemons=False)
    old_pids = {n[key] for n in before["nodes"] for key in ("init_pid", "unshare_pid")}
    now = state_of(cluster)["nodes"]
    current = {n[key] for n in now for key in ("init_pid", "unshare_pid")}
    found = processes_of(cluster.workdir, set())
    forwarders = [pid for pid in found if "_forward" in open("/proc/%d/cmdline" % pid).read()]
    assert sorted(set(found) - set(forwarders)) == sorted(current)
    # one ssh forwarder per node on real OpenPBS, the crashed node's old one gone
    assert len(forwarders) == (3 if cluster.backend.startswith("openpbs") else 0)
    assert not old_pids & (current | set(forwarders))
    assert cluster.ssh("mom1", "hostname").stdout == "mom1\n"


def test_a_node_stopped_by_a_stray_signal_says_who_sent_it(cluster):
    """A node init that anything but ``cluster down`` stops leaves the sender in its
    init.log, and ``exec`` on the node shows that log instead of a bare "down"."""
    victim = state_of(cluster)["nodes"][2]
    os.kill(victim["init_pid"], 15)
    assert up.wait_until(lambda: not os.path.exists("/proc/%d" % victim["init_pid"]), 30)
    proc = cluster.exec("mom2", ["true"])
    assert proc.returncode != 0
    assert "node mom2 is down (its init %d is gone)" % victim["init_pid"] in proc.stderr, proc.stderr
    assert "node mom2: SIGTERM from pid 0 (uid 0; 0: outside the node), stopping every process" \
        in proc.stderr, proc.stderr
    cluster.up(2, daemons=False)
    assert cluster.ssh("mom2", "hostname").stdout == "mom2\n"


def host_cgroup_dirs(cluster):
    """Host paths of this cluster's ``hpcpbs_<id>`` cgroups that exist."""
    name = cgroups.cluster_cgroup_name(Workdir(cluster.workdir))
    return [os.path.join(mount, name) for mount in cgroups.cgroup_v1_mounts().values()
            if os.path.isdir(os.path.join(mount, name))]


def cgroups_writable():
    try:
        mounts = cgroups.cgroup_v1_mounts()
    except OSError:
        return False
    return all(c in mounts and os.access(mounts[c], os.W_OK) for c in ("cpuset", "memory"))


@pytest.mark.skipif(not cgroups_writable(), reason="no writable cgroup v1 cpuset+memory hierarchy")
def test_each_mom_sees_its_own_cgroups_at_the_standard_paths(cluster):
    state = state_of(cluster)
    cpus = state["cgroups"]["cpus"]
    for mom in ("mom1", "mom2"):
        mounts = cluster.exec(mom, ["cat", "/proc/self/mounts"], check=True).stdout.splitlines()
        for controller in ("cpuset", "memory"):
            top = [l.split() for l in mounts if l.split()[1] == "/sys/fs/cgroup/" + controller][-1]
            assert top[2] == "cgroup" and controller in top[3].split(",")
        seen = cluster.exec(mom, ["cat", "/sys/fs/cgroup/cpuset/cpuset.cpus"], check=True).stdout.strip()
        assert cgroups.parse_cpu_list(seen) == cpus[mom]
        own = cluster.exec(mom, ["cat", "/proc/self/cgroup"], user="pbsuser", check=True).stdout
        name = cgroups.cluster_cgroup_name(Workdir(cluster.workdir))
        assert ":cpuset:/%s/%s\n" % (name, mom) in own and ":memory:/%s/%s\n" % (name, mom) in own
        if cluster.backend.startswith("openpbs"):  # installed by pbs_mom -s insert at the first start
            with open(os.path.join(cluster.workdir, "nodes", mom, "vnodes.def")) as handle:
                definition = handle.read()
        else:
            definition = cluster.exec(mom, ["cat", "/var/spool/pbs/mom_priv/config.d/hpcpbs_vnodes"],
                                      check=True).stdout
        assert "%s: resources_available.ncpus = %d\n" % (mom, len(cpus[mom])) in definition
    if not state["cgroups"]["shared"]:
        assert not set(cpus["mom1"]) & set(cpus["mom2"])


def test_node_cpu_plan_is_disjoint_when_there_are_enough_cpus():
    assert cgroups.plan_node_cpus([0, 1, 2, 3, 4], ["a", "b"]) == ({"a": [0, 1], "b": [2, 3]}, False)
    assert cgroups.plan_node_cpus([0, 1], ["a", "b", "c"]) == ({"a": [0, 1], "b": [0, 1], "c": [0, 1]}, True)
    assert cgroups.format_cpu_list(cgroups.parse_cpu_list("0-2,5,7-8")) == "0-2,5,7-8"


def test_vnode_definition_for_multi_vnode_moms():
    text = cgroups.vnode_definition("mom1", 3, 2, "1gb")
    assert text == ("$configversion 2\nmom1: resources_available.ncpus = 0\nmom1: resources_available.mem = 0\n"
                    "mom1[0]: resources_available.ncpus = 2\nmom1[0]: resources_available.mem = 1gb\n"
                    "mom1[1]: resources_available.ncpus = 1\nmom1[1]: resources_available.mem = 1gb\n")
    assert cgroups.vnode_definition("mom1", None, 0, "1gb") is None
    with pytest.raises(ClusterError):
        cgroups.vnode_definition("mom1", 2, 3, "1gb")


def test_down_leaves_no_process_and_no_mount(cluster, host_before):
    state = state_of(cluster)
    # Held open, so that no other namespace (another cluster's node) gets their numbers.
    held = [os.open("/proc/%d/ns/pid" % n["init_pid"], os.O_RDONLY) for n in state["nodes"]]
    try:
        namespaces = {"pid:[%d]" % os.fstat(descriptor).st_ino for descriptor in held}
        assert namespaces == {n["pidns"] for n in state["nodes"]}
        assert processes_of(cluster.workdir, namespaces)
        proc = cluster.down()
        assert proc.returncode == 0, proc.stderr
        assert processes_of(cluster.workdir, namespaces) == []
    finally:
        for descriptor in held:
            os.close(descriptor)
    with open("/proc/self/mountinfo") as handle:
        assert cluster.workdir not in handle.read()
    assert cluster.ssh("mom1", "true").returncode == 255
    assert cluster.launcher("status", check=False).returncode == 1
    assert host_fingerprint() == host_before
    assert host_cgroup_dirs(cluster) == []


# A node that ends on SIGTERM after a moment, and a process of the same work dir that
# ignores it, so that the teardown waits (STOP_TIMEOUT) after the node's namespace is gone.
FAKE_NODE = ("import signal, time; signal.signal(signal.SIGTERM, lambda *a: None); print('ready', flush=True); "
             "signal.pause(); time.sleep(0.3)")
BLOCKER = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"


def test_down_kills_nothing_of_a_pid_namespace_made_while_it_waits(tmp_path, monkeypatch):
    """The number of a node's PID namespace is free once the node ends; the kernel gives it
    to the next namespace made, maybe another cluster's node. The teardown holds it until
    it is done, so the SIGKILL of its leftovers cannot reach that node."""
    workdir = Workdir(str(tmp_path))
    started = []

    def start(argv, stdout=None):
        started.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=stdout, start_new_session=True))
        return started[-1]

    def fake_init():
        return [pid for pid in procs.node_processes(workdir, ("_node-init",))
                if procs.pid_namespace(pid) != procs.pid_namespace(os.getpid())]

    monkeypatch.setattr(down, "STOP_TIMEOUT", 3.0)
    try:
        node = start(["unshare", "--pid", "--fork", "--kill-child", sys.executable, "-c", FAKE_NODE,
                      "_node-init", "--workdir", workdir.root], stdout=subprocess.PIPE)
        assert node.stdout.readline() == b"ready\n"  # SIGTERM would be lost on an init without its handler
        start([sys.executable, "-c", BLOCKER, "_node-init", "--workdir", workdir.root])
        init = procs.wait_until(fake_init, 10, 0.02)
        assert init, "the fake node did not start"
        node_namespace = procs.pid_namespace(init[0])
        teardown = threading.Thread(target=down.teardown, args=(workdir, True))
        teardown.start()
        assert procs.wait_until(lambda: not fake_init(), 10, 0.005), "the fake node did not end"
        # The kernel frees the number after an RCU grace period, and gives the lowest free
        # one: new namespaces, one every 30 ms while the teardown waits, would get it.
        victims = []
        while teardown.is_alive() and len(victims) < 60:
            victims.append(start(["unshare", "--pid", "--fork", "sleep", "600"]))
            teardown.join(0.03)
        teardown.join(30)
        assert not teardown.is_alive()
        namespaces = [procs.pid_namespace(pid) for pid in procs.host_pids()
                      if procs.proc_ppid(pid) in [victim.pid for victim in victims]]
        assert node_namespace not in namespaces, "the node's namespace number was free during the teardown"
        killed = [victim.pid for victim in victims if victim.poll() is not None]
        assert killed == [], "the teardown killed processes of namespaces made while it waited"
    finally:
        for process in started:
            if process.poll() is None:
                os.killpg(process.pid, 9)
            process.wait()


def test_up_with_daemons_creates_nodes_in_order_and_all_free(cluster_factory):
    cluster = cluster_factory(moms=2, daemons=True)
    for mom in ("mom1", "mom2"):   # the mock ATOM service, started after pbs_mom
        assert cluster.exec(mom, ["test", "-S", "/var/run/atomd/atomd.sock"]).returncode == 0
        jobs = cluster.exec(mom, [sys.executable, "-m", "mockpbs", "atomd", "--jobs"], check=True).stdout
        assert jobs.strip() == "[]"
    nodes = cluster.exec("pbs-server", ["pbsnodes", "-a"], check=True).stdout
    names = [line for line in nodes.splitlines() if line and not line[0].isspace()]
    assert names == ["mom1", "mom2"]
    assert nodes.count("state = free") == 2
    lock = cluster.exec("mom1", ["cat", "/var/spool/pbs/mom_priv/mom.lock"], check=True).stdout
    assert cluster.exec("mom1", ["kill", "-0", lock.strip()]).returncode == 0
    cluster.down()


def test_up_leaves_no_mom_without_its_sisters_addresses_restarting_one_that_lacks_them(cluster_factory, monkeypatch):
    """Real OpenPBS: every mom has the other moms' addresses once the cluster is up (a mom
    without them fails every job it is the primary mom of); a mom that lacks them is
    restarted until it has them."""
    cluster = cluster_factory(moms=2, daemons=True)
    if not cluster.backend.startswith("openpbs"):
        cluster.down()
        pytest.skip("the mock's moms take any sister")
    workdir, state = Workdir(cluster.workdir), state_of(cluster)
    assert up.unknown_sisters(workdir, state) == {}
    mom2 = [n["pbs_address"] for n in state["nodes"] if n["name"] == "mom2"]
    before = control.mom_pid(workdir, "mom1")[1]
    real = up.unknown_sisters

    def mom1_lacks_mom2_until_restarted(workdir, state):
        if control.mom_pid(workdir, "mom1")[1] == before:
            return {"mom1": mom2}
        return real(workdir, state)
    monkeypatch.setattr(up, "unknown_sisters", mom1_lacks_mom2_until_restarted)
    monkeypatch.setattr(up, "SISTERS_KNOWN_TIMEOUT", 1)
    up.wait_moms_know_each_other(workdir, state, 60)
    after = control.mom_pid(workdir, "mom1")[1]
    assert after is not None and after != before
    assert real(workdir, state) == {}
    nodes = cluster.exec("pbs-server", ["pbsnodes", "-a"], check=True).stdout
    assert nodes.count("state = free") == 2
    cluster.down()


def test_up_refuses_a_python_without_mockpbs(tmp_path):
    proc = subprocess.run([sys.executable, os.path.join(HERE, "cluster"), "up", "--moms", "1",
                           "--no-daemons", "--python", "/usr/bin/python3",
                           "--workdir", str(tmp_path)], capture_output=True, text=True, check=False)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert "/usr/bin/python3 cannot import mockpbs" in proc.stderr
    assert processes_of(str(tmp_path), set()) == []


def test_pbsnodes_parser_reads_states_in_pbs_format():
    # Layout of `pbsnodes -a` in reference/openpbs/i_versions_and_layout.txt.
    text = ("mom1\n     Mom = mom1\n     Port = 15002\n     state = free\n     pcpus = 2\n\n"
            "mom2\n     Mom = mom2\n     state = down,offline\n\n")
    assert up.parse_pbsnodes(text) == {"mom1": "free", "mom2": "down,offline"}


def copy_of_the_launcher(repo):
    """The entry point, its package and the poll loop it shares with the tests
    (``polling.py``) in ``repo``/tests/integration (a checkout without venv); returns the
    entry point's path."""
    integration = repo / "tests" / "integration"
    shutil.copytree(os.path.join(HERE, "launcher"), str(integration / "launcher"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(os.path.join(HERE, "polling.py"), str(integration / "polling.py"))
    shutil.copy2(CLUSTER, str(integration / "cluster"))
    return str(integration / "cluster")


def test_entry_point_runs_again_with_the_repository_venv(tmp_path):
    entry = copy_of_the_launcher(tmp_path / "repo")
    venv_bin = tmp_path / "repo" / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    marker = tmp_path / "ran-with-the-venv"
    (venv_bin / "python").write_text('#!/bin/sh\necho "$@" > %s\nexec %s "$@"\n' % (marker, sys.executable))
    (venv_bin / "python").chmod(0o755)
    proc = subprocess.run([SYSTEM_PYTHON, entry, "status", "--workdir", str(tmp_path / "none")],
                          cwd="/", capture_output=True, text=True, check=False)
    assert marker.read_text() == "%s status --workdir %s\n" % (entry, tmp_path / "none")
    assert (proc.returncode, proc.stdout) == (1, "no cluster in %s\n" % (tmp_path / "none")), proc.stderr


def test_entry_point_without_a_venv_says_to_run_make_venv(tmp_path):
    entry = copy_of_the_launcher(tmp_path / "repo")
    proc = subprocess.run([SYSTEM_PYTHON, entry, "up", "--moms", "1", "--workdir", str(tmp_path / "w")],
                          cwd="/", capture_output=True, text=True, check=False)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.startswith("cluster: %s cannot import mockpbs and %s is not a usable venv: run `make venv` in %s"
                                  % (SYSTEM_PYTHON, tmp_path / "repo" / ".venv", tmp_path / "repo")), proc.stderr
    assert not (tmp_path / "w").exists()


def test_interpreter_choice_of_the_entry_point():
    choose = cli.interpreter_action
    assert choose(["up", "--moms", "2"], True, True, False) == "run"
    assert choose(["up", "--moms", "2"], False, True, False) == "reexec"
    assert choose(["up", "--moms", "2"], False, False, False) == "missing"
    assert choose(["up", "--moms", "2"], False, True, True) == "missing"   # a venv without mockpbs
    assert choose(["up", "--moms", "2", "--python", "/opt/py"], False, False, False) == "run"
    assert choose(["up", "--moms", "2", "--python=/opt/py"], False, False, False) == "run"
    assert choose(["--help"], False, False, False) == "run"
    assert choose(["_node-init", "--workdir", "w", "--node", "mom1"], False, True, False) == "run"
