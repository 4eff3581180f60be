"""Each node's file tree on the host, ``nodes/<name>/`` (its ``etc``, ``spool``, ``opt``,
``root``, ``tmp`` and the list of mounts its init makes, in ``node.json``), the shared
``/home``, and the Ansible inventory of the cluster."""
import json
import os
import shutil
import subprocess
import time

from . import mock, openpbs
from .cgroups import format_cpu_list, vnode_definition
from .common import (CGROUP_CONTROLLERS, CGROUP_NODE_ROOT, DEFAULT_PBS_CONF, HIDDEN, JOB_UID, JOB_USER,
                     PBS_EXEC, PBS_HOME, REBINDABLE, SERVER_NAME, SSH_PORT, STALE_SERVER,
                     VNODE_DEFINITION_FILE, ClusterError)
from .workdir import write_file

SSHD_CONFIG = """\
# sshd of mock cluster node {name}; written by tests/integration/cluster
ListenAddress {address}:{port}
HostKey /etc/ssh/ssh_host_ed25519_key
PidFile /run/sshd.pid
PermitRootLogin prohibit-password
PubkeyAuthentication yes
AuthorizedKeysFile /etc/ssh/authorized_keys/%u
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
X11Forwarding no
PrintMotd no
AcceptEnv LANG LC_*
Subsystem sftp /usr/lib/openssh/sftp-server
"""

SSH_CLIENT_CONFIG = """\
# Node-to-node ssh inside the mock cluster (scp of job output, as PBS_SCP does).
Host {hosts}
    StrictHostKeyChecking no
    UserKnownHostsFile /dev/null
    LogLevel ERROR
"""

PROFILE_PBS = """\
# As OpenPBS's /etc/profile.d/pbs.sh: PBS commands on PATH.
case ":$PATH:" in *":{exec}/bin:"*) ;; *) PATH="$PATH:{exec}/bin" ;; esac
if [ "$(id -u)" = 0 ]; then
    case ":$PATH:" in *":{exec}/sbin:"*) ;; *) PATH="$PATH:{exec}/sbin" ;; esac
fi
export PATH
"""


def needed_rebinds(paths):
    """Map each overmounted directory to the entries of it the nodes must still see.

    ``paths``: host paths (interpreters, prefixes, mockpbs sources).  Returns
    ``{"/root": {".pyenv", ...}, "/opt": {...}}``; raises ClusterError for a path only
    reachable through a directory a node hides entirely (/etc, /var/spool, /home, /run)."""
    rebinds = {top: set() for top in REBINDABLE}
    for path in paths:
        path = os.path.abspath(path)
        for top in REBINDABLE:
            if path.startswith(top + "/"):
                rebinds[top].add(path[len(top) + 1:].split("/")[0])
        for top in HIDDEN:
            if path == top or path.startswith(top + "/"):
                raise ClusterError("the nodes cannot see %s (under %s, which every node "
                                   "replaces); use an interpreter installed elsewhere" % (path, top))
    return rebinds


def _rewrite_account_file(etc, filename, keep, line):
    """Keep the lines of ``etc/filename`` whose fields ``keep`` accepts, append ``line``;
    the file keeps its mode and owner.  A missing file is left alone."""
    path = os.path.join(etc, filename)
    if not os.path.exists(path):
        return
    st = os.stat(path)
    with open(path) as handle:
        lines = [entry for entry in handle.read().splitlines() if entry and keep(entry.split(":"))]
    write_file(path, "\n".join(lines + [line]) + "\n", st.st_mode & 0o7777, (st.st_uid, st.st_gid))


