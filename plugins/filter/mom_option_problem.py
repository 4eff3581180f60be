# Copyright: hpc.pbs developers
# Apache License 2.0
"""Filter ``hpc.pbs.mom_option_problem``: why a value cannot be a pbs_mom ``$option`` - the
rules of the ``hpc.pbs.mom_config`` module, for the roles."""

from __future__ import annotations

DOCUMENTATION = r"""
name: mom_option_problem
short_description: Say why a value cannot be written as a pbs_mom config option
version_added: 0.1.0
author: hpc.pbs developers
description:
  - >-
    Returns the message M(hpc.pbs.mom_config) fails with when its C(options) set O(option)
    to O(_input) (with C(state=present)), or an empty string when the module accepts it. One rule for the roles and the module, written from pbs_mom's
    own parsing of C(PBS_HOME/mom_priv/config): pbs_mom exits on a line it cannot parse.
  - >-
    The message names the option, the value, why it is refused and what is accepted; for
    C(job_launch_delay) V(0) it says the value is out of range and that whole seconds
    1-86400 are accepted (PP-928 interface 4).
  - >-
    Null is accepted (the module removes the line). The value is checked as given, without
    conversion; V('30') is accepted as V(30) is, V(30.0) and V('030') are refused.
  - >-
    The roles of this collection use it to check their C(*_job_launch_delay) and
    C(*_sister_join_job_alarm) variables before anything changes, naming the variable in the
    message.
positional: _input, option
options:
  _input:
    description: The candidate value.
    type: raw
    required: true
  option:
    description: The option name without C($), for example C(job_launch_delay).
    type: str
    required: true
notes:
  - Rules that look at the host (C(tmpdir), C(clienthost), ...) look at the host the filter
    runs on, the controller.
"""

EXAMPLES = r"""
- name: Refuse a $job_launch_delay pbs_mom would not take, before anything changes
  ansible.builtin.assert:
    that: (my_launch_delay | hpc.pbs.mom_option_problem('job_launch_delay')) == ''
    fail_msg: "my_launch_delay: {{ my_launch_delay | hpc.pbs.mom_option_problem('job_launch_delay') }}"
  # fail_msg for 0: "my_launch_delay: job_launch_delay: 0 is refused (out of range); accepted: ..."
"""

RETURN = r"""
_value:
  description: The module's message, or an empty string when the value is accepted.
  type: str
"""

from ansible_collections.hpc.pbs.plugins.module_utils.moms.mom_config_options import value_problem


def mom_option_problem(value, option):
    """Why ``$option value`` cannot be written (str), ``""`` when it can.

    :param value: any value (None: the line is removed, accepted).
    :param option: the option name without ``$`` (str).
    :returns: str, the message of ``module_utils.mom_config_options.value_problem`` (the one
        ``hpc.pbs.mom_config`` fails with), ``""`` when the module accepts the value.
    """
    return value_problem(option, value)


class FilterModule:
    """hpc.pbs filter for pbs_mom config options."""

    def filters(self):
        return {"mom_option_problem": mom_option_problem}
