"""The launcher's command line (``cluster --help``), its dispatch to the commands, and the
interpreter check of the entry point (``tests/integration/cluster`` typed as the README shows
it runs under the system ``python3``, which cannot import ``mockpbs``)."""
import argparse
import os
import subprocess
import sys

from .common import (BACKENDS, DEFAULT_OPENPBS_RELEASE, DEFAULT_PBS_CONF, OPENPBS_RELEASES, RELOCATED_PBS_CONF_DIR, REPO, STALE_SERVER, VENV_PYTHON,
                     ClusterError, check_address_prefix, log)
from .control import cmd_exec, cmd_forward, cmd_start_mom, cmd_status, cmd_stop_mom
from .down import cmd_down
from .nodeinit import enter_cgroups, node_init
from .up import cmd_up
from .workdir import Workdir

# Commands whose argv goes on after "--" (split off before argparse sees it).
PASSTHROUGH_COMMANDS = ("exec", "_enter-cgroups")


def interpreter_action(argv, mockpbs_importable, venv_exists, running_venv):
    """What the entry point does with the interpreter it was started with.

    ``argv``: the launcher's arguments; the other three: facts about this interpreter and
    the repository's ``.venv``.  Returns ``"run"`` (go on), ``"reexec"`` (run again with
    the venv's python) or ``"missing"`` (no interpreter that imports mockpbs: the caller
    exits with :func:`missing_venv_message`).  Internal commands (``_node-init``...) run
    with the interpreter ``up`` chose; ``--help`` and ``--python PY`` need no mockpbs here
    (the launcher itself is standard library only)."""
    if argv and argv[0].startswith("_"):
        return "run"
    if mockpbs_importable:
        return "run"
    if venv_exists and not running_venv:
        return "reexec"
    if not argv or argv[0] in ("-h", "--help") or "--python" in argv \
            or any(arg.startswith("--python=") for arg in argv):
        return "run"
    return "missing"


def missing_venv_message(python=sys.executable):
    """The error of ``missing``: which interpreter failed and the ``make venv`` fix."""
    return ("cluster: %s cannot import mockpbs and %s is not a usable venv: run `make venv` in %s "
            "first (it installs mockpbs and the pinned requirements), or pass --python with an "
            "interpreter that imports mockpbs" % (python, os.path.dirname(os.path.dirname(VENV_PYTHON)), REPO))


def ensure_interpreter(entry_point, argv):
    """Entry point's first step: go on, ``execv`` the repository's venv python on
    ``entry_point`` with ``argv``, or exit 1 with :func:`missing_venv_message`."""
    try:
        import mockpbs  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
        importable = True
    except ImportError:
        importable = False
    venv = os.path.dirname(os.path.dirname(VENV_PYTHON))
    action = interpreter_action(argv, importable, os.path.exists(VENV_PYTHON),
                                os.path.realpath(sys.prefix) == os.path.realpath(venv))
    if action == "reexec":
        os.execv(VENV_PYTHON, [VENV_PYTHON, entry_point] + list(argv))
    if action == "missing":
        sys.exit(missing_venv_message())


