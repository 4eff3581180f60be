# -*- coding: utf-8 -*-
"""What ``hpc.pbs.hook`` would change on a hook (state present), planned without writing:
the task's checks that need no PBS, the current attributes and files, the preflight of a
body that would go live, the qmgr commands in the safe order and the attributes after them.
Shared by ``hpc.pbs.hook`` (which then imports and writes) and ``hpc.pbs.cluster_info``
(``plan_hooks``: the audit's plan in its one read of the server). A task that cannot be
planned raises :class:`~refusal.TaskRefused`; a failed qmgr call raises
:class:`~qmgr.QmgrError`."""

import hashlib
import json
import os

from ansible.module_utils.common.text.converters import to_bytes, to_text

from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hook_preflight import (
    HookBodyRefused, HookPreflightError, Preflight)
from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hooks import (
    ALARM_MINIMUM, CONTENT_BODY, CONTENT_CONFIG, NEW_SITE_HOOK, PERIODIC_EVENTS,
    SITE_ORDER_RANGE, alarm_accepted, bad_event_message, config_refusal_message, fail_action_problem,
    hook_file_paths, site_hook_name_problem, site_order_accepted, sort_events, unknown_events)
from ansible_collections.hpc.pbs.plugins.module_utils.common.json_schema import (
    JsonSchemaError, JsonSchemaUnavailable, schema_errors)
from ansible_collections.hpc.pbs.plugins.module_utils.pbs.pbs_command import PbsRunner
from ansible_collections.hpc.pbs.plugins.module_utils.server.qmgr import (
    QmgrValueError, bool_word, create_command, import_command, object_name_problem,
    set_command, split_list_value)
from ansible_collections.hpc.pbs.plugins.module_utils.server.qmgr_plan import attribute_changes
from ansible_collections.hpc.pbs.plugins.module_utils.common.refusal import TaskRefused


# The options of hpc.pbs.hook that describe the hook's attributes (argument spec entries),
# shared by the module and by hpc.pbs.cluster_info's plan_hooks.
HOOK_ATTRIBUTE_OPTIONS = dict(
    type=dict(type="str", default="site", choices=["site", "pbs"]),
    enabled=dict(type="bool"),
    order=dict(type="int"),
    alarm=dict(type="int"),
    fail_action=dict(type="list", elements="str",
                     choices=["none", "offline_vnodes", "clear_vnodes_upon_recovery",
                              "scheduler_restart_cycle"]),
    user=dict(type="str", choices=["pbsadmin", "pbsuser"]),
    freq=dict(type="int"),
    debug=dict(type="bool"),
    config=dict(type="raw"),
    config_format=dict(type="str", default="json", choices=["json", "raw"]),
)
SITE_ONLY = ("body", "body_src", "user", "debug")
# Attributes that setting ``event`` can reset on the server (hook_func.c), so they are
# written again after a change of events when the task names them.
RESET_BY_EVENT = ("user", "fail_action", "freq")


