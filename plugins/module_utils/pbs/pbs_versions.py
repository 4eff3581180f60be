# -*- coding: utf-8 -*-
# Copyright: hpc.pbs developers
# Apache License 2.0
"""What differs between the PBS releases the collection supports, in one table.

Sites run OpenPBS 22.x-23.x and PBS Professional 2021-2025. PBS Professional numbers its
releases by year (``2022.1.3``); each is built from an OpenPBS release (:data:`PBSPRO_BASES`: PBS Professional 2022.1 from
OpenPBS 22.05). :func:`parse_version` reads both numberings from ``PBS_HOME/pbs_version``
or the server's ``pbs_version`` attribute.

:data:`FEATURES` names each behaviour that differs by release, with the first OpenPBS
release that has it (``None``: no release known to the collection has it); a PBS
Professional release has what its OpenPBS base has, and is unknown (``None``) when its base
is not in :data:`PBSPRO_BASES`. The OpenPBS 22.05.11 release reports ``20.0.0`` (its
``configure.ac`` was never bumped), so the table places it before 22.05; no feature of the
table starts between 20.0 and 22.05. A feature
that can also be seen on the host (an attribute the server lists, a word in a hook body)
is decided by that probe first, the table second: :func:`has_feature`. Standard library
only.
"""

import re
from typing import Any, Dict, Optional, Tuple, Union

OPENPBS = "openpbs"
PBS_PROFESSIONAL = "pbspro"

# "23.06.06", "22.05.11", "2022.1.3", "20.0.1", "23.06.06-cd7ab5eda" (a build's suffix).
_VERSION = re.compile(r"^\s*(?:pbs_version\s*=\s*)?(\d+)\.(\d+)(?:\.(\d+))?")
# Releases numbered by year are PBS Professional's.
_FIRST_YEAR_NUMBER = 2000


class PbsVersion:
    """A parsed release: ``product`` (:data:`OPENPBS` or :data:`PBS_PROFESSIONAL`),
    ``release`` (tuple of ints, e.g. ``(22, 5, 11)``) and the ``text`` it came from."""

    def __init__(self, product: str, release: Tuple[int, ...], text: str) -> None:
        self.product = product
        self.release = release
        self.text = text

    def as_dict(self) -> Dict[str, Any]:
        return {"product": self.product, "release": ".".join(str(p) for p in self.release),
                "text": self.text}


def parse_version(text: Optional[str]) -> Optional[PbsVersion]:
    """Parse a PBS version string; returns a :class:`PbsVersion`, or None when ``text``
    (str or None) is empty or does not start with a dotted release number."""
    match = _VERSION.match(text or "")
    if not match:
        return None
    release = tuple(int(part) for part in match.groups() if part is not None)
    product = PBS_PROFESSIONAL if release[0] >= _FIRST_YEAR_NUMBER else OPENPBS
    return PbsVersion(product, release, text.strip())


# PBS Professional (year, release) -> the OpenPBS release it is built from.
PBSPRO_BASES = {(2022, 1): (22, 5)}

# feature -> {"doc": what differs, "since": first OpenPBS release with it, or None}.
FEATURES = {
    "clear_topjob_estimates_enable": {
        "doc": "the server attribute clear_topjob_estimates_enable",
        "since": (23, 6),
    },
    "pbsnodes_refusal_by_name": {
        "doc": "pbsnodes -F json keys an unknown vnode's error by the vnode's name "
               "(22.05 keys it by 'Error')",
        "since": (23, 6),
    },
    "pbs_cgroups_cgroup_v2": {
        "doc": "the pbs_cgroups hook manages a cgroup v2 (unified) hierarchy; up to OpenPBS "
               "23.06.06 it recognises only cgroup v1 mounts",
        "since": None,
    },
}


def has_feature(feature: str, version: Union[PbsVersion, str, None],
                probe: Optional[bool] = None) -> Optional[bool]:
    """Whether the PBS of ``version`` (a :class:`PbsVersion`, a version string, or None)
    has ``feature`` (a key of :data:`FEATURES`; KeyError otherwise).

    ``probe``: what the host showed (True/False), or None when it could not tell. A probe
    wins over the table. Returns True, False, or None when neither the probe nor the
    version tells (no version known, or a PBS Professional release whose base is unknown)."""
    entry = FEATURES[feature]
    if probe is not None:
        return bool(probe)
    if not isinstance(version, PbsVersion):
        version = parse_version(version)
    if version is None:
        return None
    base = version.release
    if version.product == PBS_PROFESSIONAL:
        base = PBSPRO_BASES.get(version.release[:2])
        if base is None:
            return None
    return entry["since"] is not None and base >= entry["since"]


def feature_table(version: Union[PbsVersion, str, None]) -> Dict[str, Optional[bool]]:
    """Every feature of :data:`FEATURES` decided for ``version`` from the table alone:
    dict feature -> True/False/None (None: version unknown)."""
    return {name: has_feature(name, version) for name in sorted(FEATURES)}