def _add_up(add):
    up = add("up", cmd_up, "start pbs-server and N moms; print the inventory path")
    up.add_argument("--moms", type=int, required=True, help="number of mom nodes (>= 1)")
    up.add_argument("--pbs", choices=BACKENDS, default=os.environ.get("HPC_PBS_BACKEND") or "mock",
                    help="mock: the mock PBS daemons (default, or $HPC_PBS_BACKEND); openpbs: a "
                    "real OpenPBS built from ../shared/openpbs by tests/openpbs/build")
    up.add_argument("--pbs-version", choices=OPENPBS_RELEASES,
                    default=os.environ.get("HPC_PBS_OPENPBS_RELEASE") or DEFAULT_OPENPBS_RELEASE,
                    help="with --pbs openpbs: the OpenPBS release (default %s, or "
                    "$HPC_PBS_OPENPBS_RELEASE); 22.05.11 runs pbs_python on CPython 3.6"
                    % DEFAULT_OPENPBS_RELEASE)
    up.add_argument("--no-daemons", action="store_true", help="do not start pbs_server/pbs_mom")
    up.add_argument("--python", help="interpreter for the mockpbs wrappers (default: this one)")
    up.add_argument("--timeout", type=float, default=60.0,
                    help="seconds to wait for every mom to be free (default 60)")
    up.add_argument("--no-atom", action="store_true",
                    help="do not start the mock ATOM service (atomd) on the moms")
    up.add_argument("--cgroups", choices=("auto", "on", "off"), default="auto",
                    help="per-node cpuset/memory cgroups: auto (when the host has writable "
                    "cgroup v1 hierarchies, default), on (required), off")
    up.add_argument("--vnodes-per-mom", type=int, default=0, metavar="K",
                    help="each mom reports vnodes momN[0..K-1] and a natural vnode without "
                    "resources (default 0: the natural vnode only)")
    up.add_argument("--vnode-mem", default="1gb",
                    help="resources_available.mem of each vnode of --vnodes-per-mom (default 1gb)")
    up.add_argument("--pbs-conf", default=DEFAULT_PBS_CONF, metavar="PATH",
                    help="where each node's pbs.conf lives: /etc/pbs.conf (default) or a file "
                    "under %s (the daemons and 'cluster exec' get PBS_CONF_FILE; ssh "
                    "sessions do not)" % RELOCATED_PBS_CONF_DIR)
    up.add_argument("--cgroup-v2-only", default="", metavar="MOM[,MOM...]",
                    help="these mom nodes see only a cgroup2 file system at /sys/fs/cgroup "
                    "(as RHEL 9 or SLES 15 SP6 mount it): the host's cgroup mounts are "
                    "detached in their mount namespace; they get no cgroups of their own")
    up.add_argument("--stale-etc-pbs-conf", default="", metavar="NODE[,NODE...]",
                    help="with --pbs-conf elsewhere: these nodes also keep an /etc/pbs.conf "
                    "naming server %s (which does not exist) and another PBS_HOME; the "
                    "others have no /etc/pbs.conf" % STALE_SERVER)


def _add_internal(sub):
    """The commands the launcher runs itself (in a node, or as a forwarder)."""
    enter = sub.add_parser("_enter-cgroups")
    enter.add_argument("directories", nargs="*")
    enter.set_defaults(func=enter_cgroups, argv=[])
    fwd = sub.add_parser("_forward")
    fwd.add_argument("--workdir", required=True)
    fwd.add_argument("--node", required=True)
    fwd.set_defaults(func=cmd_forward)
    init = sub.add_parser("_node-init")
    init.add_argument("--workdir", required=True)
    init.add_argument("--node", required=True)
    init.set_defaults(func=lambda a: node_init(Workdir(a.workdir), a.node))


def parser():
    """The ``argparse`` parser of ``cluster`` (usage in the package docstring)."""
    description = sys.modules[__package__].__doc__.split("\n\n")[0]
    top = argparse.ArgumentParser(prog="cluster", description=description)
    sub = top.add_subparsers(dest="command", required=True)

    def add(name, func, help_text):
        command = sub.add_parser(name, help=help_text)
        command.add_argument("--workdir", help="cluster state directory (default: "
                             "$HPC_PBS_CLUSTER_DIR or <repo>/.cluster)")
        command.set_defaults(func=func)
        return command

    _add_up(add)
    add("down", cmd_down, "stop every node and process of the cluster")
    run = add("exec", cmd_exec, "run a command inside a node, in the user's home directory")
    run.add_argument("node")
    run.add_argument("--user", default="root", help="run as this user of the node (default root)")
    run.set_defaults(argv=[])  # what follows "--", split off in main()
    stop = add("stop-mom", cmd_stop_mom, "SIGTERM a node's mom, or SIGSTOP it with --freeze")
    stop.add_argument("node")
    stop.add_argument("--freeze", action="store_true", help="SIGSTOP instead of stopping")
    start = add("start-mom", cmd_start_mom, "thaw a frozen mom or start pbs_mom again")
    start.add_argument("node")
    add("status", cmd_status, "print each node, its address and whether it is up")
    _add_internal(sub)
    return top


def main(argv=None):
    """Run the command of ``argv`` (default ``sys.argv[1:]``); return the exit code: 0, 1
    (``cluster: <message>`` on stderr), 2 (usage, from argparse) or exec's command's."""
    check_address_prefix()
    argv = list(sys.argv[1:] if argv is None else argv)
    command = []
    if argv and argv[0] in PASSTHROUGH_COMMANDS and "--" in argv:
        split = argv.index("--")
        argv, command = argv[:split], argv[split + 1:]
    args = parser().parse_args(argv)
    if args.command in PASSTHROUGH_COMMANDS:
        args.argv = command
    try:
        return args.func(args) or 0
    except ClusterError as exc:
        log(str(exc))
        return 1
    except subprocess.CalledProcessError as exc:
        log("%s failed (rc %d): %s" % (" ".join(exc.cmd), exc.returncode,
                                       (exc.stderr or "").strip() if isinstance(exc.stderr, str) else ""))
        return 1
