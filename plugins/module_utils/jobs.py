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

JOB_HELD_COMMENT = "job held, too many failed attempts to run"
ARRAY_HELD_COMMENT_PREFIX = "Job Array Held, too many failed attempts to run subjob"
SYSTEM_HOLD = "s"

KIND_JOB = "job"
KIND_ARRAY = "array"
KIND_SUBJOB = "subjob"

_JOB_HEADER = re.compile(r"^Job Id: (\S+)\s*$")
_ATTR_LINE = re.compile(r"^    (\S+) = ?(.*)$")


class QstatParseError(ValueError):
    """``qstat -f`` output did not have the expected shape."""


def parse_qstat_full(text: str) -> List[Tuple[str, Dict[str, str]]]:
    """Parse ``qstat -f [-t]`` output into a list of ``(job_id, attributes)``.

    ``attributes`` is a dict of attribute name -> value string (trailing white space
    removed, continuation lines appended without separator). Raises
    :class:`QstatParseError` on an attribute or continuation line outside of a job block,
    or on any other line it does not recognise.
    """
    jobs = []
    current = None
    last_attr = None
    for line in text.splitlines():
        if not line.strip():
            last_attr = None
            continue
        match = _JOB_HEADER.match(line)
        if match:
            current = (match.group(1), {})
            jobs.append(current)
            last_attr = None
            continue
        if line.startswith("\t"):
            if current is None or last_attr is None:
                raise QstatParseError("continuation line outside of an attribute: %r" % line)
            current[1][last_attr] += line[1:].rstrip("\r\n")
            continue
        match = _ATTR_LINE.match(line)
        if match and current is not None:
            current[1][match.group(1)] = match.group(2).rstrip()
            last_attr = match.group(1)
            continue
        raise QstatParseError("unexpected line in qstat -f output: %r" % line)
    for _job_id, attrs in jobs:
        for name, value in attrs.items():
            attrs[name] = value.rstrip()
    return jobs


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


def held_by_failed_runs(attrs: Mapping[str, str]) -> bool:
    """Whether a job, subjob or array is held by the server after too many failed runs.

    True when ``job_state`` is ``H``, ``Hold_Types`` includes ``s`` and the comment is the
    one the server sets (exact for jobs and subjobs, the fixed prefix for arrays, whose
    comment ends with the subjob id).
    """
    if attrs.get("job_state") != "H" or not has_system_hold(attrs):
        return False
    comment = attrs.get("comment", "")
    if job_kind(attrs) == KIND_ARRAY:
        return comment.startswith(ARRAY_HELD_COMMENT_PREFIX)
    return comment == JOB_HELD_COMMENT


def short_id(job_id: str) -> str:
    """A job id without its ``.server`` suffix (``14[2].vm`` -> ``14[2]``)."""
    return job_id.split(".", 1)[0]


def id_matches(job_id: str, wanted: Iterable[str]) -> bool:
    """Whether ``job_id`` is one of ``wanted`` (full ids or ids without ``.server``)."""
    return job_id in wanted or short_id(job_id) in wanted