def config_text(value):
    """The config option as text: a dict/list as JSON (sorted keys, indent 2, newline),
    a string unchanged, None when not given."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        return json.dumps(value, indent=2, sort_keys=True) + "\n"
    raise TaskRefused("config must be a string, a dict or a list, not %s"
                      % type(value).__name__)


def check_json(config, schema=None):
    """Fail unless ``config`` (bytes) parses as JSON and, with ``schema``, satisfies it."""
    try:
        data = json.loads(to_text(config, errors="surrogate_or_strict"))
    except ValueError as exc:
        raise TaskRefused("the hook config is not valid JSON (%s); nothing was imported. "
                          "qmgr would import a broken file with rc 0. Fix the config or "
                          "set config_format=raw for a non-JSON config." % exc)
    if not schema:
        return
    try:
        errors = schema_errors(data, schema)
    except JsonSchemaUnavailable as exc:
        raise TaskRefused("config_schema: %s on the host the module runs on. Run the task "
                          "through ansible-playbook (the hpc.pbs.hook action plugin checks "
                          "the schema on the controller) or install jsonschema there. "
                          "Nothing was changed." % exc)
    except JsonSchemaError as exc:
        raise TaskRefused("config_schema: %s. Nothing was changed." % exc)
    if errors:
        raise TaskRefused(config_refusal_message(errors), schema_errors=errors)


def check_hook_task(params):
    """All checks of a hook task (``params``: the options of hpc.pbs.hook) that need no PBS;
    raises TaskRefused before anything runs."""
    name = params["name"]
    kind = "pbshook" if params["type"] == "pbs" else "hook"
    problem = object_name_problem(kind, name)
    if problem:
        raise TaskRefused("%s. Nothing was changed." % problem)
    if params["type"] == "pbs":
        given = [o for o in SITE_ONLY if params.get(o) is not None]
        if given:
            raise TaskRefused("%s cannot be managed on a built-in pbshook (type=pbs): "
                              "PBS refuses a body ('<content-type> must be "
                              "application/x-config') and these attributes. Only "
                              "enabled, events, alarm, order, fail_action, freq and "
                              "config may be given." % ", ".join(given))
        if params["state"] == "absent":
            raise TaskRefused("a built-in pbshook cannot be deleted (qmgr: Invalid "
                              "request); use enabled=false instead")
    else:
        problem = site_hook_name_problem(name)
        if problem:
            raise TaskRefused(problem)
    if params["events"] is not None:
        bad = unknown_events(params["events"])
        if bad:
            raise TaskRefused("qmgr obj=%s svr=default: %s. Nothing was created or "
                              "changed; use the event names listed."
                              % (name, bad_event_message(",".join(bad))),
                              invalid_events=bad)
    if params["order"] is not None and params["type"] == "site":
        if not site_order_accepted(params["order"]):
            raise TaskRefused("order %s is outside the acceptable range of [%s, %s] for "
                              "a site hook" % ((params["order"],) + SITE_ORDER_RANGE))
    if params["alarm"] is not None and not alarm_accepted(params["alarm"]):
        raise TaskRefused("alarm must be a whole number of seconds >= %d (got %s)"
                          % (ALARM_MINIMUM, params["alarm"]))
    if params["freq"] is not None and params["freq"] < 1:
        raise TaskRefused("freq must be a whole number of seconds >= 1 (got %s)"
                          % params["freq"])
    if params["fail_action"] is not None and fail_action_problem(params["fail_action"]):
        raise TaskRefused(fail_action_problem(params["fail_action"]))


def current_file(qmgr, paths, kind, name, which, exists):
    """Current bytes of the hook body/config (``which``: "body" or "config"): from
    server_priv/hooks, else ``qmgr export``; b"" when the hook does not exist. Raises
    QmgrError when the export fails."""
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
    return to_bytes(qmgr.export_hook(kind, name, content_type), errors="surrogate_or_strict")


def events_after(params, current):
    """The hook's events after the task, in server order."""
    events = params["events"]
    if events is None:
        events = split_list_value(current.get("event", ""))
    return sort_events(events)


def body_to_preflight(qmgr, paths, name, exists, body, body_now, config, config_now):
    """The body that goes live with this task and must be checked first (bytes), or None.

    A new body is checked; so is the current body when only the config changes (a body
    may read its config as it loads)."""
    if body is not None and body != body_now:
        return body
    if config is not None and config != config_now and exists:
        current = current_file(qmgr, paths, "hook", name, "body", exists)
        return current or None
    return None


def preflight_body(run_command, tmpdir, paths, params, name, current, body, config,
                   run_events=False):
    """Compile the body with the hook interpreter and, where pbs_python has its hook mode,
    load it once and, with ``run_events``, run each of its events on a synthetic event (see
    module_utils/hooks/hook_preflight; without it, as in check mode and in plans, no event code
    runs, since a hook's event code may act on its host). Raises TaskRefused, nothing
    changed, when the body is refused or cannot be checked. Returns the preflight report
    (dict) for the result."""
    display_name = params.get("body_src") or "%s.PY" % name
    config_path = None if config is not None else hook_file_paths(
        paths.server_hooks_dir, name)["config"]
    if config_path and not os.path.isfile(config_path):
        config_path = None
    alarm = params["alarm"] or current.get("alarm")
    # pbs_python reads pbs.conf as the daemons do: the one the module was given.
    runner = PbsRunner(run_command, paths.conf_file)
    preflight = Preflight(runner.run_command, paths.exec_dir, tmpdir)
    try:
        return preflight.check(body, display_name, name, events_after(params, current),
                               alarm, config=config, config_path=config_path,
                               run_events=run_events)
    except HookBodyRefused as exc:
        raise TaskRefused("%s. Nothing was changed: hook %s was neither created nor "
                          "touched (attributes, body, config and enabled state as they "
                          "were)." % (exc, name))
    except HookPreflightError as exc:
        raise TaskRefused(exc.msg, cmd=exc.cmd, rc=exc.rc, stdout=exc.stdout, stderr=exc.stderr)
    finally:
        preflight.close()


def attr_text(attr, value):
    """The qmgr text of an attribute value of the task."""
    if attr in ("enabled", "debug"):
        return "true" if value else "false"
    if attr == "fail_action":
        return ",".join(value)
    return str(value)


def attr_differs(attr, desired, current):
    """Whether the task's value differs from the listed text (None: not listed)."""
    if current is None:
        return True
    if attr in ("enabled", "debug"):
        return bool_word(current) is not desired
    if attr == "fail_action":
        return set(desired) != set(split_list_value(current))
    return str(desired) != current


