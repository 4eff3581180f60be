"""Run one hook once, as PBS would, and look at what it did: a test harness for hooks.

This is a front door to :func:`mockpbs.hookrun.run_hook`, the runner the mock moms and
server use: the hook runs in a child Python process with ``import pbs`` giving
:mod:`mockpbs.pbs`, ``__name__ == "builtins"``, its config file in
``pbs.hook_config_filename`` / ``PBS_HOOK_CONFIG_FILE`` and its alarm enforced. The
harness only builds the event context from a compact description of the job and its
vnodes, and turns the runner's result into :class:`HookResult`.

Example: the walkthrough of PP-928 ("Reliable job startup", its "Case of Reliable Job
Startup"), federer and sampras failed to join::

    from mockpbs.harness import run_hook

    result = run_hook(
        open("launch.py").read(),
        event="execjob_launch",
        job={"id": "20.borg",
             "exec_vnode": "(borg:ncpus=3:mem=1048576kb)+(federer:ncpus=2:mem=2097152kb)"
                           "+(lendl:ncpus=2:mem=2097152kb)+(agassi:ncpus=1:mem=3145728kb)"
                           "+(sampras:ncpus=1:mem=3145728kb)",
             "exec_host": "borg/0*3+federer/0*2+lendl/0*2+agassi/0+sampras/0",
             "schedselect": "1:ncpus=3:mem=1gb+2:ncpus=2:mem=2gb+2:ncpus=1:mem=3gb",
             "tolerate_node_failures": "job_start",
             "Resource_List": {"select": "1:ncpus=3:mem=1gb+2:ncpus=2:mem=2gb+2:ncpus=1:mem=3gb",
                               "site": "1:ncpus=3:mem=1gb+1:ncpus=2:mem=2gb+1:ncpus=1:mem=3gb"}},
        vnodes={name: {"host": name, "ncpus": 4, "mem": "8gb"}
                for name in ("borg", "federer", "lendl", "agassi", "sampras")},
        failed_hosts=["federer", "sampras"],
        local_host="borg")
    assert result.accepted
    assert result.job["exec_host"] == "borg/0*3+lendl/0*2+agassi/0"

Shapes:

- ``job``: attribute names as ``qstat -f`` prints them, values as strings or numbers;
  ``Resource_List`` (and ``resources_used``) a dict of resources. Used keys: ``id``,
  ``exec_vnode``, ``exec_host``, ``schedselect``, ``tolerate_node_failures``,
  ``Resource_List``; any other attribute is passed to the hook as is.
- ``vnodes``: ``{vnode name: {"host": parent host, "ncpus": ..., "mem": ..., ...}}``;
  ``state`` (``"free"``, ``"offline"``...) and ``comment`` are vnode attributes,
  ``resources_available`` (a dict) is merged, every other key is a resource in
  ``resources_available``. Each vnode's ``resources_assigned`` is what ``exec_vnode``
  gives it. Without ``vnodes``, each vnode of ``exec_vnode`` gets the host of its
  ``exec_host`` entry and the resources assigned to it.
- The primary mom is the host of the first ``exec_host`` entry; ``in_ms_mom()`` is true
  when ``local_host`` is it (``local_host`` defaults to it).

PP-928 interfaces this implements the inputs of: 5 (``vnode_list_fail``: the vnodes of
``failed_hosts``, given to execjob_prologue and execjob_launch only, which then also get
``job.failed_mom_list`` = ``failed_hosts`` and ``job.succeeded_mom_list`` = every other
host of the job; other events get empty lists), 6, 8, 9. ``vnode_list`` holds every vnode
of the job at every mom event, the failed ones included, as the OpenPBS mom writes it
(``run_hook`` in ``src/resmom/mom_hook_func.c`` builds it from all the job's vnodes; the
failed ones are in ``vnode_list_fail`` as well).
"""
import json
import os
import tempfile

from mockpbs import hookdefs, hookrun, pbslog, selectspec
from mockpbs import pbs as _pbs
from mockpbs.hookinput import read_pbs_python_input

__all__ = ["HookResult", "read_pbs_python_input", "run_hook", "run_pbs_python_input"]

_PROLOGUE_AND_LAUNCH = ("execjob_prologue", "execjob_launch")


