"""The scheduler: a thread inside the server that places queued jobs on vnodes.

:func:`place_job` is the pure placement rule (vnodes in creation order, ``place``
honoured: ``scatter``/``vscatter`` one chunk per host/vnode, ``pack`` every chunk on one
host, ``free`` anywhere; enough free ``ncpus``/``mem``; ``excl`` wants idle vnodes) and
builds ``exec_vnode``/``exec_host`` the way PBS writes them:
``(mom1:ncpus=1)+(mom2:ncpus=2:mem=1048576kb)`` and ``mom1/0+mom2/0*2`` (the host is
the mom's natural vnode, the index the lowest job index free on that mom, ``*N`` only
when ncpus is not 1). A chunk no single vnode
holds may be split over the vnodes of one multi-vnode mom:
``(hostA[0]:ncpus=2+hostA[1]:ncpus=1)``, exec_host ``hostA/0*0``.

:class:`Scheduler` runs ``server.schedule_cycle()`` when woken (submit, node and job
events) and every ``interval`` seconds.
"""
import threading

from mockpbs import selectspec

CONSUMABLE = ("ncpus", "mem", "vmem", "ngpus", "naccelerators", "accelerator_memory", "hbmem")
UNAVAILABLE_STATES = ("offline", "down", "state-unknown", "job-exclusive", "stale", "unresolvable")


def _amount(name, value):
    if name in selectspec.SIZE_RESOURCES:
        return selectspec.size_to_kb(value)
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def vnode_free(node):
    """Free consumable amounts of a node dict (flat ``resources_available.X`` keys)."""
    free = {}
    for name in CONSUMABLE:
        avail = node.get("resources_available." + name)
        if avail is None:
            continue
        used = node.get("resources_assigned." + name, "0")
        free[name] = _amount(name, avail) - _amount(name, used)
    return free


def _usable(node):
    states = node.get("state", "free").split(",")
    return not any(s in UNAVAILABLE_STATES for s in states)


def _fits(name, node, free, chunk_resources, exclusive):
    if exclusive and node.get("jobs"):
        return False
    for key, value in chunk_resources:
        if key in CONSUMABLE:
            if key not in free and _amount(key, value) > 0:
                return False
            if free.get(key, 0) < _amount(key, value):
                return False
        elif key == "vnode":
            if value != name:
                return False
        elif key in ("host", "arch") or ("resources_available." + key) in node:
            if node.get("resources_available." + key) != value:
                return False
    return True


def _take(free, chunk_resources):
    for key, value in chunk_resources:
        if key in free:
            free[key] -= _amount(key, value)


def _format_amount(key, value):
    if key in selectspec.SIZE_RESOURCES:
        return "%dkb" % value
    return str(value)


def _piece_text(name, amounts):
    """``name:ncpus=2:mem=1048576kb`` for one vnode's share of a chunk."""
    parts = ["%s=%s" % (key, _format_amount(key, value)) for key, value in amounts]
    if not parts:
        parts.append("ncpus=0")
    return "%s:%s" % (name, ":".join(parts))


def _single_piece(name, chunk_resources):
    amounts = [(key, _amount(key, value)) for key, value in chunk_resources if key in CONSUMABLE]
    return [(name, amounts)]


def _span_host(host_vnodes, trial, chunk_resources, exclusive):
    """Split one chunk over several vnodes of one host (vnodes in creation order), as the
    PBS scheduler does for multi-vnode moms. ``host_vnodes``: [(name, attrs)] of one host;
    ``trial``: {name: free amounts}, updated on success. Returns [(name, [(res, amount)])]
    or None."""
    need = {key: _amount(key, value) for key, value in chunk_resources
            if key in CONSUMABLE and _amount(key, value) > 0}
    others = [(key, value) for key, value in chunk_resources if key not in CONSUMABLE]
    if not need:
        return None
    staged = {name: dict(free) for name, free in trial.items()}
    pieces = []
    left = dict(need)
    for name, attrs in host_vnodes:
        if not _fits(name, attrs, {}, others, exclusive):
            continue
        free = staged[name]
        share = []
        for key in need:
            give = min(left[key], max(free.get(key, 0), 0))
            if give > 0:
                share.append((key, give))
        if not share:
            continue
        for key, give in share:
            left[key] -= give
            free[key] -= give
        pieces.append((name, share))
        if all(amount <= 0 for amount in left.values()):
            trial.update(staged)
            return pieces
    return None


