# Copyright: hpc.pbs developers
# Apache License 2.0
"""Filter ``hpc.pbs.effective_timeout_changes``: how a hook change moves the
``$sister_join_job_alarm`` / ``$job_launch_delay`` the moms derive from their hooks."""

from __future__ import annotations

DOCUMENTATION = r"""
name: effective_timeout_changes
short_description: Say how a hook change moves the mom timeouts derived from the hooks' alarms
version_added: 0.1.0
author: hpc.pbs developers
description:
  - A pbs_mom whose C(mom_priv/config) has no C($sister_join_job_alarm) line waits, for a
    sister that does not join, the sum of the alarms of the enabled C(execjob_begin) hooks
    (30 seconds with none); without a C($job_launch_delay) line it waits the sum of the
    alarms of the enabled C(execjob_prologue) hooks (30 with none). Enabling a hook, giving
    it one of these events or changing its alarm silently changes that wait.
  - Given the server's hooks (O(_input)) and the change about to be made to one of them,
    returns one line per option whose derived value changes, naming the hook, the old and
    the new seconds; an empty list when nothing changes. The rule is
    C(module_utils/cluster/effective_timeouts.py), the one M(hpc.pbs.cluster_info) reports with.
  - A line also says when a pbs_mom that keeps running holds another value than the one it
    takes at its next start (a hook having both events, or the last hook of an event
    disabled or removed).
  - The roles C(cray_atom), C(cgroup_resize) and C(reliable_job_startup) print these lines
    before they change the hook, in check mode too.
positional: _input, name, change
options:
  _input:
    description:
      - The server's hooks, C(name -> attributes), as RV(hpc.pbs.cluster_info#module:server)
        reports them in C(hooks) (C(events) a list, C(enabled) a bool, C(alarm) seconds), or
        as qmgr lists them (C(event) comma-separated text). C(null) is no hook.
    type: dict
    required: true
  name:
    description:
      - The hook (site hook or pbshook) about to be changed, created or deleted.
      - Or several hooks changed in one step - a dict of hook name -> change (as O(change)),
        O(change) then left out; the lines name them all.
    type: raw
    required: true
  change:
    description:
      - The hook's attributes after the change - C(events) (list of event names),
        C(enabled) (bool), C(alarm) (whole seconds); a key left out or C(null) keeps the
        hook's value (a new hook takes PBS's defaults - enabled, alarm 30, no event).
      - C(null) - the hook is deleted.
    type: dict
"""

EXAMPLES = r"""
- name: Say how the moms' derived timeouts change before the hook is enabled
  ansible.builtin.debug:
    msg: "{{ item }}"
  loop: "{{ info.server.hooks | hpc.pbs.effective_timeout_changes('pbs_cgroups', {'enabled': true}) }}"
"""

RETURN = r"""
_value:
  description:
    - One line per option whose derived value changes, e.g. C(hook pbs_cgroups - on every
      mom whose mom_priv/config has no $sister_join_job_alarm line, $sister_join_job_alarm
      goes from 30 s to 90 s (...)); empty when nothing changes.
  type: list
  elements: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.hpc.pbs.plugins.module_utils.cluster.effective_timeouts import (
    changes, hooks_with_change)

CHANGE_KEYS = ("events", "event", "enabled", "alarm")


def checked_change(change):
    """``change`` with its alarm as int; AnsibleFilterError naming what is wrong."""
    if change is None:
        return None
    if not isinstance(change, dict):
        raise AnsibleFilterError("effective_timeout_changes: change must be a dict of the hook's "
                                 "attributes (events, enabled, alarm) or null, not %r" % (change,))
    unknown = sorted(set(change) - set(CHANGE_KEYS))
    if unknown:
        raise AnsibleFilterError("effective_timeout_changes: change has %s; accepted keys: %s"
                                 % (", ".join(unknown), ", ".join(CHANGE_KEYS)))
    alarm = change.get("alarm")
    if alarm is not None and not str(alarm).strip().isdigit():
        raise AnsibleFilterError("effective_timeout_changes: change.alarm must be whole seconds, "
                                 "not %r" % (alarm,))
    change = dict(change)
    if alarm is not None:
        change["alarm"] = int(str(alarm).strip())
    return change


def effective_timeout_changes(hooks, name, change=None):
    """Lines saying how changing hook ``name`` to ``change`` moves the derived timeouts.

    :param hooks: ``{name: attributes}`` of the server's hooks, or None.
    :param name: str, the hook changed; or a dict ``{hook: change}`` of several.
    :param change: dict of the hook's attributes after the change, None for a deletion.
    :returns: list of str, empty when no derived value changes.
    """
    if hooks is None:
        hooks = {}
    if not isinstance(hooks, dict):
        raise AnsibleFilterError("effective_timeout_changes: the hooks must be a dict of name -> "
                                 "attributes (cluster_info's server.hooks), not %r" % (hooks,))
    steps = name if isinstance(name, dict) else {name: change}
    if not steps:
        raise AnsibleFilterError("effective_timeout_changes: name must be a hook name or a dict of "
                                 "hook name -> change, not an empty dict")
    after = hooks
    for hook in sorted(steps):
        if not isinstance(hook, str) or not hook:
            raise AnsibleFilterError("effective_timeout_changes: name must be a hook name (a non-empty "
                                     "string), not %r" % (hook,))
        after = hooks_with_change(after, hook, checked_change(steps[hook]))
    return [found["line"] for found in changes(hooks, after, ", ".join(sorted(steps)))]


class FilterModule:
    """hpc.pbs filter for the mom timeouts derived from hook alarms."""

    def filters(self):
        return {"effective_timeout_changes": effective_timeout_changes}
