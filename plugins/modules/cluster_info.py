#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hpc.pbs developers
# Apache License 2.0 (https://www.apache.org/licenses/LICENSE-2.0), as galaxy.yml says

DOCUMENTATION = r'''
---
module: cluster_info
short_description: Report the PBS installation, hooks and reliable-startup settings of a host
description:
  - Read-only. Reports what a PBS host runs and how the reliable job startup features of
    PP-928 are configured there; never changes anything, also outside check mode.
  - Everywhere - the PBS version (C(PBS_HOME/pbs_version)), the values of C(pbs.conf),
    which daemons C(pbs.conf) starts here and which of them run (pid in their lock file).
  - On an execution host (a C(mom_priv) directory exists) - the hooks the server copied
    to this mom (C(mom_priv/hooks/*.HK)) and the effective C($job_launch_delay) /
    C($sister_join_job_alarm) with where each came from - C(mom_config) when the line is
    in C(mom_priv/config) (the last one when repeated), else derived as pbs_mom derives it
    (PP-928 interfaces 3 and 4) - C(hooks), the sum of the alarms of the enabled
    execjob_begin hooks (for C($sister_join_job_alarm)) or execjob_prologue hooks (for
    C($job_launch_delay)), a hook with both events counting for both, or C(default), 30
    seconds when there is no such hook.
  - A derived value is what pbs_mom takes at its start and when the server copies it a
    hook's C(.HK) file. After a reload (SIGHUP) pbs_mom reads no hook and holds 30 seconds
    for a derived option until the next hook copy or restart - reported as
    C(after_sighup).
  - On the server host (C(PBS_START_SERVER=1) or a C(server_priv) directory) - one C(qmgr)
    call (commands on stdin) lists the server, the default scheduler, site hooks and
    pbshooks; reported are each hook's type, events, enabled, order, alarm, fail_action
    and the SHA-256 of its body (C(server_priv/hooks/NAME.PY)), the server's default
    C(tolerate_node_failures) (from C(default_qsub_arguments)) and the scheduler's
    C(job_run_wait).
  - With O(gather), a health snapshot read from PBS's own JSON (C(pbsnodes -a -F json),
    C(qstat -f -t -F json)) and the hook files on disk, and the problems it shows (see
    RV(health), RV(problems)); given the problems of an earlier snapshot
    (O(baseline_problems)), also which of them are new (RV(new_problems)). This is the
    health gate of C(playbooks/rollout.yml) - one call on the server per look. With
    O(vnodes), only the named vnodes are read (the rollout's look at one host's node
    before it marks and while it drains it).
version_added: "0.1.0"
author: hpc.pbs developers (@hpc-pbs)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - hpc.pbs.pbs
options:
  query_server:
    description:
      - Whether to ask qmgr for server, scheduler and hook data (RV(server) - the
        default C(tolerate_node_failures) of PP-928 interface 1 and the scheduler's
        C(job_run_wait) of the job_run_wait design). C(auto) does when this host is the
        server host (see above); C(always) and C(never) force it.
    type: str
    default: auto
    choices: [auto, always, never]
  gather:
    description:
      - Parts of the health snapshot RV(health) to read. C(nodes) - every vnode's state,
        comment and jobs (C(pbsnodes -a -F json); on the server host), or only those of
        O(vnodes). C(held_jobs) - the
        jobs and subjobs with a system hold (C(s) in C(Hold_Types); C(qstat -f -t -F
        json); on the server host). C(hook_files) - the SHA-256 of every C(NAME.HK),
        C(NAME.PY), C(NAME.CF) in C(server_priv/hooks) and in C(mom_priv/hooks) (each
        where it exists).
      - Empty (the default) reads no snapshot.
    type: list
    elements: str
    default: []
    choices: [nodes, held_jobs, hook_files]
  vnodes:
    description:
      - Vnode names that limit C(gather=[nodes]) to these vnodes - C(pbsnodes -v -F json
        NAME...), one call for all of them; C(nodes) of RV(health) then holds just these.
        Empty (the default) - every vnode (C(pbsnodes -a -F json)).
      - Only with C(nodes) in O(gather). A name must not be empty nor start with C(-)
        (pbsnodes would take it for an option); a name given twice is asked for once.
      - "A vnode the server does not know fails the module, naming it in the message and in
        C(unknown_vnodes) (a list of names); real pbsnodes exits 0 then, with the entry
        C(NAME: {NAME: Unknown node}) in place of the vnode's attributes."
      - This reads less than every vnode for a caller interested in one (the rollout's look
        at one host), although pbsnodes itself still asks the server for every vnode once
        before the named ones.
    type: list
    elements: str
    default: []
  mom_hook_files:
    description:
      - "Hook files of moms as their own C(gather=[hook_files]) call reported them:
        C({MOM: health.hook_files.mom}). Compared with this host's C(server_priv/hooks):
        a mom whose copy of a server hook differs, or lacks a file of a hook in
        O(required_hooks), is a problem (kind C(hook_files)). A mom given as C(null)
        (its own call failed) is not compared."
    type: dict
    default: {}
  required_hooks:
    description:
      - Hooks every mom of O(mom_hook_files) must hold (all their files on the server).
    type: list
    elements: str
    default: []
  own_comment_prefix:
    description:
      - A vnode whose comment starts with this text was marked by the caller (a rollout's
        own offline mark) and is no problem. Empty - every down or offline vnode is one.
    type: str
    default: ""
  baseline_problems:
    description:
      - RV(problems) of an earlier call. RV(new_problems) lists the problems of this call
        whose C(kind) and C(name) are not among them.
    type: list
    elements: dict
  mom_options:
    description:
      - Wanted C(mom_priv/config) options, as O(hpc.pbs.mom_config#module:options) takes
        them (name without C($) -> value; C(null) - no line). On an execution host,
        RV(mom_plan) then says what M(hpc.pbs.mom_config) with C(state=present) would make
        of the file - the same planning code; nothing is written. This lets an audit read
        a mom in one call (C(playbooks/audit.yml)).
      - A value the mom would refuse fails the module, with the message of
        M(hpc.pbs.mom_config).
    type: dict
  plan_hooks:
    description:
      - Hook tasks to plan on the server host, each as M(hpc.pbs.hook) with C(state=present)
        takes its options (the subset below; C(body) and C(config) as text). RV(hook_plans)
        then says, for each in order, what that module would change - the same planning
        code, including the preflight of a body that would go live; nothing is written.
        This lets an audit read the server and plan its hooks in one call
        (C(playbooks/audit.yml)).
      - A task that cannot be planned (a value the module refuses, a built-in hook that
        does not exist, a failing qmgr) is a plan with C(failed=true) and the module's
        message, not a failed module.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: The hook's name (O(hpc.pbs.hook#module:name)).
        type: str
        required: true
      type:
        description: C(site) or C(pbs) (a built-in pbshook), as O(hpc.pbs.hook#module:type).
        type: str
        default: site
        choices: [site, pbs]
      events:
        description: As O(hpc.pbs.hook#module:events) (hook event names as PBS spells them).
        type: list
        elements: str
      enabled:
        description: As O(hpc.pbs.hook#module:enabled).
        type: bool
      order:
        description: As O(hpc.pbs.hook#module:order) (1-1000 for a site hook).
        type: int
      alarm:
        description: As O(hpc.pbs.hook#module:alarm) (seconds).
        type: int
      fail_action:
        description: As O(hpc.pbs.hook#module:fail_action).
        type: list
        elements: str
        choices: [none, offline_vnodes, clear_vnodes_upon_recovery, scheduler_restart_cycle]
      user:
        description: As O(hpc.pbs.hook#module:user).
        type: str
        choices: [pbsadmin, pbsuser]
      freq:
        description: As O(hpc.pbs.hook#module:freq) (seconds).
        type: int
      debug:
        description: As O(hpc.pbs.hook#module:debug).
        type: bool
      body:
        description: The wanted body (C(NAME.PY)) as text, as O(hpc.pbs.hook#module:body).
        type: str
      config:
        description: The wanted config (C(NAME.CF)), as O(hpc.pbs.hook#module:config) (a
          dict or list becomes JSON text).
        type: raw
      config_format:
        description: As O(hpc.pbs.hook#module:config_format) (C(json) - the config must
          parse as JSON).
        type: str
        default: json
        choices: [json, raw]
  plan_objects:
    description:
      - qmgr tasks to plan on the server host, each as M(hpc.pbs.qmgr) with
        C(state=present) and C(list_mode=replace) takes its options. RV(object_plans) then
        says, for each in order, what that module would change (the same planning code);
        nothing is written. A task that cannot be planned (an unknown attribute, a value
        qmgr refuses, a missing object) is a plan with C(failed=true) and the module's
        message.
    type: list
    elements: dict
    default: []
    suboptions:
      object_type:
        description: The qmgr object type, as O(hpc.pbs.qmgr#module:object_type).
        type: str
        required: true
        choices: [server, sched, queue, node, hook, pbshook]
      name:
        description: The object's name; C(sched) defaults to C(default), C(server) to the
          default server; required for the other types.
        type: str
      attributes:
        description: Attribute -> wanted value, as O(hpc.pbs.qmgr#module:attributes)
          (C(null) unsets).
        type: dict
        required: true
notes:
  - Supports check mode; the result is the same in both modes.
  - A host without C(pbs.conf) is reported with RV(installed=false) rather than failing.
attributes:
  check_mode:
    support: full
    details: The module only reads; its result is the same in check mode.
  diff_mode:
    support: none
  platform:
    platforms: posix
seealso:
  - module: hpc.pbs.mom_config
  - module: hpc.pbs.hook
  - name: OpenPBS source and design documents
    description: The PBS code this module drives and the designs it implements (PP-928 reliable job startup).
    link: https://github.com/openpbs/openpbs
'''

