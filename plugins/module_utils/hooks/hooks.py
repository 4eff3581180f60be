# -*- coding: utf-8 -*-
"""PBS hook facts (OpenPBS 23.06) and planning of the qmgr commands for one hook.

Sources: reference transcripts b_site_hook_lifecycle, b_pbshook_cray_atom_and_cgroups,
c_hooks_on_disk; src/server/hook_func.c for the attribute side effects.
"""

import os
import re
from typing import Any, Dict, Iterable, List, Mapping, Optional

from ansible_collections.hpc.pbs.plugins.module_utils.common.text_files import read_utf8


# Server order: qmgr lists events in this order whatever order they were set in; the error
# for a bad event name lists them in it.
EVENTS = (
    "queuejob", "postqueuejob", "modifyjob", "modifyvnode", "management", "resvsub",
    "modifyresv", "movejob", "jobobit", "runjob", "provision", "periodic", "resv_confirm",
    "resv_begin", "resv_end", "execjob_begin", "execjob_prologue", "execjob_epilogue",
    "execjob_preterm", "execjob_end", "exechost_periodic", "execjob_launch",
    "exechost_startup", "execjob_attach", "execjob_resize", "execjob_abort",
    "execjob_postsuspend", "execjob_preresume",
)
PERIODIC_EVENTS = ("periodic", "exechost_periodic")
FAIL_ACTIONS = ("none", "offline_vnodes", "clear_vnodes_upon_recovery", "scheduler_restart_cycle")
HOOK_USERS = ("pbsadmin", "pbsuser")
# HOOK_SITE_ORDER_MIN / HOOK_SITE_ORDER_MAX (OpenPBS src/include/hook.h): set_hook_order()
# refuses any other order for a site hook.
SITE_ORDER_RANGE = (1, 1000)
# HOOK_PBS_ORDER_MIN / HOOK_PBS_ORDER_MAX: the same for a built-in pbshook.
PBSHOOK_ORDER_RANGE = (-1000, 2000)
# set_hook_alarm() (OpenPBS src/lib/Libutil/hook.c): "alarm value '<v>' of a hook must be > 0".
ALARM_MINIMUM = 1
# The rules above as the roles name them after the variable ("..._hook_order must be 1-1000").
SITE_ORDER_RULE = "must be %d-%d" % SITE_ORDER_RANGE
ALARM_RULE = "must be at least %d second" % ALARM_MINIMUM

# What ``create hook NAME`` gives (transcript b: enabled, site, pbsadmin, alarm 30, order 1).
NEW_SITE_HOOK = {
    "type": "site", "enabled": "true", "event": "", "user": "pbsadmin", "alarm": "30",
    "order": "1", "debug": "false", "fail_action": "none",
}


CONTENT_BODY = "application/x-python"
CONTENT_CONFIG = "application/x-config"

# A hook name (site hook or pbshook), matched whole: qmgr's check_list() wants a letter first;
# the name becomes the file names NAME.HK/.PY/.CF under server_priv/hooks.
HOOK_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
# A site hook name may not start with this (reserved for the built-in pbshooks).
PBSHOOK_PREFIX = "PBS"


def fail_action_problem(actions: Any) -> Optional[str]:
    """Why ``actions`` cannot be a hook's ``fail_action`` (a list of :data:`FAIL_ACTIONS`,
    ``none`` alone), in the module's words; None when it can."""
    if not isinstance(actions, (list, tuple)) or not all(isinstance(a, str) for a in actions):
        return "fail_action must be a list of %s" % ", ".join(FAIL_ACTIONS)
    if not actions:
        return "fail_action is empty: give [none] or a list of actions"
    unknown = [a for a in actions if a not in FAIL_ACTIONS]
    if unknown:
        return "fail_action %s is not one of %s" % (", ".join(unknown), ", ".join(FAIL_ACTIONS))
    if "none" in actions and len(set(actions)) > 1:
        return "fail_action 'none' cannot be combined with other actions"
    return None


def bad_event_message(name: str) -> str:
    """qmgr's own text for an unknown event name (server error 32)."""
    return ("invalid argument (%s) to event. Should be one or more of: %s or \"\" for no "
            "event" % (name, ",".join(EVENTS)))


def unknown_events(events: Iterable[str]) -> List[str]:
    """Names in ``events`` that are not PBS hook events."""
    return [e for e in events if e not in EVENTS]


def sort_events(events: Iterable[str]) -> List[str]:
    """``events`` de-duplicated, in server order."""
    wanted = set(events)
    return [e for e in EVENTS if e in wanted]


def site_hook_name_problem(name: str) -> Optional[str]:
    """Why ``name`` cannot be a site hook name (str), or None when it can.

    qmgr's check_list() wants a letter first (a digit or ``_`` is a syntax error there), and
    the server refuses the ``PBS`` prefix (reserved for pbshooks)."""
    if name.startswith(PBSHOOK_PREFIX):
        return ("hook name %r starts with PBS, which is reserved for built-in pbshooks; "
                "use type=pbs for a built-in hook or another name" % name)
    if not HOOK_NAME.fullmatch(name):
        return ("hook name %r is not accepted by qmgr: it must start with a letter and "
                "hold only letters, digits, _ and - (no whitespace or newline)" % name)
    return None


def site_order_accepted(order: int) -> bool:
    """Whether ``order`` (int) is an order PBS accepts for a site hook (:data:`SITE_ORDER_RANGE`)."""
    low, high = SITE_ORDER_RANGE
    return low <= order <= high


