#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hpc.pbs developers
# Apache License 2.0 (https://www.apache.org/licenses/LICENSE-2.0), as galaxy.yml says

DOCUMENTATION = r'''
---
module: hook
short_description: Manage a PBS site hook's life cycle or a built-in pbshook's settings
description:
  - Creates, configures and deletes an OpenPBS / PBS Professional site hook (attributes,
    body, config file), or changes the settable part of a built-in pbshook such as
    C(PBS_cray_atom) (enabled, events, alarm, order, fail_action, config).
  - Reads with C(qmgr -c "list hook|pbshook NAME") and compares the body and config byte
    for byte with C(PBS_HOME/server_priv/hooks/NAME.PY) / C(NAME.CF) (C(qmgr export) when
    those files cannot be read).
  - Before anything is written, a body that would go live (a new body, or the current one
    when only the config changes) is preflighted on the PBS server host. It is compiled
    by the interpreter PBS runs hooks with (C(PBS_EXEC/bin/pbs_python), else the Python
    running the module); a syntax error fails the task with the file, line and message.
    Where C(pbs_python) has its hook mode (C(pbs_python --hook), as in OpenPBS), the body
    is also loaded by it once, with the real C(pbs) module, an empty event of the hook's
    first event (C(queuejob) when it has none; C(periodic) has no such event) and the new
    or current config as C(pbs.hook_config_filename); an exception at module level (a
    C(NameError), a failed import) fails the task. The body is loaded with C(__name__)
    other than C(builtins), so code under C(if __name__ == "builtins":) is not run; a hook
    without that guard runs its event code once against the empty event. A failed
    preflight changes nothing (hook list, body, config, enabled state).
  - Writes the changes in C(qmgr -a) invocations fed on stdin (C(-a) makes qmgr stop at
    the first rejected command), ordered so that no hook is ever enabled without its body
    - C(create hook NAME) and C(enabled = false) (a new hook is enabled by default),
    C(event) (setting it can reset C(user), C(fail_action) and C(freq), which are set
    after it), the other attributes, C(import ... application/x-python),
    C(import ... application/x-config); then, when the task enables the hook after an
    import, the body and config on the server are compared with what was imported and
    C(enabled = true) is set in a second invocation only when they match.
  - Events, names, values and the config are validated before qmgr runs, so a bad task
    creates nothing. A JSON config is parsed first because qmgr imports a broken file
    with exit code 0.
  - The PBS designs this serves install hooks for PP-928 reliable job startup
    (execjob_launch, queuejob), C(PBS_cray_atom) (Shasta ATOM hook design, config file) and
    execjob_resize (PP-928 interface 9).
version_added: "0.1.0"
author: hpc.pbs developers (@hpc-pbs)
requirements:
  - jsonschema (Python library on the controller, only for O(config_schema); the
    collection's requirement)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - hpc.pbs.pbs
options:
  name:
    description:
      - Hook name. A site hook name must start with a letter, hold only letters, digits,
        C(_) and C(-), and may not start with C(PBS) (reserved for pbshooks).
    type: str
    required: true
  state:
    description:
      - C(present) creates or updates the hook; C(absent) deletes a site hook (a pbshook
        cannot be deleted; use O(enabled=false)).
    type: str
    default: present
    choices: [present, absent]
  type:
    description:
      - C(site) for a site hook (qmgr object C(hook)); C(pbs) for a built-in pbshook
        (qmgr object C(pbshook)). For C(pbs) only O(enabled), O(events), O(alarm),
        O(order), O(fail_action), O(freq) and O(config)/O(config_src) may be given; the hook must
        exist already.
      - The built-in C(PBS_cray_atom) of the Shasta ATOM hook design is such a
        pbshook (disabled when PBS is installed).
    type: str
    default: site
    choices: [site, pbs]
  events:
    description:
      - The complete list of events (replaces the current list; order does not matter,
        PBS keeps its own). An empty list means no event.
      - Accepted names are PBS's hook events C(queuejob), C(postqueuejob), C(modifyjob),
        C(modifyvnode), C(management), C(resvsub), C(modifyresv), C(movejob),
        C(jobobit), C(runjob), C(provision), C(periodic), C(resv_confirm),
        C(resv_begin), C(resv_end), C(execjob_begin), C(execjob_prologue),
        C(execjob_epilogue), C(execjob_preterm), C(execjob_end), C(exechost_periodic),
        C(execjob_launch), C(exechost_startup), C(execjob_attach), C(execjob_resize),
        C(execjob_abort), C(execjob_postsuspend), C(execjob_preresume).
        An unknown name fails the task with qmgr's own message before anything is done.
      - C(execjob_resize) is the event of PP-928 interface 9 (run on the moms after
        C(release_nodes()) changed a job's resources; used to resize the job's cgroups).
        The reliable job startup hook of PP-928 uses C(queuejob) and C(execjob_launch)
        (the case of reliable job startup, interfaces 1, 7 and 8); the Cray ATOM hook of
        the Shasta ATOM hook design uses C(execjob_begin) and C(execjob_end).
      - C(event) (qmgr's attribute name) is an alias.
    type: list
    elements: str
    aliases: [event]
  enabled:
    description:
      - Whether the hook runs. When omitted, an existing hook keeps its state and a new
        hook ends enabled if a body is given in the same task (PBS's default), disabled
        otherwise.
    type: bool
  order:
    description:
      - Order among hooks of the same event, 1-1000 for a site hook (qmgr's range).
    type: int
  alarm:
    description:
      - Seconds the hook may run before PBS kills it; an integer, at least 1 (PBS's
        default for a new hook is 30; the built-in C(PBS_cray_atom) of the
        Shasta ATOM hook design has 300).
      - Effect on reliable job startup - when a mom's config does not set them, the sum
        of the alarms of the enabled execjob_begin hooks is the default of the mom's
        C($sister_join_job_alarm) (PP-928 interface 3) and the sum of the alarms of the
        enabled execjob_prologue hooks the default of its C($job_launch_delay) (PP-928
        interface 4), so raising the alarm of such a hook makes the primary mom wait
        longer for its sisters.
    type: int
  fail_action:
    description:
      - What PBS does when the hook fails (rejects, raises or alarms); C(none) or any of
        the others (as a set, order does not matter).
      - C(offline_vnodes) is what the Shasta ATOM hook design gives C(PBS_cray_atom) -
        when the hook alarms in execjob_begin, the vnodes of its mom are offlined.
    type: list
    elements: str
    choices: [none, offline_vnodes, clear_vnodes_upon_recovery, scheduler_restart_cycle]
  user:
    description:
      - Account the hook runs as (site hooks only).
    type: str
    choices: [pbsadmin, pbsuser]
  freq:
    description:
      - Seconds between runs of a periodic hook, at least 1; the resulting events must
        contain C(periodic) or C(exechost_periodic).
    type: int
  debug:
    description:
      - Whether PBS keeps the hook's debug files (site hooks only).
    type: bool
  body:
    description:
      - The hook's Python source, imported as C(application/x-python) when it differs
        from the current body byte for byte (UTF-8). Site hooks only; PBS refuses a
        body for a pbshook (C(<content-type> must be application/x-config)) and so does
        this module, before anything runs.
      - C(content) is an alias.
    type: str
    aliases: [content]
  body_src:
    description:
      - Path on the managed host of the hook's Python source (alternative to O(body)).
      - C(src) is an alias.
    type: path
    aliases: [src]
  config:
    description:
      - The hook's config file. A dict (or list) is written as JSON (sorted keys, indent
        2, final newline); a string is taken as it is.
      - For C(PBS_cray_atom) this is the JSON object of the Shasta ATOM hook design
        (C(post_timeout), C(delete_timeout) in seconds, C(unix_socket_file)).
      - Imported as C(application/x-config) with qmgr's C(default) encoding from a
        file (never C(base64), whose failure deletes the existing config) when it
        differs from the current one byte for byte.
    type: raw
  config_schema:
    description:
      - A JSON Schema (dict, draft of its C($schema), else draft 2020-12) the config must
        satisfy, checked before anything is written. With it the config is always parsed
        as JSON.
      - The check runs on the controller (the action plugin of this module, with the
        validation of the C(hpc.pbs.json_schema_errors) filter; O(config_src) is read from
        the managed host for it), so the PBS server needs no C(jsonschema). The module
        run on its own checks it on the managed host, where it then needs C(jsonschema).
    type: dict
  config_src:
    description:
      - Path on the managed host of the config file (alternative to O(config)).
    type: path
  config_format:
    description:
      - C(json) (default) parses the config as JSON before anything is imported and fails
        the task when it does not parse; C(raw) imports it unchecked.
    type: str
    default: json
    choices: [json, raw]
notes:
  - Supports check mode and diff mode (attributes and body/config text).
  - Must run on the PBS server host (where C(qmgr) works and C(server_priv/hooks) is).
attributes:
  check_mode:
    support: full
    details: Plans the qmgr commands and file imports and runs none.
  diff_mode:
    support: full
    details: The hook attributes and the body / config texts.
  platform:
    platforms: posix
seealso:
  - module: hpc.pbs.qmgr
  - module: hpc.pbs.cluster_info
  - plugin: hpc.pbs.json_schema_errors
    plugin_type: filter
  - name: OpenPBS source and design documents
    description: The PBS code this module drives and the designs it implements (PP-928 reliable job startup).
    link: https://github.com/openpbs/openpbs
'''

