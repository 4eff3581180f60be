#!/usr/bin/python
# -*- coding: utf-8 -*-

DOCUMENTATION = r'''
---
module: mom_config
short_description: Manage $option lines of the PBS mom config file, reload and verify the mom
description:
  - Sets or removes C($option value) lines of C(PBS_HOME/mom_priv/config) on an execution
    host, keeping every other line (comments, C($clienthost), static resources) as it is.
    An existing line is replaced in place; a new one is appended. The file is written
    atomically, keeping its owner and mode (a new file gets mode 0644).
  - Every name and value is validated BEFORE anything is written, because pbs_mom exits
    on a config line it cannot parse (the node goes down). An invalid task leaves the file
    byte for byte as it was.
  - After a change, sends SIGHUP to the mom (pid from C(PBS_HOME/mom_priv/mom.lock)) and
    waits until the mom has logged each C($job_launch_delay) / C($sister_join_job_alarm)
    value set by the task (C(...;pbs_mom;Svr;job_launch_delay;<v>)) in
    C(PBS_HOME/mom_logs/YYYYMMDD), then checks the mom is still alive. If it died or did
    not log in time, the task fails with the tail of the mom log.
  - Implements PP-928 interface 3 (C($sister_join_job_alarm)) and interface 4
    (C($job_launch_delay)).
version_added: "0.1.0"
author: hpc.pbs developers
extends_documentation_fragment:
  - hpc.pbs.pbs
options:
  options:
    description:
      - Option name without the C($) -> value. A C(null) value removes that option's
        lines.
      - C(job_launch_delay) (PP-928 interface 4, seconds the primary mom waits before
        launching a tolerant job) and C(sister_join_job_alarm) (PP-928 interface 3,
        seconds the primary mom waits for sisters to join) take whole seconds >= 1, as an
        integer or a string of digits; C(0), negative numbers, fractions, text and
        anything after the number (such as a C(# comment)) are refused.
      - Other values are strings, numbers or booleans (written C(true)/C(false)) without
        newline or C(#). A list writes one line per item, for options that may repeat
        (C(clienthost), C(restricted), C(usecp), C(action), C(enforce)).
      - Names must be options a Linux pbs_mom knows (the C(special[]) table of OpenPBS
        C(src/resmom/mom_main.c)) - C(action), C(alien_attach), C(alien_kill),
        C(attach_allow), C(checkpoint_path), C(clienthost), C(configversion),
        C(cputmult), C(enforce), C(ideal_load), C(jobdir_root), C(kbd_idle),
        C(logevent), C(max_check_poll), C(max_load), C(max_poll_downtime),
        C(min_check_poll), C(momname), C(port), C(prologalarm),
        C(sister_join_job_alarm), C(job_launch_delay), C(restart_background),
        C(restart_transmogrify), C(restrict_user), C(restrict_user_exceptions),
        C(restrict_user_maxsysid), C(restricted), C(suspendsig), C(tmpdir),
        C(vnodedef_additive), C(usecp), C(wallmult), C(reject_root_scripts),
        C(report_hook_checksums).
    type: dict
    required: true
  state:
    description:
      - C(present) writes the options; C(absent) removes the named options whatever their
        value (values are ignored).
    type: str
    default: present
    choices: [present, absent]
  reload:
    description:
      - When to send SIGHUP to pbs_mom. C(changed) only when the file changed, C(always)
        on every run, C(never) not at all (the mom reads the file at its next start or
        HUP).
    type: str
    default: changed
    choices: [changed, always, never]
  reload_timeout:
    description:
      - Seconds to wait after SIGHUP for the mom to log the new values.
    type: int
    default: 30
  path:
    description:
      - Config file to manage instead of C(PBS_HOME/mom_priv/config). The mom's lock file
        and logs are still looked up under C(PBS_HOME).
    type: path
notes:
  - Supports check mode (nothing written, no signal) and diff mode (the file text).
  - When the mom is not running (no live pid in C(mom.lock)), no signal is sent and a
    warning says so; the mom reads the file when it starts.
'''

EXAMPLES = r'''
- name: Tolerant job start timings (PP-928 interfaces 3 and 4)
  hpc.pbs.mom_config:
    options:
      job_launch_delay: 45
      sister_join_job_alarm: 60

- name: Go back to the defaults derived from the hooks' alarms
  hpc.pbs.mom_config:
    state: absent
    options:
      job_launch_delay:
      sister_join_job_alarm:
'''

RETURN = r'''
options:
  description: All $options in the file after the task (name -> value; a list when the
    option occurs more than once).
  returned: always
  type: dict
  sample: {"restrict_user_maxsysid": "999", "job_launch_delay": "45"}
reloaded:
  description: Whether SIGHUP was sent to pbs_mom and the reload was verified.
  returned: always
  type: bool
path:
  description: The config file managed.
  returned: always
  type: str
'''

