"""pbs_python's hook input files: ``pbs_python --hook -i FILE`` reads the event as
``<object>=<value>`` lines, the way the mom (``run_hook`` in src/resmom/mom_hook_func.c)
and the server write them. :func:`read_pbs_python_input` turns one into the event
context :func:`mockpbs.hookrun.run_hook` takes (:func:`mockpbs.harness.run_pbs_python_input`
runs a hook on it)."""
import re

from mockpbs import hookdefs

_INPUT_EVENT_RE = re.compile(r"^pbs\.event\(\)\.(\w+)(?:\[(\d+)\])?$")
_INPUT_JOB_RE = re.compile(r"^pbs\.event\(\)\.job\.(\w+)(?:\[([^\]]+)\])?$")
_INPUT_VNODE_RE = re.compile(r'^pbs\.event\(\)\.(vnode_list|vnode_list_fail)\["([^"]+)"\]\.(\w+)(?:\[([^\]]+)\])?$')
_INPUT_EVENT_KEYS = ("type", "hook_name", "hook_type", "requestor", "requestor_host", "user", "alarm",
                     "freq", "fail_action", "debug", "progname", "argv", "env", "pid")
_INPUT_LISTS = ("failed_mom_list", "succeeded_mom_list")


class UnknownInputLine(ValueError):
    """A line the reader does not know; ``attribute``: the ``pbs.event().<name>`` it sets
    (None for another object). pbs_python exits 2 on an unknown event attribute."""

    def __init__(self, message, attribute=None):
        ValueError.__init__(self, message)
        self.attribute = attribute


class UnknownEventType(ValueError):
    """No or an unknown ``pbs.event().type`` (pbs_python ends with "Unexpected event")."""


def _input_value(text):
    """A value as written; a triple-quoted one (env, Variable_List) loses its quotes."""
    if len(text) >= 6 and text.startswith('"""') and text.endswith('"""'):
        return text[3:-3]
    return text


def _comma_list(text):
    """``A=1,B=x\\,y`` -> ``{"A": "1", "B": "x,y"}`` (PBS escapes commas in values)."""
    pairs = {}
    for item in re.split(r"(?<!\\),", text):
        if "=" in item:
            name, value = item.split("=", 1)
            pairs[name] = value.replace("\\,", ",")
    return pairs


def read_pbs_python_input(text):
    """Parse a pbs_python hook input file into ``(event name, hook name, context)``, the
    context as :func:`mockpbs.hookrun.run_hook` takes it (exechost_startup /
    exechost_periodic: ``vnode_list`` from ``resources_available[...]`` lines and no job
    lines; the hook sees no job there). Raises :class:`UnknownInputLine`
    (a ValueError) for a line it does not know (pbs_python exits 2 on an unknown event
    attribute) and :class:`UnknownEventType` (a ValueError) for no or an unknown type.

    The reader is stricter than pbs_python, which ignores a line of an object other than
    ``pbs.event()`` and ``pbs.get_local_nodename()`` it does not know."""
    fields, job, vnodes = {}, {}, {"vnode_list": {}, "vnode_list_fail": {}}
    argv, lists, hostname = {}, {name: [] for name in _INPUT_LISTS}, None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        key, _unused, raw = line.partition("=")
        value = _input_value(raw)
        event_match, job_match, vnode_match = (_INPUT_EVENT_RE.match(key), _INPUT_JOB_RE.match(key),
                                               _INPUT_VNODE_RE.match(key))
        if key == "pbs.get_local_nodename()":
            hostname = value
        elif event_match and event_match.group(1) in _INPUT_EVENT_KEYS:
            if event_match.group(2) is not None:
                argv[int(event_match.group(2))] = value
            else:
                fields[event_match.group(1)] = value
        elif job_match and job_match.group(1) in _INPUT_LISTS:
            lists[job_match.group(1)].append(value)
        elif job_match and job_match.group(2) is not None:
            job.setdefault(job_match.group(1), {})[job_match.group(2)] = value
        elif job_match:
            job[job_match.group(1)] = value
        elif vnode_match:
            table, name, attribute, resource = vnode_match.groups()
            vnode = vnodes[table].setdefault(name, {"name": name})
            if resource is not None:
                vnode.setdefault(attribute, {})[resource] = value
            else:
                vnode[attribute] = value
        else:
            raise UnknownInputLine("line %d: unknown event attribute %r" % (number, key),
                                   event_match.group(1) if event_match else None)
    return _input_context(fields, job, vnodes, argv, lists, hostname)


def _input_vnode(vnode):
    """A parsed vnode with its parent host (``resources_assigned[host]``, as release_nodes()
    reads it, else ``resources_available[host]``, else its name)."""
    vnode = dict(vnode)
    host = (vnode.get("resources_assigned") or {}).get("host") or \
        (vnode.get("resources_available") or {}).get("host") or vnode["name"]
    vnode.setdefault("host", host)
    return vnode


def _input_context(fields, job, vnodes, argv, lists, hostname):
    event = fields.get("type")
    if event not in hookdefs.EVENTS:
        raise UnknownEventType("no or unknown pbs.event().type %r" % (event,))
    in_ms_mom = job.pop("_msmom", "False") == "True"
    for name in [n for n in job if n.startswith("_")]:
        del job[name]
    if isinstance(job.get("Variable_List"), str):
        job["Variable_List"] = _comma_list(job["Variable_List"])
    job_id = str(job.get("id") or "")
    context = {
        "job": job,
        "vnode_list": {n: _input_vnode(v) for n, v in vnodes["vnode_list"].items()},
        "vnode_list_fail": {n: _input_vnode(v) for n, v in vnodes["vnode_list_fail"].items()},
        "in_ms_mom": in_ms_mom,
        "hostname": hostname or fields.get("requestor_host", ""),
        "server": job_id.split(".", 1)[1] if "." in job_id else fields.get("requestor_host", ""),
        "failed_mom_list": lists["failed_mom_list"],
        "succeeded_mom_list": lists["succeeded_mom_list"],
        "daemon": "mom" if event in hookdefs.MOM_EVENTS else "server",
        "requestor": fields.get("requestor", ""),
        "requestor_host": fields.get("requestor_host", ""),
    }
    if event == "execjob_launch":
        context["env"] = _comma_list(fields.get("env", ""))
        context["argv"] = [argv[i] for i in sorted(argv)]
        context["progname"] = fields.get("progname")
    return event, fields.get("hook_name") or "hook", context
