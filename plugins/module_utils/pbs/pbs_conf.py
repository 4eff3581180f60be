# -*- coding: utf-8 -*-
"""Where PBS lives on a managed host: ``pbs.conf`` discovery as PBS's ``pbs_loadconf`` does.

The file is ``$PBS_CONF_FILE`` or ``/etc/pbs.conf``; it holds ``KEY=VALUE`` lines.
``PBS_HOME`` and ``PBS_EXEC`` default to ``/var/spool/pbs`` and ``/opt/pbs``; environment
variables of the same names override the file. Standard library only (runs on the managed
host under ``/usr/bin/python3``).
"""

import os
from typing import Any, Dict, Mapping, Optional

from ansible_collections.hpc.pbs.plugins.module_utils.common.module_error import ModuleError
from ansible_collections.hpc.pbs.plugins.module_utils.common.text_files import read_utf8

DEFAULT_CONF_FILE = "/etc/pbs.conf"
DEFAULT_PBS_HOME = "/var/spool/pbs"
DEFAULT_PBS_EXEC = "/opt/pbs"

# Keys whose environment variable overrides pbs.conf, as in pbs_loadconf.
_ENV_OVERRIDES = ("PBS_HOME", "PBS_EXEC", "PBS_SERVER", "PBS_MOM_NODE_NAME")


class PbsConfError(Exception):
    """pbs.conf was named explicitly but cannot be read."""


def pbs_conf_argument_spec() -> Dict[str, Dict[str, Any]]:
    """The ``argument_spec`` entries of the ``hpc.pbs.pbs`` doc fragment."""
    return dict(pbs_conf_file=dict(type="path", required=False))


def parse_pbs_conf(text: str) -> Dict[str, str]:
    """Parse pbs.conf text into a dict of strings.

    Blank lines, ``#`` comments and lines without ``=`` are skipped; keys and values are
    stripped of surrounding white space.
    """
    values = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        values[key.strip()] = value.strip()
    return values


class PbsPaths:
    """PBS locations resolved from pbs.conf.

    Attributes: ``conf_file`` (path read or that would have been read), ``conf_found``
    (whether it could be read), ``conf`` (dict of
    all pbs.conf values after environment overrides), ``home`` (PBS_HOME), ``exec_dir``
    (PBS_EXEC).
    """

    def __init__(self, conf_file: str, conf: Dict[str, str], conf_found: bool) -> None:
        self.conf_file = conf_file
        self.conf_found = conf_found
        self.conf = conf
        self.home = conf.get("PBS_HOME") or DEFAULT_PBS_HOME
        self.exec_dir = conf.get("PBS_EXEC") or DEFAULT_PBS_EXEC

    @property
    def qmgr(self) -> str:
        """Path of the qmgr client: ``PBS_EXEC/bin/qmgr``."""
        return os.path.join(self.exec_dir, "bin", "qmgr")

    @property
    def server_hooks_dir(self) -> str:
        """``PBS_HOME/server_priv/hooks`` (NAME.HK / NAME.PY / NAME.CF, mode 0644)."""
        return os.path.join(self.home, "server_priv", "hooks")

    @property
    def mom_config(self) -> str:
        """``PBS_HOME/mom_priv/config``."""
        return os.path.join(self.home, "mom_priv", "config")

    @property
    def mom_lock(self) -> str:
        """``PBS_HOME/mom_priv/mom.lock`` (holds the pid of pbs_mom)."""
        return os.path.join(self.home, "mom_priv", "mom.lock")

    @property
    def mom_hooks_dir(self) -> str:
        """``PBS_HOME/mom_priv/hooks`` (the hook files the server copied to this mom)."""
        return os.path.join(self.home, "mom_priv", "hooks")

    @property
    def pbs_mom(self) -> str:
        """``PBS_EXEC/sbin/pbs_mom``."""
        return os.path.join(self.exec_dir, "sbin", "pbs_mom")

    @property
    def version_file(self) -> str:
        """``PBS_HOME/pbs_version`` (the installed version, one line)."""
        return os.path.join(self.home, "pbs_version")

    def lock_file(self, daemon: str) -> str:
        """Lock file holding the pid of ``daemon`` (server, sched, mom, comm)."""
        return {
            "server": os.path.join(self.home, "server_priv", "server.lock"),
            "sched": os.path.join(self.home, "sched_priv", "sched.lock"),
            "mom": os.path.join(self.home, "mom_priv", "mom.lock"),
            "comm": os.path.join(self.home, "server_priv", "comm.lock"),
        }[daemon]

    @property
    def mom_logs_dir(self) -> str:
        """``PBS_HOME/mom_logs`` (one file per local day, named YYYYMMDD)."""
        return os.path.join(self.home, "mom_logs")


def resolve_pbs_paths(pbs_conf_file: Optional[str] = None,
                      environ: Optional[Mapping[str, str]] = None) -> PbsPaths:
    """Return a :class:`PbsPaths` for the managed host.

    ``pbs_conf_file``: explicit path or None (then ``$PBS_CONF_FILE``, else
    ``/etc/pbs.conf``). ``environ``: mapping used for the environment (default
    ``os.environ``). Raises :class:`PbsConfError` when an explicitly given file cannot be
    read; an implicit file that is missing yields the defaults.
    """
    environ = os.environ if environ is None else environ
    explicit = bool(pbs_conf_file)
    path = pbs_conf_file or environ.get("PBS_CONF_FILE") or DEFAULT_CONF_FILE
    conf = {"PBS_HOME": DEFAULT_PBS_HOME, "PBS_EXEC": DEFAULT_PBS_EXEC}
    found = True
    try:
        conf.update(parse_pbs_conf(read_utf8(path)))
    except (IOError, OSError) as exc:
        if explicit:
            raise PbsConfError("cannot read pbs.conf %s: %s" % (path, exc))
        found = False
    for key in _ENV_OVERRIDES:
        if environ.get(key):
            conf[key] = environ[key]
    return PbsPaths(path, conf, found)


def task_pbs_paths(params: Mapping[str, Any], required: bool = True) -> "PbsPaths":
    """:func:`resolve_pbs_paths` for a module's task (``params``: its ``module.params``,
    ``pbs_conf_file`` read); raises :class:`~module_error.ModuleError` on error.

    With ``required`` (the default) a host without any pbs.conf fails the task with a
    message saying so, before anything is read or changed.
    """
    try:
        paths = resolve_pbs_paths(params.get("pbs_conf_file"))
    except PbsConfError as exc:
        raise ModuleError("%s. Give the path of pbs.conf in pbs_conf_file, or omit it "
                          "to use $PBS_CONF_FILE / /etc/pbs.conf." % exc)
    if required and not paths.conf_found:
        raise ModuleError("PBS does not seem to be installed on this host: %s does not "
                          "exist. Install PBS there, run the task on a PBS host, or give "
                          "the path of pbs.conf in pbs_conf_file. Nothing was changed."
                          % paths.conf_file)
    return paths
