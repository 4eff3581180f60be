#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hpc.pbs developers
# Apache License 2.0 (https://www.apache.org/licenses/LICENSE-2.0), as galaxy.yml says

DOCUMENTATION = r'''
---
module: qmgr
short_description: Set, unset and list-append attributes of PBS objects with qmgr
description:
  - Manages attributes of one OpenPBS / PBS Professional object (server, scheduler, queue,
    node, site hook or built-in pbshook) through C(qmgr).
  - One C(qmgr -c "list OBJ [NAME]") call reads the object; at most one more C(qmgr -a)
    call, fed on stdin, writes every change of the task and lists the object again.
    C(-a) makes qmgr stop at the first rejected command.
  - Values are quoted by qmgr's rules (C("...") for values with white space, C(,) or C(=);
    C('...') for values holding C(")). A value holding both quote characters, or a newline,
    is refused before qmgr runs.
  - The object must exist; this module does not create or delete objects (see
    M(hpc.pbs.hook) for hooks).
  - Implements the attribute handling the seeds need, e.g. C(job_run_wait) of the
    scheduler (sched-job-run-wait) and C(default_qsub_arguments) of the server (PP-928
    interface 1 via C(-W tolerate_node_failures)).
version_added: "0.1.0"
author: hpc.pbs developers (@hpc-pbs)
extends_documentation_fragment:
  - hpc.pbs.pbs
options:
  object_type:
    description:
      - Kind of qmgr object, as qmgr names it - C(server), C(sched) (a scheduler),
        C(queue), C(node), C(hook) (a site hook) or C(pbshook) (a built-in PBS hook
        such as C(PBS_cray_atom) of seed shasta-pbs-cray-atom-hook).
    type: str
    required: true
    choices: [server, sched, queue, node, hook, pbshook]
  name:
    description:
      - Object name. Optional for C(server) (the default server); defaults to C(default)
        for C(sched); required for the other types.
    type: str
  attributes:
    description:
      - Attribute name -> value, for attributes of the O(object_type) object as
        C(qmgr list) shows them; resource attributes use qmgr's dotted names
        (C(resources_default.ncpus)). The server decides which names exist.
      - Attributes the seeds use - the scheduler's C(job_run_wait) (seed
        sched-job-run-wait - C(execjob_hook), C(runjob_hook) (PBS's default) or C(none);
        setting it also sets the deprecated C(throughput_mode)), and the server's
        C(default_qsub_arguments) (PP-928 interface 1 via C(-W tolerate_node_failures);
        M(hpc.pbs.tolerate_node_failures) edits only that item).
      - Values are strings, integers or booleans (written C(True)/C(False); compared with
        qmgr's boolean words C(true|t|y|1|false|f|n|0), case-insensitively) or lists.
      - A list is a list attribute; with O(list_mode=replace) it is written joined with
        C(,) and compared as a set (qmgr returns lists in its own order). A string is
        compared exactly.
      - With O(state=present) a C(null) value unsets that attribute.
      - With O(state=absent) only the names count; the values are ignored.
    type: dict
    required: true
  state:
    description:
      - C(present) sets the attributes (qmgr C(set)), C(absent) unsets them (qmgr
        C(unset)); an attribute already unset is left alone.
    type: str
    default: present
    choices: [present, absent]
  list_mode:
    description:
      - How O(state=present) writes values. C(replace) sets the whole value (C(=)).
        C(append) adds the listed items that are missing (C(+=), one command per item).
        C(remove) removes the listed items that are present (C(-=)).
      - With C(append)/C(remove) a string value is split on C(,) into items.
    type: str
    default: replace
    choices: [replace, append, remove]
notes:
  - Supports check mode and diff mode. In check mode nothing is written and the returned
    attributes are a prediction.
  - An attribute name the server does not know is a qmgr syntax error; the task fails with
    qmgr's own message (for example the text C(Syntax error)) and exit
    code (1 under C(-a)).
'''

EXAMPLES = r'''
- name: Scheduler waits for the runjob hook (sched-job-run-wait)
  hpc.pbs.qmgr:
    object_type: sched
    attributes:
      job_run_wait: runjob_hook

- name: Server comment with spaces (quoted for qmgr)
  hpc.pbs.qmgr:
    object_type: server
    attributes:
      comment: "maintenance on Friday, 8:00"

- name: Add a manager without touching the others
  hpc.pbs.qmgr:
    object_type: server
    list_mode: append
    attributes:
      managers: [root@pbs-server]

- name: Unset a queue limit
  hpc.pbs.qmgr:
    object_type: queue
    name: workq
    state: absent
    attributes:
      max_run: null
'''

