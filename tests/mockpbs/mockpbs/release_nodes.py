"""``job.release_nodes(keep_select=...)`` pruning, as the hook (``pbs_python``) build of
OpenPBS 23.06 does it (PP-928 interface 8).

Pure string work, no PBS state: :func:`release_given_select` takes the job's assignment
and the mom's view of which hosts are healthy, and returns the pruned assignment or the
failure log lines. The rules (see ``tests/reference/release_nodes_semantics.md``):

- a vnode is usable only if its parent host is in ``succeeded_mom_list``; a chunk keeps
  its healthy vnodes only;
- the first ``exec_vnode`` chunk (the primary mom's) heads the list of usable chunks, the
  others follow sorted by ``ncpus`` then ``mem`` (stable);
- each ``keep_select`` chunk takes the first unused usable chunk covering its needs in
  ``ncpus``, ``mem``, ``vmem``, ``ssinodes``, ``naccelerators``, ``accelerator_memory``
  (no other resource takes part); the first ``keep_select`` chunk must land on the head;
- the kept chunk text writes only the needed resources (a vnode that has more than the
  remaining need gets the need, sizes as ``<n>kb``; otherwise its value verbatim);
- new ``exec_vnode`` in ``keep_select`` order, ``exec_host``/``exec_host2`` entries copied
  verbatim, ``schedselect`` = ``keep_select`` with explicit counts.

Deviation from the semantics doc, following the transcript and the source: the hook build
never fills its list of healthy vnodes, so the ``HAVE chunks from job's exec_vnode: `` line
always ends empty (``g_reliable_job_startup_2nodes.txt`` shows exactly that).
"""
from mockpbs import pbslog, selectspec

MATCHED_RESOURCES = ("ncpus", "mem", "vmem", "ssinodes", "naccelerators", "accelerator_memory")
_SIZE_KEYS = ("mem", "vmem", "accelerator_memory")
# ssinodes is compared but never written back: OpenPBS maps only these five into the chunk.
_WRITTEN_KEYS = ("ncpus", "mem", "vmem", "naccelerators", "accelerator_memory")

# Resources PBS accepts in a select spec without a site definition (ATR_DFLAG_CVTSLT).
BUILTIN_SELECT_RESOURCES = frozenset({
    "ncpus", "mem", "vmem", "mpiprocs", "ompthreads", "arch", "host", "vnode",
    "naccelerators", "accelerator_memory", "accelerator", "accelerator_model",
    "aoe", "eoe", "ssinodes", "nchunk",
})


class ReleaseResult:
    """Outcome of :func:`release_given_select`.

    ``ok``: False when PBS returns None to the hook. ``changed``: True when the new
    ``exec_vnode`` differs from the old one (then ``exec_vnode``, ``exec_host``,
    ``exec_host2`` and ``schedselect`` hold the new values). ``logs``: list of
    ``[event_class, objtype, objname, message]`` records the hook process writes.
    """

    def __init__(self, ok, changed=False, exec_vnode=None, exec_host=None, exec_host2=None,
                 schedselect=None, logs=None):
        self.ok = ok
        self.changed = changed
        self.exec_vnode = exec_vnode
        self.exec_host = exec_host
        self.exec_host2 = exec_host2
        self.schedselect = schedselect
        self.logs = logs or []


class _Usable:
    """One usable (healthy part of an) exec_vnode chunk."""

    def __init__(self, vnodes, host_entry, host2_entry):
        self.vnodes = vnodes  # [(name, [(res, value), ...]), ...] of healthy vnodes
        self.host_entry = host_entry
        self.host2_entry = host2_entry
        self.used = False
        self.totals = dict.fromkeys(MATCHED_RESOURCES, 0)
        for _name, resources in vnodes:
            for key, value in resources:
                if key in self.totals:
                    self.totals[key] += _amount(key, value)


def _amount(key, value):
    if key in _SIZE_KEYS:
        return selectspec.size_to_kb(value)
    return _atol(value)


def _atol(text):
    """C ``atol``: leading optional sign and digits, 0 when there are none."""
    text = str(text).strip()
    sign = 1
    if text[:1] in "+-" and text[:1]:
        sign = -1 if text[0] == "-" else 1
        text = text[1:]
    digits = ""
    for char in text:
        if not char.isdigit():
            break
        digits += char
    return sign * int(digits) if digits else 0


def _need_of(chunk_resources):
    need = dict.fromkeys(MATCHED_RESOURCES, 0)
    for key, value in chunk_resources:
        if key in need:
            need[key] = _amount(key, value)
    return need


def _need_text(need):
    return "(ncpus=%d ssi=%d mem=%d vmem=%d naccels=%d accel_mem=%d)" % (
        need["ncpus"], need["ssinodes"], need["mem"], need["vmem"],
        need["naccelerators"], need["accelerator_memory"])


def _fits(need, usable):
    return all(need[key] <= usable.totals[key] for key in MATCHED_RESOURCES)