EXAMPLES = r'''
- name: Audit the reliable job startup settings
  hpc.pbs.cluster_info:
  register: pbs

- name: Show the effective join alarm of every mom
  ansible.builtin.debug:
    msg: "{{ pbs.mom.sister_join_job_alarm.value }} s ({{ pbs.mom.sister_join_job_alarm.source }})"
  when: pbs.mom is not none
'''

RETURN = r'''
installed:
  description: Whether pbs.conf was found.
  returned: always
  type: bool
  sample: true
pbs_version:
  description: PBS version from C(PBS_HOME/pbs_version), else the server's
    C(pbs_version) attribute; C(null) when unknown.
  returned: always
  type: str
  sample: "23.06.06"
pbs_features:
  description: What this PBS release has of the behaviours that differ between the
    releases the collection supports (C(clear_topjob_estimates_enable),
    C(pbsnodes_refusal_by_name), C(pbs_cgroups_cgroup_v2)), decided from RV(pbs_version)
    by the collection's version table - C(true), C(false), or C(null) when the version is
    unknown or is a PBS Professional release whose OpenPBS base the table does not know.
  returned: always
  type: dict
  sample: {"clear_topjob_estimates_enable": true, "pbs_cgroups_cgroup_v2": false,
           "pbsnodes_refusal_by_name": true}
pbs_conf:
  description: Path and values of pbs.conf (after environment overrides).
  returned: always
  type: dict
  sample: {"path": "/etc/pbs.conf", "values": {"PBS_SERVER": "vm", "PBS_START_MOM": "1"}}
daemons:
  description: For C(server), C(sched), C(comm), C(mom) - C(configured) (PBS_START_* is
    1), C(running) and C(pid).
  returned: always
  type: dict
  sample: {"mom": {"configured": true, "running": true, "pid": 4242}}
mom:
  description: Execution host data, C(null) when this host has no C(mom_priv). Keys
    C(hooks) (name -> type, events, enabled, order, alarm, fail_action, sha256 of the
    body), C(job_launch_delay) (PP-928 interface 4) and C(sister_join_job_alarm)
    (PP-928 interface 3), each with C(value) (int, seconds; the line's text when it is not
    a whole number), C(source) (C(mom_config) - the line of C(mom_priv/config); C(hooks) -
    no line, the sum of the alarms of the enabled hooks of the event; C(default) - no line
    and no such hook, 30), C(line) (the config line, or C(null)), C(hooks) (the alarms
    summed, a list of C(name), C(alarm) in seconds, whether or not the line wins),
    C(default) (the derived value in seconds, whether or not the line wins),
    C(after_sighup) (seconds the mom holds after a reload - the line's value, else 30) and
    C(why) (one line for a person). C(cgroup) - the
    cgroup layout this host's processes (the mom among them) see, from
    C(/proc/self/mountinfo) - C(layout) (C(v1) - cgroup v1 controllers only, C(hybrid) -
    v1 controllers and a cgroup2 mount such as C(/sys/fs/cgroup/unified), C(v2) - a cgroup2
    mount and no v1 controller, C(none) - no cgroup mount, C(unknown) - the file could not
    be read), C(v1_controllers) (sorted names), C(v1_mounts) (controller -> mount point),
    C(cgroup2_mount) (path or C(null)), C(source) (the file read) and C(error) (C(null), or
    why it could not be read).
  returned: always
  type: dict
  sample: {"sister_join_job_alarm": {"value": 90, "source": "hooks", "line": null, "default": 90,
                                     "hooks": [{"name": "pbs_cgroups", "alarm": 90}], "after_sighup": 30,
                                     "why": "no config line; the sum of the alarms of the enabled execjob_begin hooks: pbs_cgroups 90 s"},
           "cgroup": {"layout": "v2", "v1_controllers": [], "v1_mounts": {},
                      "cgroup2_mount": "/sys/fs/cgroup", "source": "/proc/self/mountinfo",
                      "error": null}}
server:
  description: Server data from qmgr, C(null) when not queried. Keys C(hooks) (as for
    C(mom), from qmgr), C(tolerate_node_failures) (the server-wide default of PP-928
    interface 1 - C(all), C(job_start), C(none) - or C(null)),
    C(default_qsub_arguments), C(job_run_wait) (scheduler C(default), the
    job_run_wait design - C(execjob_hook), C(runjob_hook), C(none); C(null) when
    unset), C(pbs_version), C(alarm_sums) (C(execjob_begin) and C(execjob_prologue) -
    the sum of the alarms, in seconds, of the enabled site hooks and pbshooks of that
    event, 0 with none; what C($sister_join_job_alarm) / C($job_launch_delay) should not
    be below).
  returned: always
  type: dict
  sample: {"hooks": {}, "tolerate_node_failures": "job_start",
           "default_qsub_arguments": "-W tolerate_node_failures=job_start",
           "job_run_wait": "execjob_hook", "pbs_version": "23.06.06",
           "alarm_sums": {"execjob_begin": 300, "execjob_prologue": 0}}
health:
  description: The snapshot O(gather) asked for, C({}) without it. C(nodes) - vnode (every
    one, or those of O(vnodes)) ->
    C(state) (list, e.g. C([down, job-busy])), C(comment) (C(null) when none), C(jobs)
    (job ids). C(held_jobs) - job id -> C(hold_types), C(job_state), C(comment),
    C(run_count). C(hook_files) - C(server) and C(mom), each C(NAME.EXT) -> sha256, or
    C(null) where that directory does not exist.
  returned: always
  type: dict
  sample: {"nodes": {"mom3": {"state": ["down"], "comment": "node down: communication closed", "jobs": []}}}
problems:
  description: What the snapshot shows wrong - the problems of each kind below, in this
    order of kinds, each kind's sorted by name; a kind whose part of O(gather) was not read
    finds none. Each has C(kind) (C(vnode) - reads C(nodes), a vnode down or offline and not
    marked by O(own_comment_prefix); C(held_job) - reads C(held_jobs), a job or subjob with a
    system hold; C(hook_files) - reads C(hook_files), a mom of O(mom_hook_files) whose hook
    files differ from the server's), C(name) (vnode, job id or mom) and C(detail) (one line
    for a person).
  returned: always
  type: list
  elements: dict
  sample: [{"kind": "vnode", "name": "mom3", "detail": "vnode mom3 is down (comment: node down: communication closed)"}]
new_problems:
  description: The RV(problems) not in O(baseline_problems) (same C(kind) and C(name));
    C([]) without O(baseline_problems).
  returned: always
  type: list
  elements: dict
  sample: [{"kind": "held_job", "name": "12.pbs-server", "detail": "job 12.pbs-server has a system hold (Hold_Types s, run_count 21)"}]
mom_plan:
  description: With O(mom_options), on a host with C(mom_priv) - C(path) of the config
    file, C(before) and C(after) (its text now and as M(hpc.pbs.mom_config) would write
    it), C(changed) (whether they differ) and C(options) (the options of C(after), name ->
    value, a list for a repeated option) and C(not_loaded) (the options of O(mom_options)
    that the running pbs_mom holds otherwise than C(after) says, as it logged them at its
    last config read - C(name), C(running), C(in_file); what M(hpc.pbs.mom_config) would
    reload it for; empty when it does not run). C(null) otherwise.
  returned: always
  type: dict
  sample: {"path": "/var/spool/pbs/mom_priv/config", "changed": true, "before": "$clienthost vm\n",
           "after": "$clienthost vm\n$job_launch_delay 45\n",
           "options": {"clienthost": "vm", "job_launch_delay": "45"}, "not_loaded": []}
hook_plans:
  description: One per O(plan_hooks), in order - C(object) (C(hook NAME) or C(pbshook
    NAME)), C(failed) (with C(msg) when true), C(changed), C(commands) (the qmgr commands
    M(hpc.pbs.hook) would run) and C(diff) (as that module's C(--diff) - the attributes
    as C(attribute = value) lines before and after, then each of C(NAME.PY) / C(NAME.CF)
    that would change; the first entry also carries C(changes), the same as data - one
    C(object), C(item), C(before), C(after) per attribute that differs (C(null) where it is
    not listed), then per hook file that would change C(item) (C(body) or C(config)),
    C(file), C(before_sha256), C(after_sha256), and for the config its C(before) and
    C(after) text), C(preflight) when a body that would go live was checked.
  returned: always
  type: list
  elements: dict
  sample: [{"object": "hook rjs", "failed": false, "changed": true,
            "commands": ["set hook rjs alarm = 40", "list hook rjs"],
            "diff": [{"before": "alarm = 30\n", "after": "alarm = 40\n",
                      "before_header": "hook rjs attributes", "after_header": "hook rjs attributes"}]}]
object_plans:
  description: One per O(plan_objects), in order - C(object) (e.g. C(sched default),
    C(server)), C(failed) (with C(msg) when true), C(changed), C(commands) and C(diff)
    (as M(hpc.pbs.qmgr)'s C(--diff) - C(before), C(after) as C(attribute = value) lines,
    and C(changes), the same as data - one C(object), C(item), C(before), C(after) per
    attribute that differs, C(null) where it is not listed).
  returned: always
  type: list
  elements: dict
  sample: [{"object": "sched default", "failed": false, "changed": false, "commands": [],
            "diff": {"before": "job_run_wait = runjob_hook\n", "after": "job_run_wait = runjob_hook\n",
                     "before_header": "sched default (before)", "after_header": "sched default (after)"}}]
'''

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpc.pbs.plugins.module_utils.cluster.health import (
    SNAPSHOT_PARTS, checked_vnodes, gather_health, health_problems, new_problems)
