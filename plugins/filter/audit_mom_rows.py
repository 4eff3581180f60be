# Copyright: hpc.pbs developers
# Apache License 2.0
"""Filter ``hpc.pbs.audit_mom_rows``: the moms' drift rows of the audit (their config's
tunables and their copies of the audited hooks' files)."""

from __future__ import annotations

DOCUMENTATION = r"""
name: audit_mom_rows
short_description: Turn the moms' reads into the audit's drift rows
version_added: 0.1.0
author: hpc.pbs developers
description:
  - >-
    The rule of C(playbooks/audit.yml) for the moms, one mom after the other, as rows
    C({host, object, item, desired, actual}) (text); a mom whose read failed or did not run
    gives none.
  - >-
    With the mom's RV(hpc.pbs.cluster_info#module:mom_plan) - one row (object
    C(mom_priv/config), item C($job_launch_delay) / C($sister_join_job_alarm)) per option
    whose value M(hpc.pbs.mom_config) would change, the last line of an option winning as
    pbs_mom reads the file; a missing line shows C((no line: default N)) with the seconds
    the mom derives from its hooks' alarms (desired - the value it would derive, actual -
    the value it uses). The lines are read by the grammar of
    C(plugins/module_utils/moms/mom_config.py).
  - >-
    For each hook the server's plans audit - one row (object C(hook NAME), item C(copy .HK)
    / C(copy .PY) / C(copy .CF)) per file of the hook whose copy in the mom's
    C(mom_priv/hooks) is not the server's C(server_priv/hooks) file, compared by SHA-256 -
    desired C(sha256 <hex>) of the server's file or C((not on the server)), actual the
    mom's or C((missing)); within a hook C(.HK), C(.PY), then C(.CF).
positional: _input, reads, server_read
options:
  _input:
    description: The moms' inventory names.
    type: list
    elements: str
    required: true
  reads:
    description: >-
      Each mom's M(hpc.pbs.cluster_info) result, in the order of O(_input) (run with
      C(gather=[hook_files]) and, for the config rows, C(mom_options)); a dict with
      C(failed) or C(skipped) true, or null, is a mom not read.
    type: list
    elements: dict
    required: true
  server_read:
    description: >-
      The PBS server's M(hpc.pbs.cluster_info) result - its C(health.hook_files.server)
      (C({NAME.EXT: sha256})) and the hooks its RV(hpc.pbs.cluster_info#module:hook_plans)
      plan; null when the server was not read.
    type: dict
    required: true
  role_plans:
    description: >-
      The roles' audit plans on the server, each C({object, result}) (C(object) C(hook NAME)
      or C(pbshook NAME)), whose hooks every mom must hold too; a null item is a role that
      did not run.
    type: list
    elements: dict
    default: []
"""

EXAMPLES = r"""
- name: The moms' drift rows
  ansible.builtin.set_fact:
    mom_drift: >-
      {{ groups['pbs_mom'] | hpc.pbs.audit_mom_rows(
           groups['pbs_mom'] | map('extract', hostvars) | map(attribute='audit_host_info', default=none) | list,
           hostvars[groups['pbs_server'][0]].audit_host_info) }}
"""

RETURN = r"""
_value:
  description: The drift rows, mom after mom, each C({host, object, item, desired, actual}) (text).
  type: list
  elements: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.hpc.pbs.plugins.module_utils.cluster.audit import (
    AuditInputError, audited_hooks, mom_rows)


def audit_mom_rows(moms, reads, server_read, role_plans=None):
    """The drift rows of ``moms`` (see :func:`audit.mom_rows`); raises AnsibleFilterError
    naming the input that is not what the audit's plays give."""
    if not isinstance(moms, list) or not all(isinstance(mom, str) for mom in moms):
        raise AnsibleFilterError("audit_mom_rows: the input must be the list of the moms' inventory "
                                 "names, not %r" % (moms,))
    if not isinstance(reads, list) or len(reads) != len(moms):
        raise AnsibleFilterError("audit_mom_rows: reads must be a list of hpc.pbs.cluster_info results, "
                                 "one per mom of the input (%d), not %r" % (len(moms), reads))
    if server_read is not None and not isinstance(server_read, dict):
        raise AnsibleFilterError("audit_mom_rows: server_read must be the server's hpc.pbs.cluster_info "
                                 "result (a dict) or null, not %r" % (server_read,))
    if role_plans is not None and not isinstance(role_plans, list):
        raise AnsibleFilterError("audit_mom_rows: role_plans must be a list of {object, result} "
                                 "(null items for roles not run), not %r" % (role_plans,))
    server_read = server_read or {}
    server_files = ((server_read.get("health") or {}).get("hook_files") or {}).get("server") or {}
    try:
        names = audited_hooks(server_read, role_plans or [])
        return [row for mom, read in zip(moms, reads)
                for row in mom_rows(mom, read, names, server_files)]
    except AuditInputError as exc:
        raise AnsibleFilterError("audit_mom_rows: %s" % exc)


class FilterModule:
    """hpc.pbs filter that turns the moms' reads into drift rows."""

    def filters(self):
        return {"audit_mom_rows": audit_mom_rows}
