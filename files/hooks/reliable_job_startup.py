"""Reliable job startup: pad a job's select at queuejob, prune it back at execjob_launch.

A plain PBS hook (standard library + ``pbs`` only), implementing the "Case of Reliable Job
Startup" of PP-928 (the PP-928 Reliable Job Startup, interfaces 1, 5, 6, 7 and 8).
Install it for the events ``queuejob,execjob_launch``; it is configured only through its
hook config file (``pbs.hook_config_filename``), a JSON object:

    tolerate               "job_start" | "all": the ``tolerate_node_failures`` value given
                           to jobs that do not carry one (interface 1). Default "job_start".
    increment              chunks added to every chunk of the select except the primary
                           mom's single chunk (interface 7): an int >= 1, a numeric string
                           "N" or "N%" (N >= 1), or a map {"<chunk index>": increment}
                           where chunks not named in the map are not padded. Default 1.
    keep_select_resource   the builtin resource that keeps the job's original select
                           (only builtin resources reach the mom). Default "site".
    queues                 names of the queues whose jobs are padded; [] means every
                           queue. A job submitted without -q is matched by the server's
                           default_queue. Default [].
    offline_failed_vnodes  at launch, set the vnodes of failed sisters
                           (``vnode_list_fail``, interface 5) offline. Default true.
    record_failed_moms     at launch, after pruning, write the sister moms that failed
                           to join or start the job, the hosts released, the chunks released
                           and the time to the job's ``accounting_id`` as
                           ``rjs_failed=<host>,<host>/released=<host>,<host>/chunks=<n>/at=<epoch>``
                           (``rjs_failed=/...`` when none failed), which the server writes
                           into the job's later accounting records (``e``, ``E``, ``R``) for
                           hpc.pbs.accounting_report. A job whose accounting_id holds
                           another value keeps it. Default true.

queuejob: a job of a matching queue that has a select gets ``tolerate_node_failures``
(unless it already has a value: an explicit value is kept; an explicit "none" opts the job
out of padding altogether), its original select saved as a string in
``Resource_List[keep_select_resource]``, and its select padded. A job without a select
(e.g. only ``-l ncpus=2``) is left alone.

execjob_launch: on the primary mom, for the top-level launch only (``PBS_NODEFILE`` in the
environment), offline the failed vnodes, then ``release_nodes(keep_select=<saved select>)``
(interface 8). When that cannot be satisfied by healthy nodes, the job gets a system hold,
is requeued and the event is rejected, saying why. A failed sister is a host of the job's
exec_host in ``failed_mom_list`` or missing from ``succeeded_mom_list``: real OpenPBS puts
a sister that never joined in neither list.

A config file that is not valid JSON or breaks the rules above makes the hook reject the
event with a message naming the file and the problem; at execjob_launch the job is also
held (``s``) and requeued so that it is not lost while the config is fixed.

Whatever ``release_nodes()`` returns is kept referenced until the hook ends
(``RELEASE_NODES_RESULTS``): pbs_python returns the job without taking a reference to it,
so a dropped result frees the job under ``pbs.event()`` and pbs_python crashes as the hook
ends (exit 139), the mom then discarding everything the hook did (no pruning).
"""
import time

import pbs

try:  # the json module's own C scanner, without importing json and re (about 7 ms of CPU
    # in a fresh pbs_python, again each time pbs_server restarts its interpreter)
    from _json import make_scanner as _make_json_scanner
except ImportError:  # an interpreter without the accelerator: the json module then
    _make_json_scanner = None

DEFAULT_CONFIG = {
    "tolerate": "job_start",
    "increment": 1,
    "keep_select_resource": "site",
    "queues": [],
    "offline_failed_vnodes": True,
    "record_failed_moms": True,
}
FAILED_MOMS_PREFIX = "rjs_failed="
TOLERATE_VALUES = ("job_start", "all")
# No re module (json's parser imports it too): importing it costs more than the rest of the
# hook.
DIGITS = "0123456789"
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
RESOURCE_NAME_CHARS = LETTERS + DIGITS + "_-"
# Resources that PBS itself computes from or for the select: saving the select there
# would destroy the job's request.
RESERVED_RESOURCES = ("select", "place", "nodes", "nodect", "ncpus", "mem")
DEFAULT_HOOK_NAME = "reliable_job_startup"
# Every object release_nodes() returned during this run. OpenPBS's release_nodes() hands
# back the job as a borrowed reference (no Py_INCREF): were it dropped when a function
# returns, the job would be freed while pbs.event() still points at it, and pbs_python
# would segfault writing the hook's results. This module-level list lives until the hook
# has ended. Only release_nodes_kept() calls release_nodes().
RELEASE_NODES_RESULTS = []


class ConfigError(ValueError):
    """The hook config file is unreadable or breaks the documented rules."""


