# Copyright: hpc.pbs developers
# Apache License 2.0
"""Filter ``hpc.pbs.host_value_problems``: inventory values a play would silently not use."""

from __future__ import annotations

DOCUMENTATION = r"""
name: host_value_problems
short_description: Name the hosts whose value of a variable a play would silently not use
version_added: 0.1.0
author: hpc.pbs developers
description:
  - >-
    Some variables are read on one host only (the PBS server, or the controller), or once
    for every host (C(run_once), a play keyword, a value fixed at the start of a rollout).
    A value given to such a variable for another host (a host variable, or a group variable
    of a group that host alone is in) would be silently ignored.
  - >-
    Returns one sentence for each host of O(_input) and each variable of O(names) whose
    value on that host (as C(hostvars) gives it) is not the value on O(reader), the host
    whose value the play uses. A value set for all hosts (group C(all), extra vars) is the
    same everywhere and gives nothing. A host where the variable is not set is compared
    only with O(every_host=true).
  - Values are compared as JSON (dicts by their sorted keys).
positional: _input, hostvars, names, reader, where, every_host
options:
  _input:
    description: The host names to compare with O(reader), for example the hosts of the groups C(pbs_server) and C(pbs_mom).
    type: list
    elements: str
    required: true
  hostvars:
    description: The C(hostvars) magic variable.
    type: raw
    required: true
  names:
    description: The variables that the play reads on O(reader) only, or once for all hosts.
    type: list
    elements: str
    required: true
  reader:
    description: The inventory host whose value the play uses (C(localhost) for the controller).
    type: str
    required: true
  where:
    description: How the sentences say where the value is read, for example C(on the PBS server pbs-head01 only).
    type: str
    required: true
  every_host:
    description:
      - >-
        V(false) - the variables are read on O(reader) only; a value set for O(reader)
        alone is accepted, a different value set for another host is not.
      - >-
        V(true) - the play uses O(reader)'s value for every host, while some tasks would
        read each host's own; every host must have the reader's value, set or not.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Refuse a value given to one host that the play would not use
  ansible.builtin.assert:
    that: __problems | length == 0
    fail_msg: "{{ __problems | join('; ') }}"
  vars:
    __problems: >-
      {{ groups['pbs_mom'] | hpc.pbs.host_value_problems(hostvars, ['my_role_order'],
         groups['pbs_server'][0], 'on the PBS server only') }}
"""

RETURN = r"""
_value:
  description: >-
    One sentence per host and variable whose value would not be used, naming the variable,
    the host, both values and what to do; empty when there is none.
  type: list
  elements: str
"""

import json

_UNSET = object()


def _show(value):
    if value is _UNSET:
        return "not set"
    return json.dumps(value, sort_keys=True, default=repr)


def _value(variables, name):
    return variables[name] if name in variables else _UNSET


def host_value_problems(hosts, hostvars, names, reader, where, every_host=False):
    """Sentences naming each (host, variable) whose value the play would not use.

    :param hosts: list of host names (str) to compare with ``reader``.
    :param hostvars: mapping host name -> mapping of its variables.
    :param names: list of variable names (str).
    :param reader: host name (str) whose values the play uses.
    :param where: str, where the play reads them (inserted in each sentence).
    :param every_host: bool; False: a host where a variable is not set is not compared.
    :returns: list of str, in the order of ``names`` then ``hosts``.
    """
    used = hostvars[reader]
    # hostvars[host] merges all of a host's variables: once per host, not once per name.
    others = [(host, hostvars[host]) for host in hosts if host != reader]
    problems = []
    for name in names:
        wanted = _value(used, name)
        for host, variables in others:
            given = _value(variables, name)
            if given is _UNSET and not every_host:
                continue
            if _show(given) != _show(wanted):
                problems.append(
                    "%s is %s for %s, but this playbook reads it %s, where it is %s%s: the value %s "
                    "for %s would not be used; accepted: the same value for every host (group all, or -e)%s"
                    % (name, _show(given), host, where, _show(wanted),
                       " (the default applies)" if wanted is _UNSET else "",
                       "given" if given is not _UNSET else "(not set)", host,
                       "" if every_host else ", or a value set only for %s" % reader))
    return problems


class FilterModule:
    """hpc.pbs filter for inventory values a play would not use."""

    def filters(self):
        return {"host_value_problems": host_value_problems}
