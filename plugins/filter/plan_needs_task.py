# Copyright: hpc.pbs developers
# Apache License 2.0
"""Filter ``hpc.pbs.plan_needs_task``: whether the task a plan of
``hpc.pbs.cluster_info`` stands for must still run."""

from __future__ import annotations

DOCUMENTATION = r"""
name: plan_needs_task
short_description: Whether a task must run, given its plans from hpc.pbs.cluster_info
version_added: 0.1.0
author: hpc.pbs developers
description:
  - >-
    O(_input) is what M(hpc.pbs.cluster_info) planned for one task (RV(hpc.pbs.cluster_info#module:hook_plans)
    or RV(hpc.pbs.cluster_info#module:object_plans), the module's own planning code with
    nothing changed). Returns C(false) only when there is a plan and every plan says that
    the task would change nothing; C(true) when a plan has something to change, when a plan
    failed (the task then refuses the same input with its own message) and when there is
    no plan at all (the task was not planned, so only running it tells).
  - >-
    The playbooks of this collection read and plan the PBS server in one round trip and
    run M(hpc.pbs.hook) / M(hpc.pbs.qmgr) only where this is C(true): an idempotent run
    costs the server one round trip.
positional: _input
options:
  _input:
    description: >-
      Plans, each a dict with at least C(changed) (bool) and C(failed) (bool), as
      M(hpc.pbs.cluster_info) returns them.
    type: list
    elements: dict
    required: true
"""

EXAMPLES = r"""
- name: Plan the hook, changing nothing
  hpc.pbs.cluster_info:
    plan_hooks: [{name: my_hook, events: [queuejob], body: "{{ lookup('file', 'my_hook.py') }}"}]
  register: plans

- name: Install the hook only when its plan says so
  hpc.pbs.hook:
    name: my_hook
    events: [queuejob]
    body: "{{ lookup('file', 'my_hook.py') }}"
  when: plans.hook_plans | hpc.pbs.plan_needs_task
"""

RETURN = r"""
_value:
  description: C(false) when every plan (at least one) would change nothing, else C(true).
  type: bool
"""

from ansible.errors import AnsibleFilterError


def plan_needs_task(plans):
    """Whether the task behind ``plans`` must run.

    :param plans: list of dicts with ``changed`` and ``failed`` (bools), as
        ``hpc.pbs.cluster_info`` returns them in ``hook_plans`` / ``object_plans``.
    :returns: False when ``plans`` is not empty and no plan is changed or failed; True
        otherwise (nothing planned, something to change, or a refused plan).
    :raises AnsibleFilterError: when ``plans`` is not a list of dicts.
    """
    if not isinstance(plans, list) or not all(isinstance(plan, dict) for plan in plans):
        raise AnsibleFilterError("plan_needs_task expects the list of plans of hpc.pbs.cluster_info "
                                 "(hook_plans or object_plans), not %r" % (plans,))
    return not plans or any(plan.get("failed") or plan.get("changed", True) for plan in plans)


class FilterModule:
    """hpc.pbs filter that tells whether a planned task must run."""

    def filters(self):
        return {"plan_needs_task": plan_needs_task}