def alarm_accepted(alarm: int) -> bool:
    """Whether ``alarm`` (int, seconds) is an alarm PBS accepts for a hook (>= :data:`ALARM_MINIMUM`)."""
    return alarm >= ALARM_MINIMUM


def config_refusal_message(errors: List[str]) -> str:
    """The message that refuses a hook config breaking its schema (``errors``: the
    ``"<path>: <problem>"`` messages of module_utils/common/json_schema.schema_errors)."""
    return ("the hook config does not satisfy config_schema; nothing was changed: %s"
            % "; ".join(errors))


# The largest hook body accepted, in bytes (100 MiB). OpenPBS itself checks no size at a
# hook import (23.06.06 and 22.05.11: mgr_hook_import in src/server/hook_func.c copies the
# file through decode_hook_content in 512-byte fgets chunks, PBSD_copyhookfile in
# src/lib/Libifl/int_hook.c sends it to every mom in SCRIPT_CHUNK_Z chunks, and
# _pbs_python_compile_file in src/lib/Libpython/pbs_python_external.c reads it whole into
# memory at each compile); this is the limit PBS puts on the other script it ships to the
# moms the same way, a job script (server attribute jobscript_max_size, default "100mb":
# DFLT_JOBSCRIPT_MAX_SIZE in src/include/pbs_internal.h).
HOOK_BODY_MAX_BYTES = 100 * 1024 * 1024


def body_size_problem(option: str, size: int) -> Optional[str]:
    """Why a hook body of ``size`` bytes (given by ``option``) is refused, or None."""
    if size <= HOOK_BODY_MAX_BYTES:
        return None
    return ("%s: the hook body is %d bytes, over the %d bytes (100 MiB) a hook body may "
            "have here (the default jobscript_max_size PBS puts on the scripts it ships "
            "to the moms)" % (option, size, HOOK_BODY_MAX_BYTES))


def body_problem(option: str, body: bytes) -> Optional[str]:
    """Why the hook body ``body`` (bytes, given by ``option``: body or body_src) is
    refused before anything runs, or None: over :data:`HOOK_BODY_MAX_BYTES`, or not UTF-8
    text (PBS hooks are Python 3 source, which pbs_python compiles as UTF-8)."""
    problem = body_size_problem(option, len(body))
    if problem:
        return problem
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = body.count(b"\n", 0, exc.start) + 1
        return ("%s: the hook body is not UTF-8 text (byte 0x%02x at offset %d, line %d); "
                "a hook body must be UTF-8 encoded Python source" % (
                    option, bytearray(body[exc.start:exc.start + 1])[0], exc.start, line))
    return None


# The files of a hook under server_priv/hooks and mom_priv/hooks: its attributes, its body,
# its config.
HOOK_FILE_SUFFIXES = (".HK", ".PY", ".CF")


def hook_file_paths(hooks_dir: str, name: str) -> Dict[str, str]:
    """``{"body": .../NAME.PY, "config": .../NAME.CF}`` in server_priv/hooks."""
    return {"body": os.path.join(hooks_dir, name + ".PY"),
            "config": os.path.join(hooks_dir, name + ".CF")}


# Defaults a ``.HK`` file leaves out (transcript c_: h1.HK has no ``enabled`` line).
HK_DEFAULTS = {"type": "site", "enabled": "true", "event": "", "user": "pbsadmin",
               "alarm": "30", "order": "1", "debug": "false", "fail_action": "none"}


def parse_hk(text: str) -> Dict[str, str]:
    """``.HK`` file text (``key=value`` lines) -> dict of attribute text with the
    defaults of :data:`HK_DEFAULTS` filled in."""
    values = dict(HK_DEFAULTS)
    for line in text.splitlines():
        if "=" in line:
            key, value = line.split("=", 1)
            values[key.strip()] = value.strip()
    return values


def read_hook_dir(hooks_dir: str) -> Dict[str, Dict[str, str]]:
    """Hooks found in a ``server_priv/hooks`` or ``mom_priv/hooks`` directory.

    Returns ``{name: attributes}`` from every ``NAME.HK`` (see :func:`parse_hk`); an
    unreadable or missing directory gives ``{}``; unreadable files are skipped.
    """
    hooks = {}
    try:
        names = sorted(os.listdir(hooks_dir))
    except OSError:
        return hooks
    for entry in names:
        if not entry.endswith(".HK"):
            continue
        try:
            hooks[entry[:-3]] = parse_hk(read_utf8(os.path.join(hooks_dir, entry), errors="strict"))
        except (IOError, OSError, ValueError):
            continue
    return hooks


def mom_hook_differences(server_files: Mapping[str, str], mom_files: Mapping[str, str],
                         required_hooks: Iterable[str]) -> List[str]:
    """The server's hook files a mom holds another copy of, or lacks although the hook is
    required (or the mom holds other files of that hook).

    PBS copies each hook's ``NAME.HK`` / ``NAME.PY`` / ``NAME.CF`` from
    ``server_priv/hooks`` to every mom's ``mom_priv/hooks``.

    :param server_files: dict ``{"NAME.EXT": sha256 hex}`` of the server's files.
    :param mom_files: the same of the mom's copies.
    :param required_hooks: names of the hooks every mom must hold (iterable of str).
    :returns: sorted list of ``NAME.EXT``.
    """
    mom_hooks = set(entry.rsplit(".", 1)[0] for entry in mom_files)
    expected = mom_hooks | set(required_hooks)
    return sorted(entry for entry, digest in server_files.items()
                  if entry.rsplit(".", 1)[0] in expected and mom_files.get(entry) != digest)