class HookResult:
    """What one hook run did.

    - ``accepted`` (bool); ``reject_message`` (str or None: the ``reject()`` text);
    - ``job``: the job's attributes afterwards (input merged with the hook's changes;
      ``Resource_List`` / ``resources_used`` as dicts; an attribute the hook unset is gone);
    - ``changes``: only what the hook changed on the job (``Resource_List`` holding only
      changed resources);
    - ``vnodes``: ``{vnode: {changed attribute: value}}`` (``state`` as text, e.g.
      ``"offline"``; ``resources_available`` a dict of changed resources);
    - ``rerun`` (bool): the hook called ``job.rerun()``; ``delete`` (bool): ``job.delete()``;
    - ``crashed`` (bool): real pbs_python would have crashed (SIGSEGV) as the hook ended,
      because the job ``release_nodes()`` returned was freed before (then ``accepted`` is
      False, ``exception`` says why and nothing the hook changed is kept, its log lines
      are);
    - ``log``: the lines PBS would write to the daemon log, in order
      (``MM/DD/YYYY HH:MM:SS;0006;pbs_python;Hook;pbs_python;msg`` for mom hooks, daemon
      field ``Server@<host>`` for server hooks);
    - ``records``: the same as ``[event_class, object type, object name, message]``;
    - ``exception`` (traceback text or None), ``alarm`` (bool: killed after ``alarm`` s);
    - ``env``, ``argv``, ``progname``: execjob_launch parameters afterwards (None for
      other events);
    - ``raw``: the runner's result dict (PROTOCOL.md "Hook runner").
    """

    def __init__(self, raw, job_before, event, daemon_field, launch_inputs):
        self.raw = raw
        self.accepted = bool(raw.get("accepted"))
        self.reject_message = raw.get("reject_msg")
        self.exception = raw.get("exception")
        self.alarm = bool(raw.get("alarm"))
        self.rerun = bool(raw.get("rerun"))
        self.delete = bool(raw.get("delete"))
        self.crashed = bool(raw.get("crashed"))
        self.changes = dict(raw.get("job") or {})
        self.vnodes = dict(raw.get("vnodes") or {})
        self.records = [list(r) for r in raw.get("logs") or []]
        self.log = [pbslog.format_line(event_class, daemon_field, objtype, objname, message)
                    for event_class, objtype, objname, message in self.records]
        self.job = _merged(job_before, self.changes)
        self.env = self.argv = self.progname = None
        if event == "execjob_launch":
            self.env = raw.get("env", launch_inputs["env"])
            self.argv = raw.get("argv", launch_inputs["argv"])
            self.progname = raw.get("progname", launch_inputs["progname"])

    def __repr__(self):
        return "HookResult(accepted=%r, reject_message=%r, rerun=%r, crashed=%r, changes=%r, vnodes=%r)" % (
            self.accepted, self.reject_message, self.rerun, self.crashed, self.changes, self.vnodes)


def _merged(before, changes):
    job = {k: (dict(v) if isinstance(v, dict) else v) for k, v in before.items()}
    for name, value in changes.items():
        if isinstance(value, dict):
            resources = job.setdefault(name, {})
            for resource, resource_value in value.items():
                if resource_value is None:
                    resources.pop(resource, None)
                else:
                    resources[resource] = resource_value
        elif value is None:
            job.pop(name, None)
        else:
            job[name] = value
    return job


def _text(value):
    return value if isinstance(value, str) else str(value)


def _job_hosts(job):
    """Hosts of the job in exec_host order (first = primary mom), without repeats."""
    hosts = []
    for host, _index, _ncpus in selectspec.parse_exec_host(job.get("exec_host") or ""):
        if host not in hosts:
            hosts.append(host)
    return hosts


def _assigned(job, exec_hosts):
    """``{vnode: {resource: total assigned}}`` and ``{vnode: host of its exec_host entry}``."""
    assigned = {}
    hosts = {}
    chunks = selectspec.parse_exec_vnode(job["exec_vnode"]) if job.get("exec_vnode") else []
    for index, chunk in enumerate(chunks):
        for name, resources in chunk:
            totals = assigned.setdefault(name, {})
            if index < len(exec_hosts):
                hosts.setdefault(name, exec_hosts[index][0])
            for resource, value in resources:
                if resource in selectspec.SIZE_RESOURCES:
                    kb = totals.get(resource, 0) + selectspec.size_to_kb(value)
                    totals[resource] = kb
                else:
                    try:
                        totals[resource] = totals.get(resource, 0) + int(value)
                    except ValueError:
                        totals[resource] = value
    text = {name: {r: ("%dkb" % v if r in selectspec.SIZE_RESOURCES and isinstance(v, int) else _text(v))
                   for r, v in totals.items()} for name, totals in assigned.items()}
    return text, hosts


