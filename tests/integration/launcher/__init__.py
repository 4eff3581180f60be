"""Mock OpenPBS cluster launcher: one Linux mount+UTS+PID namespace per PBS host.

Usage::

    cluster up --moms N [--pbs mock|openpbs] [--workdir DIR] [--no-daemons] [--python PY] [--timeout S]
               [--no-atom] [--cgroups auto|on|off] [--vnodes-per-mom K [--vnode-mem SIZE]]
               [--cgroup-v2-only MOM[,MOM...]]
    cluster down [--workdir DIR]
    cluster exec NODE [--user USER] [--workdir DIR] -- CMD...
    cluster stop-mom NODE [--freeze] [--workdir DIR]
    cluster start-mom NODE [--workdir DIR]
    cluster status [--workdir DIR]

Backends (``--pbs``, default ``$HPC_PBS_BACKEND`` or ``mock``): ``mock`` runs the mock PBS
daemons of ``mockpbs``; ``openpbs`` runs a real OpenPBS built by ``tests/openpbs/build``,
with every node also in a network namespace of its own (see ``launcher/openpbs.py``).

Nodes: ``pbs-server`` at 127.0.1.10 and ``mom1..momN`` at 127.0.1.11, .12, ...
(``HPC_PBS_CLUSTER_NET=127.0.2`` moves them to another loopback /24); past 127.0.1.254
the moms go on at 127.0.2.1 (a cluster of more than 244 moms also takes the next /24).  Each node is
``unshare --mount --uts --ipc --pid --fork --mount-proc`` running ``cluster _node-init`` as its
PID 1, which bind-mounts per-node copies over whole directories (``/etc``, ``/var/spool``,
``/opt``, ``/root``), a cluster-wide ``/home`` and a tmpfs on ``/run``, sets the host name,
starts a real OpenSSH ``sshd`` on the node's address and, unless ``--no-daemons``, the PBS
daemons that the node's ``/etc/pbs.conf`` asks for.  Mounts live only in the nodes' private
mount namespaces, so the host's ``/etc``, ``/var/spool`` and ``/opt`` are never written.

Site services and per-node resources (mom nodes):

- ATOM: unless ``--no-atom`` (or ``--no-daemons``), the mock Cray ATOM service
  ``<python> -m mockpbs atomd`` runs as root in every mom node, started after ``pbs_mom``
  (socket ``/var/run/atomd/atomd.sock``, on the node's own ``/run``).  Faults:
  ``cluster exec momN -- <python> -m mockpbs atomd --inject SPEC`` (``mockpbs.atom.faults``).
- cgroups (``--cgroups``, default ``auto``): where the host has writable cgroup v1
  ``cpuset`` and ``memory`` hierarchies, each mom gets ``<mount>/<controller>/hpcpbs_<id>/<node>``
  (``<id>``: a hash of the workdir path, so clusters of other workdirs never collide),
  bind-mounted over ``/sys/fs/cgroup/<controller>`` in the node's mount namespace (its
  ``/proc/self/mounts`` shows a ``cgroup`` file system with the controller's option), and
  the node's init moves itself into it, so every process of the node is inside.  Nodes get
  disjoint CPUs (an equal share of the host's, the rest unused) when the host has at least
  one CPU per mom; otherwise every mom's cpuset holds all the host's CPUs (they share; two
  jobs on one node still never share CPUs, the cgroup hook sees to that).  ``cpuset.mems``
  is the host's.  As ``pbs_mom`` counts the CPUs of the machine, not of its cpuset, the
  launcher writes the node's CPU count as a static ``resources_available.ncpus`` in a vnode
  definition file (``mom_priv/config.d/hpcpbs_vnodes``, what ``pbs_mom -s insert`` would
  install).  ``down`` (and the stale-state cleanup of ``up``) kills what is left in those
  cgroups and removes them, deepest first.  ``auto`` without usable hierarchies: no
  cgroups (logged); ``on``: an error; ``off``: never.
- ``--cgroup-v2-only MOM[,MOM...]``: those moms see the layout of a cgroup v2 only host
  (RHEL 9, SLES 15 SP6): their init detaches ``/sys/fs/cgroup`` and every mount below it
  in the node's mount namespace and mounts a ``cgroup2`` file system there (the kernel's
  one unified hierarchy), so ``/proc/self/mountinfo`` of the node's processes, ``pbs_mom``
  among them, shows one ``cgroup2`` mount and no ``cgroup`` (v1) mount. They get no
  cpuset/memory cgroups of their own (``--cgroups`` applies to the other moms).
- ``--vnodes-per-mom K``: the same definition file makes each mom report vnodes
  ``momN[0]..momN[K-1]``, each with ``ncpus`` = an equal share of the node's CPUs (the
  first ones get the remainder) and ``mem`` = ``--vnode-mem`` (default ``1gb``), and a
  natural vnode ``momN`` with ``ncpus = 0`` and ``mem = 0``, as PBS's own PP-928 tests set
  up multi-vnode moms.  K larger than the node's CPU count is refused.

Workdir (``--workdir``, else ``$HPC_PBS_CLUSTER_DIR``, else ``<repo>/.cluster``) layout::

    state.json          host PIDs of each node's unshare and init, addresses, pid namespaces
    inventory.ini       the Ansible inventory ``up`` prints
    id_ed25519(.pub)    the cluster's SSH key (authorized for root and pbsuser everywhere)
    home/               mounted on /home in every node (pbsuser's home, like NFS)
    nodes/<name>/       etc/ spool/ opt/ root/ (mounted in the node), node.json, init-status.json,
                        logs/ (init.log, sshd.log, daemons.log)

Exit codes: 0 success, 1 failure (message on stderr), 2 usage error; ``exec`` exits with the
command's code.  Standard library only; the mock's commands come from ``mockpbs.commands``.

Package layout (``tests/integration/cluster`` is the executable entry point)::

    common.py     constants (addresses, paths, timeouts), ClusterError, log
    workdir.py    the work dir: paths, state.json, lock, atomic writes, node names
    procs.py      host processes through /proc: states, namespaces, polling
    cgroups.py    the per-node cpuset/memory cgroups and their CPU plan
    nodefiles.py  each node's file tree (etc, spool, opt, root, mounts) and the inventory
    mock.py       the mock backend: mockpbs probe, PBS_HOME, wrappers, daemon start
    openpbs.py    the openpbs backend: network namespaces, ssh forwarders, PBS start
    nodecmd.py    commands run inside a node (nsenter, login environment)
    nodeinit.py   PID 1 of a node: mounts, sshd, daemons, reaping, stop
    up.py         cluster up
    down.py       cluster down (and the teardown up does first)
    control.py    exec, stop-mom, start-mom, status, the ssh forwarder command
    cli.py        the command line and the interpreter check of the entry point
"""