EXAMPLES = r'''
- name: Reliable job startup hook (PP-928), enabled once its body and config are in
  hpc.pbs.hook:
    name: reliable_job_startup
    events: [queuejob, execjob_launch]
    alarm: 30
    order: 1
    fail_action: [none]
    body: "{{ lookup('file', 'reliable_job_startup.py') }}"
    config: "{{ rjs_config | to_json }}"
    enabled: true

- name: Enable the built-in Cray ATOM pbshook with a validated config
  hpc.pbs.hook:
    name: PBS_cray_atom
    type: pbs
    config: '{"post_timeout": 45, "delete_timeout": 45, "unix_socket_file": "/var/run/atomd/atomd.sock"}'
    enabled: true

- name: Remove a site hook
  hpc.pbs.hook:
    name: old_hook
    state: absent
'''

RETURN = r'''
hook:
  description: Attributes of the hook after the task as C(qmgr list) shows them (strings);
    empty after a delete; predicted in check mode.
  returned: always
  type: dict
  sample: {"type": "site", "enabled": "true", "event": "queuejob,execjob_launch",
           "user": "pbsadmin", "alarm": "30", "order": "1", "debug": "false",
           "fail_action": "none"}
preflight:
  description: How the body that goes live with this task was checked before anything
    was written; absent when no body goes live (unchanged body and config, pbshook).
  returned: when a body was checked
  type: dict
  sample: {"interpreter": "/opt/pbs/bin/pbs_python", "python_version": "3.11.2",
           "compiled": true, "loaded": true, "load_event": "queuejob"}
  contains:
    interpreter:
      description: The interpreter that compiled (and loaded) the body.
      type: str
    python_version:
      description: Its Python version.
      type: str
    compiled:
      description: Always true (a body that does not compile fails the task).
      type: bool
    loaded:
      description: Whether pbs_python loaded the body once.
      type: bool
    load_event:
      description: The event type of the empty event the body was loaded with.
      type: str
    not_loaded_because:
      description: Why the body was not loaded (no pbs_python, or one without hook mode).
      type: str
commands:
  description: The qmgr commands fed on stdin, each qmgr invocation ending with C(list)
    (in check mode the ones that would run; temporary file names are then shown as
    C(<temporary file>)).
  returned: always
  type: list
  elements: str
'''

