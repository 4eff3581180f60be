# -*- coding: utf-8 -*-
# Copyright: hpc.pbs developers
# Apache License 2.0
"""Run metadata of a playbook run, for the reports the playbooks write on the controller
(the rollout's report; the audit's may use it too): when the run started and ended, who
ran it on which controller host, the collection's and ansible-core's versions, the
inventory sources and whether it ran in check mode.

Python standard library only (3.6+).
"""

import datetime
import getpass
import json
import os
import re
import socket
from typing import Any, Dict, List, Optional, Union

UNKNOWN = "unknown"
_VERSION_LINE = re.compile(r"^version:\s*['\"]?([^'\"\s#]+)", re.M)


def utc_now() -> str:
    """The current time in UTC as ISO 8601 text with a ``Z`` (seconds precision)."""
    return datetime.datetime.utcnow().replace(microsecond=0).isoformat() + "Z"


def collection_version(root: str) -> str:
    """The version of the collection whose top directory is ``root``: ``MANIFEST.json``'s
    (an installed collection), else ``galaxy.yml``'s (a source checkout), else
    ``"unknown"``."""
    try:
        with open(os.path.join(root, "MANIFEST.json")) as handle:
            return str(json.load(handle)["collection_info"]["version"])
    except (OSError, IOError, ValueError, KeyError, TypeError):
        pass
    try:
        with open(os.path.join(root, "galaxy.yml")) as handle:
            found = _VERSION_LINE.search(handle.read())
        if found:
            return found.group(1)
    except (OSError, IOError):
        pass
    return UNKNOWN


def current_user() -> str:
    """The login name running the controller process, ``"unknown"`` when none can be told."""
    try:
        return getpass.getuser()
    # getpass.getuser() raises KeyError, OSError and others where no login name is known.
    except Exception:  # pylint: disable=broad-except
        return UNKNOWN


def run_metadata(started: str, check_mode: bool, inventory_sources: Union[str, List[str], None],
                 ansible_version: str, root: str, ended: Optional[str] = None) -> Dict[str, Any]:
    """The run metadata (dict, JSON-ready).

    :param started: when the run started (text, ISO 8601), as the playbook noted it.
    :param check_mode: whether the run was ``--check`` (bool).
    :param inventory_sources: the inventory sources (list of str, or one str).
    :param ansible_version: ansible-core's version (str).
    :param root: the collection's top directory (for :func:`collection_version`).
    :param ended: when it ended (text); None: now (:func:`utc_now`).
    :returns: ``{started, ended, user, controller_host, collection_version,
        ansible_core_version, inventory, check_mode}``.
    """
    if isinstance(inventory_sources, str):
        inventory_sources = [inventory_sources]
    return dict(started=str(started) if started else UNKNOWN,
                ended=ended or utc_now(),
                user=current_user(),
                controller_host=socket.getfqdn() or socket.gethostname(),
                collection_version=collection_version(root),
                ansible_core_version=str(ansible_version or UNKNOWN),
                inventory=[str(source) for source in (inventory_sources or [])],
                check_mode=bool(check_mode))
