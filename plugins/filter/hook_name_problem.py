# Copyright: hpc.pbs developers
# Apache License 2.0
"""Filter ``hpc.pbs.hook_name_problem``: why a string cannot be a PBS site hook name."""

from __future__ import annotations

DOCUMENTATION = r"""
name: hook_name_problem
short_description: Say why a string cannot be the name of a PBS site hook
version_added: 0.1.0
author: hpc.pbs developers
description:
  - Returns the reason why O(_input) cannot name a site hook, or an empty string when it can.
  - The rule is the one M(hpc.pbs.hook) applies before any qmgr command is built, one rule
    for the roles and the module. The name starts with a letter, holds only letters,
    digits, C(_) and C(-) up to its very end (a trailing newline is refused), and does not
    start with C(PBS), which PBS reserves for its built-in pbshooks.
  - The roles of this collection use it to check their C(*_hook_name) variables before
    anything changes, naming the variable in the message.
positional: _input
options:
  _input:
    description: The candidate hook name.
    type: raw
    required: true
"""

EXAMPLES = r"""
- name: Refuse a bad hook name before anything changes
  ansible.builtin.assert:
    that: (my_hook_name | hpc.pbs.hook_name_problem) == ''
    fail_msg: "my_hook_name: {{ my_hook_name | hpc.pbs.hook_name_problem }}"
"""

RETURN = r"""
_value:
  description: The reason, or an empty string when the name is accepted.
  type: str
"""

from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hooks import site_hook_name_problem


def hook_name_problem(name):
    """Why ``name`` cannot be a site hook name (str), ``""`` when it can.

    :param name: any value; anything but a string is refused as not a string.
    :returns: str, the reason from ``module_utils.hooks.site_hook_name_problem``.
    """
    if not isinstance(name, str):
        return "a hook name must be a string, not %r" % (name,)
    return site_hook_name_problem(name) or ""


class FilterModule:
    """hpc.pbs filter for hook names."""

    def filters(self):
        return {"hook_name_problem": hook_name_problem}
