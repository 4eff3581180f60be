# -*- coding: utf-8 -*-
"""Reading OpenPBS ``qstat -f`` output and recognising jobs held after failed run attempts.

Formats (OpenPBS 23.06, reference transcript h_job_arrays): ``qstat -f -t`` prints one
block per job, array and subjob: ``Job Id: <id>``, then ``    attr = value`` lines (four
spaces), a value longer than the line continued on lines starting with a tab (the cut may
fall inside a word, so continuation text is appended as it is), then a blank line. An
array parent has ``array = True`` and the id ``N[].server``; a subjob has ``array_id`` and
``array_index`` and the id ``N[i].server``. ``run_count`` is shown once the job was sent to
a mom at least once.

Hold after failed starts (the subjob run_count, hold and release design, interfaces 1 and
2): when ``run_count`` goes above 20 the server puts a system hold (``Hold_Types`` holds
``s``, ``job_state = H``) on the job or subjob with the comment
``job held, too many failed attempts to run``; for a subjob it also holds the parent array
with the comment ``Job Array Held, too many failed attempts to run subjob <subjob id>``.
"""

import re
from typing import Dict, Iterable, List, Mapping, Optional, Tuple

from ansible_collections.hpc.pbs.plugins.module_utils.pbs.listing import ListingError, parse_listing

ARRAY_HELD_COMMENT_PREFIX = "Job Array Held, too many failed attempts to run subjob"
SYSTEM_HOLD = "s"

KIND_JOB = "job"
KIND_ARRAY = "array"
KIND_SUBJOB = "subjob"

_JOB_HEADER = re.compile(r"^Job Id: (\S+)\s*$")


QstatParseError = ListingError


def parse_qstat_full(text: str) -> List[Tuple[str, Dict[str, str]]]:
    """Parse ``qstat -f [-t]`` output into a list of ``(job_id, attributes)``.

    ``attributes`` is a dict of attribute name -> value string (trailing white space
    removed, continuation lines appended without separator). Raises
    :class:`QstatParseError` (the listing parser's :class:`ListingError`) on an attribute
    or continuation line outside of a job block, or on any other line it does not
    recognise.
    """
    return [(job_id, attributes) for (job_id,), attributes in parse_listing(text, _JOB_HEADER, "qstat -f")]


def job_kind(attrs: Mapping[str, str]) -> str:
    """``array`` for an array parent, ``subjob`` for a subjob, else ``job``."""
    if attrs.get("array", "").lower() == "true":
        return KIND_ARRAY
    if attrs.get("array_id"):
        return KIND_SUBJOB
    return KIND_JOB


def job_owner_user(attrs: Mapping[str, str]) -> str:
    """User name part of ``Job_Owner`` (``pbsuser@vm`` -> ``pbsuser``)."""
    return attrs.get("Job_Owner", "").split("@", 1)[0]


def run_count(attrs: Mapping[str, str]) -> Optional[int]:
    """``run_count`` as int, or None when qstat does not show it."""
    try:
        return int(attrs["run_count"])
    except (KeyError, ValueError):
        return None


def has_system_hold(attrs: Mapping[str, str]) -> bool:
    """Whether ``Hold_Types`` includes the system hold ``s``."""
    return SYSTEM_HOLD in attrs.get("Hold_Types", "")


def system_held(attrs: Mapping[str, str]) -> bool:
    """Whether a job, subjob or array is held (``job_state`` ``H``) with the system hold ``s``."""
    return attrs.get("job_state") == "H" and has_system_hold(attrs)


def short_id(job_id: str) -> str:
    """A job id without its ``.server`` suffix (``14[2].vm`` -> ``14[2]``)."""
    return job_id.split(".", 1)[0]


def id_matches(job_id: str, wanted: Iterable[str]) -> bool:
    """Whether ``job_id`` is one of ``wanted`` (full ids or ids without ``.server``)."""
    return job_id in wanted or short_id(job_id) in wanted