def _vnode_dicts(job, vnodes):
    exec_hosts = selectspec.parse_exec_host(job.get("exec_host") or "")
    assigned, chunk_hosts = _assigned(job, exec_hosts)
    if vnodes is None:
        vnodes = {name: dict(resources, host=chunk_hosts.get(name, name))
                  for name, resources in assigned.items()}
    result = {}
    for name, spec in vnodes.items():
        spec = dict(spec)
        if "host" not in spec:
            raise ValueError("vnode %r: no 'host' given" % (name,))
        available = {k: _text(v) for k, v in (spec.pop("resources_available", None) or {}).items()}
        vnode = {"name": name, "host": spec.pop("host"), "state": spec.pop("state", "free"),
                 "comment": spec.pop("comment", None)}
        for key, value in spec.items():
            available[key] = _text(value)
        available.setdefault("vnode", name)
        available.setdefault("host", vnode["host"])
        vnode["resources_available"] = available
        vnode["resources_assigned"] = dict(assigned.get(name, {}))
        result[name] = vnode
    return result


def _hook_config_bytes(hook_config):
    """The config file's content: bytes as they are, a str as UTF-8, anything else as JSON."""
    if isinstance(hook_config, bytes):
        return hook_config
    text = hook_config if isinstance(hook_config, str) else json.dumps(hook_config, indent=2)
    return text.encode("utf-8")


def run_hook(source, event="execjob_launch", job=None, vnodes=None, failed_hosts=(),
             local_host=None, env=None, hook_config=None, alarm=30, hook_name="hook",
             argv=None, progname=None, server=None, server_attributes=None,
             requestor=None):
    """Run the hook ``source`` (Python text) once as ``event`` on ``local_host``.

    - ``event``: a PBS hook event name (``"execjob_launch"``, ``"queuejob"``...).
    - ``job``, ``vnodes``: see the module docstring; ``job`` defaults to
      ``{"id": "0.<server>"}``.
    - ``failed_hosts``: hosts of the job whose moms failed (PP-928 interface 5); each must be
      a host of the job (from ``exec_host``, or a vnode's ``host``).
    - ``local_host``: where the hook runs; defaults to the primary mom's host.
    - ``env``, ``argv``, ``progname``: execjob_launch parameters; ``env`` defaults to the
      job's PBS variables (``PBS_JOBID``, ``PBS_NODEFILE``...), ``progname`` to
      ``/bin/bash``, ``argv`` to ``[progname]``. Pass an ``env`` without ``PBS_NODEFILE``
      for the launch of a task (``pbsdsh``/``tm_spawn``).
    - ``hook_config``: None, bytes (written as they are), a str (written as UTF-8) or
      anything JSON can dump (written as JSON); the hook finds it at
      ``pbs.hook_config_filename``.
    - ``alarm``: seconds before the hook is killed (the result then has ``alarm=True``).
    - ``server``: the server host name (default: the job id's suffix, else
      ``local_host``); ``server_attributes``: what ``pbs.server()`` shows.
    - ``requestor``: ``pbs.event().requestor`` (default ``pbs_mom`` for mom events, the
      job owner's user name or ``root`` for server events).

    Returns a :class:`HookResult`. Raises ValueError for an unknown event, a failed host
    that is not a host of the job, or a vnode without ``host``; never for a failing hook.
    """
    if event not in hookdefs.EVENTS or event not in _pbs.EVENT_TYPES:
        raise ValueError("unknown hook event %r" % (event,))
    job = dict(job or {})
    is_mom_event = event in hookdefs.MOM_EVENTS
    vnode_dicts = _vnode_dicts(job, vnodes)
    hosts = _job_hosts(job)
    for vnode in vnode_dicts.values():
        if vnode["host"] not in hosts:
            hosts.append(vnode["host"])
    primary = hosts[0] if hosts else None
    local_host = local_host or primary or "localhost"
    failed = list(dict.fromkeys(failed_hosts or ()))
    for host in failed:
        if host not in hosts:
            raise ValueError("failed host %r is not a host of the job (hosts: %s)" % (host, ", ".join(hosts)))
    if server is None:
        job_id = str(job.get("id") or "")
        server = job_id.split(".", 1)[1] if "." in job_id else local_host
    job.setdefault("id", "0.%s" % server)

    with_fail_list = event in _PROLOGUE_AND_LAUNCH
    failed_vnodes = {n: v for n, v in vnode_dicts.items() if with_fail_list and v["host"] in failed}
    context = {
        "job": job,
        "vnode_list": vnode_dicts,
        "vnode_list_fail": failed_vnodes,
        "in_ms_mom": local_host == primary,
        "hostname": local_host,
        "server": server,
        "server_attributes": dict(server_attributes or {}),
        "failed_mom_list": failed if with_fail_list else [],
        "succeeded_mom_list": [h for h in hosts if h not in failed] if with_fail_list else [],
        "daemon": "mom" if is_mom_event else "server",
        "requestor": requestor or ("pbs_mom" if is_mom_event
                                   else str(job.get("Job_Owner") or "root@").split("@", maxsplit=1)[0]),
        "requestor_host": local_host,
    }
    launch_inputs = {"env": None, "argv": None, "progname": None}
    if event == "execjob_launch":
        progname = progname or "/bin/bash"
        launch_inputs = {
            "env": dict(env) if env is not None else _default_env(job, server),
            "argv": list(argv) if argv is not None else [progname],
            "progname": progname,
        }
        context.update(launch_inputs)

    raw = _run_in_new_home(source, event, context, hook_name, hook_config, alarm)
    daemon_field = "pbs_python" if is_mom_event else "Server@%s" % server
    return HookResult(raw, job, event, daemon_field, launch_inputs)


