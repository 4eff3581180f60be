# Copyright: hpc.pbs developers
# Apache License 2.0
"""Filter ``hpc.pbs.run_metadata``: the metadata of this playbook run, for a report."""

from __future__ import annotations

DOCUMENTATION = r"""
name: run_metadata
short_description: Describe this playbook run for a report written on the controller
version_added: 0.2.0
author: hpc.pbs developers
description:
  - >-
    Returns when the run started (O(_input)) and ended (now), the user running
    ansible-playbook and the controller's host name, the version of this collection (its
    C(MANIFEST.json) when installed, else its C(galaxy.yml)), ansible-core's version, the
    inventory sources and whether the run is in check mode.
  - Runs on the controller. The rollout's report (role C(hpc.pbs.rollout)) holds it as C(run).
positional: _input, check_mode, inventory_sources, ansible_version
options:
  _input:
    description: When the run started, ISO 8601 text in UTC (for example from C(now(utc=true\).isoformat(\))).
    type: str
    required: true
  check_mode:
    description: Whether the run is in check mode (C(ansible_check_mode)).
    type: bool
    required: true
  inventory_sources:
    description: The inventory sources (C(ansible_inventory_sources)).
    type: list
    elements: str
    required: true
  ansible_version:
    description: ansible-core's version (C(ansible_version.full)).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Note the run's metadata
  ansible.builtin.set_fact:
    report_run: >-
      {{ run_started | hpc.pbs.run_metadata(ansible_check_mode, ansible_inventory_sources, ansible_version.full) }}
"""

RETURN = r"""
_value:
  description: >-
    C(started), C(ended) (ISO 8601 UTC text), C(user), C(controller_host),
    C(collection_version), C(ansible_core_version), C(inventory) (list of str),
    C(check_mode) (bool).
  type: dict
"""

import os

from ansible_collections.hpc.pbs.plugins.module_utils.cluster.run_metadata import run_metadata

COLLECTION_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_metadata_filter(started, check_mode, inventory_sources, ansible_version):
    """:func:`run_metadata.run_metadata` of this collection, ended now."""
    return run_metadata(started, check_mode, inventory_sources, ansible_version, COLLECTION_ROOT)


class FilterModule:
    """hpc.pbs filter for the reports of the playbooks."""

    def filters(self):
        return {"run_metadata": run_metadata_filter}
