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
    node, site hook or built-in pbshook) through C(qmgr), or of several objects of one type
    named in O(names).
  - One C(qmgr -c "list OBJ [NAME]") call reads the object(s); at most one more C(qmgr -a)
    call, fed on stdin, writes every change of the task and lists the object(s) again.
    C(-a) makes qmgr stop at the first rejected command. Setting the server's
    C(default_queue) adds one read (C(qmgr -c "list queue NAME")) to check the queue exists.
  - Nothing a task passes can add a qmgr command or reach another object. Object names and
    attribute names must match qmgr's grammar for the object type in full - no white
    space, C(,), C(=), C(;), quote or newline; see O(name) and O(attributes). Values are
    quoted by qmgr's rules (C("...") for values with white space, C(,) or C(=); C('...')
    for values holding C(")); a value holding both quote characters, a newline or another
    control character is refused. All of this is checked before qmgr runs, and every
    problem is reported at once with what is accepted.
  - Values of the attributes this collection knows are checked by type before qmgr runs -
    booleans, whole numbers with their ranges (C(scheduler_iteration) at least 1,
    C(resend_term_delay) 0 to 1800, ...), choices (the scheduler's C(job_run_wait), a
    node's C(state) and C(sharing), hook attributes), resources by their type
    (C(resources_available.ncpus) a count, C(resources_max.mem) a size such as C(64gb),
    C(resources_max.walltime) a duration), the server's C(default_qsub_arguments) by qsub's
    option rules (so that every job submission does not fail), and C(default_queue) must
    name an existing queue. Other attributes go to qmgr unchecked; when qmgr refuses one,
    the failure names the object, the attribute and the value along with qmgr's message.
  - The object must exist; this module does not create or delete objects (see
    M(hpc.pbs.hook) for hooks).
  - Implements the attribute handling the PBS designs need, e.g. C(job_run_wait) of the
    scheduler (the job_run_wait design) and C(default_qsub_arguments) of the server (PP-928
    interface 1 via C(-W tolerate_node_failures)).
version_added: "0.1.0"
author: hpc.pbs developers (@hpc-pbs)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - hpc.pbs.pbs
options:
  object_type:
    description:
      - Kind of qmgr object, as qmgr names it - C(server), C(sched) (a scheduler),
        C(queue), C(node), C(hook) (a site hook) or C(pbshook) (a built-in PBS hook
        such as C(PBS_cray_atom) of the Shasta ATOM hook design).
    type: str
    required: true
    choices: [server, sched, queue, node, hook, pbshook]
  name:
    description:
      - Object name. Optional for C(server) (the default server); defaults to C(default)
        for C(sched); required for the other types unless O(names) is given.
      - One object only, as qmgr's grammar has it - a node name is a letter or digit, then
        letters, digits, C(.), C(_), C(-), C([) or C(]); a queue or scheduler name a
        letter, then letters, digits, C(_) or C(-) (at most 15 characters); a hook name a
        letter, then letters, digits, C(_) or C(-). A C(,) (which qmgr reads as a list of
        objects) is refused; use O(names) for several objects.
    type: str
  names:
    description:
      - Several objects of O(object_type) to change alike, for example nodes C([mom1,
        mom2]); each is a name as in O(name). They are read in one qmgr call and written
        in one. Every object must exist. The result then has RV(objects) instead of
        RV(attributes).
      - Mutually exclusive with O(name).
    type: list
    elements: str
  attributes:
    description:
      - Attribute name -> value, for attributes of the O(object_type) object as
        C(qmgr list) shows them; resource attributes use qmgr's dotted names
        (C(resources_default.ncpus), for server, queue and node objects). A name is a
        letter, then letters, digits or C(_), optionally C(.) and a resource name (a
        letter, then letters, digits, C(_) or C(-)). The server decides which names exist.
      - Attributes the PBS designs use - the scheduler's C(job_run_wait) (the
        job_run_wait design - C(execjob_hook), C(runjob_hook) (PBS's default) or C(none);
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
      - An attribute counts as unset when it is not listed, or when it is listed with the
        value PBS puts back after an unset (OpenPBS lists C(scheduler_iteration = 600)
        right after C(unset server scheduler_iteration)), so unsetting it again changes
        nothing.
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
  - Values PBS puts back after an unset are those OpenPBS 23.06 lists on a fresh
    installation, for the server and the default scheduler (for example C(log_events =
    511), C(job_run_wait = runjob_hook)) and hooks (C(alarm = 30), C(order = 1), ...).
attributes:
  check_mode:
    support: full
    details: Nothing is written; the returned attributes are a prediction.
  diff_mode:
    support: full
    details: The object attributes before and after.
  platform:
    platforms: posix
seealso:
  - module: hpc.pbs.hook
  - module: hpc.pbs.tolerate_node_failures
  - name: OpenPBS source and design documents
    description: The PBS code this module drives and the designs it implements (PP-928 reliable job startup).
    link: https://github.com/openpbs/openpbs
'''

EXAMPLES = r'''
- name: Scheduler waits for the runjob hook (the job_run_wait design)
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

- name: Take two nodes offline in one qmgr call
  hpc.pbs.qmgr:
    object_type: node
    names: [mom1, mom2]
    list_mode: append
    attributes:
      state: offline

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
  returned: unless O(names) is given
  type: dict
  sample: {"job_run_wait": "runjob_hook", "throughput_mode": "True"}
objects:
  description: Object name -> its attributes after the task (as RV(attributes)), for the
    objects of O(names).
  returned: when O(names) is given
  type: dict
  sample: {"mom1": {"state": "offline"}, "mom2": {"state": "offline"}}
rejected:
  description: The command qmgr refused and its parts (keys C(command), C(object_type),
    C(name), C(attribute), C(value)), when the task failed there.
  returned: on failure, when qmgr refused a write
  type: dict
  sample: {"command": "set server rpp_retry = abc", "object_type": "server", "name": null,
           "attribute": "rpp_retry", "value": "abc"}
commands:
  description: The qmgr commands fed on stdin to write the changes (empty when nothing
    changed; in check mode the commands that would run).
  returned: always
  type: list
  elements: str
  sample: ["set sched default job_run_wait = runjob_hook", "list sched default"]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpc.pbs.plugins.module_utils.common.module_error import ModuleError
from ansible_collections.hpc.pbs.plugins.module_utils.pbs.pbs_conf import (
    pbs_conf_argument_spec, task_pbs_paths)
from ansible_collections.hpc.pbs.plugins.module_utils.server.qmgr import (
    OBJECT_TYPES, Qmgr, list_command, marker_command, parse_list_output)
from ansible_collections.hpc.pbs.plugins.module_utils.server.qmgr_plan import (
    check_task, describe, object_diffs, plan_objects)


def object_names(module):
    """The names the task addresses: ``[name]``, the ``names`` list, or ``[None]`` for the
    default server; ``sched`` defaults to ``default``. Raises ModuleError when there are
    none or one twice."""
    params = module.params
    object_type = params["object_type"]
    if params["names"] is not None:
        if not params["names"]:
            raise ModuleError("names is empty: give at least one %s name" % object_type)
        if len(set(params["names"])) != len(params["names"]):
            raise ModuleError("names lists an object twice: %s" % params["names"])
        return list(params["names"])
    if params["name"] is not None:
        return [params["name"]]
    if object_type == "sched":
        return ["default"]
    if object_type == "server":
        return [None]
    raise ModuleError("name (or names) is required for object_type %s" % object_type)


def check_default_queue(qmgr, commands):
    """When the plan sets the server's ``default_queue``, make sure that queue exists (one
    ``qmgr -c "list queue NAME"``): qsub refuses every job of a server whose default queue
    is unknown. Raises ModuleError (a QmgrError when qmgr fails) otherwise."""
    for command in commands:
        if command.object_type == "server" and command.attribute == "default_queue" \
                and command.verb == "set":
            listed = qmgr.list_object("queue", command.value)
            if listed is None:
                raise ModuleError("server attribute default_queue: queue %r does not "
                                  "exist (qmgr list queue %s found nothing), and qsub would "
                                  "refuse every job without a queue; accepted: the name of "
                                  "an existing queue. Nothing was changed."
                                  % (command.value, command.value))


def run(module):
    """The task: the result (dict); raises ModuleError (TaskRefused and QmgrError too)
    where it fails."""
    params = module.params
    object_type = params["object_type"]
    names = object_names(module)
    attributes = params["attributes"]
    check_task(object_type, names, attributes, params["state"], params["list_mode"])

    paths = task_pbs_paths(module.params)
    qmgr = Qmgr.for_paths(module, paths)
    before, commands, after = plan_objects(qmgr, object_type, names, attributes,
                                           params["state"], params["list_mode"])
    check_default_queue(qmgr, commands)

    ref = names if names != [None] else None
    result = dict(changed=bool(commands), commands=[])
    if commands:
        batch = commands + [list_command(object_type, ref)]
        result["commands"] = [str(c) for c in batch]
        if not module.check_mode:
            after = write(module, qmgr, object_type, names, batch, after)
    if params["names"] is not None:
        result["objects"] = dict((name, after[name]) for name in names)
    else:
        result["attributes"] = after[names[0]]
    if module._diff:
        result["diff"] = object_diffs(object_type, names, before, after)
    return result


def write(module, qmgr, object_type, names, batch, predicted):
    """Run the batch (one ``qmgr -a``) and return ``{name: attributes}`` from the listing
    that ends it (the prediction for objects it does not show). Raises ModuleError (a
    QmgrError when qmgr fails)."""
    ref = names if names != [None] else None
    marker_name = names[0] if ref else None
    what = "the changes to %s" % ", ".join(describe(object_type, n) for n in names)
    out, err = qmgr.run_batch(batch, what, marker=marker_command(object_type, marker_name))
    for line in err.splitlines():
        if line.strip():
            module.warn("qmgr: %s" % line.strip())
    try:
        objects = parse_list_output(out)
    except ValueError as exc:
        raise ModuleError("the changes were written but the listing after them cannot be "
                          "parsed: %s" % exc, stdout=out, commands=[str(c) for c in batch],
                          changed=True)
    listed = dict(predicted)
    if len(names) == 1:
        if objects:
            listed[names[0]] = objects[-1][2]
        return listed
    for _kind, name, attrs in objects:
        if name in listed:
            listed[name] = attrs
    return listed


def main():
    argument_spec = dict(
        object_type=dict(type="str", required=True, choices=list(OBJECT_TYPES)),
        name=dict(type="str"),
        names=dict(type="list", elements="str"),
        attributes=dict(type="dict", required=True),
        state=dict(type="str", default="present", choices=["present", "absent"]),
        list_mode=dict(type="str", default="replace", choices=["replace", "append", "remove"]),
    )
    argument_spec.update(pbs_conf_argument_spec())
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True,
                           mutually_exclusive=[("name", "names")])
    try:
        result = run(module)
    except ModuleError as exc:
        module.fail_json(**exc.fail_kwargs())
    module.exit_json(**result)


if __name__ == "__main__":
    main()