def _run_in_new_home(source, event, context, hook_name, hook_config, alarm):
    """Write the hook (and its config) under a temporary PBS_HOME and run it; the runner's
    result dict."""
    with tempfile.TemporaryDirectory(prefix="mockpbs-harness-") as pbs_home:
        in_mom = event in hookdefs.MOM_EVENTS
        hooks_dir = os.path.join(pbs_home, "mom_priv" if in_mom else "server_priv", "hooks")
        os.makedirs(hooks_dir)
        body = os.path.join(hooks_dir, hook_name + ".PY")
        with open(body, "w") as handle:
            handle.write(source)
        config = None
        if hook_config is not None:
            config = os.path.join(hooks_dir, hook_name + ".CF")
            with open(config, "wb") as handle:
                handle.write(_hook_config_bytes(hook_config))
        hook = {"name": hook_name, "body": body, "config": config, "alarm": alarm,
                "user": "pbsadmin", "debug": False}
        return hookrun.run_hook(hook, event, context, pbs_home)


def run_pbs_python_input(source, input_text, hook_config=None, alarm=30):
    """Run the hook ``source`` on the event of a pbs_python input file (``input_text``, as
    ``pbs_python --hook -i`` reads it: see :func:`read_pbs_python_input`), so that the same
    recorded input can be given to the emulator and to a real pbs_python. ``hook_config``
    as in :func:`run_hook`. Returns a :class:`HookResult`."""
    event, hook_name, context = read_pbs_python_input(input_text)
    raw = _run_in_new_home(source, event, context, hook_name, hook_config, alarm)
    launch_inputs = {key: context.get(key) for key in ("env", "argv", "progname")}
    daemon_field = "pbs_python" if context["daemon"] == "mom" else "Server@%s" % context["server"]
    return HookResult(raw, context["job"], event, daemon_field, launch_inputs)


def _default_env(job, server):
    job_id = str(job["id"])
    return {
        "PBS_JOBID": job_id,
        "PBS_JOBNAME": str(job.get("Job_Name", "STDIN")),
        "PBS_NODEFILE": "/var/spool/pbs/aux/%s" % job_id,
        "PBS_ENVIRONMENT": "PBS_BATCH",
        "PBS_QUEUE": str(job.get("queue", "workq")),
        "PBS_O_HOST": server,
    }
