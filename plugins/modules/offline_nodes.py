#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hpc.pbs developers
# Apache License 2.0 (https://www.apache.org/licenses/LICENSE-2.0), as galaxy.yml says

DOCUMENTATION = r'''
---
module: offline_nodes
short_description: Take a batch of PBS nodes offline with a comment, or back online, in one qmgr call
description:
  - Marks the nodes of one batch of a rolling change, as the role C(hpc.pbs.rollout) does
    for each batch of moms - O(offline) sets each node's C(comment) and adds C(offline)
    to its C(state); O(online) unsets the C(comment) and removes C(offline) from the
    C(state).
  - Every change of the task goes to ONE C(qmgr -a) process, fed on stdin (C(-a) makes
    qmgr stop at the first command it rejects), whatever the number of nodes; nothing is
    read first. PBS itself makes these writes idempotent - adding C(offline) to a node
    already offline or removing it from a node that is not offline changes nothing, and
    unsetting a comment that is not set is accepted.
  - Node names and comments are checked before qmgr runs (the rules of M(hpc.pbs.qmgr) -
    a node name is a letter or digit, then letters, digits, C(.), C(_), C(-), C([) or
    C(]); a comment holding both quote characters, a newline or another control character
    is refused); every problem is reported at once and nothing is changed.
  - A node in both O(offline) and O(online) is refused.
version_added: "0.2.0"
author: hpc.pbs developers (@hpc-pbs)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - hpc.pbs.pbs
options:
  offline:
    description:
      - Nodes to take offline - node name -> the comment to set on it (a string). The
        comment is set first, then C(offline) is added to the node's state.
    type: dict
    default: {}
  online:
    description:
      - Nodes to put back online - their C(comment) is unset, then C(offline) is removed
        from their state.
    type: list
    elements: str
    default: []
notes:
  - Supports check mode - nothing is written and RV(commands) says what would be.
  - With neither O(offline) nor O(online) nodes, qmgr does not run.
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  platform:
    platforms: posix
seealso:
  - module: hpc.pbs.qmgr
'''

EXAMPLES = r'''
- name: Take the batch's nodes offline with the rollout's comment
  hpc.pbs.offline_nodes:
    offline:
      mom1: "hpc.pbs rollout rjs-0123abcd: in progress (batch 2)"
      mom2: "hpc.pbs rollout rjs-0123abcd: in progress (batch 2)"

- name: Bring the verified nodes back
  hpc.pbs.offline_nodes:
    online: [mom1, mom2]
'''

RETURN = r'''
commands:
  description: The qmgr commands fed to the one C(qmgr -a) call, in order (also in check mode).
  returned: always
  type: list
  elements: str
  sample: ["set node mom1 comment = \"hpc.pbs rollout rjs-0123abcd: in progress (batch 2)\"",
           "set node mom1 state += offline"]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpc.pbs.plugins.module_utils.common.module_error import ModuleError
from ansible_collections.hpc.pbs.plugins.module_utils.pbs.pbs_conf import (
    pbs_conf_argument_spec, task_pbs_paths)
from ansible_collections.hpc.pbs.plugins.module_utils.server.qmgr import (
    Qmgr, QmgrValueError, set_command, unset_command)


def node_commands(offline, online):
    """``(commands, problems)``: the qmgr commands for ``offline`` ({node: comment}) and
    ``online`` ([node]), and one text per refused input (then ``commands`` is not to run)."""
    commands, problems = [], []
    both = sorted(set(offline) & set(online))
    if both:
        problems.append("offline and online both name %s; accepted: a node in one of them" % ", ".join(both))
    for node in sorted(offline):
        comment = offline[node]
        if not isinstance(comment, str):
            problems.append("offline.%s: the comment must be a string, got %r" % (node, comment))
            continue
        try:
            commands.append(set_command("node", node, "comment", comment))
            commands.append(set_command("node", node, "state", "offline", "+="))
        except QmgrValueError as exc:
            problems.append("offline.%s: %s" % (node, exc))
    for node in online:
        try:
            commands.append(unset_command("node", node, "comment"))
            commands.append(set_command("node", node, "state", "offline", "-="))
        except QmgrValueError as exc:
            problems.append("online: %s" % exc)
    return commands, problems


def run(module):
    """The task: the result (dict); raises ModuleError (a QmgrError too) where it fails."""
    commands, problems = node_commands(module.params["offline"], module.params["online"])
    if problems:
        raise ModuleError("offline_nodes: %s. Nothing was changed." % "; ".join(problems))
    result = dict(changed=bool(commands), commands=[str(c) for c in commands])
    if commands and not module.check_mode:
        qmgr = Qmgr.for_paths(module, task_pbs_paths(module.params))
        dummy, err = qmgr.run_batch(commands, "the node marks of %s" % ", ".join(
            sorted(set(module.params["offline"]) | set(module.params["online"]))))
        for line in err.splitlines():
            if line.strip():
                module.warn("qmgr: %s" % line.strip())
    return result


def main():
    argument_spec = dict(offline=dict(type="dict", default={}),
                         online=dict(type="list", elements="str", default=[]))
    argument_spec.update(pbs_conf_argument_spec())
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    try:
        result = run(module)
    except ModuleError as exc:
        module.fail_json(**exc.fail_kwargs())
    module.exit_json(**result)


if __name__ == "__main__":
    main()
