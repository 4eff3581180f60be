# Copyright: hpc.pbs developers
# Apache License 2.0
"""Filter ``hpc.pbs.hook_files_differ``: the hook files whose mom copy is not the server's."""

from __future__ import annotations

DOCUMENTATION = r"""
name: hook_files_differ
short_description: Name the hook files whose copy on a mom is not the server's
version_added: 0.1.0
author: hpc.pbs developers
description:
  - >-
    PBS copies each hook's files from the server (C(PBS_HOME/server_priv/hooks)) to every
    mom (C(PBS_HOME/mom_priv/hooks)). Given both sets as C({NAME.EXT: sha256}) (the
    C(health.hook_files) that M(hpc.pbs.cluster_info) reads), returns the server's files
    that the mom lacks or holds with another sha256, sorted. Files only the mom has are
    not named.
positional: _input, mom_hook_files
options:
  _input:
    description: >-
      The server's hook files, C({NAME.HK|NAME.PY|NAME.CF: sha256}).
    type: dict
    required: true
  mom_hook_files:
    description: >-
      The mom's copies, the same way; null counts as none.
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Wait until the mom holds the server's copy of every hook file
  hpc.pbs.cluster_info:
    query_server: never
    gather: [hook_files]
  register: mom_look
  until: server_hook_files | hpc.pbs.hook_files_differ(mom_look.health.hook_files.mom) | length == 0
  retries: 10
  delay: 3
"""

RETURN = r"""
_value:
  description: >-
    The file names (C(NAME.EXT)) that differ, sorted; empty when the mom holds every one.
  type: list
  elements: str
"""

from ansible_collections.hpc.pbs.plugins.module_utils.cluster.rollout_work import hook_files_differ


class FilterModule:
    """hpc.pbs filter comparing a mom's copies of the hook files with the server's."""

    def filters(self):
        return {"hook_files_differ": hook_files_differ}
