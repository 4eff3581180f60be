# Copyright: hpc.pbs developers
# Apache License 2.0
"""Filter ``hpc.pbs.audit_drift_rows``: the PBS server's drift rows of the audit, from the
modules' plans."""

from __future__ import annotations

DOCUMENTATION = r"""
name: audit_drift_rows
short_description: Turn the plans of the audited PBS server into drift rows
version_added: 0.1.0
author: hpc.pbs developers
description:
  - >-
    The rule of C(playbooks/audit.yml) for the PBS server - each plan of a module (its own
    planning code, nothing changed) gives one row per change it would make, a plan that
    failed gives one row, a plan that did not run gives none. Rows come in the order of the
    plans, each row once.
  - >-
    A row is a dict of text - C(host), C(object) (C(hook NAME), C(pbshook NAME), C(server),
    C(sched)), C(item) (the attribute, C(body), C(config), or C((plan)) for a failed
    plan), C(desired) (what the variables want) and C(actual) (what the server has). An
    attribute not set shows C((unset)); a hook body shows its SHA-256 as C(sha256 <hex>);
    a hook config shows its text on one line (runs of white space as one space); a file
    the server does not have shows C((missing)); a failed plan has C(desired) C((could not
    plan)) and C(actual) the module's message on one line, at most 200 characters.
  - >-
    The changes are read from the data the plans carry (C(changes) in their C(diff), as
    M(hpc.pbs.hook), M(hpc.pbs.qmgr) and M(hpc.pbs.cluster_info) return it), never from the
    diff's text. The rule lives in C(plugins/module_utils/cluster/audit.py).
positional: _input, host
options:
  _input:
    description: >-
      The server's M(hpc.pbs.cluster_info) result - its RV(hpc.pbs.cluster_info#module:hook_plans)
      (rows labelled by their object) and RV(hpc.pbs.cluster_info#module:object_plans) (rows
      labelled by the object type, C(server) or C(sched)); null or a result without plans
      gives no rows of them.
    type: dict
    required: true
  host:
    description: The host the rows name (the PBS server's inventory name).
    type: str
    required: true
  tolerate:
    description: >-
      The registered result of M(hpc.pbs.tolerate_node_failures) run in check mode (rows
      labelled C(server), item C(default_qsub_arguments)); null or a skipped result when
      not planned.
    type: dict
  role_plans:
    description: >-
      The plans of the roles' C(audit) entry points, each C({object, result}) (C(object)
      the rows' label, C(result) a module's registered result with its diff, or a failed
      result with C(msg)); a null item is a role that did not run.
    type: list
    elements: dict
    default: []
"""

EXAMPLES = r"""
- name: Turn the server's plans into drift rows
  ansible.builtin.set_fact:
    drift: >-
      {{ server_read | hpc.pbs.audit_drift_rows(inventory_hostname, tolerate=tolerate_plan | default(none),
                                                role_plans=[cray_atom_audit_plan | default(none)]) }}
"""

RETURN = r"""
_value:
  description: >-
    The drift rows, each C({host, object, item, desired, actual}) (text); empty when the
    plans change nothing.
  type: list
  elements: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.hpc.pbs.plugins.module_utils.cluster.audit import (
    AuditInputError, server_rows)


def audit_drift_rows(host_info, host, tolerate=None, role_plans=None):
    """The drift rows of the server ``host`` (see :func:`audit.server_rows`); raises
    AnsibleFilterError naming the input that is not what the audit's plays give."""
    if host_info is not None and not isinstance(host_info, dict):
        raise AnsibleFilterError("audit_drift_rows: the input must be hpc.pbs.cluster_info's result "
                                 "(a dict) or null, not %r" % (host_info,))
    if not isinstance(host, str) or not host:
        raise AnsibleFilterError("audit_drift_rows: host must be the server's inventory name, not %r"
                                 % (host,))
    if tolerate is not None and not isinstance(tolerate, dict):
        raise AnsibleFilterError("audit_drift_rows: tolerate must be hpc.pbs.tolerate_node_failures's "
                                 "registered result (a dict) or null, not %r" % (tolerate,))
    if role_plans is not None and not isinstance(role_plans, list):
        raise AnsibleFilterError("audit_drift_rows: role_plans must be a list of {object, result} "
                                 "(null items for roles not run), not %r" % (role_plans,))
    try:
        return server_rows(host, host_info, tolerate, role_plans or [])
    except AuditInputError as exc:
        raise AnsibleFilterError("audit_drift_rows: %s" % exc)


class FilterModule:
    """hpc.pbs filter that turns the audited server's plans into drift rows."""

    def filters(self):
        return {"audit_drift_rows": audit_drift_rows}
