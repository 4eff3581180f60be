# -*- coding: utf-8 -*-
"""What values the qmgr attributes this collection knows accept, and which value qmgr keeps
listing after an ``unset``: one data table each (OpenPBS 23.06).

- :data:`ATTRIBUTE_KINDS` maps ``object type -> attribute -> kind``; resource attributes
  (``resources_available.ncpus``) take the kind of their resource from
  :data:`RESOURCE_KINDS`. An attribute missing from the tables is not checked here: qmgr
  and the server judge it.
- :data:`LISTED_DEFAULTS` holds the values the server puts back when an attribute is unset
  (``unset server scheduler_iteration`` still lists ``scheduler_iteration = 600``).

Sources, all in OpenPBS 23.06 (commit cd7ab5eda): the attribute definitions
``src/lib/Libattr/master_{svr,sched,queue,node}_attr_def.xml`` and
``master_resc_def_all.xml`` (decoders ``decode_b``, ``decode_l``, ``decode_time``,
``decode_size``, ``decode_state``, ``decode_sharing``), the range checks of their action
functions (``src/server/svr_func.c``, ``req_manager.c``, ``sched_func.c``), the hook setters
(``src/lib/Libutil/hook.c``, ``src/include/hook.h``), and the listing of a fresh install
(reference transcript a_). Where this table is stricter than the server (a negative
``scheduler_iteration``, a negative ``ncpus``) it refuses values no site can mean.
"""

import re
from typing import Any, Callable, Optional, Sequence

from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hooks import (
    ALARM_MINIMUM, EVENTS, FAIL_ACTIONS, HOOK_USERS, PBSHOOK_ORDER_RANGE, SITE_ORDER_RANGE)
from ansible_collections.hpc.pbs.plugins.module_utils.jobs.qsub_args import (
    QsubArgumentsError, parse_qsub_arguments)


class Boolean:
    """A PBS boolean as ``is_true_or_false()`` reads it (case matters: ``tRue`` fails)."""

    TRUE = ("True", "TRUE", "true", "t", "T", "1", "y", "Y")
    FALSE = ("False", "FALSE", "false", "f", "F", "0", "n", "N")
    accepted = "True or False (PBS also reads TRUE, true, t, T, 1, y, Y and FALSE, false, f, F, 0, n, N)"

    def problem(self, text: str) -> Optional[str]:
        if text in self.TRUE or text in self.FALSE:
            return None
        return "%r is not a PBS boolean" % text

    def truth(self, text: str) -> Optional[bool]:
        """True/False for an accepted word, None otherwise."""
        if text in self.TRUE:
            return True
        if text in self.FALSE:
            return False
        return None


class HookBoolean(Boolean):
    """A hook's ``enabled``/``debug``: ``true|t|y|1|false|f|n|0`` in any case (hook.c)."""

    accepted = "true or false (in any case; also t, y, 1 and f, n, 0)"

    def truth(self, text: str) -> Optional[bool]:
        word = text.lower()
        if word in ("true", "t", "y", "1"):
            return True
        if word in ("false", "f", "n", "0"):
            return False
        return None

    def problem(self, text: str) -> Optional[str]:
        if self.truth(text) is None:
            return "%r is not a hook boolean" % text
        return None


class Integer:
    """A whole number from ``low`` to ``high`` (None: no bound); ``unit`` names what it counts."""

    _FORM = re.compile(r"[+-]?[0-9]+")

    def __init__(self, low: Optional[int] = None, high: Optional[int] = None,
                 unit: str = "") -> None:
        self.low = low
        self.high = high
        if low is not None and high is not None:
            span = "from %d to %d" % (low, high)
        elif low is not None:
            span = ">= %d" % low
        else:
            span = "(any sign)"
        self.accepted = "a whole number %s%s" % (span, " (%s)" % unit if unit else "")

    def problem(self, text: str) -> Optional[str]:
        if not self._FORM.fullmatch(text):
            return "%r is not a whole number" % text
        number = int(text)
        if (self.low is not None and number < self.low) or \
                (self.high is not None and number > self.high):
            return "%s is out of range" % text
        return None


class Choice:
    """One of ``values`` (exact text), or with ``several`` a comma separated list of them;
    ``empty`` allows the empty string (a hook's ``event = ""``)."""

    def __init__(self, values: Sequence[str], several: bool = False, empty: bool = False) -> None:
        self.values = tuple(values)
        self.several = several
        self.empty = empty
        what = "a comma separated list of" if several else "one of"
        self.accepted = "%s %s%s" % (what, ", ".join(self.values),
                                     ' (or "" for none)' if empty else "")

    def problem(self, text: str) -> Optional[str]:
        if text == "" and self.empty:
            return None
        items = text.split(",") if self.several else [text]
        bad = [item for item in items if item not in self.values]
        if bad:
            return "%s %s not accepted" % (", ".join(repr(b) for b in bad),
                                           "is" if len(bad) == 1 else "are")
        return None


