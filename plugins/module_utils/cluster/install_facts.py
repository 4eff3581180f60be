# -*- coding: utf-8 -*-
"""What ``hpc.pbs.cluster_info`` reports of a PBS installation on any host: the installed
version (``PBS_HOME/pbs_version``) and which daemons ``pbs.conf`` starts here and which of
them run. Also the small readers the mom facts, the server facts and the health snapshot
share: a file's text, a file's SHA-256 and the reported fields of one hook."""

import hashlib

from ansible_collections.hpc.pbs.plugins.module_utils.common.text_files import read_utf8
from ansible_collections.hpc.pbs.plugins.module_utils.moms.mom_daemon import (
    process_alive, read_mom_pid)
from ansible_collections.hpc.pbs.plugins.module_utils.server.qmgr import split_list_value

# (daemon, the pbs.conf variable that starts it here).
DAEMONS = (("server", "PBS_START_SERVER"), ("sched", "PBS_START_SCHED"),
           ("comm", "PBS_START_COMM"), ("mom", "PBS_START_MOM"))


def read_text(path):
    """The text of ``path`` (:func:`read_utf8`); None when it cannot be read."""
    try:
        return read_utf8(path)
    except (IOError, OSError):
        return None


def file_sha256(path):
    """The SHA-256 (hex) of the bytes of ``path``; None when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except (IOError, OSError):
        return None


def hook_summary(attrs, body_path):
    """Reported fields of one hook (``attrs``: attribute text, from qmgr or a ``.HK``
    file; ``body_path``: its ``.PY`` file)."""
    alarm = str(attrs.get("alarm", "30"))
    order = str(attrs.get("order", "1"))
    return dict(
        type=attrs.get("type", "site"),
        events=split_list_value(attrs.get("event", "")),
        enabled=str(attrs.get("enabled", "true")).lower() in ("true", "t", "y", "1"),
        order=int(order) if order.isdigit() else order,
        alarm=int(alarm) if alarm.isdigit() else alarm,
        fail_action=split_list_value(attrs.get("fail_action", "none")),
        sha256=file_sha256(body_path),
    )


def installed_version(paths):
    """The version in ``PBS_HOME/pbs_version``; None when the file is missing or empty."""
    return (read_text(paths.version_file) or "").strip() or None


def daemon_states(paths):
    """``{daemon: {configured, running, pid}}`` for every daemon of :data:`DAEMONS`."""
    states = {}
    for daemon, key in DAEMONS:
        pid = read_mom_pid(paths.lock_file(daemon))
        running = pid is not None and process_alive(pid)
        states[daemon] = dict(configured=paths.conf.get(key, "0").strip() == "1",
                              running=running, pid=pid if running else None)
    return states
