# Copyright: hpc.pbs developers
# Apache License 2.0
"""Filter ``hpc.pbs.inventory_problems``: every problem of the inventory's inputs, for
every host at once (the check of playbooks/tasks/inventory_checks.yml)."""

from __future__ import annotations

DOCUMENTATION = r"""
name: inventory_problems
short_description: Every problem of the inventory's inputs of a playbook, for every host at once
version_added: "0.2.0"
author: hpc.pbs developers
description:
  - >-
    Checks the inventory's inputs of a playbook on the controller, reading nothing on any
    node, before the playbook reads or changes anything. The hosts checked are those of the
    groups C(pbs_server) and C(pbs_mom).
  - >-
    Returns one sentence per problem, naming the variable (or inventory host), its value and
    what is accepted, in this order - values a play would not use (O(scopes), as
    P(hpc.pbs.host_value_problems#filter)); variables that are not a strict boolean
    (C(hpc_pbs_pipelining) and O(bools), as P(hpc.pbs.bool_problem#filter), each problem
    once per variable and value); variables of O(host_names) naming no inventory host; PBS
    node names qmgr refuses (O(node_names), as P(hpc.pbs.node_name_problem#filter)); files
    that cannot be written on the controller (O(paths), as
    P(hpc.pbs.writable_path_problem#filter)).
  - >-
    A filter, not a template, because a long template is compiled again in the worker
    process of each task that uses it; the filter's code is loaded once per run.
positional: _input, groups
options:
  _input:
    description: The C(hostvars) magic variable.
    type: raw
    required: true
  groups:
    description: The C(groups) magic variable.
    type: dict
    required: true
  scopes:
    description:
      - >-
        Variables read on one inventory host only. Each item is a dict with C(reader) (the
        host whose value is used, C(localhost) for the controller), C(where) (how the
        sentence says where it is read), C(names) (the variables) and C(every_host) (bool,
        default V(false); V(true) - the reader's value is used for every host, so every host
        must have it, set or not).
    type: list
    elements: dict
    default: []
  bools:
    description: Variables that must be a boolean as Ansible's strict C(boolean()) takes it, wherever they are set.
    type: list
    elements: str
    default: []
  host_names:
    description: Variables that name an inventory host (V(null) or an empty string - unset).
    type: list
    elements: str
    default: []
  node_names:
    description: Whether each mom's PBS node name (C(pbs_node_name), else its inventory name) must be one qmgr accepts.
    type: bool
    default: false
  paths:
    description: Variable name -> the path of a file written on the controller; its directory must exist and be writable.
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: Check the inventory's inputs for every host
  ansible.builtin.assert:
    that: __problems | length == 0
    fail_msg: "{{ __problems | join('; ') }}"
  run_once: true
  vars:
    __problems: >-
      {{ hostvars | hpc.pbs.inventory_problems(groups,
           scopes=[{'reader': groups['pbs_server'][0], 'where': 'on the PBS server only', 'names': ['my_hook_order']}],
           bools=['my_switch'], node_names=true) }}
"""

RETURN = r"""
_value:
  description: One sentence per problem; empty when there is none.
  type: list
  elements: str
"""

import json

from ansible_collections.hpc.pbs.plugins.filter.bool_problem import bool_problem
from ansible_collections.hpc.pbs.plugins.filter.host_value_problems import host_value_problems
from ansible_collections.hpc.pbs.plugins.filter.node_name_problem import node_name_problem
from ansible_collections.hpc.pbs.plugins.filter.writable_path_problem import writable_path_problem

# playbooks/vars/connection.yml reads it on every host: always checked.
ALWAYS_BOOLS = ["hpc_pbs_pipelining"]
SHOWN_HOSTS = 20


def _unique(items):
    return list(dict.fromkeys(items))


def _bool_problems(variables, names):
    problems = []
    for name in names:
        seen = set()
        for host, host_vars in variables.items():
            if name not in host_vars:
                continue
            problem = bool_problem(host_vars[name])
            if problem and problem not in seen:
                seen.add(problem)
                problems.append("%s (for %s): %s" % (name, host, problem))
    return problems


def _host_name_problems(variables, hosts, names, inventory_hosts):
    shown = ", ".join(inventory_hosts[:SHOWN_HOSTS]) + ("..." if len(inventory_hosts) > SHOWN_HOSTS else "")
    problems = []
    for name in names:
        seen = set()
        for host in hosts:
            if name not in variables[host]:
                continue
            value = variables[host][name]
            if value in (None, "") or (isinstance(value, str) and value in inventory_hosts) or str(value) in seen:
                continue
            seen.add(str(value))
            problems.append("%s (for %s) names %s, which is not a host of the inventory; accepted: null or one of %s"
                            % (name, host, json.dumps(value, default=repr), shown))
    return problems


def _node_name_problems(variables, moms):
    problems = []
    for mom in moms:
        given = "pbs_node_name" in variables[mom]
        problem = node_name_problem(variables[mom]["pbs_node_name"] if given else mom)
        if problem:
            problems.append("the PBS node name of the inventory host %s (%s) cannot be given to qmgr: %s"
                            % (mom, "pbs_node_name" if given else "its inventory name", problem))
    return problems


def inventory_problems(hostvars, groups, scopes=None, bools=None, host_names=None, node_names=False, paths=None):
    """Sentences naming each problem of the inventory's inputs (see DOCUMENTATION).

    :param hostvars: mapping host name -> mapping of its variables (Ansible's ``hostvars``).
    :param groups: mapping group name -> list of host names (Ansible's ``groups``).
    :param scopes: list of dicts ``{reader, where, names, every_host}``.
    :param bools: list of variable names (str).
    :param host_names: list of variable names (str).
    :param node_names: bool.
    :param paths: dict variable name -> path (str).
    :returns: list of str, empty when every input is accepted.
    """
    scopes = scopes or []
    hosts = _unique(list(groups.get("pbs_server", [])) + list(groups.get("pbs_mom", [])))
    problems = []
    for scope in scopes:
        problems.extend(host_value_problems(hosts, hostvars, scope["names"], scope["reader"], scope["where"],
                                            scope.get("every_host", False)))
    # hostvars[host] merges all of a host's variables: once per host, not once per name.
    variables = dict((host, hostvars[host]) for host in _unique([scope["reader"] for scope in scopes] + hosts))
    problems.extend(_bool_problems(variables, ALWAYS_BOOLS + list(bools or [])))
    problems.extend(_host_name_problems(variables, hosts, host_names or [], list(groups.get("all", []))))
    if node_names:
        problems.extend(_node_name_problems(variables, groups.get("pbs_mom", [])))
    for name, path in (paths or {}).items():
        problem = writable_path_problem(path)
        if problem:
            problems.append("%s cannot be written on the controller: %s" % (name, problem))
    return problems


class FilterModule:
    """hpc.pbs filter for the inventory's inputs of a playbook."""

    def filters(self):
        return {"inventory_problems": inventory_problems}