import json
import os
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes, to_text

from ansible_collections.hpc.pbs.plugins.module_utils.hook_preflight import (
    HookBodyRefused, HookPreflightError, Preflight)
from ansible_collections.hpc.pbs.plugins.module_utils.json_schema import (
    JsonSchemaError, JsonSchemaUnavailable, schema_errors)
from ansible_collections.hpc.pbs.plugins.module_utils.hooks import (
    ALARM_MINIMUM, CONTENT_BODY, CONTENT_CONFIG, NEW_SITE_HOOK, PERIODIC_EVENTS, SITE_ORDER_RANGE,
    alarm_accepted, bad_event_message, config_refusal_message, hook_file_paths, site_hook_name_problem,
    site_order_accepted, sort_events, unknown_events)
from ansible_collections.hpc.pbs.plugins.module_utils.pbs_conf import (
    module_pbs_paths, pbs_conf_argument_spec)
from ansible_collections.hpc.pbs.plugins.module_utils.qmgr import (
    Qmgr, QmgrError, QmgrValueError, bool_word, create_command, delete_command,
    import_command, list_command, marker_command, object_name_problem, parse_list_output,
    set_command, split_list_value)

PLACEHOLDER = "<temporary file>"
SITE_ONLY = ("body", "body_src", "user", "debug")
# Attributes that setting ``event`` can reset on the server (hook_func.c), so they are
# written again after a change of events when the task names them.
RESET_BY_EVENT = ("user", "fail_action", "freq")


