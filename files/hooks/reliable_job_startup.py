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

pbs_server runs every queuejob event in one long-lived interpreter: there the hook keeps the
last config that passed its checks (and its ConfigError class) in the module object
``sys.modules["_reliable_job_startup_state"]`` (:func:`hook_state`) and reads the config
file on every event, but parses and checks it again only when the file's path or text, or
the hook body, changed.

Whatever ``release_nodes()`` returns is kept referenced until the hook ends
(``RELEASE_NODES_RESULTS``): pbs_python returns the job without taking a reference to it,
so a dropped result frees the job under ``pbs.event()`` and pbs_python crashes as the hook
ends (exit 139), the mom then discarding everything the hook did (no pruning).
"""
import sys
import time

import pbs

try:  # the json module's own C scanner, without importing json and re (about 7 ms of CPU
    # in a fresh pbs_python, again each time pbs_server restarts its interpreter)
    from _json import make_scanner as _make_json_scanner
except ImportError:  # an interpreter without the accelerator: the json module then
    _make_json_scanner = None

FAILED_MOMS_PREFIX = "rjs_failed="
TOLERATE_VALUES = ("job_start", "all")
DEFAULT_HOOK_NAME = "reliable_job_startup"
HOOK_STATE_MODULE = "_reliable_job_startup_state"
# Every object release_nodes() returned during this run. OpenPBS's release_nodes() hands
# back the job as a borrowed reference (no Py_INCREF): were it dropped when a function
# returns, the job would be freed while pbs.event() still points at it, and pbs_python
# would segfault writing the hook's results. This module-level list lives until the hook
# has ended. Only release_nodes_kept() calls release_nodes().
RELEASE_NODES_RESULTS = []


# No re module (json's parser imports it too): importing it costs more than the rest of the
# hook. The generated validator below reads the schema's patterns itself.
# BEGIN GENERATED SCHEMA: written by tools/hooks_embed.py --write from reliable_job_startup.schema.json,
# reliable_job_startup.json and tools/hook_config_validator.py. Edit those and run it again, not this block.
CONFIG_SCHEMA = {
    'type': 'object',
    'additionalProperties': False,
    'properties': {
        'tolerate': {
            'enum': ['job_start', 'all'],
        },
        'increment': {
            'anyOf': [
                {
                    'anyOf': [
                        {
                            'type': 'integer',
                            'minimum': 1,
                        },
                        {
                            'type': 'string',
                            'pattern': '^0*[1-9][0-9]*%?$',
                            'x-must-be': 'a whole number "N" or a percentage "N%" with N >= 1',
                        },
                    ],
                    'x-must-be': 'an integer >= 1 or a string "N" or "N%"',
                },
                {
                    'type': 'object',
                    'minProperties': 1,
                    'propertyNames': {
                        'pattern': '^[0-9]+$',
                        'x-must-be': 'a chunk index (0, 1, ...)',
                    },
                    'additionalProperties': {
                        'anyOf': [
                            {
                                'type': 'integer',
                                'minimum': 1,
                            },
                            {
                                'type': 'string',
                                'pattern': '^0*[1-9][0-9]*%?$',
                                'x-must-be': 'a whole number "N" or a percentage "N%" with N >= 1',
                            },
                        ],
                        'x-must-be': 'an integer >= 1 or a string "N" or "N%"',
                    },
                },
            ],
            'x-must-be': 'an integer >= 1 or a string "N" or "N%", or a map {"<chunk index>": increment}',
        },
        'keep_select_resource': {
            'type': 'string',
            'pattern': '^[A-Za-z][A-Za-z0-9_-]*$',
            'not': {
                'enum': ['select', 'place', 'nodes', 'nodect', 'ncpus', 'mem'],
            },
            'x-must-be': 'a resource name (a letter, then letters, digits, _ or -)',
        },
        'queues': {
            'type': 'array',
            'items': {
                'type': 'string',
                'minLength': 1,
                'x-must-be': 'a queue name',
            },
            'uniqueItems': True,
            'x-must-be': 'a list of queue names',
        },
        'offline_failed_vnodes': {
            'type': 'boolean',
        },
        'record_failed_moms': {
            'type': 'boolean',
        },
    },
}
DEFAULT_CONFIG = {
    'tolerate': 'job_start',
    'increment': 1,
    'keep_select_resource': 'site',
    'queues': [],
    'offline_failed_vnodes': True,
    'record_failed_moms': True,
}


_SCHEMA_TYPE_WORDS = {"integer": "an integer", "number": "a number", "string": "a string",
                      "boolean": "true or false", "array": "a list", "object": "a JSON object",
                      "null": "null"}


def _schema_type_fits(value, kind):
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer())
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, {"string": str, "boolean": bool, "array": list, "object": dict,
                              "null": type(None)}[kind])


def _schema_json_key(value):
    if isinstance(value, bool) or value is None:
        return (type(value).__name__, value)
    if isinstance(value, (int, float)):
        return ("number", value)
    if isinstance(value, list):
        return ("array", tuple(_schema_json_key(item) for item in value))
    if isinstance(value, dict):
        return ("object", tuple(sorted((key, _schema_json_key(item)) for key, item in value.items())))
    return (type(value).__name__, value)


_SCHEMA_PATTERNS = {
    '^0*[1-9][0-9]*%?$': ((('^', 1, 1, 's00', 0, None, 's19', 1, 1, 's09', 0, None, 's%%', 0, 1, '$', 1, 1),), 1, 1),
    '^[0-9]+$': ((('^', 1, 1, 's09', 1, None, '$', 1, 1),), 1, 1),
    '^[A-Za-z][A-Za-z0-9_-]*$': ((('^', 1, 1, 'sAZaz', 1, 1, 'sAZaz09__--', 0, None, '$', 1, 1),), 1, 1),
}


def _pattern_ends(sequence, position, text, start, count):
    if position == len(sequence):
        yield start
        return
    node, low, high = sequence[position:position + 3]
    if high is None or count < high:
        for end in _pattern_node_ends(node, text, start):
            if end != start or count < low:
                yield from _pattern_ends(sequence, position, text, end, count + 1)
    if count >= low:
        yield from _pattern_ends(sequence, position + 3, text, start, 0)


def _pattern_node_ends(node, text, start):
    if node.__class__ is tuple:
        for alternative in node:
            yield from _pattern_ends(alternative, 0, text, start, 0)
    elif node == "^":
        if start == 0:
            yield start
    elif node == "$":
        if start == len(text) or (start == len(text) - 1 and text[start] == "\n"):
            yield start
    elif start < len(text):
        char = text[start]
        if node == ".":
            if char != "\n":
                yield start + 1
        elif (node[0] == "n") != any(node[index] <= char <= node[index + 1] for index in range(1, len(node), 2)):
            yield start + 1


def schema_pattern_search(pattern, text):
    for start in range(len(text) + 1):
        for _unused in _pattern_ends(_SCHEMA_PATTERNS[pattern], 0, text, start, 0):
            return True
    return False


def _schema_path(path, key):
    if isinstance(key, int):
        return "%s[%d]" % (path, key)
    return "%s.%s" % (path, key) if path else key


def _schema_fits_type(value, schema, root):
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not any(_schema_type_fits(value, kind) for kind in kinds):
            return False
    if "anyOf" in schema:
        return any(_schema_fits_type(value, branch, root) for branch in schema["anyOf"])
    return True


def schema_problems(value, schema, root=None, path=""):
    root = schema if root is None else root
    name = path or "the config"
    shown = repr(value) if path else type(value).__name__

    def must_be(words):
        return ["%s must be %s, not %s" % (name, schema.get("x-must-be", words), shown)]

    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not any(_schema_type_fits(value, kind) for kind in kinds):
            return must_be(" or ".join(_SCHEMA_TYPE_WORDS[kind] for kind in kinds))
    if "enum" in schema and _schema_json_key(value) not in [_schema_json_key(item) for item in schema["enum"]]:
        return must_be("one of %s" % ", ".join(str(item) for item in schema["enum"]))
    problems = []
    if "anyOf" in schema:
        fitting = [branch for branch in schema["anyOf"] if _schema_fits_type(value, branch, root)]
        if not fitting:
            return must_be(" or ".join(_schema_branch_words(branch, root) for branch in schema["anyOf"]))
        branch_problems = [schema_problems(value, branch, root, path) for branch in fitting]
        if all(branch_problems):
            problems += branch_problems[0]
    if "not" in schema and not schema_problems(value, schema["not"], root, path):
        if "x-must-be" in schema and not ("enum" in schema["not"] or "const" in schema["not"]):
            problems += must_be("")
        else:
            problems.append("%s may not be %s" % (name, shown))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            problems += must_be(">= %s" % schema["minimum"])
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            problems += must_be("at least %d character(s) long" % schema["minLength"])
        if "pattern" in schema and not schema_pattern_search(schema["pattern"], value):
            problems += must_be("a string matching %s" % schema["pattern"])
    if isinstance(value, list):
        if schema.get("uniqueItems"):
            seen = []
            for item in value:
                if _schema_json_key(item) in seen:
                    problems.append("%s may not repeat %r" % (name, item))
                    break
                seen.append(_schema_json_key(item))
        if "items" in schema:
            for index, item in enumerate(value):
                problems += schema_problems(item, schema["items"], root, _schema_path(path, index))
    if isinstance(value, dict):
        known = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        unknown = sorted(key for key in value if key not in known)
        if extra is False and unknown:
            problems.append("%sunknown key(s) %s; known keys: %s"
                            % (path + " has " if path else "", ", ".join(unknown), ", ".join(sorted(known))))
        if len(value) < schema.get("minProperties", 0):
            problems += must_be("a map of at least %d key(s)" % schema["minProperties"])
        names = schema.get("propertyNames")
        for key in sorted(value):
            if names is not None and schema_problems(key, names, root, "key"):
                problems.append("%s map key %r is not %s" % (
                    name, key, names.get("x-must-be", "a string matching %s" % names.get("pattern"))))
            if key in known:
                problems += schema_problems(value[key], known[key], root, _schema_path(path, key))
            elif isinstance(extra, dict):
                problems += schema_problems(value[key], extra, root, _schema_path(path, key))
    return problems


def _schema_branch_words(schema, root):
    if "x-must-be" in schema:
        return schema["x-must-be"]
    if "anyOf" in schema:
        return " or ".join(_schema_branch_words(branch, root) for branch in schema["anyOf"])
    kinds = schema.get("type", ())
    kinds = [kinds] if isinstance(kinds, str) else kinds
    return " or ".join(_SCHEMA_TYPE_WORDS[kind] for kind in kinds) or "another value"
# END GENERATED SCHEMA


def hook_state():
    """What this hook keeps from one event to the next where its interpreter outlives an
    event: pbs_server runs every event of a hook in one long-lived interpreter, compiling the
    hook once (again when its file changes) but running its module body in a fresh namespace
    each time; only ``sys.modules`` outlives an event. A module object there holds, for this
    compiled code (``code``; a changed hook body starts afresh), ``ConfigError`` (a class
    made once: making an exception class was about a third of running the module body) and
    ``checked``: the last config that passed :func:`check_config` as ``(path, text,
    config)``, or None. On OpenPBS 23.06.06 the hook's own cost per qsub went from 0.21-0.23
    to 0.11-0.15 ms. pbs_python, which runs each event of a mom in a new process, starts
    empty."""
    state = sys.modules.get(HOOK_STATE_MODULE)
    if state is None or state.code is not hook_state.__code__:
        class ConfigError(ValueError):
            """The hook config file is unreadable or breaks the documented rules."""
        state = type(sys)(HOOK_STATE_MODULE)
        state.code, state.ConfigError, state.checked = hook_state.__code__, ConfigError, None
        sys.modules[HOOK_STATE_MODULE] = state
    return state


STATE = hook_state()
ConfigError = STATE.ConfigError


def hook_name(event):
    return getattr(event, "hook_name", None) or DEFAULT_HOOK_NAME


def parse_json(text):
    """``json.loads(text)``; the json module is imported only when the text is not valid
    JSON (for its message) or the C scanner is missing. Raises ValueError (JSONDecodeError)
    for a text that is not JSON."""
    if _make_json_scanner is not None:
        class _JsonContext:  # what the C scanner reads from json.loads's decoder
            strict = True
            object_hook = object_pairs_hook = None
            parse_float = parse_constant = float
            parse_int = int
        scan = _make_json_scanner(_JsonContext)
        start = len(text) - len(text.lstrip(" \t\n\r"))
        try:
            value, end = scan(text, start)
        except (StopIteration, ValueError, SystemError):
            # Not JSON. CPython 3.10 and 3.11's scanner raises SystemError, not its
            # JSONDecodeError, while json.decoder is not imported, as in pbs_python:
            # json.loads below gives the message.
            value, end = None, -1
        if end == len(text.rstrip(" \t\n\r")) and end > start:
            return value
    import json  # pylint: disable=import-outside-toplevel
    try:
        return json.loads(text)
    except ValueError as err:
        if len(err.args) != 3:
            raise
        # On OpenPBS 22.05.11 (CPython 3.6), once pbs_server has restarted its interpreter,
        # the C scanner's error holds only its arguments (message, text, offset): the
        # message JSONDecodeError would have made of them.
        message, _text, offset = err.args
        raise ValueError("%s: line %d column %d (char %d)" % (
            message, text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset), offset))


def whole_increment(value):
    """An increment as the hook uses it: a whole float (``2.0``: JSON, and so the config's
    schema, does not tell it from ``2``) as that int, anything else as it is."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def check_config(config):
    """Validate a parsed config against CONFIG_SCHEMA (reliable_job_startup.schema.json) and
    return it with the defaults (DEFAULT_CONFIG) filled in and whole float increments as
    ints. Raises ConfigError naming every offending key."""
    problems = schema_problems(config, CONFIG_SCHEMA)
    if problems:
        raise ConfigError("; ".join(problems))
    merged = dict(DEFAULT_CONFIG)
    merged.update(config)
    increment = merged["increment"]
    if isinstance(increment, dict):
        merged["increment"] = dict((index, whole_increment(value)) for index, value in increment.items())
    else:
        merged["increment"] = whole_increment(increment)
    return merged


def load_config():
    """Read and validate ``pbs.hook_config_filename``; the defaults when there is none.

    Returns ``(config dict, path or None)``; raises ConfigError with the path in it."""
    path = getattr(pbs, "hook_config_filename", None)
    if not path:
        return dict(DEFAULT_CONFIG), None
    try:
        # JSON is UTF-8; pbs_python's own default is the locale's (ASCII under the C locale
        # of CPython 3.6). A file that is not UTF-8 raises UnicodeDecodeError, a ValueError.
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (IOError, OSError, ValueError) as err:
        raise ConfigError("cannot read config file %s: %s" % (path, err))
    if STATE.checked is not None and STATE.checked[:2] == (path, text):
        return dict(STATE.checked[2]), path
    try:
        parsed = parse_json(text)
    except ValueError as err:
        raise ConfigError("config file %s is not valid JSON: %s" % (path, err))
    try:
        config = check_config(parsed)
    except ConfigError as err:
        raise ConfigError("config file %s: %s" % (path, err))
    STATE.checked = (path, text, config)
    return dict(config), path


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
