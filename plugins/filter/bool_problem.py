# Copyright: hpc.pbs developers
# Apache License 2.0
"""Filter ``hpc.pbs.bool_problem``: why a value is not a boolean Ansible accepts strictly."""

from __future__ import annotations

DOCUMENTATION = r"""
name: bool_problem
short_description: Say why a value is not a boolean
version_added: 0.1.0
author: hpc.pbs developers
description:
  - >-
    Returns why O(_input) is not a boolean, or an empty string when it is one. Accepted are
    exactly the values Ansible's own strict C(boolean()) accepts - true and false, the words
    true/false, yes/no, on/off, y/n, t/f and 1/0 in any case (blanks around them are
    ignored), the numbers 1 and 0.
  - >-
    The C(bool) filter turns any other word (C(enabled), C(yes please), C(2)) into false
    without a word; the playbooks of this collection refuse such a value with this filter
    before anything changes.
positional: _input
options:
  _input:
    description: The value to check.
    type: raw
    required: true
"""

EXAMPLES = r"""
- name: Refuse a word that is not a boolean
  ansible.builtin.assert:
    that: (my_flag | hpc.pbs.bool_problem) == ''
    fail_msg: "my_flag: {{ my_flag | hpc.pbs.bool_problem }}"
"""

RETURN = r"""
_value:
  description: The reason, naming the value and what is accepted, or an empty string.
  type: str
"""

from ansible.module_utils.parsing.convert_bool import boolean

ACCEPTED = "true/false, yes/no, on/off, y/n, t/f or 1/0 (any case)"


def bool_problem(value):
    """``""`` when ``value`` is a boolean for Ansible's strict ``boolean()``, else why not.

    :param value: any value.
    :returns: str.
    """
    try:
        boolean(value, strict=True)
    except TypeError:
        return "%s is not a boolean; accepted: %s" % (
            "'%s'" % value if isinstance(value, str) else repr(value), ACCEPTED)
    return ""


class FilterModule:
    """hpc.pbs filter for strict booleans."""

    def filters(self):
        return {"bool_problem": bool_problem}
