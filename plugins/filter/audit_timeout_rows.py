# Copyright: hpc.pbs developers
# Apache License 2.0
"""Filter ``hpc.pbs.audit_timeout_rows``: the moms' effective timeouts as the audit reports
them."""

from __future__ import annotations

DOCUMENTATION = r"""
name: audit_timeout_rows
short_description: The seconds every mom uses for its two PP-928 timeouts, as audit rows
version_added: 0.1.0
author: hpc.pbs developers
description:
  - >-
    For C(playbooks/audit.yml) - from each mom's M(hpc.pbs.cluster_info) result (its
    C(mom.sister_join_job_alarm) and C(mom.job_launch_delay)), one row per option,
    C($sister_join_job_alarm) first, mom after mom; a mom whose read failed, did not run or
    has no C(mom) gives none.
  - >-
    A row is C({host, option, seconds, source, line, hooks, after_sighup, why}) - C(seconds)
    (int, or the line's text when it is not a whole number), C(source) (C(mom_config),
    C(hooks) or C(default)), C(line) (the config line or null), C(hooks) (C([{name,
    alarm}]), the alarms summed), C(after_sighup) (seconds after a reload of the mom) and
    C(why) (one line for a person).
positional: _input, reads
options:
  _input:
    description: The moms' inventory names.
    type: list
    elements: str
    required: true
  reads:
    description: >-
      Each mom's M(hpc.pbs.cluster_info) result, in the order of O(_input); a dict with
      C(failed) or C(skipped) true, or null, is a mom not read.
    type: list
    elements: dict
    required: true
"""

EXAMPLES = r"""
- name: The moms' effective timeouts
  ansible.builtin.set_fact:
    timeouts: >-
      {{ groups['pbs_mom'] | hpc.pbs.audit_timeout_rows(
           groups['pbs_mom'] | map('extract', hostvars) | map(attribute='audit_host_info', default=none) | list) }}
"""

RETURN = r"""
_value:
  description: The rows, each C({host, option, seconds, source, line, hooks, after_sighup, why}).
  type: list
  elements: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.hpc.pbs.plugins.module_utils.cluster.audit import timeout_rows


def audit_timeout_rows(moms, reads):
    """The effective timeout rows of ``moms`` (see :func:`audit.timeout_rows`); raises
    AnsibleFilterError naming the input that is not what the audit's plays give."""
    if not isinstance(moms, list) or not all(isinstance(mom, str) for mom in moms):
        raise AnsibleFilterError("audit_timeout_rows: the input must be the list of the moms' "
                                 "inventory names, not %r" % (moms,))
    if not isinstance(reads, list) or len(reads) != len(moms):
        raise AnsibleFilterError("audit_timeout_rows: reads must be a list of hpc.pbs.cluster_info "
                                 "results, one per mom of the input (%d), not %r" % (len(moms), reads))
    return [row for mom, read in zip(moms, reads) for row in timeout_rows(mom, read)]


class FilterModule:
    """hpc.pbs filter that lists the moms' effective timeouts."""

    def filters(self):
        return {"audit_timeout_rows": audit_timeout_rows}