def _carve(need, usable):
    """The chunk text giving ``need`` out of ``usable`` (satisfy_chunk_need)."""
    remaining = dict(need)
    parts = []
    for name, resources in usable.vnodes:
        written = []
        for key, value in resources:
            if key not in _WRITTEN_KEYS or remaining[key] == 0:
                continue
            have = _amount(key, value)
            if have > remaining[key]:
                written.append("%s=%d%s" % (key, remaining[key], "kb" if key in _SIZE_KEYS else ""))
                remaining[key] = 0
            else:
                written.append("%s=%s" % (key, value))
                remaining[key] -= have
        if written:
            parts.append(":".join([name] + written))
    return "(" + "+".join(parts) + ")"


def _schedselect(keep_chunks, known_resources):
    """``do_schedselect(keep_select)`` with no defaults; None when PBS refuses it."""
    for chunk in keep_chunks:
        names = [key for key, _unused in chunk.resources]
        if len(names) != len(set(names)):
            return None
        for name in names:
            if name not in known_resources:
                return None
    return selectspec.format_select(keep_chunks, force_count=True)


def release_given_select(jobid, exec_vnode, exec_host, exec_host2, keep_select,
                         vnode_hosts, succeeded_mom_list, failed_mom_list=(),
                         known_resources=BUILTIN_SELECT_RESOURCES):
    """Prune a job's assignment to ``keep_select`` (PP-928 interface 8, hook build).

    - ``jobid``: job id used as object name of the failure log lines.
    - ``exec_vnode``, ``exec_host``, ``exec_host2``: the job's current values (strings;
      ``exec_host2`` may equal ``exec_host``).
    - ``keep_select``: select spec text to keep.
    - ``vnode_hosts``: ``{vnode name: parent host}`` (from ``vnode_list`` and
      ``vnode_list_fail``).
    - ``succeeded_mom_list`` / ``failed_mom_list``: host names.
    - ``known_resources``: resource names ``schedselect`` may contain.

    Returns a :class:`ReleaseResult`; never raises for bad input (PBS returns None then).
    """
    logs = []

    def job_log(message):
        logs.append([pbslog.PBSEVENT_DEBUG2, pbslog.OBJ_JOB, jobid, message])

    healthy_hosts = set(succeeded_mom_list or ())
    try:
        chunks = selectspec.parse_exec_vnode(exec_vnode)
        host_entries = [piece for piece in (exec_host or "").split("+") if piece]
        host2_entries = [piece for piece in (exec_host2 or "").split("+") if piece]
    except selectspec.SelectSpecError:
        return ReleaseResult(False, logs=logs)

    head = None
    others = []
    parent = None
    previous_name = None
    for index, chunk in enumerate(chunks):
        if index >= len(host_entries) or index >= len(host2_entries):
            break
        healthy = []
        for name, resources in chunk:
            if name != previous_name and name in vnode_hosts:
                parent = vnode_hosts[name]
            previous_name = name
            if parent is None:
                job_log("no parent_mom for for %s" % name)
                return ReleaseResult(False, logs=logs)
            if parent in healthy_hosts:
                healthy.append((name, resources))
        if not healthy:
            continue
        usable = _Usable(healthy, host_entries[index], host2_entries[index])
        if index == 0:
            head = usable
        else:
            others.append(usable)
    others.sort(key=lambda u: (u.totals["ncpus"], u.totals["mem"]))
    candidates = ([head] if head is not None else []) + others

    try:
        keep_chunks = selectspec.parse_select(keep_select)
    except selectspec.SelectSpecError:
        return ReleaseResult(False, logs=logs)

    new_vnode, new_host, new_host2 = [], [], []
    first = True
    for keep_chunk in keep_chunks:
        for _unused in range(keep_chunk.count):
            need = _need_of(keep_chunk.resources)
            position = next((i for i, u in enumerate(candidates) if not u.used and _fits(need, u)), None)
            if position is None:
                job_log("could not satisfy select chunk %s" % _need_text(need))
            elif first and position != 0:
                job_log("could not satisfy 1st select chunk %s  with first available chunk" % _need_text(need))
            if position is None or (first and position != 0):
                job_log("NEED chunks for keep_select (%s)" % keep_select)
                job_log("HAVE chunks from job's exec_vnode: ")
                return ReleaseResult(False, logs=logs)
            first = False
            usable = candidates[position]
            usable.used = True
            new_vnode.append(_carve(need, usable))
            new_host.append(usable.host_entry)
            new_host2.append(usable.host2_entry)

    new_exec_vnode = "+".join(new_vnode)
    if new_exec_vnode == exec_vnode:
        return ReleaseResult(True, changed=False, logs=logs)
    schedselect = _schedselect(keep_chunks, known_resources)
    if schedselect is None:
        return ReleaseResult(False, logs=logs)
    return ReleaseResult(True, changed=True, exec_vnode=new_exec_vnode, exec_host="+".join(new_host),
                         exec_host2="+".join(new_host2), schedselect=schedselect, logs=logs)
