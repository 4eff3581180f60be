# Copyright: hpc.pbs developers
# Apache License 2.0
"""Filter ``hpc.pbs.distinct_value_hosts``: one host per distinct set of values of some
variables, so that a play checks each set of inputs once instead of on every host."""

from __future__ import annotations

DOCUMENTATION = r"""
name: distinct_value_hosts
short_description: One host per distinct set of values of the named variables
version_added: 0.1.0
author: hpc.pbs developers
description:
  - >-
    Returns, from the hosts of O(_input) in their order, the first host of each distinct
    set of values that the variables O(names) have on the hosts (as C(hostvars) gives them:
    inventory, group and host variables, facts, extra vars). A variable a host does not
    define counts as one value of its own, so that every host which leaves it to the role's
    default falls in the same set.
  - >-
    The playbooks of this collection check the inputs of a role on these hosts only:
    every host's values are still checked, each distinct set once, instead of once per
    host (on a cluster where every mom has the same values, one check instead of
    thousands).
  - >-
    Values are compared as JSON (dicts by their sorted keys); two values that differ only
    in a way JSON cannot show (a tuple and a list) are one set.
positional: _input, hostvars, names
options:
  _input:
    description: Host names, for example C(ansible_play_hosts_all).
    type: list
    elements: str
    required: true
  hostvars:
    description: The C(hostvars) magic variable.
    type: raw
    required: true
  names:
    description: The variables whose values make a set, for example a role's options.
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: Check the inputs once per distinct set of values
  ansible.builtin.set_fact:
    checked_hosts: "{{ ansible_play_hosts_all | hpc.pbs.distinct_value_hosts(hostvars, ['my_role_delay', 'my_role_name']) }}"
  run_once: true
# with my_role_delay: 10 on every host, checked_hosts is [the first host]
"""

RETURN = r"""
_value:
  description: The first host of each distinct set of values, in the order of O(_input).
  type: list
  elements: str
"""

import json

_UNDEFINED = {"hpc.pbs.distinct_value_hosts": "not defined on this host"}


def distinct_value_hosts(hosts, hostvars, names):
    """The first host of each distinct set of values of ``names``.

    :param hosts: list of host names (str), in the order to keep.
    :param hostvars: mapping host name -> mapping of its variables (Ansible's ``hostvars``).
    :param names: list of variable names (str).
    :returns: list of host names, a sublist of ``hosts``: for each distinct tuple of
        values (a variable a host lacks is a value of its own), the first host that has it.
    """
    first = {}
    for host in hosts:
        variables = hostvars[host]
        values = [variables[name] if name in variables else _UNDEFINED for name in names]
        first.setdefault(json.dumps(values, sort_keys=True, default=repr), host)
    return list(first.values())


class FilterModule:
    """hpc.pbs filter that picks one host per distinct set of inputs."""

    def filters(self):
        return {"distinct_value_hosts": distinct_value_hosts}
