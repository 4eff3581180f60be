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
    in C(mom_priv/config), else C(default) computed as PBS does (PP-928 interfaces 3 and
    4 - the sum of the alarms of the enabled execjob_begin / execjob_prologue hooks, 30
    when there is none).
  - On the server host (C(PBS_START_SERVER=1) or a C(server_priv) directory) - one C(qmgr)
    call (commands on stdin) lists the server, the default scheduler, site hooks and
    pbshooks; reported are each hook's type, events, enabled, order, alarm, fail_action
    and the SHA-256 of its body (C(server_priv/hooks/NAME.PY)), the server's default
    C(tolerate_node_failures) (from C(default_qsub_arguments)) and the scheduler's
    C(job_run_wait).
version_added: "0.1.0"
author: hpc.pbs developers (@hpc-pbs)
extends_documentation_fragment:
  - hpc.pbs.pbs
options:
  query_server:
    description:
      - Whether to ask qmgr for server, scheduler and hook data (RV(server) - the
        default C(tolerate_node_failures) of PP-928 interface 1 and the scheduler's
        C(job_run_wait) of seed sched-job-run-wait). C(auto) does when this host is the
        server host (see above); C(always) and C(never) force it.
    type: str
    default: auto
    choices: [auto, always, never]
notes:
  - Supports check mode; the result is the same in both modes.
  - A host without C(pbs.conf) is reported with RV(installed=false) rather than failing.
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
pbs_version:
  description: PBS version from C(PBS_HOME/pbs_version), else the server's
    C(pbs_version) attribute; C(null) when unknown.
  returned: always
  type: str
  sample: "23.06.06"
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
    (PP-928 interface 3), each with C(value) (int, seconds), C(source) (C(mom_config)
    or C(default)) and C(hooks) (the alarms summed for the default).
  returned: always
  type: dict
server:
  description: Server data from qmgr, C(null) when not queried. Keys C(hooks) (as for
    C(mom), from qmgr), C(tolerate_node_failures) (the server-wide default of PP-928
    interface 1 - C(all), C(job_start), C(none) - or C(null)),
    C(default_qsub_arguments), C(job_run_wait) (scheduler C(default), seed
    sched-job-run-wait - C(execjob_hook), C(runjob_hook), C(none); C(null) when
    unset), C(pbs_version).
  returned: always
  type: dict
