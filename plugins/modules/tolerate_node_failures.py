#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hpc.pbs developers
# Apache License 2.0 (https://www.apache.org/licenses/LICENSE-2.0), as galaxy.yml says

DOCUMENTATION = r'''
---
module: tolerate_node_failures
short_description: Set the server-wide default of a job's tolerate_node_failures
description:
  - Sets or removes the C(-W tolerate_node_failures=...) part of the server attribute
    C(default_qsub_arguments), the way PP-928 interface 1 lets a site make every job
    tolerant of failed sister moms at start (C(job_start)) or for its whole life (C(all)).
  - Everything else the site keeps in C(default_qsub_arguments) stays as it is (for
    example C(-r n -W umask=022 -W group_list=x)); other C(-W) items sharing a C(-W)
    with the tolerate item are kept too. The text is split with Python's C(shlex) and
    checked with qsub's option letters; options are written back as C(-X value) words
    joined by single spaces, values needing quotes in double quotes.
  - The server stores any string without checking it, and every user's C(qsub) caches
    it in a background process, so one bad value breaks every submission (qsub then says
    C(illegal -W value)) until that process ends. This module therefore writes only a value it has
    parsed back successfully, reads the attribute back after writing and fails when the
    server holds something else. When the current value cannot be parsed as qsub
    options, nothing is written and the task fails.
  - One C(qmgr -c "list server") call reads, at most one C(qmgr -a) call writes.
version_added: "0.1.0"
author: hpc.pbs developers (@hpc-pbs)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - hpc.pbs.pbs
options:
  value:
    description:
      - The default for jobs that do not ask for anything themselves, i.e. the job
        attribute C(tolerate_node_failures) of PP-928 interface 1, written as
        C(-W tolerate_node_failures=VALUE) into C(default_qsub_arguments).
      - Accepted values - C(all) tolerates node failures during the whole job,
        C(job_start) only while the job starts (up to its execjob_launch hooks and top
        shell), C(none) never (the PBS default when unset).
      - Required when O(state=present).
    type: str
    choices: [all, job_start, none]
  state:
    description:
      - C(present) sets O(value); C(absent) removes the tolerate item (and unsets
        C(default_qsub_arguments) when nothing else is left in it), so that jobs fall
        back to PBS's default C(none) of PP-928 interface 1.
    type: str
    default: present
    choices: [present, absent]
notes:
  - Supports check mode and diff mode.
  - A job may still override the default with C(qsub -W tolerate_node_failures=...) or
    C(qalter) (on a running job it counts from the next rerun, PP-928 interface 1).
attributes:
  check_mode:
    support: full
    details: Nothing is written.
  diff_mode:
    support: full
    details: The server attribute default_qsub_arguments before and after.
  platform:
    platforms: posix
seealso:
  - module: hpc.pbs.qmgr
  - module: hpc.pbs.cluster_info
  - name: OpenPBS source and design documents
    description: The PBS code this module drives and the designs it implements (PP-928 reliable job startup).
    link: https://github.com/openpbs/openpbs
'''

EXAMPLES = r'''
- name: Jobs tolerate failed sister moms while they start (PP-928)
  hpc.pbs.tolerate_node_failures:
    value: job_start

- name: Remove the server-wide default, keep the site's other default arguments
  hpc.pbs.tolerate_node_failures:
    state: absent
'''

RETURN = r'''
value:
  description: The effective server-wide tolerate_node_failures after the task (C(null)
    when the server sets none). Predicted in check mode.
  returned: always
  type: str
  sample: job_start
default_qsub_arguments:
  description: The whole attribute after the task (empty string when unset).
  returned: always
  type: str
  sample: "-r n -W umask=022 -W tolerate_node_failures=job_start"
previous:
  description: The attribute before the task (empty string when it was unset).
  returned: always
  type: str
  sample: "-r n -W umask=022"
commands:
  description: The qmgr commands fed on stdin (the ones that would run in check mode).
  returned: always
  type: list
  elements: str
  sample: ['set server default_qsub_arguments = "-r n -W umask=022 -W tolerate_node_failures=job_start"',
           "list server default_qsub_arguments"]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpc.pbs.plugins.module_utils.common.module_error import ModuleError
from ansible_collections.hpc.pbs.plugins.module_utils.pbs.pbs_conf import (
    pbs_conf_argument_spec, task_pbs_paths)
from ansible_collections.hpc.pbs.plugins.module_utils.server.qmgr import (
    Qmgr, QmgrValueError, list_command, parse_list_output, set_command,
    unset_command)
from ansible_collections.hpc.pbs.plugins.module_utils.jobs.qsub_args import (
    QsubArgumentsError, edit_default_qsub_arguments, parse_qsub_arguments, tolerate_value)

ATTRIBUTE = "default_qsub_arguments"


def effective_tolerate(text):
    try:
        return tolerate_value(parse_qsub_arguments(text, check_tolerate=False))
    except QsubArgumentsError:
        return None


def run(module):
    """The task: the result (dict); raises ModuleError (a QmgrError too) where it fails."""
    value = module.params["value"] if module.params["state"] == "present" else None

    paths = task_pbs_paths(module.params)
    qmgr = Qmgr.for_paths(module, paths)
    listed = qmgr.list_object("server")
    if listed is None:
        raise ModuleError("qmgr listed no server; check that pbs_server runs on this host "
                          "(PBS_SERVER in %s)" % paths.conf_file)
    previous = listed[2].get(ATTRIBUTE, "")

    try:
        new_text, changed = edit_default_qsub_arguments(previous, value)
    except QsubArgumentsError as exc:
        raise ModuleError("default_qsub_arguments not changed: %s. Correct the attribute "
                          "with hpc.pbs.qmgr (object_type=server) first." % exc,
                          previous=previous)

    commands = []
    if changed:
        try:
            if new_text:
                commands.append(set_command("server", None, ATTRIBUTE, new_text))
            else:
                commands.append(unset_command("server", None, ATTRIBUTE))
        except QmgrValueError as exc:
            raise ModuleError("default_qsub_arguments not changed: %s" % exc)
        commands.append(list_command("server", None, [ATTRIBUTE]))

    result = dict(changed=changed, previous=previous, default_qsub_arguments=new_text,
                  value=effective_tolerate(new_text), commands=[str(c) for c in commands])
    if changed and not module.check_mode:
        out, dummy = qmgr.run_batch(commands, "the new default_qsub_arguments")
        try:
            objects = parse_list_output(out)
        except ValueError as exc:
            raise ModuleError("default_qsub_arguments was written but cannot be read "
                              "back: %s" % exc, stdout=out, commands=commands,
                              changed=True)
        stored = objects[-1][2].get(ATTRIBUTE, "") if objects else None
        if stored != new_text:
            raise ModuleError("the server holds default_qsub_arguments %r after writing "
                              "%r; check it with qmgr before users submit jobs"
                              % (stored, new_text), changed=True, commands=commands)
    if module._diff:
        result["diff"] = dict(before="%s = %s\n" % (ATTRIBUTE, previous),
                              after="%s = %s\n" % (ATTRIBUTE, new_text),
                              before_header="server", after_header="server")
    return result


def main():
    argument_spec = dict(
        value=dict(type="str", choices=["all", "job_start", "none"]),
        state=dict(type="str", default="present", choices=["present", "absent"]),
    )
    argument_spec.update(pbs_conf_argument_spec())
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True,
                           required_if=[("state", "present", ("value",))])
    try:
        result = run(module)
    except ModuleError as exc:
        module.fail_json(**exc.fail_kwargs())
    module.exit_json(**result)


if __name__ == "__main__":
    main()
