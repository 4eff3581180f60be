"""Job arrays (``qsub -J``): pure helpers shared by qsub and the server (index ranges,
array and subjob ids, ``array_state_count``), as OpenPBS 23.06 shows them
(reference/openpbs/h_job_arrays.txt) and the subjob run_count rules of
the OpenPBS design "Changes to run_count attribute, hold and release operation of
subjob(s) in a Job Array" (PBS Pro pull request 1119).

Ids: the array (parent) is ``<seq>[].<server>``, subjob ``i`` is ``<seq>[i].<server>``.
The parent carries ``array = True``, ``array_indices_submitted`` (the ``-J`` text),
``array_indices_remaining`` (indices not yet run, ``-`` when none) and
``array_state_count`` (``Queued:N Running:N Exiting:N Expired:N``); its ``job_state`` is
``Q`` until a subjob starts, ``B`` (substate 70) afterwards, ``H`` when held, ``F`` when
finished (with job history). Subjobs are ordinary job dicts with ``array_id`` and
``array_index``; a finished subjob stays as ``X`` while its array lives.
"""
import re

RANGE_RE = re.compile(r"^(\d+)-(\d+)(?::(\d+))?$")
ARRAY_BEGUN_SUBSTATE = "70"
INDEX_PLACEHOLDER = "^array_index^"


class ArrayRangeError(ValueError):
    """A ``-J`` value that is not ``X-Y[:Z]`` with X < Y and Z >= 1."""


def parse_range(text):
    """``"1-5:2"`` -> ``[1, 3, 5]``. Raises ArrayRangeError (qsub prints ``illegal -J value``)."""
    match = RANGE_RE.match(text or "")
    if not match:
        raise ArrayRangeError(text)
    first, last = int(match.group(1)), int(match.group(2))
    step = int(match.group(3) or 1)
    if first >= last or step < 1:
        raise ArrayRangeError(text)
    return list(range(first, last + 1, step))


def format_indices(indices, step=1):
    """Indices as PBS prints a range list: runs of ``step`` as ``a-b`` (``a-b:step`` when
    step > 1), single ones as ``a``, comma separated; ``-`` for none."""
    values = sorted(indices)
    if not values:
        return "-"
    parts = []
    start = prev = values[0]
    for value in values[1:] + [None]:
        if value is not None and value == prev + step:
            prev = value
            continue
        if start == prev:
            parts.append(str(start))
        else:
            parts.append("%d-%d%s" % (start, prev, "" if step == 1 else ":%d" % step))
        if value is not None:
            start = prev = value
    return ",".join(parts)


def is_array_id(jobid):
    return "[]" in jobid


def split_subjob_id(jobid):
    """``"14[3].vm"`` -> ``("14", 3, "vm")``; None when ``jobid`` is no subjob id."""
    match = re.match(r"^(\d+)\[(\d+)\](?:\.(.*))?$", jobid)
    if not match:
        return None
    return match.group(1), int(match.group(2)), match.group(3)


def subjob_id(parent_id, index):
    seq, _unused, rest = parent_id.partition("[]")
    return "%s[%d]%s" % (seq, index, rest)


def subjob_path(path, index):
    return (path or "").replace(INDEX_PLACEHOLDER, str(index))


def state_count(subjobs):
    """``array_state_count`` text from the subjob dicts."""
    counts = {"Queued": 0, "Running": 0, "Exiting": 0, "Expired": 0}
    for job in subjobs:
        state = job.get("job_state")
        if state in ("Q", "H", "W"):
            counts["Queued"] += 1
        elif state == "R":
            counts["Running"] += 1
        elif state == "E":
            counts["Exiting"] += 1
        elif state in ("X", "F"):
            counts["Expired"] += 1
    return " ".join("%s:%d" % kv for kv in counts.items())
