#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hpc.pbs developers
# Apache License 2.0 (https://www.apache.org/licenses/LICENSE-2.0), as galaxy.yml says

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
  - Warns when C($job_launch_delay) is below the sum of the alarms of the enabled
    execjob_prologue hooks, or C($sister_join_job_alarm) below that of the enabled
    execjob_begin hooks, read from the mom's own hook files (C(mom_priv/hooks/*.HK)) -
    the mom would stop waiting before those hooks may have finished.
  - Implements PP-928 interface 3 (C($sister_join_job_alarm)) and interface 4
    (C($job_launch_delay)).
version_added: "0.1.0"
author: hpc.pbs developers (@hpc-pbs)
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
      - Whether to send SIGHUP to pbs_mom after the file changed. C(true) (or C(changed))
        reloads only when the file changed; C(false) (or C(never)) never does (the mom
        reads the file at its next start or HUP); C(always) reloads on every run and
        verifies the values (a handler's choice).
      - Accepted values - a boolean, C(changed), C(always), C(never).
    type: raw
    default: true
  reload_timeout:
    description:
      - Seconds (1-3600) to wait after SIGHUP for the mom to log the new values, and after
        a restart for the mom to write its pid.
    type: int
    default: 30
  recover:
    description:
      - When the mom died after the reload (a real pbs_mom exits on any config line it
        cannot parse), the previous config file is always put back; with C(true) the
        mom is then also started again with C(pbs_mom -p), which keeps the jobs that
        were running, and the task says so. The task fails in both cases.
    type: bool
    default: true
  lock_timeout:
    description:
      - Seconds (0-3600) to wait for another run of this module on the same config file
        to finish (an exclusive C(flock) on C(.hpc_pbs_mom_config.lock) beside the file
        is held from reading the file to the end of the reload).
    type: int
    default: 60
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

- name: Write the file now, let a handler reload every mom later
  hpc.pbs.mom_config:
    options:
      job_launch_delay: 45
    reload: false

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
alarm_sums:
  description: Sums of the alarms of the enabled hooks this mom has, by option
    (C(job_launch_delay) - execjob_prologue, C(sister_join_job_alarm) - execjob_begin);
    C(null) for an option without such hooks.
  returned: always
  type: dict
  sample: {"job_launch_delay": 90, "sister_join_job_alarm": null}
path:
  description: The config file managed.
  returned: always
  type: str
'''

import errno
import fcntl
import os
import tempfile
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpc.pbs.plugins.module_utils.hooks import (
    enabled_alarms, read_hook_dir)
from ansible_collections.hpc.pbs.plugins.module_utils.mom_config import (
    MomConfigValueError, MomLogWatcher, SECONDS_OPTIONS, apply_options, current_options,
    normalize_value, process_alive, read_mom_pid, reload_mom)
from ansible_collections.hpc.pbs.plugins.module_utils.pbs_conf import (
    module_pbs_paths, pbs_conf_argument_spec)

NEW_FILE_MODE = 0o644
LOCK_NAME = ".hpc_pbs_mom_config.lock"
RELOAD_WORDS = {"changed": "changed", "true": "changed", "yes": "changed", "on": "changed",
                "always": "always", "never": "never", "false": "never", "no": "never",
                "off": "never"}
# Hook event whose enabled alarms an option should cover (PP-928 interfaces 3 and 4).
OPTION_EVENT = {"job_launch_delay": "execjob_prologue",
                "sister_join_job_alarm": "execjob_begin"}
# How long a mom that logged a config failure gets to exit before it counts as alive.
EXIT_GRACE_SECONDS = 5


def reload_mode(value):
    """``changed`` / ``always`` / ``never`` for the ``reload`` option, or None if invalid."""
    if isinstance(value, bool):
        return "changed" if value else "never"
    return RELOAD_WORDS.get(str(value).strip().lower())


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
    """Replace ``path`` by ``data`` through a temporary file in the same directory;
    ``atomic_move`` keeps the owner and mode of an existing file (a new one gets 0644)."""
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


def acquire_lock(module, path, timeout):
    """Open and ``flock`` the lock file beside ``path``; return its descriptor. Fails the
    module after ``timeout`` seconds."""
    lock_path = os.path.join(os.path.dirname(path) or ".", LOCK_NAME)
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        module.fail_json(msg="cannot create the lock file %s: %s. Run the task as root "
                             "(become: true)." % (lock_path, exc))
    deadline = time.time() + timeout
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
        if time.time() >= deadline:
            os.close(fd)
            module.fail_json(msg="another run holds %s for more than %s s; nothing was "
                                 "changed. Try again later or raise lock_timeout."
                             % (lock_path, timeout))
        time.sleep(0.1)


def alarm_warnings(options, hooks):
    """``(sums, warnings)``: enabled alarm sums per option and a warning for each option
    set below its sum."""
    sums = {}
    warnings = []
    for option, event in OPTION_EVENT.items():
        alarms = enabled_alarms(hooks, event)
        sums[option] = sum(alarm for _name, alarm in alarms) if alarms else None
        value = options.get(option)
        if isinstance(value, list):
            value = value[-1]
        if value is None or not str(value).isdigit() or not alarms:
            continue
        if int(value) < sums[option]:
            warnings.append(
                "$%s %s is below the %s s the enabled %s hooks of this mom may run (%s): "
                "the mom stops waiting before they can finish" % (
                    option, value, sums[option], event,
                    ", ".join("%s alarm %s" % (n, a) for n, a in alarms)))
    return sums, warnings


def wait_for_exit(pid, seconds):
    deadline = time.time() + seconds
    while process_alive(pid) and time.time() < deadline:
        time.sleep(0.1)
    return not process_alive(pid)


def restart_mom(module, paths, timeout):
    """Start ``pbs_mom -p`` (keeps running jobs) and wait for a live pid in mom.lock.
    Returns ``(ok, text)``."""
    cmd = [paths.pbs_mom, "-p"]
    if not os.access(paths.pbs_mom, os.X_OK):
        return False, "pbs_mom could not be started again: %s is not executable" % paths.pbs_mom
    try:
        rc, out, err = module.run_command(cmd, environ_update={"PBS_CONF_FILE": paths.conf_file})
    except (OSError, IOError) as exc:
        return False, "%s could not run: %s" % (" ".join(cmd), exc)
    if rc != 0:
        return False, "%s exited %s: %s" % (" ".join(cmd), rc, (err or out).strip())
    deadline = time.time() + timeout
    while True:
        pid = read_mom_pid(paths.mom_lock)
        if pid is not None and process_alive(pid):
            return True, "pbs_mom was started again with -p (running jobs kept), pid %d" % pid
        if time.time() >= deadline:
            return False, ("%s returned 0 but no live pid appeared in %s within %s s"
                           % (" ".join(cmd), paths.mom_lock, timeout))
        time.sleep(0.2)


def main():
    argument_spec = dict(
        options=dict(type="dict", required=True),
        state=dict(type="str", default="present", choices=["present", "absent"]),
        reload=dict(type="raw", default=True),
        reload_timeout=dict(type="int", default=30),
        recover=dict(type="bool", default=True),
        lock_timeout=dict(type="int", default=60),
        path=dict(type="path"),
    )
    argument_spec.update(pbs_conf_argument_spec())
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    params = module.params
    mode = reload_mode(params["reload"])
    if mode is None:
        module.fail_json(msg="reload must be true, false, changed, always or never, not %r"
                         % (params["reload"],))
    for option in ("reload_timeout", "lock_timeout"):
        low = 1 if option == "reload_timeout" else 0
        if not low <= params[option] <= 3600:
            module.fail_json(msg="%s must be %d-3600 seconds, not %s"
                             % (option, low, params[option]))
    if not params["options"]:
        module.fail_json(msg="options is empty: name at least one mom config option")

    try:
        desired, remove, expected = plan(params["options"], params["state"])
    except MomConfigValueError as exc:
        module.fail_json(msg="mom config not changed: %s" % exc)

    paths = module_pbs_paths(module, required=not params["path"])
    path = params["path"] or paths.mom_config
    lock_fd = None
    if not module.check_mode:
        lock_fd = acquire_lock(module, path, params["lock_timeout"])
    try:
        run(module, params, paths, path, desired, remove, expected, mode)
    finally:
        if lock_fd is not None:
            os.close(lock_fd)


def run(module, params, paths, path, desired, remove, expected, mode):
    existed = os.path.exists(path)
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
    new_options = current_options(new_text)

    sums, warnings = alarm_warnings(new_options, read_hook_dir(paths.mom_hooks_dir))
    for warning in warnings:
        module.warn(warning)
    result = dict(changed=changed, path=path, reloaded=False, options=new_options,
                  alarm_sums=sums)
    if module._diff:
        result["diff"] = dict(before=old_text, after=new_text, before_header=path,
                              after_header=path)

    want_reload = mode == "always" or (mode == "changed" and changed)
    if module.check_mode:
        if mode == "always":
            result["changed"] = True
        module.exit_json(**result)

    if changed:
        try:
            write_atomically(module, path, new_text.encode("utf-8", "surrogateescape"))
        except (IOError, OSError) as exc:
            module.fail_json(msg="cannot write the mom config %s: %s. Run the task as root "
                                 "(become: true)." % (path, exc))

    if not want_reload:
        module.exit_json(**result)
    pid = read_mom_pid(paths.mom_lock)
    if pid is None or not process_alive(pid):
        module.warn("pbs_mom is not running (no live pid in %s); it was not reloaded "
                    "and reads %s when it starts" % (paths.mom_lock, path))
        module.exit_json(**result)

    watcher = MomLogWatcher(paths.mom_logs_dir)
    try:
        ok, message = reload_mom(pid, watcher, expected, params["reload_timeout"])
    except OSError as exc:
        module.fail_json(msg="cannot send SIGHUP to pbs_mom pid %d: %s. Run the task "
                             "as root (become: true)." % (pid, exc), **result)
    if ok:
        if message:
            module.warn(message)
        result["reloaded"] = True
        if mode == "always":
            result["changed"] = True
        module.exit_json(**result)

    tail = watcher.tail()
    died = wait_for_exit(pid, EXIT_GRACE_SECONDS) if "rejected" in message \
        else not process_alive(pid)
    if not died:
        result.pop("changed")
        module.fail_json(msg="%s. The mom still runs; the config file %s was %s. Check "
                             "the mom log." % (message, path,
                                               "changed" if changed else "not changed"),
                         changed=changed, mom_log_tail=tail, **result)

    actions = []
    restored = changed
    if changed:
        try:
            if existed:
                write_atomically(module, path, old_bytes)
            else:
                os.unlink(path)
            actions.append("the previous %s was put back" % path)
            result["options"] = current_options(old_text)
            changed = False
        except (IOError, OSError) as exc:
            actions.append("putting the previous %s back FAILED (%s)" % (path, exc))
            restored = False
    restarted = False
    if params["recover"]:
        restarted, text = restart_mom(module, paths, params["reload_timeout"])
        actions.append(text)
    else:
        actions.append("pbs_mom was not started again (recover=false); start it with "
                       "'pbs_mom -p' to keep running jobs")
    result.pop("changed")
    module.fail_json(msg="%s; pbs_mom exited. %s." % (message, "; ".join(actions)),
                     changed=changed or restarted, mom_log_tail=tail, restored=restored,
                     restarted=restarted, **result)


if __name__ == "__main__":
    main()