def read_source(module, option, text, path):
    """Bytes of ``text`` (option value) or of the file ``path``; None when neither."""
    if text is not None:
        return to_bytes(text, errors="surrogate_or_strict")
    if path is not None:
        try:
            with open(path, "rb") as handle:
                return handle.read()
        except (IOError, OSError) as exc:
            module.fail_json(msg="%s: cannot read %s on the managed host: %s. Copy the "
                                 "file there first or give the content in %s."
                             % (option, path, exc, option.replace("_src", "")))
    return None


def config_text(module, value):
    """The config option as text: a dict/list as JSON (sorted keys, indent 2, newline),
    a string unchanged, None when not given."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        return json.dumps(value, indent=2, sort_keys=True) + "\n"
    module.fail_json(msg="config must be a string, a dict or a list, not %s"
                         % type(value).__name__)


def check_json(module, config, schema=None):
    """Fail unless ``config`` (bytes) parses as JSON and, with ``schema``, satisfies it."""
    try:
        data = json.loads(to_text(config, errors="surrogate_or_strict"))
    except ValueError as exc:
        module.fail_json(msg="the hook config is not valid JSON (%s); nothing was imported. "
                             "qmgr would import a broken file with rc 0. Fix the config or "
                             "set config_format=raw for a non-JSON config." % exc)
    if not schema:
        return
    try:
        errors = schema_errors(data, schema)
    except JsonSchemaUnavailable as exc:
        module.fail_json(msg="config_schema: %s on the host the module runs on. Run the task "
                             "through ansible-playbook (the hpc.pbs.hook action plugin checks "
                             "the schema on the controller) or install jsonschema there. "
                             "Nothing was changed." % exc)
    except JsonSchemaError as exc:
        module.fail_json(msg="config_schema: %s. Nothing was changed." % exc)
    if errors:
        module.fail_json(msg=config_refusal_message(errors), schema_errors=errors)


def validate(module, params):
    """All checks that need no PBS: fail before anything runs."""
    name = params["name"]
    kind = "pbshook" if params["type"] == "pbs" else "hook"
    problem = object_name_problem(kind, name)
    if problem:
        module.fail_json(msg="%s. Nothing was changed." % problem)
    if params["type"] == "pbs":
        given = [o for o in SITE_ONLY if params[o] is not None]
        if given:
            module.fail_json(msg="%s cannot be managed on a built-in pbshook (type=pbs): "
                                 "PBS refuses a body ('<content-type> must be "
                                 "application/x-config') and these attributes. Only "
                                 "enabled, events, alarm, order, fail_action, freq and "
                                 "config may be given." % ", ".join(given))
        if params["state"] == "absent":
            module.fail_json(msg="a built-in pbshook cannot be deleted (qmgr: Invalid "
                                 "request); use enabled=false instead")
    else:
        problem = site_hook_name_problem(name)
        if problem:
            module.fail_json(msg=problem)
    if params["events"] is not None:
        bad = unknown_events(params["events"])
        if bad:
            module.fail_json(msg="qmgr obj=%s svr=default: %s. Nothing was created or "
                                 "changed; use the event names listed."
                                 % (name, bad_event_message(",".join(bad))),
                             invalid_events=bad)
    if params["order"] is not None and params["type"] == "site":
        if not site_order_accepted(params["order"]):
            module.fail_json(msg="order %s is outside the acceptable range of [%s, %s] for "
                                 "a site hook" % ((params["order"],) + SITE_ORDER_RANGE))
    if params["alarm"] is not None and not alarm_accepted(params["alarm"]):
        module.fail_json(msg="alarm must be a whole number of seconds >= %d (got %s)"
                         % (ALARM_MINIMUM, params["alarm"]))
    if params["freq"] is not None and params["freq"] < 1:
        module.fail_json(msg="freq must be a whole number of seconds >= 1 (got %s)"
                         % params["freq"])
    fail_action = params["fail_action"]
    if fail_action is not None:
        if not fail_action:
            module.fail_json(msg="fail_action is empty: give [none] or a list of actions")
        if "none" in fail_action and len(set(fail_action)) > 1:
            module.fail_json(msg="fail_action 'none' cannot be combined with other actions")


def current_file(module, qmgr, paths, kind, name, which, exists):
    """Current bytes of the hook body/config: from server_priv/hooks, else qmgr export."""
    if not exists:
        return b""
    path = hook_file_paths(paths.server_hooks_dir, name)[which]
    hooks_dir = paths.server_hooks_dir
    if os.path.isdir(hooks_dir) and os.access(hooks_dir, os.R_OK | os.X_OK):
        if not os.path.exists(path):
            return b""
        try:
            with open(path, "rb") as handle:
                return handle.read()
        except (IOError, OSError):
            pass
    content_type = CONTENT_BODY if which == "body" else CONTENT_CONFIG
    try:
        return to_bytes(qmgr.export_hook(kind, name, content_type),
                        errors="surrogate_or_strict")
    except QmgrError as exc:
        module.fail_json(**exc.fail_kwargs())


def events_after(params, current):
    """The hook's events after the task, in server order."""
    events = params["events"]
    if events is None:
        events = split_list_value(current.get("event", ""))
    return sort_events(events)