def plan_commands(kind, name, exists, current, params, body, config, body_now, config_now,
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
        desired = params.get(attr)
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


def attributes_text(attributes):
    """``attribute = value`` lines, in the order of the dict."""
    return "".join("%s = %s\n" % (k, v) for k, v in attributes.items())


def plan_present(qmgr, paths, params, listed, body, config, preflight, stage_file):
    """Plan ``state: present`` of the hook ``params["name"]`` (``params``: the options of
    hpc.pbs.hook, already checked by :func:`check_hook_task`; ``listed``: its attributes as
    ``qmgr list`` shows them, None when it does not exist; ``body`` / ``config``: the wanted
    file contents as bytes, None when not managed). ``preflight(body, current, config)``
    checks a body that would go live and returns its report (see :func:`preflight_body`);
    ``stage_file(data)`` returns the path qmgr imports ``data`` from.

    Returns a dict: ``before`` (attributes listed), ``after`` (attributes predicted),
    ``commands`` (qmgr commands, empty when nothing would change), ``body_now`` /
    ``config_now`` (current bytes of the managed files, None when not managed),
    ``preflight`` (the report, None when no body was checked). Raises TaskRefused (a
    built-in hook that does not exist, freq without a periodic event, a value qmgr cannot
    take, a refused body) and QmgrError."""
    name = params["name"]
    kind = "pbshook" if params["type"] == "pbs" else "hook"
    exists = listed is not None
    before = dict(listed) if exists else {}
    if not exists and kind == "pbshook":
        raise TaskRefused("pbshook %s does not exist in this PBS (qmgr list pbshook "
                          "exited 1). Built-in hooks cannot be created; use type=site "
                          "with a name not starting with PBS to install a site hook." % name)
    current = before if exists else dict(NEW_SITE_HOOK)
    if params.get("freq") is not None:
        if not any(e in PERIODIC_EVENTS for e in events_after(params, current)):
            raise TaskRefused("freq needs a periodic event: the hook's events must "
                              "contain 'exechost_periodic' or 'periodic' (qmgr: "
                              "set_hook_freq: Can't set hook freq value)")
    body_now = current_file(qmgr, paths, kind, name, "body", exists) \
        if body is not None else None
    config_now = current_file(qmgr, paths, kind, name, "config", exists) \
        if config is not None else None
    to_check = body_to_preflight(qmgr, paths, name, exists, body, body_now,
                                 config, config_now) if kind == "hook" else None
    report = preflight(to_check, current, config) if to_check is not None else None
    try:
        commands, after = plan_commands(kind, name, exists, current, params, body, config,
                                        body_now, config_now, stage_file)
    except QmgrValueError as exc:
        raise TaskRefused("%s. Nothing was changed." % exc)
    return dict(before=before, after=after, commands=commands, body_now=body_now,
                config_now=config_now, preflight=report)


def file_change(label, name, suffix, new, old):
    """The change of one hook file as data (see :func:`hook_diffs`): ``new`` / ``old`` bytes
    (``old`` empty or None when the file is missing)."""
    change = dict(object=label, item="body" if suffix == "PY" else "config",
                  file="%s.%s" % (name, suffix),
                  before_sha256=hashlib.sha256(old).hexdigest() if old else None,
                  after_sha256=hashlib.sha256(new).hexdigest())
    if suffix == "CF":
        change.update(before=to_text(old, errors="surrogate_then_replace") if old else None,
                      after=to_text(new, errors="surrogate_then_replace"))
    return change


def hook_diffs(name, before, after, files):
    """The ``--diff`` of a hook task: the attributes (``attribute = value`` lines) before and
    after, then each file that changes (``files``: ``(suffix, new, old)`` bytes, suffix
    "PY" or "CF"; new None when not managed) with its old and new text.

    The first dict also carries ``changes``, every change of the task as data (for a
    program; the texts are for a person): the attributes as
    :func:`qmgr_plan.attribute_changes` gives them, then each file that changes as
    ``{"object", "item": "body" or "config", "file": "NAME.PY" / "NAME.CF",
    "before_sha256" (None when the file is missing), "after_sha256"}``, a config also with
    ``before`` (None when missing) and ``after``, its text. The object is ``"hook NAME"``,
    ``"pbshook NAME"`` for a built-in hook (type pbs)."""
    kind = "pbshook" if (after.get("type") or before.get("type")) == "pbs" else "hook"
    label = "%s %s" % (kind, name)
    changes = attribute_changes(label, before, after)
    diffs = [dict(before=attributes_text(before), after=attributes_text(after),
                  before_header="hook %s attributes" % name,
                  after_header="hook %s attributes" % name,
                  changes=changes)]
    for label_suffix, new, old in files:
        if new is not None and new != old:
            changes.append(file_change(label, name, label_suffix, new, old))
            diffs.append(dict(before=to_text(old or b"", errors="surrogate_then_replace"),
                              after=to_text(new, errors="surrogate_then_replace"),
                              before_header="%s.%s" % (name, label_suffix),
                              after_header="%s.%s" % (name, label_suffix)))
    return diffs
