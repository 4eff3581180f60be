# Copyright: hpc.pbs developers
# Apache License 2.0
"""Filter ``hpc.pbs.import_vars``: a running cluster's settings as the collection's
inventory variables (``playbooks/import.yml``)."""

from __future__ import annotations

DOCUMENTATION = r"""
name: import_vars
short_description: Turn what a running PBS cluster reports into the collection's inventory variables
version_added: 0.1.0
author: hpc.pbs developers
description:
  - >-
    Returns the files C(playbooks/import.yml) writes under C(import_dir) - the variables of
    the roles and playbooks (C(reliable_job_startup_*), C(sched_tuning_job_run_wait),
    C(site_tolerate_node_failures), C(site_cray_atom) with C(cray_atom_*),
    C(site_cgroup_resize) with C(cgroup_resize_*)) that describe what the cluster runs, so that C(site.yml
    --check) then changes nothing and C(audit.yml) reports no drift.
  - >-
    The hook is the site hook named C(reliable_job_startup), else the first by name whose
    body is the bundled C(files/hooks/reliable_job_startup.py). Its attributes give
    C(reliable_job_startup_hook_name), C(_hook_enabled), C(_hook_order) and C(_hook_alarm);
    its config gives C(reliable_job_startup_config) (the keys whose values differ from the
    bundled default). A body that is not the bundled one is returned as the file
    C(hook_bodies/NAME.py), and C(reliable_job_startup_hook_body_src) is its path under
    O(import_dir).
  - >-
    The Cray ATOM hook - the built-in C(PBS_cray_atom) when enabled
    (C(cray_atom_hook_source=builtin)), else the site hook named C(cray_atom) or the first by
    name with the bundled C(files/hooks/cray_atom.py) body (C(cray_atom_hook_source=bundled))
    - gives C(site_cray_atom=true) and the C(cray_atom_hook_*) attributes (with
    C(cray_atom_hook_fail_action) when the hook's fail_action is not the role's
    C([offline_vnodes])) and C(cray_atom_config) (the keys that differ from
    C(files/hooks/cray_atom.json)). The cgroup
    resize hook - the site hook named C(cgroup_resize) or the first by name with the bundled
    C(files/hooks/cgroup_resize.py) body (C(cgroup_resize_hook_source=bundled)), else a
    C(pbs_cgroups) hook that has the event C(execjob_resize)
    (C(cgroup_resize_hook_source=pbs_cgroups)) - gives C(site_cgroup_resize=true) and the
    C(cgroup_resize_*) variables likewise. A body of the site's own is returned as the file
    C(hook_bodies/NAME.py), and C(cray_atom_hook_body_src) or C(cgroup_resize_hook_body_src)
    is its path under O(import_dir), as for the reliable_job_startup hook.
  - The other hooks are listed and not touched.
  - >-
    Each mom's C($job_launch_delay) and C($sister_join_job_alarm) (C(null) when the line is
    not in C(mom_priv/config)) - the value most moms have goes to C(group_vars/pbs_mom.yml),
    a mom that differs gets C(host_vars/MOM.yml) with its own values only.
  - >-
    What C(site.yml) would still change (events the role does not take, a
    config in another layout, a scheduler without C(job_run_wait)) is returned in C(notes).
positional: _input, moms, bundled, hook_files, server_host, import_dir
options:
  _input:
    description: The C(server) that M(hpc.pbs.cluster_info) reports on the PBS server.
    type: dict
    required: true
  moms:
    description: Inventory host name of each mom -> the C(mom) of its M(hpc.pbs.cluster_info) (C(null) without C(mom_priv)).
    type: dict
    required: true
  bundled:
    description:
      - C(body) (the text of the bundled reliable_job_startup body) and C(config) (its bundled default config, a dict).
      - Optional C(cray_atom) and C(cgroup_resize), each with C(body) and C(config) of that bundled hook; a part without them is not imported.
    type: dict
    required: true
  hook_files:
    description:
      - >-
        C(hooks) - hook name -> C(body) and C(config), the text of its C(NAME.PY) and C(NAME.CF)
        on the server (C(null) when missing), for the hooks of C(read_hooks).
      - Or C(body) and C(config) alone - those of the reliable_job_startup hook.
      - C(null) (the default) before they are read - only C(hook_name) and C(read_hooks) are then of use.
    type: dict
  server_host:
    description: The inventory name of the PBS server, for the messages and the files' comments.
    type: str
    default: pbs_server
  import_dir:
    description:
      - >-
        The absolute path on the controller the files are written under;
        C(reliable_job_startup_hook_body_src), C(cray_atom_hook_body_src) and
        C(cgroup_resize_hook_body_src) are then the absolute paths of the bodies written there.
      - C(null) (the default) - those paths are relative to the import directory.
    type: path
"""

EXAMPLES = r"""
- name: Turn what the cluster reports into variables
  ansible.builtin.set_fact:
    imported: >-
      {{ hostvars['pbs-server'].info.server | hpc.pbs.import_vars(
           {'mom1': hostvars['mom1'].info.mom},
           {'body': lookup('ansible.builtin.file', 'files/hooks/reliable_job_startup.py', rstrip=false),
            'config': lookup('ansible.builtin.file', 'files/hooks/reliable_job_startup.json') | from_json},
           {'hooks': {'reliable_job_startup': {'body': body_text, 'config': config_text}}},
           'pbs-server', '/srv/imported') }}
"""

RETURN = r"""
_value:
  description:
    - C(hook_name) - the hook the role manages (C(null) when the server has none).
    - C(read_hooks) - the hooks whose C(NAME.PY) and C(NAME.CF) are to be read for O(hook_files).
    - C(files) - path under C(import_dir) -> text (C(group_vars/all.yml), C(group_vars/pbs_mom.yml), C(host_vars/MOM.yml), C(hook_bodies/NAME.py)).
    - C(unmanaged_hooks) - the other hooks (C(name), C(type), C(events), C(enabled)).
    - C(notes) - what C(site.yml) would still change, one sentence each.
    - C(variables) - C(all), C(pbs_mom) and C(hosts) (host -> its own variables).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.hpc.pbs.plugins.module_utils.cluster.import_vars import ImportRefused, import_vars as _import_vars


def import_vars(server, moms, bundled, hook_files=None, server_host="pbs_server", import_dir=None):
    """See DOCUMENTATION."""
    try:
        return _import_vars(server, moms, bundled, hook_files, server_host, import_dir)
    except ImportRefused as exc:
        raise AnsibleFilterError("hpc.pbs.import_vars: %s" % exc) from exc


class FilterModule:
    """hpc.pbs filter for playbooks/import.yml."""

    def filters(self):
        return {"import_vars": import_vars}