def body_to_preflight(module, qmgr, paths, name, exists, body, body_now, config, config_now):
    """The body that goes live with this task and must be checked first (bytes), or None.

    A new body is checked; so is the current body when only the config changes (a body
    may read its config as it loads)."""
    if body is not None and body != body_now:
        return body
    if config is not None and config != config_now and exists:
        current = current_file(module, qmgr, paths, "hook", name, "body", exists)
        return current or None
    return None


def preflight_body(module, paths, params, name, current, body, config):
    """Compile the body with the hook interpreter and, where pbs_python has its hook mode,
    load it once (see module_utils/hook_preflight). Fails the task, nothing changed, when
    the body is refused. Returns the preflight report (dict) for the result."""
    display_name = params["body_src"] or "%s.PY" % name
    config_path = None if config is not None else hook_file_paths(
        paths.server_hooks_dir, name)["config"]
    if config_path and not os.path.isfile(config_path):
        config_path = None
    alarm = params["alarm"] or current.get("alarm")
    preflight = Preflight(module.run_command, paths.exec_dir, module.tmpdir)
    try:
        return preflight.check(body, display_name, name, events_after(params, current),
                               alarm, config=config, config_path=config_path)
    except HookBodyRefused as exc:
        module.fail_json(msg="%s. Nothing was changed: hook %s was neither created nor "
                             "touched (attributes, body, config and enabled state as they "
                             "were)." % (exc, name))
    except HookPreflightError as exc:
        module.fail_json(**exc.fail_kwargs())
    finally:
        preflight.close()


def split_final_enable(commands):
    """``(writes, enable)``: a final ``enabled = true`` that follows an import goes into a
    qmgr call of its own, run only once the imported files are verified."""
    if len(commands) > 1 and commands[-1].endswith("enabled = true") and any(
            c.startswith("import ") for c in commands[:-1]):
        return commands[:-1], commands[-1:]
    return commands, []


def verify_imported(module, qmgr, paths, kind, name, body, config):
    """Fail (the hook left disabled) unless the server now holds ``body`` / ``config``."""
    for which, wanted in (("body", body), ("config", config)):
        if wanted is None:
            continue
        now = current_file(module, qmgr, paths, kind, name, which, True)
        if now != wanted:
            module.fail_json(msg="%s %s was left disabled: its %s on the server differs from "
                                 "what was imported (%d bytes there, %d imported). Check "
                                 "server_priv/hooks and the server log, then run the task "
                                 "again." % (kind, name, which, len(now), len(wanted)))