from ansible_collections.hpc.pbs.plugins.module_utils.cluster.install_facts import (
    daemon_states, installed_version)
from ansible_collections.hpc.pbs.plugins.module_utils.common.module_error import ModuleError
from ansible_collections.hpc.pbs.plugins.module_utils.moms.mom_facts import mom_facts, mom_plan
from ansible_collections.hpc.pbs.plugins.module_utils.pbs.pbs_conf import (
    pbs_conf_argument_spec, task_pbs_paths)
from ansible_collections.hpc.pbs.plugins.module_utils.pbs.pbs_versions import feature_table
from ansible_collections.hpc.pbs.plugins.module_utils.server.server_facts import server_facts
from ansible_collections.hpc.pbs.plugins.module_utils.server.server_plans import (
    HOOK_PLAN_OPTIONS, OBJECT_PLAN_OPTIONS, server_plans)


def argument_spec():
    """The module's options (DOCUMENTATION), pbs_conf_file included."""
    spec = dict(query_server=dict(type="str", default="auto", choices=["auto", "always", "never"]),
                gather=dict(type="list", elements="str", default=[], choices=list(SNAPSHOT_PARTS)),
                mom_hook_files=dict(type="dict", default={}),
                required_hooks=dict(type="list", elements="str", default=[]),
                vnodes=dict(type="list", elements="str", default=[]),
                own_comment_prefix=dict(type="str", default=""),
                baseline_problems=dict(type="list", elements="dict"),
                mom_options=dict(type="dict"),
                plan_hooks=dict(type="list", elements="dict", default=[], options=HOOK_PLAN_OPTIONS),
                plan_objects=dict(type="list", elements="dict", default=[], options=OBJECT_PLAN_OPTIONS))
    spec.update(pbs_conf_argument_spec())
    return spec