'''

import hashlib
import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpc.pbs.plugins.module_utils.hooks import (
    default_from_alarms, hook_file_paths, read_hook_dir)
from ansible_collections.hpc.pbs.plugins.module_utils.mom_config import (
    current_options, process_alive, read_mom_pid)
from ansible_collections.hpc.pbs.plugins.module_utils.pbs_conf import (
    module_pbs_paths, pbs_conf_argument_spec)
from ansible_collections.hpc.pbs.plugins.module_utils.qmgr import (
    Qmgr, QmgrError, parse_list_output, split_list_value)
from ansible_collections.hpc.pbs.plugins.module_utils.qsub_args import (
    QsubArgumentsError, parse_qsub_arguments, tolerate_value)

DAEMONS = (("server", "PBS_START_SERVER"), ("sched", "PBS_START_SCHED"),
           ("comm", "PBS_START_COMM"), ("mom", "PBS_START_MOM"))
SERVER_QUERIES = ("list server", "list sched default", "list hook", "list pbshook")


def read_text(path):
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except (IOError, OSError):
        return None


def file_sha256(path):
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except (IOError, OSError):
        return None


def hook_summary(attrs, body_path):
    """Reported fields of one hook (``attrs``: attribute text)."""
    alarm = str(attrs.get("alarm", "30"))
    order = str(attrs.get("order", "1"))
    return dict(
        type=attrs.get("type", "site"),
        events=split_list_value(attrs.get("event", "")),
        enabled=str(attrs.get("enabled", "true")).lower() in ("true", "t", "y", "1"),
        order=int(order) if order.isdigit() else order,
        alarm=int(alarm) if alarm.isdigit() else alarm,
        fail_action=split_list_value(attrs.get("fail_action", "none")),
        sha256=file_sha256(body_path),
    )


def daemon_states(paths):
    states = {}
    for daemon, key in DAEMONS:
        pid = read_mom_pid(paths.lock_file(daemon))
        running = pid is not None and process_alive(pid)
        states[daemon] = dict(configured=paths.conf.get(key, "0").strip() == "1",
                              running=running, pid=pid if running else None)
    return states


def mom_facts(paths):
    if not os.path.isdir(os.path.join(paths.home, "mom_priv")):
        return None
    hooks = read_hook_dir(paths.mom_hooks_dir)
    config = current_options(read_text(paths.mom_config) or "")
    facts = dict(hooks=dict((name, hook_summary(attrs, os.path.join(paths.mom_hooks_dir,
                                                                    name + ".PY")))
                            for name, attrs in hooks.items()))
    for option in ("job_launch_delay", "sister_join_job_alarm"):
        default, summed = default_from_alarms(hooks, option)
        explicit = config.get(option)
        if isinstance(explicit, list):
            explicit = explicit[-1]
        entry = dict(default=default, hooks=[dict(name=n, alarm=a) for n, a in summed])
        if explicit is not None:
            entry.update(value=int(explicit) if explicit.isdigit() else explicit,
                         source="mom_config")
        else:
            entry.update(value=default, source="default")
        facts[option] = entry
    return facts


def server_facts(module, paths):
    qmgr = Qmgr(module, paths.qmgr)
    try:
        out, dummy = qmgr.run_batch(list(SERVER_QUERIES), "the server queries")
        objects = parse_list_output(out)
    except QmgrError as exc:
        module.fail_json(**exc.fail_kwargs())
    except ValueError as exc:
        module.fail_json(msg="cannot parse qmgr's listing: %s" % exc)
    server = next((attrs for kind, name, attrs in objects if kind == "Server"), {})
    sched = next((attrs for kind, name, attrs in objects if kind == "Sched"), {})
    hooks = dict((name, hook_summary(attrs, hook_file_paths(paths.server_hooks_dir,
                                                            name)["body"]))
                 for kind, name, attrs in objects if kind == "Hook")
    dqa = server.get("default_qsub_arguments", "")
    try:
        tolerate = tolerate_value(parse_qsub_arguments(dqa, check_tolerate=False))
        parse_problem = None
    except QsubArgumentsError as exc:
        tolerate, parse_problem = None, str(exc)
    if parse_problem:
        module.warn("the server's default_qsub_arguments cannot be parsed as qsub options "
                    "(%s); every qsub may fail" % parse_problem)
    return dict(hooks=hooks, default_qsub_arguments=dqa, tolerate_node_failures=tolerate,
                job_run_wait=sched.get("job_run_wait"),
                pbs_version=server.get("pbs_version"))


def main():
    argument_spec = dict(query_server=dict(type="str", default="auto",
                                           choices=["auto", "always", "never"]))
    argument_spec.update(pbs_conf_argument_spec())
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    paths = module_pbs_paths(module, required=False)
    result = dict(changed=False, installed=paths.conf_found,
                  pbs_conf=dict(path=paths.conf_file, values=paths.conf),
                  pbs_version=None, daemons={}, mom=None, server=None)
    if not paths.conf_found and module.params["query_server"] != "always":
        module.exit_json(**result)

    version = (read_text(paths.version_file) or "").strip()
    result["pbs_version"] = version or None
    result["daemons"] = daemon_states(paths)
    result["mom"] = mom_facts(paths)
    query = module.params["query_server"]
    if query == "always" or (query == "auto" and (
            result["daemons"]["server"]["configured"]
            or os.path.isdir(os.path.join(paths.home, "server_priv")))):
        result["server"] = server_facts(module, paths)
        if not result["pbs_version"]:
            result["pbs_version"] = result["server"]["pbs_version"]
    module.exit_json(**result)


if __name__ == "__main__":
    main()