def attr_text(attr, value):
    if attr in ("enabled", "debug"):
        return "true" if value else "false"
    if attr == "fail_action":
        return ",".join(value)
    return str(value)


def attr_differs(attr, desired, current):
    if current is None:
        return True
    if attr in ("enabled", "debug"):
        return bool_word(current) is not desired
    if attr == "fail_action":
        return set(desired) != set(split_list_value(current))
    return str(desired) != current


def plan(kind, name, exists, current, params, body, config, body_now, config_now,
         stage_file):
    """Qmgr commands (in the safe order) and the predicted attributes after them.

    ``stage_file(data)`` returns the path of a file holding ``data`` for qmgr import.
    """
    commands = []
    after = dict(current)

    def put(attr, text):
        commands.append(set_command(kind, name, attr, text))
        after[attr] = text

    enabled_now = bool_word(current.get("enabled", "true"))
    want_enabled = params["enabled"]
    if not exists:
        commands.append(create_command("hook", name))
        put("enabled", "false")
        enabled_now = False
        if want_enabled is None:
            want_enabled = body is not None
    if want_enabled is False and enabled_now:
        put("enabled", "false")
        enabled_now = False

    events_changed = False
    if params["events"] is not None:
        wanted = sort_events(params["events"])
        if set(wanted) != set(split_list_value(current.get("event", ""))):
            put("event", ",".join(wanted))
            events_changed = True

    for attr in ("user", "alarm", "freq", "order", "debug", "fail_action"):
        desired = params[attr]
        if desired is None:
            continue
        if attr_differs(attr, desired, current.get(attr)) or (
                events_changed and attr in RESET_BY_EVENT):
            put(attr, attr_text(attr, desired))

    if body is not None and body != body_now:
        commands.append(import_command(kind, name, CONTENT_BODY, stage_file(body)))
    if config is not None and config != config_now:
        commands.append(import_command(kind, name, CONTENT_CONFIG, stage_file(config)))

    if want_enabled and not enabled_now:
        put("enabled", "true")
    return commands, after


def run_write_batch(module, qmgr, kind, name, batch):
    """Run ``batch`` (writes then ``list``) in one ``qmgr -a``; warn qmgr's warnings.
    Returns the hook's attributes as listed at the end ({} when not listed); fails the
    task on a qmgr error."""
    try:
        out, err = qmgr.run_batch(batch, "the changes to %s %s" % (kind, name),
                                  marker=marker_command(kind, name))
    except QmgrError as exc:
        module.fail_json(**exc.fail_kwargs())
    for line in err.splitlines():
        if line.startswith("WARNING"):
            module.warn("qmgr: %s" % line.strip())
    try:
        objects = parse_list_output(out)
    except ValueError as exc:
        module.fail_json(msg="the hook was changed but the listing after it cannot be "
                             "parsed: %s" % exc, stdout=out, commands=batch)
    return objects[-1][2] if objects else {}


def attributes_text(attributes):
    return "".join("%s = %s\n" % (k, v) for k, v in attributes.items())


