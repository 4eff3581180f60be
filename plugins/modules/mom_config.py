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
  - Idempotent on what runs, not only on what is written - the values the running mom
    logged at its last start or reload (C(PBS_HOME/mom_logs/YYYYMMDD), searched back 31
    days) are compared with the file for every option whose value the mom logs
    (numbers, booleans, loads and factors; not the repeatable options, paths or names).
  - After a change, sends SIGHUP to the mom (pid from C(PBS_HOME/mom_priv/mom.lock)) and
    waits until the mom has logged each value set by the task that it logs (such as
    C(...;pbs_mom;Svr;job_launch_delay;<v>)) in C(PBS_HOME/mom_logs/YYYYMMDD), then checks
    the mom is still alive. If it died or did not log in time, the task fails with the
    tail of the mom log, saying whether this task changed the file.
  - Warns when C($job_launch_delay) is below the sum of the alarms of the enabled
    execjob_prologue hooks, or C($sister_join_job_alarm) below that of the enabled
    execjob_begin hooks, read from the mom's own hook files (C(mom_priv/hooks/*.HK)) -
    the mom would stop waiting before those hooks may have finished.
  - Implements PP-928 interface 3 (C($sister_join_job_alarm)) and interface 4
    (C($job_launch_delay)).
version_added: "0.1.0"
author: hpc.pbs developers (@hpc-pbs)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - hpc.pbs.pbs
options:
  options:
    description:
      - Option name without the C($) -> value. A C(null) value removes that option's
        lines.
      - Every value is checked by its type, as the Linux pbs_mom's option table (the
        C(special[]) table of OpenPBS C(src/resmom/mom_main.c) and its handlers) reads it,
        before anything is written, with upper bounds a site could mean. Whole numbers
        are decimal digits without sign or leading zero; a value that is refused is named
        in the message with what is accepted. C(job_launch_delay) (PP-928 interface 4)
        and C(sister_join_job_alarm) (PP-928 interface 3) take whole seconds 1-86400.
      - A list writes one line per item, for the options marked repeatable.
      - Each accepted name and value -
      - C(action) (repeatable) - 'EVENT TIMEOUT requeue' or 'EVENT TIMEOUT !script [args]'
        (EVENT one of terminate, checkpoint, checkpoint_abort, restart, multinodebusy,
        TIMEOUT 0-86400 s).
      - C(alien_attach) - a boolean (true/false, yes/no, on/off, 1/0).
      - C(alien_kill) - a boolean (true/false, yes/no, on/off, 1/0).
      - C(attach_allow) - a boolean (true/false, yes/no, on/off, 1/0).
      - C(checkpoint_path) - an absolute path of an existing directory owned by root (uid
        <= 10), not writable by group or others.
      - C(clienthost) (repeatable) - a host name that resolves on the mom's host.
      - C(cputmult) - a decimal number > 0 and <= 1000.
      - C(enforce) (repeatable) - a flag (cpuburst, cpuaverage, mem, complexmem, '!'
        before it turns it off) or 'SETTING NUMBER' (average_cpufactor,
        average_percent_over, average_trialperiod, delta_cpufactor, delta_percent_over,
        delta_weightdown, delta_weightup).
      - C(gen_nodefile_on_sister_mom) - a boolean (true/false, yes/no, on/off, 1/0).
      - C(ideal_load) - a decimal number 0-100000.
      - C(job_launch_delay) - whole seconds 1-86400 (PP-928 interface 4) - how long the
        primary mom waits before launching a tolerant job.
      - C(jobdir_root) - PBS_USER_HOME or an absolute path of an existing directory owned
        by root (uid <= 10, gid <= 9) with the sticky bit set, whose parents are owned by
        root and not writable by group or others, optionally followed by 'shared'.
      - C(kbd_idle) - 1 to 3 whole numbers of seconds 1-86400 (avail [busy [poll]]).
      - C(logevent) - an event mask 0-0xFFFF (decimal or 0x hexadecimal) that includes 0x3.
      - C(max_check_poll) - whole seconds 1-86400.
      - C(max_load) - a decimal number 0-100000, optionally followed by 'suspend'.
      - C(max_poll_downtime) - whole seconds 1-86400.
      - C(min_check_poll) - whole seconds 1-86400.
      - C(momname) - a host name of at most 63 characters.
      - C(port) - a port number 1-65534.
      - C(prologalarm) - whole seconds 1-86400.
      - C(reject_root_scripts) - a boolean (true/false, yes/no, on/off, 1/0).
      - C(report_hook_checksums) - a boolean (true/false, yes/no, on/off, 1/0).
      - C(restart_background) - a boolean (true/false, yes/no, on/off, 1/0).
      - C(restart_transmogrify) - a boolean (true/false, yes/no, on/off, 1/0).
      - C(restrict_user) - a boolean (true/false, yes/no, on/off, 1/0).
      - C(restrict_user_exceptions) - 1-10 user names separated by commas.
      - C(restrict_user_maxsysid) - a uid 1-2147483647.
      - C(restricted) (repeatable) - a host name or pattern with '*'.
      - C(sister_join_job_alarm) - whole seconds 1-86400 (PP-928 interface 3) - how long
        the primary mom waits for sisters to join.
      - C(suspendsig) - a signal number 1-64, optionally followed by the resume signal
        number.
      - C(tmpdir) - an absolute path of an existing directory owned by root (uid <= 10,
        gid <= 9) with the sticky bit set, whose parents are owned by root and not
        writable by group or others.
      - C(usecp) (repeatable) - 'host:/from/path /to/path' (host a name or pattern with
        '*', both paths absolute).
      - C(vnodedef_additive) - a boolean (true/false, yes/no, on/off, 1/0).
      - C(wallmult) - a decimal number > 0 and <= 1000.
      - Directories are checked on the host as pbs_mom checks them (it exits on a
        directory it finds insecure); C(clienthost) names are resolved on the host.
      - Combinations pbs_mom refuses or silently replaces are refused too - a
        C(min_check_poll) above C(max_check_poll) (defaults 10 and 120), and
        C(restart_transmogrify) true without an C(action) C(restart) line running a
        script.
      - Other names (for example C(configversion), or options of other PBS builds) are
        refused unless listed in O(unchecked_options).
    type: dict
    required: true
  unchecked_options:
    description:
      - Option names written without a type check - any value on one line without
        C(#). Only for options this module has no rule for (an option listed in
        O(options) above is refused here); pbs_mom exits on a line it cannot parse, so
        the task may then fail after the reload (the previous file is put back).
    type: list
    elements: str
    default: []
  state:
    description:
      - C(present) writes the options; C(absent) removes the named options whatever their
        value (values are ignored).
    type: str
    default: present
    choices: [present, absent]
  reload:
    description:
      - Whether to send SIGHUP to pbs_mom. C(true) (or C(changed)) reloads when the file
        changed, or when the running mom has not loaded the file's values (what it logged
        at its last start or reload differs from the file - for example after a run
        interrupted between writing and reloading), and reports C(changed) in both
        cases; C(false) (or C(never)) never does (the mom reads the file at its next
        start or HUP), and still reports C(changed) with a warning when the running mom
        differs from the file, so that a handler it notifies reloads it; C(always)
        reloads on every run and verifies the values (a handler's choice).
      - Accepted values - a boolean in any spelling Ansible takes (C(true)/C(false),
        C(yes)/C(no), C(on)/C(off), C(1)/C(0), ...), C(changed), C(always), C(never).
    type: raw
    default: true
  mom_not_running:
    description:
      - What a task does when pbs_mom is not running (no live pid in C(mom.lock)) and
        O(reload) is not C(never) - the file is still written, and C(fail) fails the
        task saying whether the file was changed and that the values take effect at the
        mom's next start; C(warn) makes that a warning (nodes under maintenance).
    type: str
    default: fail
    choices: [fail, warn]
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
  - When the mom is not running (no live pid in C(mom.lock)), no signal is sent and the
    task fails (or warns, see O(mom_not_running)); the mom reads the file when it starts.
attributes:
  check_mode:
    support: full
    details: Nothing is written and no signal is sent.
  diff_mode:
    support: full
    details: The text of the mom config file.
  platform:
    platforms: posix
seealso:
  - module: hpc.pbs.cluster_info
  - module: hpc.pbs.hook
  - name: OpenPBS source and design documents
    description: The PBS code this module drives and the designs it implements (PP-928 reliable job startup).
    link: https://github.com/openpbs/openpbs
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

- name: A node under maintenance - write the file, warn that pbs_mom is not running
  hpc.pbs.mom_config:
    options:
      restrict_user: true
      restrict_user_maxsysid: 999
    mom_not_running: warn

- name: An option of a Cray (ALPS) build of pbs_mom, which this module has no rule for
  hpc.pbs.mom_config:
    options:
      alps_client: /opt/cray/alps/default/bin/apbasil
    unchecked_options: [alps_client]

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
  sample: true
reload_reason:
  description: Why pbs_mom was (or in check mode would be) reloaded - the file changed,
    the running mom had not loaded the file (with the values it runs with), or
    C(reload=always); C(null) when it was not.
  returned: always
  type: str
  sample: "the config file changed"
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
  sample: /var/spool/pbs/mom_priv/config
'''

import errno
import fcntl
import os
import tempfile
from collections import namedtuple

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.hpc.pbs.plugins.module_utils.cluster.effective_timeouts import enabled_alarms
from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hooks import read_hook_dir
from ansible_collections.hpc.pbs.plugins.module_utils.moms.mom_config import (
    current_options, planned_text)
from ansible_collections.hpc.pbs.plugins.module_utils.moms.mom_daemon import (
    MomLogWatcher, last_config_read, process_alive, read_mom_pid, reload_mom, restart_mom,
    running_differences, wait_for_exit)
from ansible_collections.hpc.pbs.plugins.module_utils.moms.mom_config_options import (
    MomConfigValueError, check_unchecked_names, new_combination_problems, plan)
from ansible_collections.hpc.pbs.plugins.module_utils.common.module_error import ModuleError
from ansible_collections.hpc.pbs.plugins.module_utils.pbs.pbs_conf import (
    pbs_conf_argument_spec, task_pbs_paths)
from ansible_collections.hpc.pbs.plugins.module_utils.common.polling import WaitTimeout, wait_until

NEW_FILE_MODE = 0o644
LOCK_NAME = ".hpc_pbs_mom_config.lock"
RELOAD_MODES = ("changed", "always", "never")
# Hook event whose enabled alarms an option should cover (PP-928 interfaces 3 and 4).
OPTION_EVENT = {"job_launch_delay": "execjob_prologue",
                "sister_join_job_alarm": "execjob_begin"}
# How long a mom that logged a config failure gets to exit before it counts as alive.
EXIT_GRACE_SECONDS = 5


def reload_mode(value):
    """``changed`` / ``always`` / ``never`` for the ``reload`` option, or None if invalid.
    A boolean in any spelling Ansible takes (true/yes/on/1/y/t...) is ``changed`` when
    true, ``never`` when false."""
    word = str(value).strip().lower()
    if word in RELOAD_MODES:
        return word
    try:
        return "changed" if boolean(value, strict=True) else "never"
    except TypeError:
        return None


def show(value):
    """A file or log value for a message: ``(not set)`` for None, lists joined."""
    if value is None:
        return "(not set)"
    if isinstance(value, list):
        return " | ".join(value)
    return value


def changes_text(old_options, new_options, names):
    """``name old -> new`` for each of ``names`` whose file value changed, '' if none."""
    return ", ".join("%s %s -> %s" % (n, show(old_options.get(n)), show(new_options.get(n)))
                     for n in sorted(names) if old_options.get(n) != new_options.get(n))


def file_state_text(path, summary, names, new_options):
    """What the task did to the file, for messages: the changes, or that the file already
    held the values (written by an earlier task or run)."""
    if summary:
        return "%s was changed by this task (%s)" % (path, summary)
    held = ", ".join("%s %s" % (n, show(new_options.get(n))) for n in sorted(names))
    return "%s was not changed by this task: it already held %s" % (path, held)


def differences_text(differences):
    return ", ".join("%s: pbs_mom runs with %s, the file has %s" % (
        name, "its default" if running is None else running, show(in_file))
        for name, running, in_file in differences)


def write_atomically(module, path, data):
    """Replace ``path`` by ``data`` through a temporary file in the same directory;
    ``atomic_move`` keeps the owner and mode of an existing file. A new one gets 0644 at
    no moment anything wider: ``atomic_move`` gives a file it creates 0666 less the umask
    (0666 under umask 0, a file others could open for writing, and pbs_mom refuses a
    config file others may write), so it runs under the umask that leaves 0644."""
    directory = os.path.dirname(path) or "."
    existed = os.path.exists(path)
    fd, tmp = tempfile.mkstemp(prefix=".config.", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        umask = None if existed else os.umask(0o666 & ~NEW_FILE_MODE)
        try:
            module.atomic_move(tmp, path)
        finally:
            if umask is not None:
                os.umask(umask)
        if not existed:
            os.chmod(path, NEW_FILE_MODE)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def acquire_lock(path, timeout):
    """Open and ``flock`` the lock file beside ``path``; return its descriptor. Raises
    ModuleError when it cannot be created or after ``timeout`` seconds."""
    lock_path = os.path.join(os.path.dirname(path) or ".", LOCK_NAME)
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise ModuleError("cannot create the lock file %s: %s. Run the task as root "
                          "(become: true)." % (lock_path, exc))

    def try_lock():
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
        return None

    try:
        return wait_until(try_lock, timeout, 0.1, "the lock %s" % lock_path, timeout_text=(
            "another run holds %s for more than %s s; nothing was changed. Try again later "
            "or raise lock_timeout." % (lock_path, timeout)))
    except WaitTimeout as exc:
        os.close(fd)
        raise ModuleError(str(exc))


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


class MomConfigTask(namedtuple("MomConfigTask", (
        "params", "mode", "unchecked", "desired", "remove", "expected", "paths", "path"))):
    """The checked parameters of one task, as one object: ``params`` (module.params),
    ``mode`` (``changed``, ``always`` or ``never``, from ``reload``), ``unchecked`` (tuple
    of the ``unchecked_options`` names), the plan of ``options`` and ``state``
    (``desired``: ``{name: value}`` to write, ``remove``: set of names to delete,
    ``expected``: what the mom is to log after a reload), ``paths`` (``PbsPaths``) and
    ``path`` (the config file managed)."""

    __slots__ = ()


def checked_task(module):
    """The task of ``module`` (a :class:`MomConfigTask`); raises ModuleError on bad input,
    before anything is read or changed."""
    params = module.params
    mode = reload_mode(params["reload"])
    if mode is None:
        raise ModuleError("reload must be true, false, changed, always or never, not %r"
                          % (params["reload"],))
    for option in ("reload_timeout", "lock_timeout"):
        low = 1 if option == "reload_timeout" else 0
        if not low <= params[option] <= 3600:
            raise ModuleError("%s must be %d-3600 seconds, not %s"
                              % (option, low, params[option]))
    if not params["options"]:
        raise ModuleError("options is empty: name at least one mom config option")

    unchecked = tuple(params["unchecked_options"])
    try:
        check_unchecked_names(unchecked)
        desired, remove, expected = plan(params["options"], params["state"], unchecked)
    except MomConfigValueError as exc:
        raise ModuleError("mom config not changed: %s" % exc)

    paths = task_pbs_paths(params, required=not params["path"])
    return MomConfigTask(params=params, mode=mode, unchecked=unchecked, desired=desired,
                         remove=remove, expected=expected, paths=paths,
                         path=params["path"] or paths.mom_config)


def configure(module):
    """The task, under the lock of the config file (not in check mode): the result (dict);
    raises ModuleError where it fails."""
    task = checked_task(module)
    lock_fd = None
    if not module.check_mode:
        lock_fd = acquire_lock(task.path, task.params["lock_timeout"])
    try:
        return run(module, task)
    finally:
        if lock_fd is not None:
            os.close(lock_fd)


def main():
    argument_spec = dict(
        options=dict(type="dict", required=True),
        state=dict(type="str", default="present", choices=["present", "absent"]),
        unchecked_options=dict(type="list", elements="str", default=[]),
        reload=dict(type="raw", default=True),
        reload_timeout=dict(type="int", default=30),
        mom_not_running=dict(type="str", default="fail", choices=["fail", "warn"]),
        recover=dict(type="bool", default=True),
        lock_timeout=dict(type="int", default=60),
        path=dict(type="path"),
    )
    argument_spec.update(pbs_conf_argument_spec())
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    try:
        result = configure(module)
    except ModuleError as exc:
        module.fail_json(**exc.fail_kwargs())
    module.exit_json(**result)


def read_config_bytes(path):
    """``(existed, bytes)`` of the config file; raises ModuleError when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return True, handle.read()
    except FileNotFoundError:
        return False, b""
    except (IOError, OSError) as exc:
        raise ModuleError("cannot read the mom config %s: %s. Run the task as root "
                          "(become: true) or fix path." % (path, exc))


def running_mom(paths):
    """The pid of the live pbs_mom (from mom.lock), or None."""
    pid = read_mom_pid(paths.mom_lock)
    return pid if pid is not None and process_alive(pid) else None


def run(module, task):
    """Edit the file and reload the mom as ``task`` (a :class:`MomConfigTask`) says: the
    result (dict); raises ModuleError where it fails."""
    path = task.path
    existed, old_bytes = read_config_bytes(path)
    old_text = old_bytes.decode("utf-8", "surrogateescape")
    new_text = planned_text(old_text, task.desired, task.remove, task.unchecked)
    changed = new_text != old_text
    old_options = current_options(old_text)
    new_options = current_options(new_text)
    problems = new_combination_problems(old_options, new_options)
    if problems:
        raise ModuleError("mom config not changed: %s" % "; ".join(problems))
    names = set(task.desired) | task.remove
    summary = changes_text(old_options, new_options, names)
    file_state = file_state_text(path, summary, names, new_options)

    sums, warnings = alarm_warnings(new_options, read_hook_dir(task.paths.mom_hooks_dir))
    for warning in warnings:
        module.warn(warning)
    result = dict(changed=changed, path=path, reloaded=False, options=new_options,
                  alarm_sums=sums, reload_reason=None)
    if module._diff:
        result["diff"] = dict(before=old_text, after=new_text, before_header=path,
                              after_header=path)

    mode = task.mode
    pid = running_mom(task.paths)
    if mode != "never" and pid is None:
        return not_running(module, task, new_text, changed, file_state, result)
    differences = []
    if pid is not None:
        differences = stale_values(module, task.paths, new_options, names, changed)
    reason = reload_reason(mode, changed, differences)
    result["changed"] = changed or bool(differences) or mode == "always"
    if mode == "never" and differences and not changed:
        module.warn("%s (written before this task); it reads the file at its next reload "
                    "or start" % differences_text(differences))
    if module.check_mode:
        result["reload_reason"] = reason if mode != "never" else None
        return result

    if changed:
        write_config(module, path, new_text)
    if mode == "never" or reason is None:
        result["changed"] = changed or bool(differences)
        return result
    result["reload_reason"] = reason
    return reload_and_verify(module, task, pid, dict(
        changed=changed, existed=existed, old_bytes=old_bytes, old_text=old_text,
        file_state=file_state), result)


def not_running(module, task, new_text, changed, file_state, result):
    """The mom is not running: write the file (not in check mode), then raise ModuleError
    or warn (and return ``result``) as ``mom_not_running`` says; the values take effect at
    the mom's next start."""
    if changed and not module.check_mode:
        write_config(module, task.path, new_text)
    text = ("pbs_mom is not running (no live pid in %s), so it was not reloaded: %s; the "
            "values take effect at its next start" % (task.paths.mom_lock, file_state))
    if task.params["mom_not_running"] == "fail":
        result.pop("changed")
        raise ModuleError(text + ". Start pbs_mom, or set mom_not_running=warn for a "
                                 "node under maintenance.", changed=changed, **result)
    module.warn(text)
    return result


def stale_values(module, paths, new_options, names, changed):
    """Options the running mom holds differently from the (new) file, as
    :func:`running_differences` gives them; warns when the mom's last config read is not
    in its logs (and the file did not change: it is then reloaded anyway)."""
    read_text = last_config_read(paths.mom_logs_dir)
    if read_text is None:
        if not changed:
            module.warn("cannot tell which values pbs_mom runs with: none of its logs in %s "
                        "shows a config read (start or SIGHUP)" % paths.mom_logs_dir)
        return []
    return running_differences(read_text, new_options, names)


def reload_reason(mode, changed, differences):
    """Why the mom is to be reloaded (text), or None when it is not."""
    if changed:
        return "the config file changed"
    if differences:
        return ("the running pbs_mom had not loaded the file (%s)"
                % differences_text(differences))
    if mode == "always":
        return "reload: always"
    return None


def write_config(module, path, text):
    """Write ``text`` to ``path`` (:func:`write_atomically`); raises ModuleError when it
    cannot be written."""
    try:
        write_atomically(module, path, text.encode("utf-8", "surrogateescape"))
    except (IOError, OSError) as exc:
        raise ModuleError("cannot write the mom config %s: %s. Run the task as root "
                          "(become: true)." % (path, exc))


def reload_and_verify(module, task, pid, before, result):
    """SIGHUP the mom and check it logged ``task.expected``: ``result`` when it did; else
    restore and restart as ``recover`` says and raise ModuleError. ``before``: what the file
    was (``existed``, ``old_bytes``, ``old_text``), whether this task ``changed`` it, and
    the ``file_state`` text."""
    watcher = MomLogWatcher(task.paths.mom_logs_dir)
    try:
        ok, message = reload_mom(pid, watcher, task.expected, task.params["reload_timeout"])
    except OSError as exc:
        raise ModuleError("cannot send SIGHUP to pbs_mom pid %d: %s. Run the task "
                          "as root (become: true); %s." % (pid, exc, before["file_state"]),
                          **result)
    if ok:
        if message:
            module.warn(message)
        result["reloaded"] = True
        result["changed"] = True
        return result

    tail = watcher.tail()
    died = wait_for_exit(pid, EXIT_GRACE_SECONDS) if "rejected" in message \
        else not process_alive(pid)
    changed = before["changed"]
    if not died:
        result.pop("changed")
        raise ModuleError("%s. The mom still runs; %s. Check the mom log."
                          % (message, before["file_state"]),
                          changed=changed, mom_log_tail=tail, **result)
    raise restore_and_restart(module, task, message, before, tail, result)


def restore_and_restart(module, task, message, before, tail, result):
    """The mom exited after SIGHUP: put the previous file back (when this task changed
    it), start ``pbs_mom -p`` when ``recover`` is true; the ModuleError saying what was
    done."""
    path = task.path
    changed = before["changed"]
    actions = []
    restored = changed
    if changed:
        try:
            if before["existed"]:
                write_atomically(module, path, before["old_bytes"])
            else:
                os.unlink(path)
            actions.append("the previous %s was put back" % path)
            result["options"] = current_options(before["old_text"])
            changed = False
        except (IOError, OSError) as exc:
            actions.append("putting the previous %s back FAILED (%s)" % (path, exc))
            restored = False
    else:
        actions.append("%s was not changed by this task and was left as it is" % path)
    restarted = False
    if task.params["recover"]:
        restarted, text = restart_mom(module.run_command, task.paths,
                                      task.params["reload_timeout"])
        actions.append(text)
    else:
        actions.append("pbs_mom was not started again (recover=false); start it with "
                       "'pbs_mom -p' to keep running jobs")
    result.pop("changed")
    return ModuleError("%s; pbs_mom exited. %s." % (message, "; ".join(actions)),
                       changed=changed or restarted, mom_log_tail=tail, restored=restored,
                       restarted=restarted, **result)


if __name__ == "__main__":
    main()
