"""Cray ATOM: register each job with the node's ATOM service at start, remove it at end.

A plain PBS hook, the bundled equivalent of the built-in ``PBS_cray_atom`` pbshook (PBS Design
Changes for Shasta, its ATOM hook) for PBS versions that lack it. Install it as a site hook
(its name may not begin with ``PBS``) with the design's attributes: events
``execjob_begin,execjob_end``, order 100, alarm 300, ``fail_action=offline_vnodes``, user
``pbsadmin``. It needs the Python modules ``requests`` and ``requests_unixsocket`` (the design's
"Authentication and the mandatory Python modules").

Config (``pbs.hook_config_filename``, a JSON object; a missing file means the defaults):

    post_timeout      seconds (number > 0) a POST may take. Default 30.
    delete_timeout    seconds (number > 0) a DELETE may take. Default 30.
    unix_socket_file  absolute path of the ATOM service's UNIX socket.
                      Default "/var/run/atomd/atomd.sock".
    require_socket    true: a missing socket file is a failure; false (default): the
                      hook logs it and accepts, as the built-in hook does.

The version prefix ``/rm/v1`` is internal and cannot be changed by the config ("Forming
the URIs"). URLs are ``http+unix://<percent-encoded socket path>/rm/v1/jobs`` and
``.../rm/v1/jobs/<percent-encoded job id>``.

execjob_begin: ``POST /rm/v1/jobs`` with ``{"jobid", "uid" (the job's euser), "exclusive"}``.
200 accepts. 400 (the job may be registered already): ``DELETE`` it (any answer below
400, and 404, are fine) and POST once more, which must answer 200. Anything else - another code, a timeout
(``post_timeout``), a refused or dropped connection, an unknown euser - makes the hook
fail with :class:`AtomRegistrationError`: an unhandled exception is a hook *error* to PBS,
which is what applies ``fail_action=offline_vnodes`` (an explicit ``reject()`` would not
offline anything), so the mom's vnodes go offline and the job start fails on this node.
The hook's alarm ends it the same way.

execjob_end: ``DELETE /rm/v1/jobs/<jobid>``; 204 accepts, a timeout (``delete_timeout``),
a connection failure or another code rejects the event (nothing is offlined: the node may
be fixed before the next job, whose POST would then find the problem).

Every answer of the service is logged with its code and whole body at the default log
level. A config file that is unreadable, not JSON or breaks the rules above makes the
hook reject the event with a log line naming the file and the problem.

``exclusive`` follows the scheduler's rule (PBS Reference Guide, vnode ``sharing`` against
the job's ``place``): sharing ``force_excl``/``force_exclhost`` -> true; ``ignore_excl`` ->
false; otherwise a place with ``excl``/``exclhost`` -> true, with ``shared`` -> false;
otherwise sharing ``default_excl``/``default_exclhost`` -> true, ``default_shared`` or
unset -> false. The vnodes considered are the job's vnodes on this host; the job is
exclusive here when any of them says so.
"""
import json
import os
import pwd
import site
import urllib.parse

import pbs

VERSION_URI = "/rm/v1"
DEFAULT_HOOK_NAME = "cray_atom"
SHARING_VALUES = ("default_shared", "default_excl", "default_exclhost", "ignore_excl", "force_excl",
                  "force_exclhost")
FORCED_EXCLUSIVE = ("force_excl", "force_exclhost")
DEFAULT_EXCLUSIVE = ("default_excl", "default_exclhost")


