# Copyright: hpc.pbs developers
# Apache License 2.0
"""Filter ``hpc.pbs.node_name_problem``: why a name cannot name a PBS node in qmgr."""

from __future__ import annotations

DOCUMENTATION = r"""
name: node_name_problem
short_description: Say why a string cannot name a PBS node
version_added: 0.1.0
author: hpc.pbs developers
description:
  - >-
    Returns why O(_input) cannot name one PBS node (vnode) in a qmgr command, or an empty
    string when it can. The rule is the one M(hpc.pbs.qmgr) applies to a node name before
    any qmgr command is built - a letter or digit, then letters, digits, C(.), C(_), C(-),
    C([) or C(]), at most 255 characters - so that a name the rollout would refuse when it
    marks that node offline is refused before any mom is changed.
positional: _input
options:
  _input:
    description: The node name (in the rollout, a mom's C(pbs_node_name), else its inventory name).
    type: raw
    required: true
"""

EXAMPLES = r"""
- name: Refuse a mom whose PBS node name qmgr would not take
  ansible.builtin.assert:
    that: (pbs_node_name | default(inventory_hostname) | hpc.pbs.node_name_problem) == ''
"""

RETURN = r"""
_value:
  description: The reason, naming the name and what is accepted, or an empty string.
  type: str
"""

from ansible_collections.hpc.pbs.plugins.module_utils.server.qmgr import object_name_problem


def node_name_problem(name):
    """``""`` when ``name`` names one node for qmgr, else why not (str).

    :param name: any value; anything but a string is refused.
    """
    return object_name_problem("node", name) or ""


class FilterModule:
    """hpc.pbs filter for PBS node names."""

    def filters(self):
        return {"node_name_problem": node_name_problem}
