# Copyright: hpc.pbs developers
# Apache License 2.0
"""Filter ``hpc.pbs.rollout_mom_work``: why a mom still goes through the rolling rollout of
reliable job startup, ``[]`` when it is already done."""

from __future__ import annotations

DOCUMENTATION = r"""
name: rollout_mom_work
short_description: Say what the rolling rollout of reliable job startup still has to do on a mom
version_added: 0.1.0
author: hpc.pbs developers
description:
  - >-
    Returns why a mom goes through the batches of playbook C(hpc.pbs.rollout) (PP-928: the
    mom tunables C($job_launch_delay) / C($sister_join_job_alarm) and the reliable job
    startup hook files every mom holds), one text per reason, or an empty list when the mom
    is already done.
  - >-
    The reasons - C(not read: MESSAGES) (the mom's read failed, was unreachable or found no
    C(mom_priv); its config and hook files are then not judged), C(mom config differs or is
    not loaded) (M(hpc.pbs.mom_config) would change the file, or the running pbs_mom has not
    loaded the wanted values), C(hook files differ: FILES) (the mom's copies whose sha256 is
    not the server's, or that it lacks), C(vnode unknown to the server), C(left offline by a
    rollout) (the vnode is offline with a comment starting with O(comment_prefix): an
    interrupted rollout, which this one finishes).
  - >-
    The role C(hpc.pbs.rollout) applies it to every mom at once after its first look, and
    to each host again when its batch starts.
positional: _input, server_hook_files, vnode, comment_prefix
options:
  _input:
    description:
      - >-
        The result M(hpc.pbs.cluster_info) registered on the mom with C(gather=[hook_files])
        and C(mom_options): its RV(hpc.pbs.cluster_info#module:mom_plan) and
        C(health.hook_files.mom). A failed or unreachable result counts as not read.
    type: dict
    required: true
  server_hook_files:
    description: >-
      The server's hook files, C({NAME.HK|NAME.PY|NAME.CF: sha256}).
    type: dict
    required: true
  vnode:
    description:
      - >-
        The server's view of the mom's vnode, as M(hpc.pbs.cluster_info) gives it in
        C(health.nodes): C(state) (a list) and C(comment). Null when the server does not
        know the vnode.
    type: dict
    required: true
  comment_prefix:
    description: >-
      How the node comments a rollout writes start, for example V(hpc.pbs rollout ).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Note what the mom still has to do
  ansible.builtin.set_fact:
    mom_work: >-
      {{ mom_look | hpc.pbs.rollout_mom_work(server_hook_files, server_nodes[inventory_hostname] | default(none),
                                             'hpc.pbs rollout ') }}
# mom_work: [] when done, else e.g. ["mom config differs or is not loaded", "hook files differ: reliable_job_startup.PY"]
"""

RETURN = r"""
_value:
  description: >-
    One text per reason the mom goes through the batches; empty when it is done.
  type: list
  elements: str
"""

from ansible_collections.hpc.pbs.plugins.module_utils.cluster.rollout_work import mom_work


class FilterModule:
    """hpc.pbs filter for the rolling rollout's first look and batches."""

    def filters(self):
        return {"rollout_mom_work": mom_work}