class Duration:
    """A time as ``decode_time()`` reads it: ``[[HH:]MM:]SS[.fraction]``."""

    _FORM = re.compile(r"[0-9]+(:[0-9]+){0,2}(\.[0-9]+)?")
    accepted = "a duration [[HH:]MM:]SS (e.g. 600, 10:00, 01:00:00)"

    def problem(self, text: str) -> Optional[str]:
        if self._FORM.fullmatch(text):
            return None
        return "%r is not a duration" % text


class Size:
    """A size as ``to_size()`` reads it: a whole number, then optionally k/m/g/t/p and b/w."""

    _FORM = re.compile(r"[0-9]+([kKmMgGtTpP][bBwW]?|[bBwW])?")
    accepted = "a size: a whole number with an optional unit b, kb, mb, gb, tb, pb (or w, kw, ...)"

    def problem(self, text: str) -> Optional[str]:
        if self._FORM.fullmatch(text):
            return None
        return "%r is not a size" % text


class QsubArguments:
    """``default_qsub_arguments``: every qsub prepends it, so qsub must accept it."""

    accepted = ("qsub options only, as qsub parses them (e.g. -r n -W umask=022 "
                "-W tolerate_node_failures=job_start)")

    def problem(self, text: str) -> Optional[str]:
        try:
            parse_qsub_arguments(text, check_tolerate=True)
        except QsubArgumentsError as exc:
            return "qsub would refuse it, so every job submission would fail: %s" % exc
        return None


class ObjectName:
    """The name of an existing object of ``object_type`` (``default_queue``): its form is
    checked here with the caller's name rule, its existence by the caller (one read)."""

    def __init__(self, object_type: str) -> None:
        self.object_type = object_type

    def problem(self, text: str,
                name_problem: Callable[[str, str], Optional[str]]) -> Optional[str]:
        return name_problem(self.object_type, text)


BOOL = Boolean()
HOOK_BOOL = HookBoolean()
COUNT = Integer(0)
SECONDS = Integer(1, unit="seconds")
DURATION = Duration()
SIZE = Size()

# Resources by name (master_resc_def_all.xml); counts may not be negative.
RESOURCE_KINDS = {
    "ncpus": COUNT, "mpiprocs": COUNT, "ompthreads": COUNT, "naccelerators": COUNT,
    "nodect": COUNT, "nchunk": COUNT, "nice": Integer(),
    "mem": SIZE, "vmem": SIZE, "pmem": SIZE, "pvmem": SIZE, "file": SIZE,
    "accelerator_memory": SIZE, "hbmem": SIZE,
    "walltime": DURATION, "cput": DURATION, "pcput": DURATION, "soft_walltime": DURATION,
    "min_walltime": DURATION, "max_walltime": DURATION,
    "accelerator": BOOL,
}
# Attributes whose ``.RESOURCE`` part names a resource (ATR_TYPE_RESC).
RESOURCE_ATTRIBUTES = ("resources_available", "resources_default", "resources_max",
                       "resources_min", "default_chunk")

JOB_RUN_WAIT = ("none", "runjob_hook", "execjob_hook")
# Node states a manager may write (decode_state/set_nodeflag); "free" excludes the others.
NODE_STATES = ("free", "offline", "down", "sleep", "offline_by_mom")
NODE_SHARING = ("default_shared", "default_excl", "default_exclhost", "ignore_excl",
                "force_excl", "force_exclhost")


def _hook_kinds(order_range):
    return {
        "enabled": HOOK_BOOL, "debug": HOOK_BOOL, "alarm": Integer(ALARM_MINIMUM, unit="seconds"),
        "freq": SECONDS,
        "order": Integer(order_range[0], order_range[1]),
        "user": Choice(HOOK_USERS), "fail_action": Choice(FAIL_ACTIONS, several=True),
        "event": Choice(EVENTS, several=True, empty=True),
    }


ATTRIBUTE_KINDS = {
    "server": {
        "scheduling": BOOL, "query_other_jobs": BOOL, "resv_enable": BOOL,
        "eligible_time_enable": BOOL, "job_history_enable": BOOL, "flatuid": BOOL,
        "acl_host_enable": BOOL, "acl_user_enable": BOOL, "node_group_enable": BOOL,
        "clear_topjob_estimates_enable": BOOL,
        "scheduler_iteration": SECONDS, "log_events": COUNT, "max_array_size": COUNT,
        "node_fail_requeue": Integer(0, unit="seconds"),
        "resend_term_delay": Integer(0, 1800, unit="seconds"),
        "max_concurrent_provision": Integer(1), "pbs_license_min": COUNT,
        "pbs_license_max": COUNT, "pbs_license_linger_time": SECONDS,
        "max_job_sequence_id": Integer(9999999, 999999999999), "backfill_depth": COUNT,
        "max_running": COUNT, "max_user_run": COUNT, "max_group_run": COUNT,
        "job_history_duration": DURATION,
        "default_qsub_arguments": QsubArguments(), "default_queue": ObjectName("queue"),
    },
    "sched": {
        "scheduling": BOOL, "throughput_mode": BOOL, "do_not_span_psets": BOOL,
        "only_explicit_psets": BOOL, "job_run_wait": Choice(JOB_RUN_WAIT),
        "scheduler_iteration": SECONDS, "sched_cycle_length": DURATION, "log_events": COUNT,
        "preempt_queue_prio": Integer(), "server_dyn_res_alarm": COUNT,
    },
    "queue": {
        "enabled": BOOL, "started": BOOL, "acl_user_enable": BOOL, "acl_host_enable": BOOL,
        "acl_group_enable": BOOL, "from_route_only": BOOL, "route_held_jobs": BOOL,
        "route_waiting_jobs": BOOL, "max_running": COUNT, "max_user_run": COUNT,
        "max_group_run": COUNT, "max_array_size": COUNT, "kill_delay": COUNT,
    },
    "node": {
        "state": Choice(NODE_STATES, several=True), "sharing": Choice(NODE_SHARING),
        "resv_enable": BOOL, "no_multinode_jobs": BOOL, "provision_enable": BOOL,
        "poweroff_eligible": BOOL, "Port": Integer(1, 65535),
    },
    "hook": _hook_kinds(SITE_ORDER_RANGE),
    "pbshook": _hook_kinds(PBSHOOK_ORDER_RANGE),
}