def edit_accounts(etc):
    """Add pbsuser (uid/gid 1500, /home/pbsuser, /bin/bash) to the node's account files,
    replacing any entry of the same name or id."""
    uid = str(JOB_UID)
    _rewrite_account_file(etc, "passwd", lambda f: f[0] != JOB_USER and (len(f) < 3 or f[2] != uid),
                          "%s:x:%d:%d::/home/%s:/bin/bash" % (JOB_USER, JOB_UID, JOB_UID, JOB_USER))
    _rewrite_account_file(etc, "group", lambda f: f[0] != JOB_USER and (len(f) < 3 or f[2] != uid),
                          "%s:x:%d:" % (JOB_USER, JOB_UID))
    # "*" (not "!"): sshd without PAM refuses public-key logins to "!"-locked accounts.
    _rewrite_account_file(etc, "shadow", lambda f: f[0] != JOB_USER,
                          "%s:*:%d:0:99999:7:::" % (JOB_USER, int(time.time() // 86400)))
    _rewrite_account_file(etc, "gshadow", lambda f: f[0] != JOB_USER, "%s:!::" % JOB_USER)


def stale_pbs_conf():
    """An /etc/pbs.conf left from another installation: it names a server that does not
    exist (no address, so no traffic) and another PBS_HOME."""
    return "PBS_SERVER=%s\nPBS_EXEC=%s\nPBS_HOME=%s-retired\nPBS_START_MOM=0\n" % (
        STALE_SERVER, PBS_EXEC, PBS_HOME)


def pbs_conf(role):
    """The node's pbs.conf text, keys in the order OpenPBS's installer writes them
    (both backends: final before the first start, as a failed first start of a real PBS
    leaves PBS_HOME half set up)."""
    server = role == "server"
    return "".join("%s=%s\n" % item for item in [
        ("PBS_SERVER", SERVER_NAME),
        ("PBS_START_SERVER", int(server)),
        ("PBS_START_SCHED", int(server)),
        ("PBS_START_COMM", int(server)),
        ("PBS_START_MOM", int(not server)),
        ("PBS_EXEC", PBS_EXEC),
        ("PBS_HOME", PBS_HOME),
        ("PBS_CORE_LIMIT", "unlimited"),
        ("PBS_SCP", "/usr/bin/scp"),
    ])


def pbs_address(address, real):
    """The address a node has for PBS: its loopback one (mock), or the one in its own
    network namespace (``real``, the openpbs backend)."""
    return openpbs.internal_address(address) if real else address


def _build_etc(base, name, role, nodes, real, conf_path, stale):
    """``etc/``: a copy of the host's /etc with the node's hostname, hosts, pbs.conf (when
    ``conf_path`` is /etc/pbs.conf; else none, or the :func:`stale_pbs_conf` when
    ``stale``), profile.d/pbs.sh and pbsuser.  Returns its path."""
    etc = os.path.join(base, "etc")
    # cp -a keeps owners, modes and symlinks of the host's /etc.
    subprocess.run(["cp", "-a", "/etc", etc], check=True, capture_output=True, text=True)
    write_file(os.path.join(etc, "hostname"), name + "\n")
    hosts = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
    hosts += "".join("%s\t%s\n" % (pbs_address(addr, real), host) for host, addr, _unused in nodes)
    write_file(os.path.join(etc, "hosts"), hosts)
    etc_conf = os.path.join(etc, "pbs.conf")
    if conf_path == DEFAULT_PBS_CONF:
        write_file(etc_conf, pbs_conf(role))
    elif stale:
        write_file(etc_conf, stale_pbs_conf())
    elif os.path.lexists(etc_conf):
        os.unlink(etc_conf)
    profile = PROFILE_PBS.format(exec=PBS_EXEC)
    if conf_path != DEFAULT_PBS_CONF:
        profile += "export PBS_CONF_FILE=%s\n" % conf_path
    os.makedirs(os.path.join(etc, "profile.d"), exist_ok=True)
    write_file(os.path.join(etc, "profile.d", "pbs.sh"), profile)
    edit_accounts(etc)
    return etc


def _build_ssh(etc, workdir, name, listen, nodes, real):
    """``etc/ssh``: a fresh host key, sshd_config listening on ``listen``, the cluster key
    authorized for root and pbsuser, and a client config that trusts every node."""
    ssh = os.path.join(etc, "ssh")
    os.makedirs(ssh, exist_ok=True)
    for entry in os.listdir(ssh):
        if entry.startswith("ssh_host_"):
            os.unlink(os.path.join(ssh, entry))
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "root@" + name,
                    "-f", os.path.join(ssh, "ssh_host_ed25519_key")], check=True,
                   capture_output=True, text=True)
    write_file(os.path.join(ssh, "sshd_config"),
               SSHD_CONFIG.format(name=name, address=listen, port=SSH_PORT))
    keys = os.path.join(ssh, "authorized_keys")
    os.makedirs(keys, mode=0o755)
    with open(workdir.key + ".pub") as handle:
        public_key = handle.read()
    for user in ("root", JOB_USER):
        write_file(os.path.join(keys, user), public_key)
    os.makedirs(os.path.join(ssh, "ssh_config.d"), exist_ok=True)
    hosts_pattern = " ".join([host for host, _unused, _role in nodes] + [addr for _unused, addr, _role in nodes]
                             + ([openpbs.internal_address(a) for _unused, a, _role in nodes] if real else []))
    write_file(os.path.join(ssh, "ssh_config.d", "mock-cluster.conf"),
               SSH_CLIENT_CONFIG.format(hosts=hosts_pattern))


def _build_spool(base, name, role, probe, node_cpus, vnodes_per_mom, vnode_mem, real):
    """``spool/``: the mock's PBS_HOME (a real one is made by pbs_habitat at the first
    start) and a mom's vnode definition.  Returns the path of the definition a real mom
    installs with ``pbs_mom -s insert`` (None for the mock, or without a definition)."""
    spool = os.path.join(base, "spool")
    os.makedirs(spool, mode=0o755)
    if not real:
        mock.build_pbs_home(spool, probe.get("version"))
    definition = vnode_definition(name, len(node_cpus) if node_cpus is not None else None,
                                  vnodes_per_mom, vnode_mem) if role == "mom" else None
    if definition and real:
        real_vnodes = os.path.join(base, "vnodes.def")
        write_file(real_vnodes, definition)
        return real_vnodes
    if definition:
        config_d = os.path.join(spool, "pbs", "mom_priv", "config.d")
        os.makedirs(config_d, mode=0o750, exist_ok=True)
        write_file(os.path.join(config_d, VNODE_DEFINITION_FILE), definition)
    return None


def _build_opt(base, python, probe, real, pbs_root, role, conf_path):
    """``opt/``: the mock's PBS_EXEC wrappers, or an empty ``opt/pbs`` for the OpenPBS
    build to be mounted on.  A ``conf_path`` under PBS_EXEC/etc is written into the mock's
    tree, or (real) into ``pbs-etc/``, a copy of the build's ``etc`` that is mounted over
    its read-only one; returns that directory (None when there is none)."""
    opt = os.path.join(base, "opt")
    os.makedirs(opt, mode=0o755)
    if real:
        os.makedirs(os.path.join(opt, "pbs"), mode=0o755)
    else:
        mock.build_pbs_exec(opt, python, probe)
    if conf_path == DEFAULT_PBS_CONF:
        return None
    if real:
        etc = os.path.join(base, "pbs-etc")
        shutil.copytree(os.path.join(pbs_root, "opt", "pbs", "etc"), etc, symlinks=True)
    else:
        etc = os.path.join(opt, "pbs", "etc")
        os.makedirs(etc, mode=0o755, exist_ok=True)
    write_file(os.path.join(etc, os.path.basename(conf_path)), pbs_conf(role))
    return etc if real else None


def _build_root(base, workdir, rebinds):
    """``root/``: root's home with the skeleton dotfiles and the cluster's ssh key."""
    root = os.path.join(base, "root")
    # 0711 lets pbsuser reach an interpreter under /root (pyenv) without listing /root.
    os.makedirs(root)
    os.chmod(root, 0o711 if rebinds["/root"] else 0o700)
    for dotfile in (".bashrc", ".profile"):
        source = os.path.join("/etc/skel", dotfile)
        if os.path.isfile(source):
            shutil.copy2(source, os.path.join(root, dotfile))
    if ".pyenv" in rebinds["/root"]:
        # Like the real machines: pyenv shims first on root's PATH (hence the inventory's
        # pinned ansible_python_interpreter).
        with open(os.path.join(root, ".bashrc"), "a") as handle:
            handle.write('\nexport PATH="/root/.pyenv/shims:$PATH"\n')
    os.makedirs(os.path.join(root, ".ssh"), mode=0o700)
    shutil.copy2(workdir.key, os.path.join(root, ".ssh", "id_ed25519"))
    return root


def _private_tmp(base):
    """``tmp/`` and ``var-tmp/`` (mode 1777): the node's own /tmp and /var/tmp."""
    # As on separate hosts: OpenPBS's qsub finds its per-user background daemon by a socket
    # there, and a shared one would hand a job to another cluster's pbs-server.
    tmp, var_tmp = os.path.join(base, "tmp"), os.path.join(base, "var-tmp")
    for directory in (tmp, var_tmp):
        os.makedirs(directory)
        os.chmod(directory, 0o1777)
    return tmp, var_tmp


def _node_mounts(workdir, base, rebinds, pbs_root, cgroup_dirs, pbs_etc=None):
    """The node's mounts, in order: ``[[kind, source, target], ...]`` (kinds: see
    :func:`launcher.nodeinit.mount`).  ``cgroup_dirs``: ``{controller: host cgroup}``;
    ``pbs_etc``: a directory to mount over the real build's ``PBS_EXEC/etc``."""
    root, opt = os.path.join(base, "root"), os.path.join(base, "opt")
    tmp, var_tmp = _private_tmp(base)
    mounts = []
    for top, local in (("/root", root), ("/opt", opt), ("/tmp", tmp)):
        for entry in sorted(rebinds[top]):
            os.makedirs(os.path.join(local, entry), exist_ok=True)
            mounts.append(["ro-bind", os.path.join(top, entry), os.path.join(local, entry)])
    if pbs_root is not None:
        mounts.append(["ro-bind", os.path.join(pbs_root, "opt", "pbs"), os.path.join(opt, "pbs")])
        if pbs_etc is not None:
            mounts.append(["bind", pbs_etc, os.path.join(opt, "pbs", "etc")])
    if workdir.root.startswith("/tmp/"):  # a workdir under /tmp stays visible at its own path
        inner = os.path.join(tmp, workdir.root[len("/tmp/"):])
        os.makedirs(inner, exist_ok=True)
        mounts.append(["bind", workdir.root, inner])
    mounts += [["rbind", root, "/root"], ["bind", os.path.join(base, "etc"), "/etc"],
               ["bind", os.path.join(base, "spool"), "/var/spool"],
               ["rbind", opt, "/opt"], ["bind", workdir.home, "/home"], ["tmpfs", "tmpfs", "/run"],
               ["tmpfs", "tmpfs", "/dev/shm"],
               ["rbind", tmp, "/tmp"], ["bind", var_tmp, "/var/tmp"]]
    for controller in CGROUP_CONTROLLERS if cgroup_dirs else ():
        mounts.append(["bind", cgroup_dirs[controller], os.path.join(CGROUP_NODE_ROOT, controller)])
    return mounts


def build_node(workdir, name, address, role, nodes, python, probe, rebinds, daemons,
               cgroups=None, vnodes_per_mom=0, vnode_mem="1gb", atom=False, pbs_root=None,
               pbs_conf=(DEFAULT_PBS_CONF, False), cgroup_v2_only=False):
    """Create ``nodes/<name>/`` (etc, spool, opt, root, tmp, logs, node.json).  ``cgroups``:
    the result of :func:`launcher.cgroups.setup_cgroups` or None; ``vnodes_per_mom``/
    ``vnode_mem``: see :func:`launcher.cgroups.vnode_definition`; ``atom``: start the mock
    ATOM service (mom nodes); ``pbs_root``: the real OpenPBS install root (``--pbs
    openpbs``), None for the mock; ``pbs_conf``: ``(path, stale)``, where the node's
    pbs.conf lives and whether an /etc/pbs.conf of another installation stays (``up
    --pbs-conf``, ``--stale-etc-pbs-conf``); ``cgroup_v2_only``: the node's /sys/fs/cgroup is
    a cgroup2 mount alone (``up --cgroup-v2-only``; no cgroups of its own)."""
    conf_path, stale = pbs_conf
    base = workdir.node(name)
    os.makedirs(os.path.join(base, "logs"))
    real = pbs_root is not None
    listen = pbs_address(address, real)
    etc = _build_etc(base, name, role, nodes, real, conf_path, stale)
    _build_ssh(etc, workdir, name, listen, nodes, real)
    node_cpus = cgroups["cpus"][name] if cgroups and role == "mom" and not cgroup_v2_only else None
    real_vnodes = _build_spool(base, name, role, probe, node_cpus, vnodes_per_mom, vnode_mem, real)
    pbs_etc = _build_opt(base, python, probe, real, pbs_root, role, conf_path)
    _build_root(base, workdir, rebinds)
    cgroup_dirs = {controller: os.path.join(cgroups["mounts"][controller], cgroups["name"], name)
                   for controller in CGROUP_CONTROLLERS} if node_cpus is not None else {}
    config = {"name": name, "address": address, "role": role, "daemons": daemons,
              "backend": "openpbs" if real else "mock", "netns": real,
              "pbs_address": listen if real else None, "vnode_definition": real_vnodes,
              "mounts": _node_mounts(workdir, base, rebinds, pbs_root, cgroup_dirs, pbs_etc)
              + ([["cgroup2", "cgroup2", CGROUP_NODE_ROOT]] if cgroup_v2_only else []),
              "pbs_conf": conf_path,
              "logs": os.path.join(base, "logs"), "python": python,
              "cgroups": [os.path.join(CGROUP_NODE_ROOT, c) for c in CGROUP_CONTROLLERS] if cgroup_dirs else [],
              "atom": bool(atom and role == "mom" and daemons),
              "cpus": format_cpu_list(node_cpus) if node_cpus is not None else None}
    write_file(os.path.join(base, "node.json"), json.dumps(config, indent=2) + "\n")


def build_home(workdir):
    """Create the shared /home with pbsuser's home (owned 1500:1500, skeleton, ssh key)."""
    os.makedirs(workdir.home, mode=0o755)
    user_home = os.path.join(workdir.home, JOB_USER)
    os.makedirs(user_home, mode=0o755)
    if os.path.isdir("/etc/skel"):
        for entry in os.listdir("/etc/skel"):
            source = os.path.join("/etc/skel", entry)
            if os.path.isfile(source):
                shutil.copy2(source, os.path.join(user_home, entry))
    ssh = os.path.join(user_home, ".ssh")
    os.makedirs(ssh, mode=0o700)
    shutil.copy2(workdir.key, os.path.join(ssh, "id_ed25519"))
    for directory, _unused, files in os.walk(user_home):
        os.chown(directory, JOB_UID, JOB_UID)
        for filename in files:
            os.chown(os.path.join(directory, filename), JOB_UID, JOB_UID)


def write_inventory(workdir, nodes):
    """Write ``inventory.ini``: groups pbs_server and pbs_mom, root over ssh with the
    cluster's key, /usr/bin/python3 on the nodes."""
    lines = ["# Mock PBS cluster in %s (tests/integration/cluster)" % workdir.root, "[pbs_server]"]
    lines += ["%s ansible_host=%s" % (n, a) for n, a, r in nodes if r == "server"]
    lines += ["", "[pbs_mom]"]
    lines += ["%s ansible_host=%s" % (n, a) for n, a, r in nodes if r == "mom"]
    lines += ["", "[all:vars]", "ansible_user=root", "ansible_port=%d" % SSH_PORT,
              "ansible_ssh_private_key_file=%s" % workdir.key,
              # The nodes carry pyenv shims on PATH that interpreter discovery would pick.
              "ansible_python_interpreter=/usr/bin/python3",
              "ansible_ssh_common_args='-o StrictHostKeyChecking=no "
              "-o UserKnownHostsFile=/dev/null'", ""]
    write_file(workdir.inventory, "\n".join(lines))