def main():
    argument_spec = dict(
        name=dict(type="str", required=True),
        state=dict(type="str", default="present", choices=["present", "absent"]),
        type=dict(type="str", default="site", choices=["site", "pbs"]),
        events=dict(type="list", elements="str", aliases=["event"]),
        enabled=dict(type="bool"),
        order=dict(type="int"),
        alarm=dict(type="int"),
        fail_action=dict(type="list", elements="str",
                         choices=["none", "offline_vnodes", "clear_vnodes_upon_recovery",
                                  "scheduler_restart_cycle"]),
        user=dict(type="str", choices=["pbsadmin", "pbsuser"]),
        freq=dict(type="int"),
        debug=dict(type="bool"),
        body=dict(type="str", aliases=["content"]),
        body_src=dict(type="path", aliases=["src"]),
        config=dict(type="raw"),
        config_schema=dict(type="dict"),
        config_src=dict(type="path"),
        config_format=dict(type="str", default="json", choices=["json", "raw"]),
    )
    argument_spec.update(pbs_conf_argument_spec())
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True,
                           mutually_exclusive=[("body", "body_src"), ("config", "config_src")])
    params = module.params
    name = params["name"]
    kind = "pbshook" if params["type"] == "pbs" else "hook"

    validate(module, params)
    body = read_source(module, "body_src", params["body"], params["body_src"])
    config = read_source(module, "config_src", config_text(module, params["config"]),
                         params["config_src"])
    if config is not None and (params["config_format"] == "json" or params["config_schema"]):
        check_json(module, config, params["config_schema"])

    paths = module_pbs_paths(module)
    qmgr = Qmgr(module, paths.qmgr)
    try:
        listed = qmgr.list_object(kind, name)
    except QmgrError as exc:
        module.fail_json(**exc.fail_kwargs())
    exists = listed is not None
    before = dict(listed[2]) if exists else {}
    result = dict(changed=False, commands=[], hook=before)

    if params["state"] == "absent":
        if exists:
            commands = [delete_command("hook", name)]
            result.update(changed=True, commands=commands, hook={})
            if not module.check_mode:
                try:
                    qmgr.run_batch(commands, "the deletion of hook %s" % name)
                except QmgrError as exc:
                    module.fail_json(**exc.fail_kwargs())
        if module._diff:
            result["diff"] = dict(before=attributes_text(before), after="",
                                  before_header="hook %s" % name,
                                  after_header="hook %s" % name)
        module.exit_json(**result)

    if not exists and kind == "pbshook":
        module.fail_json(msg="pbshook %s does not exist in this PBS (qmgr list pbshook "
                             "exited 1). Built-in hooks cannot be created; use type=site "
                             "with a name not starting with PBS to install a site hook."
                             % name)
    current = before if exists else dict(NEW_SITE_HOOK)
    if params["freq"] is not None:
        events = params["events"]
        if events is None:
            events = split_list_value(current.get("event", ""))
        if not any(e in PERIODIC_EVENTS for e in events):
            module.fail_json(msg="freq needs a periodic event: the hook's events must "
                                 "contain 'exechost_periodic' or 'periodic' (qmgr: "
                                 "set_hook_freq: Can't set hook freq value)")

    body_now = current_file(module, qmgr, paths, kind, name, "body", exists) \
        if body is not None else None
    config_now = current_file(module, qmgr, paths, kind, name, "config", exists) \
        if config is not None else None

    to_check = body_to_preflight(module, qmgr, paths, name, exists, body, body_now,
                                 config, config_now) if kind == "hook" else None
    if to_check is not None:
        result["preflight"] = preflight_body(module, paths, params, name, current, to_check,
                                             config)

    staged = []

    def stage_file(data):
        if module.check_mode:
            return PLACEHOLDER
        fd, path = tempfile.mkstemp(prefix="hpc_pbs_hook_", dir=module.tmpdir)
        staged.append(path)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        return path

    try:
        try:
            commands, after = plan(kind, name, exists, current, params, body, config,
                                   body_now, config_now, stage_file)
        except QmgrValueError as exc:
            module.fail_json(msg="%s. Nothing was changed." % exc)
        if commands:
            writes, enable = split_final_enable(commands)
            batches = [b + [list_command(kind, name)] for b in (writes, enable) if b]
            result.update(changed=True, commands=sum(batches, []), hook=after)
            if not module.check_mode:
                for index, batch in enumerate(batches):
                    if index:
                        verify_imported(module, qmgr, paths, kind, name, body, config)
                    listed_after = run_write_batch(module, qmgr, kind, name, batch)
                    if listed_after:
                        result["hook"] = listed_after
    finally:
        for path in staged:
            try:
                os.unlink(path)
            except OSError:
                pass

    if module._diff:
        diffs = [dict(before=attributes_text(before), after=attributes_text(result["hook"]),
                      before_header="hook %s attributes" % name,
                      after_header="hook %s attributes" % name)]
        for label, new, old in (("PY", body, body_now), ("CF", config, config_now)):
            if new is not None and new != old:
                diffs.append(dict(before=to_text(old or b"", errors="surrogate_then_replace"),
                                  after=to_text(new, errors="surrogate_then_replace"),
                                  before_header="%s.%s" % (name, label),
                                  after_header="%s.%s" % (name, label)))
        result["diff"] = diffs
    module.exit_json(**result)


if __name__ == "__main__":
    main()
