# -*- coding: utf-8 -*-
# Copyright: hpc.pbs developers
# Apache License 2.0
"""The cgroup layout a host's processes see, read from ``/proc/self/mountinfo``.

Layouts (:func:`classify`):

- ``v1``: cgroup v1 hierarchies with controllers (``cpuset``, ``memory``, ...) and no
  cgroup2 mount;
- ``hybrid``: v1 controllers plus a cgroup2 mount (systemd's hybrid mode, e.g.
  ``/sys/fs/cgroup/unified``);
- ``v2``: a cgroup2 mount and no v1 controller (a v1 hierarchy with only a name such as
  ``name=systemd`` is no controller): RHEL 9, SLES 15 SP6 and later by default;
- ``none``: neither (no cgroup file system mounted);
- ``unknown``: the mount table could not be read.

OpenPBS's ``pbs_cgroups`` hook up to 23.06.06 finds its controllers among the ``cgroup``
(v1) mounts of ``/proc/mounts`` only: it can manage ``v1`` and ``hybrid`` hosts, and a
``v2`` host only when that PBS has the feature ``pbs_cgroups_cgroup_v2``
(``pbs_versions``); the role ``cgroup_resize`` decides from this layout. Standard library
only (Python 3.6+).
"""

import re
from typing import Any, Dict, List, Optional

from ansible_collections.hpc.pbs.plugins.module_utils.common.text_files import read_utf8

MOUNTINFO = "/proc/self/mountinfo"

# The cgroup v1 controllers of Linux (a v1 mount's super options name those it holds).
V1_CONTROLLERS = frozenset((
    "blkio", "cpu", "cpuacct", "cpuset", "devices", "freezer", "hugetlb", "memory",
    "misc", "net_cls", "net_prio", "perf_event", "pids", "rdma"))

LAYOUTS = ("v1", "hybrid", "v2", "none", "unknown")

_ESCAPE = re.compile(r"\\([0-7]{3})")


def unescape(field: str) -> str:
    """A mountinfo path field with its octal escapes (``\\040`` for a space) decoded."""
    return _ESCAPE.sub(lambda match: chr(int(match.group(1), 8)), field)


def parse_mountinfo(text: str) -> List[Dict[str, Any]]:
    """The mounts of mountinfo ``text``: a list of dicts ``mount_point``, ``fstype`` and
    ``super_options`` (list), in the file's order. Lines that are not mountinfo lines
    (no ``-`` separator after the optional fields) are skipped."""
    mounts = []
    for line in text.splitlines():
        fields = line.split()
        try:
            separator = fields.index("-", 6)
        except ValueError:
            continue
        after = fields[separator + 1:]
        if len(after) < 2:
            continue
        mounts.append(dict(mount_point=unescape(fields[4]), fstype=after[0],
                           super_options=after[2].split(",") if len(after) > 2 else []))
    return mounts


def classify(text: str) -> Dict[str, Any]:
    """The layout of mountinfo ``text``: a dict with ``layout`` (one of :data:`LAYOUTS`
    but ``unknown``), ``v1_controllers`` (sorted controller names that have a v1 mount),
    ``v1_mounts`` (controller -> its mount point, the shortest when several) and
    ``cgroup2_mount`` (the cgroup2 mount point, the shortest when several; None)."""
    v1_mounts = {}
    cgroup2 = []
    for mount in parse_mountinfo(text):
        if mount["fstype"] == "cgroup2":
            cgroup2.append(mount["mount_point"])
        elif mount["fstype"] == "cgroup":
            for option in mount["super_options"]:
                if option in V1_CONTROLLERS:
                    known = v1_mounts.get(option)
                    if known is None or len(mount["mount_point"]) < len(known):
                        v1_mounts[option] = mount["mount_point"]
    cgroup2_mount = min(cgroup2, key=len) if cgroup2 else None
    if v1_mounts:
        layout = "hybrid" if cgroup2_mount else "v1"
    else:
        layout = "v2" if cgroup2_mount else "none"
    return dict(layout=layout, v1_controllers=sorted(v1_mounts), v1_mounts=v1_mounts,
                cgroup2_mount=cgroup2_mount)


def read_layout(path: Optional[str] = None) -> Dict[str, Any]:
    """:func:`classify` of the file ``path`` (None: :data:`MOUNTINFO`, this process's
    ``/proc/self/mountinfo``), with ``source`` (the path) and ``error`` (None, or why
    the file could not be read: the layout is then ``unknown``)."""
    path = path or MOUNTINFO
    try:
        text = read_utf8(path)
    except (IOError, OSError) as exc:
        return dict(layout="unknown", v1_controllers=[], v1_mounts={}, cgroup2_mount=None,
                    source=path, error="cannot read %s: %s" % (path, exc))
    found = classify(text)
    found.update(source=path, error=None)
    return found
