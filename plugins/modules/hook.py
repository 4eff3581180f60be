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
    first event (C(queuejob) when it has none) and the new or current config as
    C(pbs.hook_config_filename); an exception at module level (a C(NameError), a failed
    import) fails the task.
  - Then, unless in check mode, each event of the hook is run once by C(pbs_python --hook)
    as PBS runs a hook (C(__name__) is C(builtins), so the event code runs), with the same
    config, on a synthetic event - C(queuejob) a qsub of C(select=2:ncpus=1) with
    C(tolerate_node_failures=job_start) (what the bundled reliable job startup hook pads);
    C(execjob_launch) the primary mom launching a padded job of 3 vnodes whose second
    sister failed (in C(vnode_list_fail) and C(failed_mom_list)); C(execjob_begin),
    C(execjob_prologue), C(execjob_epilogue), C(execjob_end), C(execjob_preterm),
    C(execjob_abort), C(execjob_postsuspend), C(execjob_preresume) a job of 3 chunks on
    the primary mom; C(execjob_resize) that job after one chunk was released;
    C(exechost_startup) and C(exechost_periodic) the local vnode. The job is
    C(0.hpc-pbs-preflight) on hosts C(hpc-pbs-preflight-1) to C(-3), owned by root.
    An exception other than the hook's own C(accept()) / C(reject()), or a run past the
    hook's alarm, fails the task; a reject is a legitimate outcome, reported in the result
    (RV(preflight.events)) and as a warning.
  - Not run, with the reason in RV(preflight.events) - C(periodic), C(modifyvnode),
    C(management), C(modifyresv), C(jobobit), C(provision), C(resv_confirm),
    C(resv_begin), C(resv_end) (pbs_python's hook mode has no such event);
    C(modifyjob), C(movejob), C(runjob) (pbs_python's hook mode asks the PBS server for
    their job); C(postqueuejob), C(resvsub), C(execjob_attach) (no synthetic event).
  - The events run on the PBS server host as root, as the hook's event code runs on a
    mom, so a hook that acts on its host acts on the server host for the synthetic job
    (the bundled hooks do nothing there - C(cgroup_resize) makes no cgroup for a job
    with no vnode on its host). The mom events run in the
    order a job meets them, C(execjob_launch) first and C(execjob_end) / C(execjob_abort)
    last.
  - A failed preflight changes nothing (hook list, body, config, enabled state).
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
      - It must be UTF-8 text of at most 104857600 bytes (100 MiB); another body (from
        O(body) or O(body_src)) fails the task before any qmgr call, naming the option,
        and nothing is created, not even a disabled hook. OpenPBS checks no size at a hook
        import; the limit is the default C(jobscript_max_size) PBS puts on the job
        scripts it ships to the moms the same way.
      - C(content) is an alias.
    type: str
    aliases: [content]
  body_src:
    description:
      - Path on the managed host of the hook's Python source (alternative to O(body)).
        The same rules as O(body); a file over the size limit is refused from its size,
        unread.
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
           "compiled": true, "loaded": true, "load_event": "queuejob",
           "events": {"queuejob": {"ran": true, "accepted": true, "reject_message": ""},
                      "periodic": {"ran": false, "not_run_because": "pbs_python's hook mode
                                   has no periodic event (src/tools/pbs_python.c ends such a
                                   run with Unexpected event)"}}}
  contains:
    interpreter:
      description: The interpreter that compiled (and loaded) the body.
      type: str
      sample: /opt/pbs/bin/pbs_python
    python_version:
      description: Its Python version.
      type: str
      sample: "3.11.2"
    compiled:
      description: Always true (a body that does not compile fails the task).
      type: bool
      sample: true
    loaded:
      description: Whether pbs_python loaded the body once.
      type: bool
      sample: true
    load_event:
      description: The event type of the empty event the body was loaded with.
      type: str
      sample: queuejob
    not_loaded_because:
      description: Why the body was not loaded (no pbs_python, or one without hook mode).
      type: str
      sample: "no pbs_python in PBS_EXEC/bin: the body was compiled by /usr/bin/python3"
    events:
      description:
        - Each event of the hook after the task - C(ran) whether it was run on its
          synthetic event; when run, C(accepted) (false when the hook rejected it) and
          C(reject_message) (the hook's message, empty when none); when not,
          C(not_run_because).
        - Absent in check mode and when the body was not loaded.
      type: dict
      sample: {"queuejob": {"ran": true, "accepted": true, "reject_message": ""}}
      returned: when the body was loaded outside check mode
commands:
  description: The qmgr commands fed on stdin, each qmgr invocation ending with C(list)
    (in check mode the ones that would run; temporary file names are then shown as
    C(<temporary file>)).
  returned: always
  type: list
  elements: str
  sample: ["create hook reliable_job_startup", 'set hook reliable_job_startup event = "queuejob,execjob_launch"',
           "list hook reliable_job_startup"]
'''

import os
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes

from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hook_plan import (
    HOOK_ATTRIBUTE_OPTIONS, attributes_text, check_hook_task, check_json, config_text,
    current_file, hook_diffs, plan_present, preflight_body)
from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hooks import (
    body_problem, body_size_problem)
from ansible_collections.hpc.pbs.plugins.module_utils.common.module_error import ModuleError
from ansible_collections.hpc.pbs.plugins.module_utils.pbs.pbs_conf import (
    pbs_conf_argument_spec, task_pbs_paths)
from ansible_collections.hpc.pbs.plugins.module_utils.server.qmgr import (
    Qmgr, delete_command, list_command, marker_command, parse_list_output)
from ansible_collections.hpc.pbs.plugins.module_utils.common.refusal import TaskRefused

PLACEHOLDER = "<temporary file>"


def read_source(option, text, path, size_problem=None):
    """Bytes of ``text`` (option value) or of the file ``path``; None when neither.
    ``size_problem(option, size)``: why a file of that size is refused (checked before
    the file is read), or None. Raises ModuleError (TaskRefused for a refused size) when the
    file cannot be read."""
    if text is not None:
        return to_bytes(text, errors="surrogate_or_strict")
    if path is not None:
        try:
            if size_problem is not None:
                problem = size_problem(option, os.path.getsize(path))
                if problem:
                    raise TaskRefused("%s. Nothing was changed." % problem)
            with open(path, "rb") as handle:
                return handle.read()
        except (IOError, OSError) as exc:
            raise ModuleError("%s: cannot read %s on the managed host: %s. Copy the "
                              "file there first or give the content in %s."
                              % (option, path, exc, option.replace("_src", "")))
    return None


def split_final_enable(commands):
    """``(writes, enable)``: a final ``enabled = true`` that follows an import goes into a
    qmgr call of its own, run only once the imported files are verified."""
    if len(commands) > 1 and commands[-1].endswith("enabled = true") and any(
            c.startswith("import ") for c in commands[:-1]):
        return commands[:-1], commands[-1:]
    return commands, []


def verify_imported(qmgr, paths, kind, name, body, config):
    """Raise ModuleError (the hook left disabled; a QmgrError when qmgr fails) unless the
    server now holds ``body`` / ``config``."""
    for which, wanted in (("body", body), ("config", config)):
        if wanted is None:
            continue
        now = current_file(qmgr, paths, kind, name, which, True)
        if now != wanted:
            raise ModuleError("%s %s was left disabled: its %s on the server differs from "
                              "what was imported (%d bytes there, %d imported). Check "
                              "server_priv/hooks and the server log, then run the task "
                              "again." % (kind, name, which, len(now), len(wanted)))


def run_write_batch(module, qmgr, kind, name, batch):
    """Run ``batch`` (writes then ``list``) in one ``qmgr -a``; warn qmgr's warnings.
    Returns the hook's attributes as listed at the end ({} when not listed); raises
    ModuleError (a QmgrError on a qmgr error)."""
    out, err = qmgr.run_batch(batch, "the changes to %s %s" % (kind, name),
                              marker=marker_command(kind, name))
    for line in err.splitlines():
        if line.startswith("WARNING"):
            module.warn("qmgr: %s" % line.strip())
    try:
        objects = parse_list_output(out)
    except ValueError as exc:
        raise ModuleError("the hook was changed but the listing after it cannot be "
                          "parsed: %s" % exc, stdout=out, commands=batch)
    return objects[-1][2] if objects else {}


def main():
    argument_spec = dict(
        HOOK_ATTRIBUTE_OPTIONS,
        name=dict(type="str", required=True),
        state=dict(type="str", default="present", choices=["present", "absent"]),
        events=dict(type="list", elements="str", aliases=["event"]),
        body=dict(type="str", aliases=["content"]),
        body_src=dict(type="path", aliases=["src"]),
        config_schema=dict(type="dict"),
        config_src=dict(type="path"),
    )
    argument_spec.update(pbs_conf_argument_spec())
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True,
                           mutually_exclusive=[("body", "body_src"), ("config", "config_src")])
    try:
        result = run(module)
    except ModuleError as exc:
        module.fail_json(**exc.fail_kwargs())
    module.exit_json(**result)


def run(module):
    """The task: the result (dict); raises ModuleError (TaskRefused and QmgrError too)
    where it fails."""
    params = module.params
    name = params["name"]
    kind = "pbshook" if params["type"] == "pbs" else "hook"

    check_hook_task(params)
    body = read_source("body_src", params["body"], params["body_src"],
                       body_size_problem)
    if body is not None:
        problem = body_problem("body" if params["body"] is not None else "body_src", body)
        if problem:
            raise TaskRefused("%s. Nothing was changed: hook %s was neither created nor "
                              "touched." % (problem, name))
    config = read_source("config_src", config_text(params["config"]),
                         params["config_src"])
    if config is not None and (params["config_format"] == "json" or params["config_schema"]):
        check_json(config, params["config_schema"])

    paths = task_pbs_paths(params)
    qmgr = Qmgr.for_paths(module, paths)
    listed = qmgr.list_object(kind, name)
    exists = listed is not None
    before = dict(listed[2]) if exists else {}
    result = dict(changed=False, commands=[], hook=before)

    if params["state"] == "absent":
        if exists:
            commands = [delete_command("hook", name)]
            result.update(changed=True, commands=commands, hook={})
            if not module.check_mode:
                qmgr.run_batch(commands, "the deletion of hook %s" % name)
        if module._diff:
            result["diff"] = dict(before=attributes_text(before), after="",
                                  before_header="hook %s" % name,
                                  after_header="hook %s" % name)
        return result

    staged = []

    def stage_file(data):
        if module.check_mode:
            return PLACEHOLDER
        fd, path = tempfile.mkstemp(prefix="hpc_pbs_hook_", dir=module.tmpdir)
        staged.append(path)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        return path

    def preflight(to_check, current, config):
        report = preflight_body(module.run_command, module.tmpdir, paths, params, name,
                                current, to_check, config, run_events=not module.check_mode)
        for event, outcome in sorted(report.get("events", {}).items()):
            if outcome.get("ran") and not outcome["accepted"]:
                module.warn("hook %s rejects its synthetic %s event at the preflight: %s"
                            % (name, event, outcome["reject_message"] or "(no message)"))
        return report

    try:
        planned = plan_present(qmgr, paths, params, before if exists else None, body,
                               config, preflight, stage_file)
        if planned["preflight"] is not None:
            result["preflight"] = planned["preflight"]
        commands = planned["commands"]
        if commands:
            writes, enable = split_final_enable(commands)
            batches = [b + [list_command(kind, name)] for b in (writes, enable) if b]
            result.update(changed=True, commands=sum(batches, []), hook=planned["after"])
            if not module.check_mode:
                for index, batch in enumerate(batches):
                    if index:
                        verify_imported(qmgr, paths, kind, name, body, config)
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
        result["diff"] = hook_diffs(name, before, result["hook"],
                                    (("PY", body, planned["body_now"]),
                                     ("CF", config, planned["config_now"])))
    return result


if __name__ == "__main__":
    main()