RETURN = r'''
attributes:
  description: All attributes of the object after the task, as C(qmgr list) shows them
    (values as strings, wrapped values joined, C("") as empty string). Predicted in check
    mode.
  returned: always
  type: dict
  sample: {"job_run_wait": "runjob_hook", "throughput_mode": "True"}
commands:
  description: The qmgr commands fed on stdin to write the changes (empty when nothing
    changed; in check mode the commands that would run).
  returned: always
  type: list
  elements: str
  sample: ["set sched default job_run_wait = runjob_hook", "list sched default"]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpc.pbs.plugins.module_utils.pbs_conf import (
    module_pbs_paths, pbs_conf_argument_spec)
from ansible_collections.hpc.pbs.plugins.module_utils.qmgr import (
    Qmgr, QmgrError, QmgrValueError, bool_word, list_command, marker_command,
    parse_list_output, set_command, split_list_value, unset_command)


def value_text(value):
    """qmgr text of a scalar option value (bool -> True/False)."""
    if isinstance(value, bool):
        return "True" if value else "False"
    return str(value)


def value_items(value, split_strings):
    """Items of a list value; a scalar is one item (split on ``,`` if split_strings)."""
    if isinstance(value, (list, tuple)):
        return [value_text(v) for v in value]
    text = value_text(value)
    return split_list_value(text) if split_strings else [text]


def same_value(desired, current):
    """Whether desired option value equals the current qmgr text (None = unset)."""
    if current is None:
        return False
    if isinstance(desired, bool):
        return bool_word(current) is desired
    if isinstance(desired, (list, tuple)):
        return set(value_text(v) for v in desired) == set(split_list_value(current))
    return value_text(desired) == current


def plan_changes(object_type, name, attributes, current, state, list_mode):
    """Return ``(commands, predicted)`` for the task.

    ``current``: dict of current attribute text; ``predicted``: the attributes after the
    commands, as far as they can be known without asking the server. Raises
    QmgrValueError for values qmgr cannot take.
    """
    commands = []
    predicted = dict(current)
    for attr, desired in attributes.items():
        present = attr in current
        if state == "absent" or desired is None:
            if present:
                commands.append(unset_command(object_type, name, attr))
                predicted.pop(attr, None)
            continue
        if list_mode == "replace":
            if same_value(desired, current.get(attr)):
                continue
            if isinstance(desired, (list, tuple)):
                text = ",".join(value_text(v) for v in desired)
            else:
                text = value_text(desired)
            commands.append(set_command(object_type, name, attr, text))
            predicted[attr] = text
            continue
        have = split_list_value(current.get(attr, ""))
        items = value_items(desired, split_strings=True)
        if list_mode == "append":
            for item in items:
                if item not in have:
                    commands.append(set_command(object_type, name, attr, item, "+="))
                    have.append(item)
        else:
            for item in items:
                if item in have:
                    commands.append(set_command(object_type, name, attr, item, "-="))
                    have.remove(item)
        if have:
            predicted[attr] = ",".join(have)
        else:
            predicted.pop(attr, None)
    return commands, predicted


def attributes_text(attributes):
    return "".join("%s = %s\n" % (k, v) for k, v in attributes.items())


def main():
    argument_spec = dict(
        object_type=dict(type="str", required=True,
                         choices=["server", "sched", "queue", "node", "hook", "pbshook"]),
        name=dict(type="str"),
        attributes=dict(type="dict", required=True),
        state=dict(type="str", default="present", choices=["present", "absent"]),
        list_mode=dict(type="str", default="replace", choices=["replace", "append", "remove"]),
    )
    argument_spec.update(pbs_conf_argument_spec())
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)

    object_type = module.params["object_type"]
    name = module.params["name"]
    if object_type == "sched" and not name:
        name = "default"
    if object_type not in ("server", "sched") and not name:
        module.fail_json(msg="name is required for object_type %s" % object_type)
    attributes = module.params["attributes"]
    if not attributes:
        module.fail_json(msg="attributes is empty: name at least one attribute")
    for attr, value in attributes.items():
        if isinstance(value, dict):
            module.fail_json(msg="attribute %s: a dict is not a qmgr value; give a string, "
                                 "number, boolean or list" % attr)

    paths = module_pbs_paths(module)
    qmgr = Qmgr(module, paths.qmgr)
    ref = "%s %s" % (object_type, name) if name else object_type

    try:
        listed = qmgr.list_object(object_type, name)
    except QmgrError as exc:
        module.fail_json(**exc.fail_kwargs())
    if listed is None:
        module.fail_json(msg="%s does not exist (qmgr list exited 1). This module changes "
                             "attributes of existing objects only; create the object first "
                             "(hooks: hpc.pbs.hook)." % ref,
                         cmd=[paths.qmgr, "-c", list_command(object_type, name)], rc=1)
    before = listed[2]

    try:
        commands, after = plan_changes(object_type, name, attributes, before,
                                       module.params["state"], module.params["list_mode"])
    except QmgrValueError as exc:
        module.fail_json(msg="%s. Change the value; nothing was written." % exc)

    result = dict(changed=bool(commands), commands=[], attributes=after)
    if commands:
        batch = commands + [list_command(object_type, name)]
        result["commands"] = batch
        if not module.check_mode:
            try:
                out, err = qmgr.run_batch(batch, "the changes to %s" % ref,
                                          marker=marker_command(object_type, name))
            except QmgrError as exc:
                module.fail_json(**exc.fail_kwargs())
            for line in err.splitlines():
                if line.strip():
                    module.warn("qmgr: %s" % line.strip())
            try:
                objects = parse_list_output(out)
            except ValueError as exc:
                module.fail_json(msg="the changes were written but the listing after them "
                                     "cannot be parsed: %s" % exc, stdout=out,
                                 commands=batch)
            if objects:
                result["attributes"] = objects[-1][2]
    if module._diff:
        result["diff"] = dict(before=attributes_text(before),
                              after=attributes_text(result["attributes"]),
                              before_header="%s (before)" % ref,
                              after_header="%s (after)" % ref)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