def place_job(schedselect, place, nodes, used_slots=None):
    """Place ``schedselect`` (select text) with ``place`` (e.g. ``"scatter:excl"``) on
    ``nodes`` (ordered ``{name: flat attribute dict}``); ``used_slots``: the moms' job
    indices other jobs hold (:func:`exec_host_from_exec_vnode`).

    Hosts are tried in the order of their first vnode; on a host a chunk goes to the first
    vnode that holds it whole, else it is split over several vnodes of that host
    (``(hostA[0]:ncpus=2+hostA[1]:ncpus=1)``, multi-vnode moms). ``scatter`` puts each
    chunk on another host, ``vscatter`` on other vnodes, ``pack`` every chunk on one host.

    Returns ``(exec_vnode, exec_host, [first vnode name per chunk])`` or None when the job
    does not fit now. Raises SelectSpecError for a bad select."""
    chunks = selectspec.expand_chunks(selectspec.parse_select(schedselect))
    words = (place or "free").split(":")
    arrangement = next((w for w in words if w in ("free", "pack", "scatter", "vscatter")), "free")
    exclusive = "excl" in words or "exclhost" in words
    candidates = [(n, a) for n, a in nodes.items() if _usable(a)]

    def host_of(name):
        return nodes[name].get("resources_available.host", name)

    hosts = []
    for name, _unused in candidates:
        if host_of(name) not in hosts:
            hosts.append(host_of(name))
    by_host = {h: [(n, a) for n, a in candidates if host_of(n) == h] for h in hosts}

    def place_chunk(resources, trial, allowed_hosts, used_vnodes):
        for host in allowed_hosts:
            for name, attrs in by_host[host]:
                if arrangement == "vscatter" and name in used_vnodes:
                    continue
                if _fits(name, attrs, trial[name], resources, exclusive):
                    _take(trial[name], resources)
                    return _single_piece(name, resources)
            if arrangement != "vscatter":
                pieces = _span_host(by_host[host], trial, resources, exclusive)
                if pieces is not None:
                    return pieces
        return None

    def place_all(allowed_hosts):
        trial = {n: vnode_free(a) for n, a in candidates}
        placed = []
        used_hosts, used_vnodes = set(), set()
        for resources in chunks:
            usable = [h for h in allowed_hosts if not (arrangement == "scatter" and h in used_hosts)]
            pieces = place_chunk(resources, trial, usable, used_vnodes)
            if pieces is None:
                return None
            used_hosts.add(host_of(pieces[0][0]))
            used_vnodes.update(name for name, _unused in pieces)
            placed.append(pieces)
        return placed

    placed = None
    if arrangement == "pack":
        for host in hosts:
            placed = place_all([host])
            if placed is not None:
                break
    else:
        placed = place_all(hosts)
    if placed is None:
        return None
    exec_vnode = "+".join("(%s)" % "+".join(_piece_text(name, amounts) for name, amounts in pieces)
                          for pieces in placed)
    exec_host = exec_host_from_exec_vnode(exec_vnode, natural_vnode_of(nodes), used_slots)
    return exec_vnode, exec_host, [pieces[0][0] for pieces in placed]


def exec_host_from_exec_vnode(exec_vnode, host_of, used_slots=None):
    """Regenerate exec_host from exec_vnode as the server does (release_nodes_semantics.md
    section 4; OpenPBS set_nodes/add_job_index_to_mom): ``host/<index>``, ``*<ncpus>`` for
    a single-vnode chunk (``*1`` left out), ``*0`` for a chunk spanning several vnodes.

    ``host_of(vnode)`` names the natural vnode of the vnode's mom. Each chunk takes the
    lowest job index of that mom free in ``used_slots`` (``{natural vnode: {index, ...}}``
    held by the other running jobs, see :func:`job_slots_in_use`; None: no other job)
    and not yet taken by an earlier chunk of the job: a second single-chunk job on a mom
    is ``vm/1`` (transcript h), a job's two chunks on one mom ``vm/0+vm/1``."""
    entries = []
    taken = {}
    for chunk in selectspec.parse_exec_vnode(exec_vnode):
        host = host_of(chunk[0][0])
        busy = taken.setdefault(host, set(used_slots.get(host, ())) if used_slots else set())
        index = next(i for i in range(len(busy) + 1) if i not in busy)
        busy.add(index)
        if len(chunk) > 1:
            entries.append("%s/%d*0" % (host, index))
            continue
        ncpus = dict(chunk[0][1]).get("ncpus", "1")
        entries.append("%s/%d%s" % (host, index, "" if ncpus == "1" else "*%s" % ncpus))
    return "+".join(entries)


def job_slots_in_use(exec_hosts):
    """``{natural vnode: {job index, ...}}`` held by the given exec_host strings (those
    of the jobs that hold nodes): ``["vm/0+vm-m2/0*2"]`` -> ``{"vm": {0}, "vm-m2": {0}}``."""
    slots = {}
    for exec_host in exec_hosts:
        for entry in (exec_host or "").split("+"):
            host, _unused, rest = entry.partition("/")
            index = rest.split("*")[0]
            if host and index.isdigit():
                slots.setdefault(host, set()).add(int(index))
    return slots


def natural_vnode_of(nodes):
    """``name -> natural vnode name`` (the mom's own vnode, which names it in exec_host)
    over ``nodes`` (``{name: flat attribute dict}``, ``_natural`` set on the vnodes a
    multi-vnode mom reports)."""
    return lambda name: nodes.get(name, {}).get("_natural") or name


class Scheduler:
    """Calls ``cycle()`` whenever :meth:`wake` is called and every ``interval`` seconds."""

    def __init__(self, cycle, interval=5.0, log=None):
        self.cycle = cycle
        self.interval = interval
        self.log = log
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pbs_sched", daemon=True)

    def start(self):
        self._thread.start()

    def wake(self):
        self._wake.set()

    def stop(self):
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=10)

    def _run(self):
        while not self._stop.is_set():
            self._wake.wait(self.interval)
            self._wake.clear()
            if self._stop.is_set():
                break
            try:
                self.cycle()
            except Exception as exc:  # the scheduler must survive one bad cycle
                if self.log is not None:
                    self.log.record(0x0001, "Svr", "pbs_sched", "scheduling cycle failed: %s" % exc)