def run(module):
    """The module's result (RETURN); raises ModuleError."""
    vnodes = checked_vnodes(module)
    paths = task_pbs_paths(module.params, required=False)
    result = dict(changed=False, installed=paths.conf_found,
                  pbs_conf=dict(path=paths.conf_file, values=paths.conf),
                  pbs_version=None, pbs_features=feature_table(None), daemons={}, mom=None, server=None,
                  health={}, problems=[], new_problems=[], mom_plan=None,
                  hook_plans=[], object_plans=[])
    if not paths.conf_found and module.params["query_server"] != "always":
        return result

    result["pbs_version"] = installed_version(paths)
    result["daemons"] = daemon_states(paths)
    result["mom"] = mom_facts(paths)
    if module.params["mom_options"] is not None and result["mom"] is not None:
        result["mom_plan"] = mom_plan(module, paths, module.params["mom_options"])
    query = module.params["query_server"]
    if query == "always" or (query == "auto" and (
            result["daemons"]["server"]["configured"]
            or os.path.isdir(os.path.join(paths.home, "server_priv")))):
        result["server"] = server_facts(module, paths)
        if not result["pbs_version"]:
            result["pbs_version"] = result["server"]["pbs_version"]
    result["pbs_features"] = feature_table(result["pbs_version"])
    if module.params["plan_hooks"] or module.params["plan_objects"]:
        result["hook_plans"], result["object_plans"] = server_plans(
            module, paths, module.params["plan_hooks"], module.params["plan_objects"])
    if module.params["gather"]:
        result["health"] = gather_health(module, paths, module.params["gather"], vnodes)
        result["problems"] = health_problems(result["health"], module.params)
        if module.params["baseline_problems"] is not None:
            result["new_problems"] = new_problems(result["problems"], module.params["baseline_problems"])
    return result


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    try:
        result = run(module)
    except ModuleError as exc:
        module.fail_json(**exc.fail_kwargs())
    module.exit_json(**result)


if __name__ == "__main__":
    main()