import os
import tempfile

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpc.pbs.plugins.module_utils.mom_config import (
    MomConfigValueError, MomLogWatcher, SECONDS_OPTIONS, apply_options, current_options,
    normalize_value, process_alive, read_mom_pid, reload_mom)
from ansible_collections.hpc.pbs.plugins.module_utils.pbs_conf import (
    module_pbs_paths, pbs_conf_argument_spec)

NEW_FILE_MODE = 0o644


def plan(options, state):
    """``(desired, remove, expected_log)`` from the task or raise MomConfigValueError with
    every problem (one per line)."""
    desired = {}
    remove = set()
    expected = []
    problems = []
    for name, value in options.items():
        if state == "absent" or value is None:
            if not name or any(c.isspace() for c in name) or name.startswith("$"):
                problems.append("%r is not an option name (give it without '$')" % name)
            remove.add(name)
            continue
        try:
            text = normalize_value(name, value)
        except MomConfigValueError as exc:
            problems.append(str(exc))
            continue
        desired[name] = text if isinstance(text, list) else [text]
        if name in SECONDS_OPTIONS:
            expected.append((name, text))
    if problems:
        raise MomConfigValueError("\n".join(problems))
    return desired, remove, expected


def write_atomically(module, path, data):
    directory = os.path.dirname(path) or "."
    existed = os.path.exists(path)
    fd, tmp = tempfile.mkstemp(prefix=".config.", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if not existed:
            os.chmod(tmp, NEW_FILE_MODE)
        module.atomic_move(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def main():
    argument_spec = dict(
        options=dict(type="dict", required=True),
        state=dict(type="str", default="present", choices=["present", "absent"]),
        reload=dict(type="str", default="changed", choices=["changed", "always", "never"]),
        reload_timeout=dict(type="int", default=30),
        path=dict(type="path"),
    )
    argument_spec.update(pbs_conf_argument_spec())
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    params = module.params
    if params["reload_timeout"] < 1:
        module.fail_json(msg="reload_timeout must be at least 1 second")
    if not params["options"]:
        module.fail_json(msg="options is empty: name at least one mom config option")

    try:
        desired, remove, expected = plan(params["options"], params["state"])
    except MomConfigValueError as exc:
        module.fail_json(msg="mom config not changed: %s" % exc)

    paths = module_pbs_paths(module)
    path = params["path"] or paths.mom_config
    try:
        with open(path, "rb") as handle:
            old_bytes = handle.read()
    except FileNotFoundError:
        old_bytes = b""
    except (IOError, OSError) as exc:
        module.fail_json(msg="cannot read the mom config %s: %s. Run the task as root "
                             "(become: true) or fix path." % (path, exc))
    old_text = old_bytes.decode("utf-8", "surrogateescape")
    new_text = apply_options(old_text, desired, remove)
    changed = new_text != old_text

    result = dict(changed=changed, path=path, reloaded=False,
                  options=current_options(new_text))
    if module._diff:
        result["diff"] = dict(before=old_text, after=new_text, before_header=path,
                              after_header=path)

    want_reload = params["reload"] == "always" or (params["reload"] == "changed" and changed)
    if module.check_mode:
        if params["reload"] == "always":
            result["changed"] = True
        module.exit_json(**result)

    if changed:
        try:
            write_atomically(module, path, new_text.encode("utf-8", "surrogateescape"))
        except (IOError, OSError) as exc:
            module.fail_json(msg="cannot write the mom config %s: %s. Run the task as root "
                                 "(become: true)." % (path, exc))

    if want_reload:
        pid = read_mom_pid(paths.mom_lock)
        if pid is None or not process_alive(pid):
            module.warn("pbs_mom is not running (no live pid in %s); it was not reloaded "
                        "and reads %s when it starts" % (paths.mom_lock, path))
        else:
            watcher = MomLogWatcher(paths.mom_logs_dir)
            try:
                ok, message = reload_mom(pid, watcher, expected, params["reload_timeout"])
            except OSError as exc:
                module.fail_json(msg="cannot send SIGHUP to pbs_mom pid %d: %s. Run the task "
                                     "as root (become: true)." % (pid, exc), **result)
            if not ok:
                result.pop("changed")
                module.fail_json(msg="%s. The config file %s was %s; check it, restart "
                                     "pbs_mom and look at the mom log." %
                                 (message, path, "changed" if changed else "not changed"),
                                 changed=changed, mom_log_tail=watcher.tail(), **result)
            if message:
                module.warn(message)
            result["reloaded"] = True
            if params["reload"] == "always":
                result["changed"] = True
    module.exit_json(**result)


if __name__ == "__main__":
    main()
