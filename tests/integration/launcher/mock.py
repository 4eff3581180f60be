"""The ``--pbs mock`` backend: the mock PBS of ``mockpbs`` in the nodes.

On the host, the probe of the interpreter that runs the mock (its commands, version and the
host paths the nodes must see), and each node's PBS_HOME and PBS_EXEC as OpenPBS's
installer leaves them (PBS_EXEC holding wrappers that run ``mockpbs <command>``).
Inside a node, the start of the daemons its ``/etc/pbs.conf`` asks for."""
import json
import os
import shlex
import subprocess

from .common import DEFAULT_PBS_CONF, PBS_EXEC, REPO, SERVER_NAME, ClusterError
from .nodecmd import clean_env
from .procs import start_daemon
from .workdir import write_file

# PBS_HOME as OpenPBS's pbs_postinstall creates it (mode, path), for a host holding the
# server, scheduler and mom executables (every node carries every wrapper).
PBS_HOME_DIRS = [
    (0o755, "server_logs"), (0o1777, "spool"), (0o750, "server_priv"),
    (0o755, "server_priv/accounting"), (0o750, "server_priv/jobs"),
    (0o750, "server_priv/users"), (0o750, "server_priv/hooks"),
    (0o750, "server_priv/hooks/tmp"), (0o755, "sched_logs"), (0o750, "sched_priv"),
    (0o755, "aux"), (0o700, "checkpoint"), (0o755, "mom_logs"), (0o751, "mom_priv"),
    (0o751, "mom_priv/jobs"), (0o750, "mom_priv/hooks"), (0o750, "mom_priv/hooks/tmp"),
    (0o1777, "undelivered"),
]

PROBE = r"""
import json, os, sys
import mockpbs, mockpbs.commands as c
print(json.dumps({"bin": sorted(c.BIN), "sbin": sorted(c.SBIN),
                  "version": getattr(mockpbs, "PBS_VERSION", ""),
                  "paths": [os.path.realpath(sys.executable), sys.executable, sys.prefix,
                            sys.base_prefix, os.path.dirname(os.path.realpath(mockpbs.__file__))]}))
"""


def probe_python(python):
    """Run ``python`` to list the mockpbs commands and the host paths it needs.

    Returns ``{"bin": [...], "sbin": [...], "version": str, "paths": [...]}``; raises
    ClusterError if ``python`` cannot import mockpbs."""
    try:
        result = subprocess.run([python, "-c", PROBE], capture_output=True, text=True,
                                env=clean_env(), timeout=60, check=False)
    except OSError as exc:
        raise ClusterError("cannot run --python %s: %s" % (python, exc))
    if result.returncode != 0:
        raise ClusterError(
            "%s cannot import mockpbs (pass --python with the venv's interpreter, e.g. "
            "%s/.venv/bin/python): %s" % (python, REPO, result.stderr.strip()))
    return json.loads(result.stdout)


def build_pbs_home(spool, version):
    """Create PBS_HOME under ``spool`` as pbs_postinstall + pbs_habitat leave it."""
    home = os.path.join(spool, "pbs")
    os.makedirs(home, mode=0o755)
    for mode, relative in PBS_HOME_DIRS:
        path = os.path.join(home, relative)
        os.makedirs(path, exist_ok=True)
        os.chmod(path, mode)
    environment = ""
    if os.environ.get("TZ"):
        environment += "TZ=%s\n" % os.environ["TZ"]
    environment += "PATH=/bin:/usr/bin\n"
    write_file(os.path.join(home, "pbs_environment"), environment)
    # pbs_postinstall's only line of a fresh mom config.
    write_file(os.path.join(home, "mom_priv", "config"), "$clienthost %s\n" % SERVER_NAME)
    if version:
        write_file(os.path.join(home, "pbs_version"), version + "\n")


def wrapper_text(python, package_parent, name):
    """The shell script ``PBS_EXEC/{bin,sbin}/<name>``: ``mockpbs.__main__`` run by ``python``
    without the site module (``-S``), ``package_parent`` (the folder holding ``mockpbs``)
    first on its path. Python's site start-up (the venv's editable-install finder) was 8 of
    a mock command's 21 ms; a real PBS command starts in a few ms."""
    code = "import sys; sys.path.insert(0, %r); from mockpbs.__main__ import main; sys.exit(main())" % package_parent
    return "#!/bin/sh\nexec %s -S -c %s %s \"$@\"\n" % (shlex.quote(python), shlex.quote(code), shlex.quote(name))


def build_pbs_exec(opt, python, probe):
    """Create PBS_EXEC under ``opt``: bin/ and sbin/ wrappers (:func:`wrapper_text`)."""
    package_parent = os.path.dirname(probe["paths"][4])
    for subdir, names in (("bin", probe["bin"]), ("sbin", probe["sbin"])):
        directory = os.path.join(opt, "pbs", subdir)
        os.makedirs(directory, mode=0o755)
        for name in names:
            write_file(os.path.join(directory, name), wrapper_text(python, package_parent, name), 0o755)


def read_pbs_conf(path):
    """``{key: value}`` of a pbs.conf file (comments and blank lines skipped)."""
    values = {}
    with open(path) as handle:
        for line in handle:
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                key, value = line.split("=", 1)
                values[key.strip()] = value.strip()
    return values


def start_pbs(env, log_path):
    """Inside a node: start ``pbs_server`` and/or ``pbs_mom`` as its pbs.conf
    (``$PBS_CONF_FILE`` of ``env``, else ``/etc/pbs.conf``) asks
    (PBS_START_SERVER, PBS_START_MOM).  Returns ``{daemon: rc}``; raises ClusterError with
    the log's tail when one exits non-zero."""
    conf = read_pbs_conf(env.get("PBS_CONF_FILE") or DEFAULT_PBS_CONF)
    wanted = []
    if conf.get("PBS_START_SERVER") == "1":
        wanted.append("pbs_server")
    if conf.get("PBS_START_MOM") == "1":
        wanted.append("pbs_mom")
    daemons = {}
    for daemon in wanted:
        rc, output = start_daemon([os.path.join(PBS_EXEC, "sbin", daemon)], log_path, env)
        daemons[daemon] = rc
        if rc != 0:
            raise ClusterError("%s exited %d:\n%s" % (daemon, rc, output))
    return daemons