# BEGIN GENERATED SCHEMA: written by tools/hooks_embed.py --write from cray_atom.schema.json,
# cray_atom.json and tools/hook_config_validator.py. Edit those and run it again, not this block.
CONFIG_SCHEMA = {
    'type': 'object',
    'additionalProperties': False,
    'properties': {
        'post_timeout': {
            'type': 'number',
            'exclusiveMinimum': 0,
            'x-must-be': 'a number of seconds > 0',
        },
        'delete_timeout': {
            'type': 'number',
            'exclusiveMinimum': 0,
            'x-must-be': 'a number of seconds > 0',
        },
        'unix_socket_file': {
            'type': 'string',
            'pattern': '^/[^\\u0000]*$',
            'x-must-be': 'an absolute path',
        },
        'require_socket': {
            'type': 'boolean',
        },
    },
}
DEFAULT_CONFIG = {
    'require_socket': False,
    'post_timeout': 30,
    'delete_timeout': 30,
    'unix_socket_file': '/var/run/atomd/atomd.sock',
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


_SCHEMA_PATTERNS = {
    '^/[^\\u0000]*$': ((('^', 1, 1, 's//', 1, 1, 'n\x00\x00', 0, None, '$', 1, 1),), 1, 1),
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
    problems = []
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            problems += must_be("> %s" % schema["exclusiveMinimum"])
    if isinstance(value, str):
        if "pattern" in schema and not schema_pattern_search(schema["pattern"], value):
            problems += must_be("a string matching %s" % schema["pattern"])
    if isinstance(value, dict):
        known = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        unknown = sorted(key for key in value if key not in known)
        if extra is False and unknown:
            problems.append("%sunknown key(s) %s; known keys: %s"
                            % (path + " has " if path else "", ", ".join(unknown), ", ".join(sorted(known))))
        for key in sorted(value):
            if key in known:
                problems += schema_problems(value[key], known[key], root, _schema_path(path, key))
            elif isinstance(extra, dict):
                problems += schema_problems(value[key], extra, root, _schema_path(path, key))
    return problems
# END GENERATED SCHEMA


class ConfigError(ValueError):
    """The hook config file is unreadable or breaks the documented rules."""


class AtomRegistrationError(RuntimeError):
    """The job could not be registered with ATOM at execjob_begin (a hook error on purpose,
    so that PBS applies the hook's fail_action)."""


class AtomRequestFailed(Exception):
    """One request got no usable answer (timeout, refused or dropped connection)."""


def hook_name(event):
    return getattr(event, "hook_name", None) or DEFAULT_HOOK_NAME


# ---------------------------------------------------------------- config
def check_config(config):
    """Validate a parsed config against CONFIG_SCHEMA (cray_atom.schema.json) and return it
    with the defaults (DEFAULT_CONFIG) filled in. Raises ConfigError naming every offending
    key."""
    problems = schema_problems(config, CONFIG_SCHEMA)
    if problems:
        raise ConfigError("; ".join(problems))
    merged = dict(DEFAULT_CONFIG)
    merged.update(config)
    return merged


def load_config():
    """Read and validate ``pbs.hook_config_filename``; the defaults when there is none.

    Returns the config dict; raises ConfigError with the path in the message."""
    path = getattr(pbs, "hook_config_filename", None)
    if not path:
        return dict(DEFAULT_CONFIG)
    try:
        # JSON is UTF-8; pbs_python's own default is the locale's (ASCII under the C locale
        # of CPython 3.6). A file that is not UTF-8 raises UnicodeDecodeError, a ValueError.
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (IOError, OSError, ValueError) as err:
        raise ConfigError("cannot read config file %s: %s" % (path, err))
    try:
        parsed = json.loads(text)
    except ValueError as err:
        raise ConfigError("config file %s is not valid JSON: %s" % (path, err))
    try:
        return check_config(parsed)
    except ConfigError as err:
        raise ConfigError("config file %s: %s" % (path, err))


# ---------------------------------------------------------------- exclusivity
def sharing_name(vnode):
    """The vnode's ``sharing`` as one of SHARING_VALUES, or None when unset/unknown.

    Real PBS gives a ``pbs.ND_*`` constant; a text value (the mock) is accepted too."""
    value = getattr(vnode, "sharing", None)
    if value is None:
        return None
    for name in SHARING_VALUES:
        constant = getattr(pbs, "ND_" + name.upper(), None)
        if constant is not None and value == constant:
            return name
    text = str(value).strip().lower()
    if text.startswith("nd_"):
        text = text[3:]
    return text if text in SHARING_VALUES else None


def exclusive_for(place, sharing):
    """The scheduler's rule: ``place`` text (e.g. ``"scatter:excl"``, or None) and a vnode's
    sharing name (or None) -> True when the job has the vnode exclusively."""
    if sharing in FORCED_EXCLUSIVE:
        return True
    if sharing == "ignore_excl":
        return False
    words = [word.strip().lower() for word in str(place or "").split(":")]
    if any(word.startswith("excl") for word in words):
        return True
    if "shared" in words:
        return False
    return sharing in DEFAULT_EXCLUSIVE


def _short(name):
    return str(name or "").split(".", 1)[0]


def local_vnodes(event):
    """The job's vnodes on this host (all of ``vnode_list`` when none is recognisably local)."""
    vnodes = dict(event.vnode_list)
    here = _short(pbs.get_local_nodename())
    local = []
    for name, vnode in vnodes.items():
        host = None
        try:
            host = vnode.resources_available["host"]
        except (KeyError, TypeError):
            pass
        host = host or getattr(vnode, "host", None)
        if _short(host) == here or _short(name) == here:
            local.append(vnode)
    return local or list(vnodes.values())


def job_is_exclusive(event):
    place = event.job.Resource_List["place"]
    vnodes = local_vnodes(event)
    if not vnodes:
        return exclusive_for(place, None)
    return any(exclusive_for(place, sharing_name(vnode)) for vnode in vnodes)


# ---------------------------------------------------------------- HTTP
def jobs_url(config, jobid=None):
    """``http+unix://<encoded socket>/rm/v1/jobs[/<encoded jobid>]``."""
    url = "http+unix://%s%s/jobs" % (urllib.parse.quote(config["unix_socket_file"], safe=""), VERSION_URI)
    if jobid is not None:
        url += "/" + urllib.parse.quote(str(jobid), safe="")
    return url


def _session():
    # pbs_python starts its interpreter without the site module (PyConfig.site_import = 0),
    # so the system's site and dist-packages directories, where pip or the OS packages put
    # requests, are not on sys.path: add them first, as the built-in PBS_cray_atom does.
    site.main()
    # Imported here so that a node without them fails with a message that says so.
    try:
        import requests
        import requests_unixsocket
    except ImportError as err:
        raise ImportError("the Cray ATOM hook needs the Python modules requests and requests_unixsocket: %s"
                          % err)
    return requests, requests_unixsocket.Session()


def call(name, method, url, timeout, payload=None):
    """Send one request; log and return ``(status code, body text)``.

    Raises AtomRequestFailed on a timeout or a connection that fails or drops."""
    requests, session = _session()
    try:
        try:
            response = session.request(method, url, json=payload, timeout=timeout)
        except requests.exceptions.Timeout as err:
            raise AtomRequestFailed("%s %s timed out after %s s: %s" % (method, url, timeout, err))
        except requests.exceptions.RequestException as err:
            raise AtomRequestFailed("%s %s failed: %s" % (method, url, err))
    finally:
        session.close()
    body = response.text
    pbs.logmsg(pbs.LOG_DEBUG, "%s: %s %s%s -> %d %s, response: %s"
               % (name, method, url, "" if payload is None else " " + json.dumps(payload, sort_keys=True),
                  response.status_code, response.reason, body if body else "(empty)"))
    return response.status_code, body


def socket_missing(name, config, event_label):
    """True (after logging) when the socket file does not exist."""
    path = config["unix_socket_file"]
    if os.path.exists(path):
        return False
    pbs.logmsg(pbs.LOG_WARNING, "%s: %s: ATOM socket %s does not exist%s"
               % (name, event_label, path, "" if config["require_socket"] else "; nothing to do, accepting"))
    return True


# ---------------------------------------------------------------- events
def register(event, config):
    """execjob_begin: POST the job; raise AtomRegistrationError when that fails."""
    name = hook_name(event)
    job = event.job
    jobid = str(job.id)
    if socket_missing(name, config, "execjob_begin"):
        if config["require_socket"]:
            raise AtomRegistrationError("%s: job %s not registered: ATOM socket %s does not exist (require_socket)"
                                        % (name, jobid, config["unix_socket_file"]))
        return
    euser = str(job.euser)
    try:
        uid = pwd.getpwnam(euser).pw_uid
    except KeyError:
        raise AtomRegistrationError("%s: job %s not registered: user %s unknown on this host" % (name, jobid, euser))
    payload = {"jobid": jobid, "uid": uid, "exclusive": job_is_exclusive(event)}
    try:
        status, body = call(name, "POST", jobs_url(config), config["post_timeout"], payload)
        if status == 400:
            pbs.logmsg(pbs.LOG_WARNING, "%s: job %s may already be registered: removing it and registering again"
                       % (name, jobid))
            removed, removed_body = call(name, "DELETE", jobs_url(config, jobid), config["delete_timeout"])
            # As PBS_cray_atom (raise_for_status): any answer below 400, and 404, is fine.
            if removed >= 400 and removed != 404:
                raise AtomRequestFailed("DELETE of the stale registration answered %d: %s" % (removed, removed_body))
            status, body = call(name, "POST", jobs_url(config), config["post_timeout"], payload)
    except AtomRequestFailed as err:
        pbs.logmsg(pbs.LOG_ERROR, "%s: job %s not registered: %s" % (name, jobid, err))
        raise AtomRegistrationError("%s: job %s not registered: %s" % (name, jobid, err))
    if status != 200:
        message = "%s: job %s not registered: POST answered %d: %s" % (name, jobid, status, body)
        pbs.logmsg(pbs.LOG_ERROR, message)
        raise AtomRegistrationError(message)
    pbs.logjobmsg(jobid, "%s: registered with ATOM (exclusive=%s)" % (name, str(payload["exclusive"]).lower()))


def unregister(event, config):
    """execjob_end: DELETE the job; reject (never offline) when that fails."""
    name = hook_name(event)
    jobid = str(event.job.id)
    if socket_missing(name, config, "execjob_end"):
        if config["require_socket"]:
            event.reject("%s: job %s not removed from ATOM: socket %s does not exist (require_socket)"
                         % (name, jobid, config["unix_socket_file"]))
        return
    try:
        status, body = call(name, "DELETE", jobs_url(config, jobid), config["delete_timeout"])
    except AtomRequestFailed as err:
        message = "%s: job %s not removed from ATOM: %s" % (name, jobid, err)
        pbs.logmsg(pbs.LOG_ERROR, message)
        event.reject(message)
        return
    if status != 204:
        message = "%s: job %s not removed from ATOM: DELETE answered %d: %s" % (name, jobid, status, body)
        pbs.logmsg(pbs.LOG_ERROR, message)
        event.reject(message)
        return
    pbs.logjobmsg(jobid, "%s: removed from ATOM" % name)


def main():
    event = pbs.event()
    handlers = {pbs.EXECJOB_BEGIN: register, pbs.EXECJOB_END: unregister}
    handler = handlers.get(event.type)
    if handler is None:
        return
    try:
        config = load_config()
    except ConfigError as err:
        message = "%s: %s" % (hook_name(event), err)
        pbs.logmsg(pbs.LOG_ERROR, message)
        event.reject(message)
        return
    handler(event, config)


if __name__ == "builtins":
    main()