def hook_name(event):
    return getattr(event, "hook_name", None) or DEFAULT_HOOK_NAME


def is_whole_number(text):
    """True for one or more ASCII digits."""
    return bool(text) and not text.strip(DIGITS)


def is_resource_name(text):
    """True for a letter then letters, digits, ``_`` or ``-``."""
    return bool(text) and text[0] in LETTERS and not text.strip(RESOURCE_NAME_CHARS)


class _JsonContext:
    """What the C scanner of ``json.decoder`` reads from its decoder: the settings of
    ``json.loads`` (strict strings, plain dicts, floats, ints, NaN and Infinity as floats)."""
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float


def parse_json(text):
    """``json.loads(text)``; the json module is imported only when the text is not valid
    JSON (for its message) or the C scanner is missing."""
    if _make_json_scanner is not None:
        scan = _make_json_scanner(_JsonContext)
        start = len(text) - len(text.lstrip(" \t\n\r"))
        try:
            value, end = scan(text, start)
        except StopIteration:
            value, end = None, -1
        if end == len(text.rstrip(" \t\n\r")) and end > start:
            return value
    import json  # pylint: disable=import-outside-toplevel
    return json.loads(text)


def check_increment(value, where):
    """Validate one increment (int >= 1, "N" or "N%" with N >= 1) and return it; a whole
    float (``2.0``: JSON, and so the config's schema, does not tell it from ``2``) comes
    back as that int. Raise ConfigError."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ConfigError("%s must be an integer >= 1 or a string \"N\" or \"N%%\", not %r" % (where, value))
    if isinstance(value, int):
        if value < 1:
            raise ConfigError("%s must be >= 1, not %d" % (where, value))
        return value
    number = value[:-1] if value.endswith("%") else value
    if not is_whole_number(number):
        raise ConfigError("%s %r is neither a whole number \"N\" nor a percentage \"N%%\"" % (where, value))
    if int(number) < 1:
        raise ConfigError("%s %r must be at least 1" % (where, value))
    return value


def check_config(config):
    """Validate a parsed config (the rules of reliable_job_startup.schema.json) and return
    it with the defaults filled in. Raises ConfigError naming the offending key."""
    if not isinstance(config, dict):
        raise ConfigError("the config must be a JSON object, not %s" % type(config).__name__)
    unknown = sorted(set(config) - set(DEFAULT_CONFIG))
    if unknown:
        raise ConfigError("unknown key(s) %s; known keys: %s" % (", ".join(unknown), ", ".join(sorted(DEFAULT_CONFIG))))
    merged = dict(DEFAULT_CONFIG)
    merged.update(config)
    if merged["tolerate"] not in TOLERATE_VALUES:
        raise ConfigError("tolerate must be one of %s, not %r" % (", ".join(TOLERATE_VALUES), merged["tolerate"]))
    increment = merged["increment"]
    if isinstance(increment, dict):
        if not increment:
            raise ConfigError("increment map is empty")
        checked = {}
        for index, value in increment.items():
            if not is_whole_number(str(index)):
                raise ConfigError("increment map key %r is not a chunk index (0, 1, ...)" % (index,))
            checked[index] = check_increment(value, "increment[%s]" % index)
        merged["increment"] = checked
    else:
        merged["increment"] = check_increment(increment, "increment")
    resource = merged["keep_select_resource"]
    if not isinstance(resource, str) or not is_resource_name(resource):
        raise ConfigError("keep_select_resource %r is not a resource name" % (resource,))
    if resource in RESERVED_RESOURCES:
        raise ConfigError("keep_select_resource may not be %r: PBS computes it from the select" % resource)
    queues = merged["queues"]
    if not isinstance(queues, list) or not all(isinstance(q, str) and q for q in queues):
        raise ConfigError("queues must be a list of queue names, not %r" % (queues,))
    for key in ("offline_failed_vnodes", "record_failed_moms"):
        if not isinstance(merged[key], bool):
            raise ConfigError("%s must be true or false, not %r" % (key, merged[key]))
    return merged


def load_config():
    """Read and validate ``pbs.hook_config_filename``; the defaults when there is none.

    Returns ``(config dict, path or None)``; raises ConfigError with the path in it."""
    path = getattr(pbs, "hook_config_filename", None)
    if not path:
        return dict(DEFAULT_CONFIG), None
    try:
        with open(path) as handle:
            text = handle.read()
    except (IOError, OSError) as err:
        raise ConfigError("cannot read config file %s: %s" % (path, err))
    try:
        parsed = parse_json(text)
    except ValueError as err:
        raise ConfigError("config file %s is not valid JSON: %s" % (path, err))
    try:
        return check_config(parsed), path
    except ConfigError as err:
        raise ConfigError("config file %s: %s" % (path, err))


def increment_spec_for(config, select_text):
    """The argument for ``pbs.select.increment_chunks()``.

    A map gets int keys (PBS never finds string keys) and an entry for every chunk of
    ``select_text``: PBS raises on a chunk the map does not name, and an unnamed chunk
    here means "do not pad it"."""
    increment = config["increment"]
    if not isinstance(increment, dict):
        return increment
    wanted = dict((int(index), value) for index, value in increment.items())
    chunk_count = len(select_text.split("+"))
    return dict((index, wanted.get(index, 0)) for index in range(chunk_count))


def job_queue_name(job):
    queue = getattr(job, "queue", None)
    if queue is None:
        return ""
    name = getattr(queue, "name", None)
    return str(name if name is not None else queue)


def server_default_queue():
    try:
        queue = pbs.server().default_queue
    except Exception:  # no server object in this context: nothing to match against
        return ""
    if queue is None:
        return ""
    name = getattr(queue, "name", None)
    return str(name if name is not None else queue)


def queue_matches(config, job):
    if not config["queues"]:
        return True
    return (job_queue_name(job) or server_default_queue()) in config["queues"]


def on_queuejob(event, config):
    job = event.job
    name = hook_name(event)
    if not queue_matches(config, job):
        pbs.logmsg(pbs.LOG_DEBUG, "%s: queue %r is not in %s, job left alone"
                   % (name, job_queue_name(job) or server_default_queue(), config["queues"]))
        return
    select = job.Resource_List["select"]
    if select is None:
        pbs.logmsg(pbs.LOG_DEBUG, "%s: job has no select, left alone" % name)
        return
    tolerate = job.tolerate_node_failures
    tolerate = str(tolerate) if tolerate is not None else ""
    if tolerate == "none":
        pbs.logmsg(pbs.LOG_DEBUG, "%s: job asked for tolerate_node_failures=none, not padded" % name)
        return
    if not tolerate:
        job.tolerate_node_failures = config["tolerate"]
    original = with_explicit_counts(str(select))
    resource = config["keep_select_resource"]
    job.Resource_List[resource] = original
    try:
        padded = select.increment_chunks(increment_spec_for(config, original))
    except Exception as err:
        event.reject("%s: cannot pad select %s with increment %r: %s"
                     % (name, original, config["increment"], err))
        return
    job.Resource_List["select"] = padded
    pbs.logmsg(pbs.LOG_DEBUG, "%s: select %s padded to %s, original kept in Resource_List.%s, tolerate_node_failures=%s"
               % (name, original, padded, resource, job.tolerate_node_failures))


def with_explicit_counts(select):
    """``ncpus=1+2:ncpus=1`` -> ``1:ncpus=1+2:ncpus=1``: the saved select spells every
    chunk count, as PP-928's ``Resource_List.site`` example does and as release_nodes()'s
    schedselect will, so the saved and the pruned select compare equal."""
    chunks = []
    for chunk in select.split("+"):
        head = chunk.split(":", 1)[0]
        chunks.append(chunk if head.isdigit() else "1:" + chunk)
    return "+".join(chunks)


def offline_failed_vnodes(event, job_id):
    """Offline every vnode of ``event.vnode_list_fail``; return their names, sorted."""
    failed = sorted(event.vnode_list_fail.keys())
    for vnode_name in failed:
        vnode = event.vnode_list_fail[vnode_name]
        vnode.state = pbs.ND_OFFLINE
        vnode.comment = "offlined by hook '%s': its mom failed to start job %s" % (hook_name(event), job_id)
        pbs.logjobmsg(job_id, "%s: offlined failed vnode %s" % (hook_name(event), vnode_name))
    return failed


def release_nodes_kept(job, keep_select):
    """``job.release_nodes(keep_select=keep_select)``, its result (the pruned job, or None)
    kept in RELEASE_NODES_RESULTS until the hook ends; returns that result."""
    result = job.release_nodes(keep_select=keep_select)
    RELEASE_NODES_RESULTS.append(result)
    return result


def vnode_host(vnode):
    """The mom host of a vnode name: ``mom1`` of ``mom1``, ``mom1[0]``, ``mom1.site:15002``.
    (A mom hook's vnodes carry no ``resources_available.host`` and its job no exec_host
    before pruning: the name is all there is.)"""
    return str(vnode).split("[", 1)[0].split(":", 1)[0].split(".", 1)[0]


def parenthesized(text):
    """The texts inside the innermost parentheses, in order (``re.findall(r"\\(([^()]*)\\)",
    text)`` without the re module)."""
    groups, start = [], None
    for index, char in enumerate(text):
        if char == "(":
            start = index + 1
        elif char == ")" and start is not None:
            groups.append(text[start:index])
            start = None
    return groups


def chunk_hosts(exec_vnode):
    """``(mom1:ncpus=1)+(mom2[0]:ncpus=1+mom2[1]:ncpus=1)`` -> (chunk count, hosts in order)."""
    chunks = parenthesized(str(exec_vnode or ""))
    hosts = []
    for chunk in chunks:
        for piece in chunk.split("+"):
            host = vnode_host(piece.split(":", 1)[0])
            if host and host not in hosts:
                hosts.append(host)
    return len(chunks), hosts


def failed_moms(job, hosts):
    """Sister hosts of ``hosts`` (the job's before pruning, the primary first) that failed at
    the job's start: in ``job.failed_mom_list`` (a sister that answered with an error) or
    missing from ``job.succeeded_mom_list`` (real OpenPBS lists a sister that never joined
    in neither); sorted."""
    reported = set(vnode_host(h) for h in (getattr(job, "failed_mom_list", None) or []))
    joined = set(vnode_host(h) for h in (getattr(job, "succeeded_mom_list", None) or []))
    return sorted(h for h in hosts[1:] if h in reported or h not in joined)


def record_text(failed, released, chunks, when):
    """The accounting_id value: ``rjs_failed=<hosts>/released=<hosts>/chunks=<n>/at=<epoch>``."""
    return "%s%s/released=%s/chunks=%d/at=%d" % (FAILED_MOMS_PREFIX, ",".join(failed), ",".join(released),
                                                 chunks, int(when))


def record_failed_moms(job, job_id, name, text):
    """``job.accounting_id = text`` unless the job's accounting_id holds another value."""
    current = job.accounting_id
    current = str(current) if current is not None else ""
    if current and not current.startswith(FAILED_MOMS_PREFIX):
        pbs.logjobmsg(job_id, "%s: accounting_id %r kept, failed moms not recorded" % (name, current))
        return
    job.accounting_id = text


def hold_and_requeue(event, message):
    """Give the job a system hold, requeue it and reject the event with ``message``."""
    event.job.Hold_Types = pbs.hold_types("s")
    event.job.rerun()
    event.reject(message)


def is_job_launch(event):
    """True for the primary mom launching the job itself; False for tasks that pbsdsh or
    tm_spawn start (their environment has no PBS_NODEFILE) and on sister moms."""
    return bool(event.job.in_ms_mom()) and "PBS_NODEFILE" in event.env


def on_execjob_launch(event, config):
    job = event.job
    name = hook_name(event)
    job_id = job.id
    resource = config["keep_select_resource"]
    keep_select = job.Resource_List[resource]
    if keep_select is None or not str(keep_select):
        pbs.logjobmsg(job_id, "%s: no Resource_List.%s, job was not padded, nothing to prune" % (name, resource))
        return
    keep_select = str(keep_select)
    tolerate = job.tolerate_node_failures
    if str(tolerate) not in TOLERATE_VALUES:
        pbs.logjobmsg(job_id, "%s: tolerate_node_failures=%s, release_nodes() would not prune: left as is"
                      % (name, tolerate))
        return
    failed = sorted(event.vnode_list_fail.keys())
    if failed and config["offline_failed_vnodes"]:
        offline_failed_vnodes(event, job_id)
    chunks_before, hosts_before = chunk_hosts(job.exec_vnode)
    moms_failed = failed_moms(job, hosts_before)
    pruned = release_nodes_kept(job, keep_select)
    if pruned is None:
        hold_and_requeue(event, "%s: could not prune job %s back to its original select %s: not enough healthy nodes "
                                "(failed vnodes: %s); job held (s) and requeued"
                         % (name, job_id, keep_select, ", ".join(failed) or "none"))
        return
    pbs.logjobmsg(job_id, "%s: pruned to select %s, exec_vnode=%s (failed vnodes: %s)"
                  % (name, keep_select, pruned.exec_vnode, ", ".join(failed) or "none"))
    if config["record_failed_moms"]:
        chunks_after, hosts_after = chunk_hosts(pruned.exec_vnode)
        released = [h for h in hosts_before if h not in hosts_after]
        record_failed_moms(job, job_id, name, record_text(
            moms_failed, released, max(chunks_before - chunks_after, 0), time.time()))


def main():
    event = pbs.event()
    handlers = {pbs.QUEUEJOB: on_queuejob, pbs.EXECJOB_LAUNCH: on_execjob_launch}
    handler = handlers.get(event.type)
    if handler is None:
        return
    if event.type == pbs.EXECJOB_LAUNCH and not is_job_launch(event):
        return
    try:
        config, _path = load_config()
    except ConfigError as err:
        message = "%s: %s" % (hook_name(event), err)
        pbs.logmsg(pbs.LOG_ERROR, message)
        if event.type == pbs.EXECJOB_LAUNCH:
            hold_and_requeue(event, message)
        else:
            event.reject(message)
        return
    handler(event, config)


if __name__ == "builtins":
    main()