_HOOK_DEFAULTS = {"type": "site", "enabled": "true", "debug": "false", "user": "pbsadmin",
                  "fail_action": "none", "event": "", "order": "1", "alarm": "30",
                  "freq": "120"}
# What qmgr lists after ``unset`` (the server writes these back): mgr_server_unset() in
# req_manager.c, set_sched_default() in sched_func.c (default scheduler), unset_hook_*() in
# hook.c with hook.h's defaults; the texts are those of a fresh install (transcript a_).
LISTED_DEFAULTS = {
    "server": {
        "scheduling": "True", "log_events": "511", "mailer": "/usr/sbin/sendmail",
        "mail_from": "adm", "query_other_jobs": "True", "resources_default.ncpus": "1",
        "scheduler_iteration": "600", "resv_enable": "True", "max_array_size": "10000",
        "pbs_license_min": "0", "pbs_license_max": "2147483647",
        "pbs_license_linger_time": "31536000", "eligible_time_enable": "False",
        "max_concurrent_provision": "5", "clear_topjob_estimates_enable": "False",
    },
    "sched": {
        "sched_cycle_length": "00:20:00", "throughput_mode": "True",
        "job_run_wait": "runjob_hook", "partition": "pbs-default", "scheduling": "True",
        "scheduler_iteration": "600", "state": "idle", "preempt_queue_prio": "150",
        "preempt_prio": "express_queue, normal_jobs", "preempt_order": "SCR",
        "preempt_sort": "min_time_since_start", "log_events": "767",
        "server_dyn_res_alarm": "30",
    },
    "queue": {},
    "node": {},
    "hook": _HOOK_DEFAULTS,
    "pbshook": _HOOK_DEFAULTS,
}


def attribute_kind(object_type: str, attribute: str) -> Any:
    """The kind of ``attribute`` (``name`` or ``name.resource``) of ``object_type``, or None
    when this collection does not know it."""
    base, dot, resource = attribute.partition(".")
    if dot:
        if base in RESOURCE_ATTRIBUTES and object_type in ("server", "queue", "node"):
            return RESOURCE_KINDS.get(resource)
        return None
    return ATTRIBUTE_KINDS.get(object_type, {}).get(attribute)


def value_problem(object_type: str, attribute: str, text: str, operator: str,
                  name_problem: Callable[[str, str], Optional[str]]) -> Optional[str]:
    """Why ``text`` (str) cannot be written to ``attribute`` with ``operator`` (``=``, ``+=``,
    ``-=``), or None. ``name_problem(object_type, name)`` checks object names (for
    ``default_queue``). Unknown attributes give None; ``+=``/``-=`` on a list kind check the
    items, on a number check the number."""
    kind = attribute_kind(object_type, attribute)
    if kind is None:
        return None
    if isinstance(kind, ObjectName):
        problem = kind.problem(text, name_problem)
        if problem:
            return "%s attribute %s: %s; the %s must also exist" % (
                object_type, attribute, problem, kind.object_type)
        return None
    problem = kind.problem(text)
    if problem is None and attribute == "state" and object_type == "node" and operator == "=":
        items = text.split(",")
        if "free" in items and len(items) > 1:
            problem = "free cannot be combined with other states"
    if problem is None:
        return None
    return "%s attribute %s: %s; accepted: %s" % (
        object_type, attribute, problem, kind.accepted)


def listed_default(object_type: str, attribute: str) -> Optional[str]:
    """The text qmgr lists for ``attribute`` after it was unset, or None when it then
    disappears from the listing."""
    return LISTED_DEFAULTS.get(object_type, {}).get(attribute)


def same_text(object_type: str, attribute: str, desired: str, current: Optional[str]) -> bool:
    """Whether the desired text and the listed text ``current`` mean the same value (booleans
    by truth, everything else exactly); ``current`` None (unset) never matches."""
    if current is None:
        return False
    kind = attribute_kind(object_type, attribute)
    if isinstance(kind, Boolean):
        truth = kind.truth(desired)
        return truth is not None and truth is kind.truth(current)
    return desired == current
