# Copyright: hpc.pbs developers
# Apache License 2.0
"""Filter ``hpc.pbs.derived_timeout``: the ``$sister_join_job_alarm`` / ``$job_launch_delay``
a pbs_mom derives from its hooks when its config does not set it."""

from __future__ import annotations

DOCUMENTATION = r"""
name: derived_timeout
short_description: The mom timeout derived from the enabled hooks' alarms
version_added: 0.1.0
author: hpc.pbs developers
description:
  - A pbs_mom whose C(mom_priv/config) has no C($sister_join_job_alarm) line waits, for a
    sister that does not join, the sum of the alarms of the enabled C(execjob_begin) hooks,
    30 seconds with none; without a C($job_launch_delay) line it waits the sum of the alarms
    of the enabled C(execjob_prologue) hooks, 30 with none (PP-928, reliable job startup).
  - Returns that value, in whole seconds, for the hooks given. The rule is
    C(module_utils/cluster/effective_timeouts.py), the one M(hpc.pbs.cluster_info) reports with and
    the filter C(hpc.pbs.effective_timeout_changes) announces changes with.
positional: _input, option
options:
  _input:
    description:
      - The hooks - a dict C(name -> attributes) (C(events) a list or C(event) comma-separated
        text, C(enabled), C(alarm) seconds), as RV(hpc.pbs.cluster_info#module:server) reports
        them in C(hooks); or a list of the enabled hooks of the option's event, each a dict with
        C(name) and C(alarm), as RV(hpc.pbs.cluster_info#module:mom) lists them under the
        option's C(hooks).
    type: raw
    required: true
  option:
    description: The mom option.
    type: str
    choices: [sister_join_job_alarm, job_launch_delay]
    default: sister_join_job_alarm
"""

EXAMPLES = r"""
- name: The join wait of a mom that does not set it, with the ATOM hook's alarm added
  ansible.builtin.debug:
    msg: >-
      {{ (info.mom.sister_join_job_alarm.hooks + [{'name': 'cray_atom', 'alarm': 300}])
         | hpc.pbs.derived_timeout }} s
"""

RETURN = r"""
_value:
  description: Whole seconds, 30 when no enabled hook has the option's event.
  type: int
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.hpc.pbs.plugins.module_utils.cluster.effective_timeouts import (
    OPTION_EVENT, derived_value)


def derived_timeout(hooks, option="sister_join_job_alarm"):
    """The seconds a mom that does not set ``option`` derives from ``hooks``.

    :param hooks: dict ``{name: attributes}``, or list of ``{"name", "alarm"}`` (the enabled
        hooks of the option's event).
    :param option: ``sister_join_job_alarm`` or ``job_launch_delay``.
    :returns: int.
    :raises AnsibleFilterError: on another option or hooks of another shape.
    """
    if option not in OPTION_EVENT:
        raise AnsibleFilterError("derived_timeout: option must be one of %s, not %r"
                                 % (", ".join(sorted(OPTION_EVENT)), option))
    if isinstance(hooks, list):
        if not all(isinstance(hook, dict) and hook.get("name") for hook in hooks):
            raise AnsibleFilterError("derived_timeout: each hook of a list must be a dict with a name "
                                     "and an alarm, not %r" % (hooks,))
        hooks = dict((hook["name"], {"events": [OPTION_EVENT[option]], "enabled": True,
                                     "alarm": hook.get("alarm")}) for hook in hooks)
    if not isinstance(hooks, dict):
        raise AnsibleFilterError("derived_timeout: the hooks must be a dict of name -> attributes or a "
                                 "list of {name, alarm}, not %r" % (hooks,))
    return derived_value(hooks, option)[0]


class FilterModule:
    """hpc.pbs filter for the mom timeouts derived from hook alarms."""

    def filters(self):
        return {"derived_timeout": derived_timeout}
