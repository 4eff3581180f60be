"""Vnode definition files, ``PBS_HOME/mom_priv/config.d/*`` (what ``pbs_mom -s insert`` installs).

A file whose first non-blank, non-comment line is ``$configversion 2`` defines vnodes, one
attribute per line (PBS Professional Admin Guide, "Vnode Definition Files")::

    $configversion 2
    hostA: resources_available.ncpus = 0
    hostA[0]: resources_available.ncpus = 2
    hostA[0]: resources_available.mem = 4gb
    hostA[0]: sharing = default_excl

Files are read in name order, as the real mom does after ``mom_priv/config``; a later
line for the same vnode and attribute wins. Files without ``$configversion 2`` are
ordinary mom config files and are left to :mod:`mockpbs.mom.config`.
"""
import os
import re

from mockpbs import pbslog

_LINE = re.compile(r"^(?P<vnode>[^:\s][^:]*?)\s*:\s*(?P<attr>[A-Za-z_][\w.]*)\s*=\s*(?P<value>.*?)\s*$")


def is_vnode_definition(text):
    """True when ``text`` starts (after comments/blank lines) with ``$configversion 2``."""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        return stripped.split() == ["$configversion", "2"]
    return False


def parse_vnode_text(text, vnodes=None, log=None, file_label="config.d"):
    """Add the vnode lines of ``text`` to ``vnodes`` ({vnode: {"resources_available":
    {name: value}, other attribute: value}}) and return it. A line that is not
    ``<vnode>: <attribute> = <value>`` is logged as an error (class ERROR) and skipped;
    quotes around a value are removed."""
    vnodes = {} if vnodes is None else vnodes
    for linenum, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped.startswith("$"):
            continue
        match = _LINE.match(stripped)
        if not match:
            if log is not None:
                log.record(pbslog.PBSEVENT_ERROR, pbslog.OBJ_SERVER, "pbs_mom",
                           "vn_parse, %s[%d]: bad vnode definition line \"%s\"" % (file_label, linenum, stripped))
            continue
        value = match.group("value")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        entry = vnodes.setdefault(match.group("vnode"), {"resources_available": {}})
        attr = match.group("attr")
        if attr.startswith("resources_available."):
            entry["resources_available"][attr.split(".", 1)[1]] = value
        else:
            entry[attr] = value
    return vnodes


def read_config_d(config_d, log=None):
    """Vnodes defined by the ``$configversion 2`` files of directory ``config_d`` (missing
    directory: none), in file name order."""
    vnodes = {}
    try:
        names = sorted(os.listdir(config_d))
    except FileNotFoundError:
        return vnodes
    for name in names:
        path = os.path.join(config_d, name)
        if not os.path.isfile(path):
            continue
        try:
            with open(path) as handle:
                text = handle.read()
        except OSError:
            continue
        if is_vnode_definition(text):
            parse_vnode_text(text, vnodes, log, name)
    return vnodes


def mom_vnodes(defined, natural, host, natural_defaults):
    """The vnodes a mom reports: its natural vnode ``natural`` (``natural_defaults``
    resources unless the files set them) plus every defined vnode, each with
    ``resources_available.host`` / ``.vnode`` filled in as PBS does."""
    out = {natural: {"resources_available": dict(natural_defaults)}}
    for name, attrs in defined.items():
        entry = out.setdefault(name, {"resources_available": {}})
        for key, value in attrs.items():
            if key == "resources_available":
                entry["resources_available"].update(value)
            else:
                entry[key] = value
    for name, entry in out.items():
        entry["resources_available"]["host"] = host
        entry["resources_available"]["vnode"] = name
    return out
