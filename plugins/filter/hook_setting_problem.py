# Copyright: hpc.pbs developers
# Apache License 2.0
"""Filter ``hpc.pbs.hook_setting_problem``: why a value cannot be a PBS site hook's name,
order or alarm - the rules of the ``hpc.pbs.hook`` module, for the roles."""

from __future__ import annotations

DOCUMENTATION = r"""
name: hook_setting_problem
short_description: Say why a value cannot be a PBS site hook's name, order or alarm
version_added: 0.1.0
author: hpc.pbs developers
description:
  - Returns the reason why O(_input) cannot be the O(setting) of a site hook, or an empty
    string when it can. The rules are those M(hpc.pbs.hook) applies before any qmgr command
    is built, one rule for the roles and the module, as OpenPBS has them.
  - C(name) - the text of the C(hpc.pbs.hook_name_problem) filter - a letter first, then
    letters, digits, C(_) and C(-) up to its very end, and not starting with C(PBS), which PBS
    reserves for its built-in pbshooks.
  - C(order) - C(must be 1-1000) unless O(_input) is a whole number from 1 to 1000 (PBS's range
    for a site hook).
  - C(alarm) - C(must be at least 1 second) unless O(_input) is a whole number of seconds >= 1.
  - A number may be given as text; a boolean is refused. Text and fractions read as the
    C(int) filter reads them (V('12') is 12, V(12.7) is 12); text that is no number is refused.
  - The roles of this collection use it to check their C(*_hook_name), C(*_hook_order) and
    C(*_hook_alarm) variables before anything changes, naming the variable in the message.
positional: _input, setting
options:
  _input:
    description: The candidate value.
    type: raw
    required: true
  setting:
    description: Which hook setting O(_input) is for.
    type: str
    required: true
    choices: [name, order, alarm]
notes:
  - Raises an error (the task fails) for any other O(setting).
"""

EXAMPLES = r"""
- name: Refuse a bad hook order before anything changes
  ansible.builtin.assert:
    that: (my_hook_order | hpc.pbs.hook_setting_problem('order')) == ''
    fail_msg: "my_hook_order {{ my_hook_order | hpc.pbs.hook_setting_problem('order') }}, not {{ my_hook_order | to_json }}"
  # fail_msg for 0: "my_hook_order must be 1-1000, not 0"
"""

RETURN = r"""
_value:
  description: The reason, or an empty string when the value is accepted.
  type: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.hpc.pbs.plugins.filter.hook_name_problem import hook_name_problem
from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hooks import (
    ALARM_RULE, SITE_ORDER_RULE, alarm_accepted, site_order_accepted)

# setting -> (whether a whole number is accepted, the rule said when it is not)
NUMBER_RULES = {
    "order": (site_order_accepted, SITE_ORDER_RULE),
    "alarm": (alarm_accepted, ALARM_RULE),
}
SETTINGS = ("name",) + tuple(NUMBER_RULES)


def whole_number(value):
    """``value`` as an int, read as Jinja's ``int`` filter reads it (text in base 10, else
    the whole part of a number); None for a boolean or anything that is not a number."""
    if isinstance(value, bool):
        return None
    try:
        return int(value, 10) if isinstance(value, str) else int(value)
    except (TypeError, ValueError):
        try:
            return int(float(value))
        except (TypeError, ValueError, OverflowError):
            return None


def hook_setting_problem(value, setting):
    """Why ``value`` cannot be the ``setting`` of a site hook (str), ``""`` when it can.

    :param value: any value (a name, or a whole number possibly as text).
    :param setting: ``"name"``, ``"order"`` or ``"alarm"``.
    :returns: str: for a name the reason from :func:`hook_name_problem`; for an order
        ``"must be 1-1000"``, for an alarm ``"must be at least 1 second"``
        (``module_utils.hooks``: :data:`SITE_ORDER_RULE`, :data:`ALARM_RULE`).
    :raises AnsibleFilterError: ``setting`` is none of those.
    """
    if setting == "name":
        return hook_name_problem(value)
    if setting not in NUMBER_RULES:
        raise AnsibleFilterError("hpc.pbs.hook_setting_problem: setting must be one of %s, not %r"
                                 % (", ".join(SETTINGS), setting))
    accepted, rule = NUMBER_RULES[setting]
    number = whole_number(value)
    return "" if number is not None and accepted(number) else rule


class FilterModule:
    """hpc.pbs filter for the settings of a site hook."""

    def filters(self):
        return {"hook_setting_problem": hook_setting_problem}
