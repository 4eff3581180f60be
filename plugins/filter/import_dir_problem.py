# Copyright: hpc.pbs developers
# Apache License 2.0
"""Filter ``hpc.pbs.import_dir_problem``: why a directory cannot take what
``playbooks/import.yml`` writes on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
name: import_dir_problem
short_description: Say why the import directory cannot be written on the controller
version_added: 0.1.0
author: hpc.pbs developers
description:
  - >-
    Returns why O(_input) cannot be the C(import_dir) of C(playbooks/import.yml), or an empty
    string when it can. Filters run on the controller, so this checks the controller's file
    system. A relative path is taken from the current directory of ansible-playbook.
  - >-
    Accepted - a directory this user may write (a temporary file is made and removed there
    to be sure), or a path that does not exist yet whose parent directory exists and may be
    written (the playbook makes it); its C(group_vars), C(host_vars) and C(hook_bodies),
    where they exist, must be directories this user may write too.
  - C(playbooks/import.yml) checks C(import_dir) with it before anything is read.
positional: _input
options:
  _input:
    description: The directory path (C(null) or an empty string when not given).
    type: raw
    required: true
"""

EXAMPLES = r"""
- name: Refuse an import directory that cannot be written
  ansible.builtin.assert:
    that: (import_dir | default(none) | hpc.pbs.import_dir_problem) == ''
    fail_msg: "{{ import_dir | default(none) | hpc.pbs.import_dir_problem }}"
"""

RETURN = r"""
_value:
  description: The reason, naming import_dir, the path and what is accepted, or an empty string.
  type: str
"""

from ansible_collections.hpc.pbs.plugins.module_utils.cluster.import_vars import import_dir_problem


class FilterModule:
    """hpc.pbs filter for playbooks/import.yml."""

    def filters(self):
        return {"import_dir_problem": import_dir_problem}
