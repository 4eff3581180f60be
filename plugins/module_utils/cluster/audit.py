# -*- coding: utf-8 -*-
"""The one home of the audit's rules (``playbooks/audit.yml``, through the filters of
``plugins/filter/audit_drift.py``): what the modules' plans, the moms' reads and the
server's hook files make into drift rows ``{"host", "object", "item", "desired",
"actual"}`` (all text), and the moms' effective timeouts into the timeout rows.

The plans carry their changes as data (``changes`` in their ``diff``: see
:func:`qmgr_plan.attribute_changes` and :func:`hook_plan.hook_diffs`); nothing here parses a
diff's text. A mom's config lines are read by :mod:`mom_config`'s grammar and the last line
of an option wins as :func:`effective_timeouts.configured_value` says; hook files are
compared by their SHA-256, as ``hpc.pbs.cluster_info`` reports them.

Standard library only (Python 3.6-3.12)."""

import re

from ansible_collections.hpc.pbs.plugins.module_utils.cluster.effective_timeouts import (
    OPTIONS, configured_value)
from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hooks import HOOK_FILE_SUFFIXES
from ansible_collections.hpc.pbs.plugins.module_utils.moms.mom_config import current_options

# The row of a plan the module could not make: desired, and how much of its message is kept.
NOT_PLANNED = "(could not plan)"
MESSAGE_MAX_CHARS = 200
# What a row shows for a value that is not there.
UNSET = "(unset)"
MISSING = "(missing)"
NOT_ON_SERVER = "(not on the server)"
# The object of the mom config rows.
MOM_CONFIG = "mom_priv/config"


class AuditInputError(ValueError):
    """An input that is not what the audit's plays give (the message names it)."""


def _one_line(text):
    return re.sub(r"\s+", " ", text)


def _row(host, obj, item, desired, actual):
    return dict(host=host, object=obj, item=item, desired=desired, actual=actual)


def plan_changes(result, what):
    """Every change of a module's plan ``result`` (a dict with ``diff``: one dict or a list),
    as data: the ``changes`` of each of its diff entries, in order. Raises AuditInputError
    when the plan has no ``changes`` at all (a diff made without them would hide drift)."""
    diffs = result.get("diff")
    if isinstance(diffs, dict):
        diffs = [diffs]
    if not isinstance(diffs, list) or not diffs:
        raise AuditInputError("%s: the plan has no diff (run its module with diff: true)" % what)
    found = [diff["changes"] for diff in diffs if isinstance(diff, dict) and "changes" in diff]
    if not found:
        raise AuditInputError("%s: the plan's diff carries no changes; it was not made by "
                              "hpc.pbs.hook, hpc.pbs.qmgr or hpc.pbs.cluster_info" % what)
    return [change for changes in found for change in changes]


def change_row(host, obj, change):
    """The drift row of one change of a plan (see :func:`plan_changes`): an attribute shows
    its text ((unset) when not set), a hook body its SHA-256 (``sha256 <hex>``), a hook
    config its text on one line; a file that is missing now is (missing)."""
    item = change["item"]
    if "after_sha256" in change:
        if item == "body":
            desired = "sha256 " + change["after_sha256"]
            actual = "sha256 " + change["before_sha256"] if change["before_sha256"] else MISSING
        else:
            desired = _one_line(change["after"]).strip()
            actual = _one_line(change["before"]).strip() if change["before"] else MISSING
        return _row(host, obj, item, desired, actual)
    return _row(host, obj, item, change["after"] or UNSET, change["before"] or UNSET)


def plan_rows(host, obj, result, changes=plan_changes):
    """The drift rows of one plan ``result`` of ``obj`` (the label the rows name): none when
    the plan did not run (None, or skipped), one "(could not plan)" row with the module's
    message (on one line, at most 200 characters) when it failed, else one row per change
    (``changes(result, obj)``, :func:`plan_changes` by default)."""
    if result is None or result.get("skipped"):
        return []
    if result.get("failed"):
        message = str(result["msg"]) if "msg" in result else "failed"
        return [_row(host, obj, "(plan)", NOT_PLANNED, _one_line(message)[:MESSAGE_MAX_CHARS])]
    return [change_row(host, obj, change) for change in changes(result, obj)]


def tolerate_changes(result, obj="server"):
    """The change of hpc.pbs.tolerate_node_failures's plan as data, from its result's
    ``previous`` and ``default_qsub_arguments`` (the server attribute's text before and
    after; empty when unset)."""
    before = result.get("previous", "")
    after = result.get("default_qsub_arguments", "")
    if before == after:
        return []
    return [dict(object=obj, item="default_qsub_arguments", before=before, after=after)]


def _role_plan(plan, what):
    if not isinstance(plan, dict) or "object" not in plan or not isinstance(plan.get("result"), dict):
        raise AuditInputError("%s: expected a role's audit plan {object, result}, got %r"
                              % (what, plan))
    return plan["object"], plan["result"]


def server_rows(host, host_info, tolerate=None, role_plans=()):
    """The drift rows of the PBS server ``host``, each once, in this order: the plans of
    ``host_info`` (hpc.pbs.cluster_info's result: ``hook_plans``, labelled "hook NAME";
    the ``tolerate`` plan (hpc.pbs.tolerate_node_failures's result, labelled "server");
    ``object_plans``, labelled by their object type, "server" / "sched"), then
    ``role_plans`` (the roles' ``{object, result}``; None for a role not run)."""
    host_info = host_info or {}
    rows = []
    for plan in host_info.get("hook_plans") or []:
        rows.extend(plan_rows(host, plan["object"], plan))
    rows.extend(plan_rows(host, "server", tolerate, tolerate_changes))
    for plan in host_info.get("object_plans") or []:
        rows.extend(plan_rows(host, plan["object"].split()[0], plan))
    for plan in role_plans or ():
        if plan is not None:
            obj, result = _role_plan(plan, "role_plans")
            rows.extend(plan_rows(host, obj, result))
    unique = []
    for row in rows:
        if row not in unique:
            unique.append(row)
    return unique


def audited_hooks(host_info, role_plans=()):
    """The names of the hooks the server's plans audit (their objects "hook NAME" /
    "pbshook NAME"): every mom must hold their files."""
    objects = [plan["object"] for plan in (host_info or {}).get("hook_plans") or []]
    objects += [_role_plan(plan, "role_plans")[0] for plan in role_plans or () if plan is not None]
    names = []
    for obj in objects:
        name = obj.split()[-1]
        if name not in names:
            names.append(name)
    return names


def _read(info):
    """Whether a host's hpc.pbs.cluster_info result is a read that succeeded."""
    return isinstance(info, dict) and not info.get("failed") and not info.get("skipped")


def mom_rows(mom, info, hook_names, server_files):
    """The drift rows of one mom: none when its read ``info`` (hpc.pbs.cluster_info's
    result) failed or did not run. With its ``mom_plan``, one row per option of
    :data:`effective_timeouts.OPTIONS` whose line hpc.pbs.mom_config would change (the last
    line of an option wins; no line shows the value the mom derives, from ``mom``); then,
    for each hook of ``hook_names``, one row per file of the hook (each suffix of
    :data:`hooks.HOOK_FILE_SUFFIXES`, the files hpc.pbs.cluster_info hashes;
    ``server_files`` / the mom's ``health.hook_files.mom``: ``{"NAME.EXT": sha256}``) whose
    copy differs from the server's."""
    if not _read(info):
        return []
    rows = []
    plan = info.get("mom_plan")
    if plan:
        effective = info.get("mom") or {}
        have_options = current_options(plan["before"])
        for option in OPTIONS:
            current = effective.get(option) or {}
            want = configured_value(plan["options"], option)
            have = configured_value(have_options, option)
            if want != have:
                rows.append(_row(
                    mom, MOM_CONFIG, "$" + option,
                    want if want is not None else "(no line: default %s)" % current.get("default", "?"),
                    have if have is not None else "(no line: default %s)" % current.get("value", "?")))
    server_files = server_files or {}
    copies = ((info.get("health") or {}).get("hook_files") or {}).get("mom") or {}
    for name in hook_names:
        for suffix in HOOK_FILE_SUFFIXES:
            server = server_files.get(name + suffix)
            copy = copies.get(name + suffix)
            if server != copy:
                rows.append(_row(mom, "hook " + name, "copy " + suffix,
                                 "sha256 " + server if server else NOT_ON_SERVER,
                                 "sha256 " + copy if copy else MISSING))
    return rows


def timeout_rows(mom, info):
    """The effective timeouts of one mom whose read ``info`` succeeded and has ``mom``
    (hpc.pbs.cluster_info's ``mom.<option>``): one row per option, $sister_join_job_alarm
    first - ``{host, option, seconds, source, line, hooks, after_sighup, why}``."""
    if not _read(info) or not info.get("mom"):
        return []
    rows = []
    for option in reversed(OPTIONS):
        entry = info["mom"].get(option)
        if entry is None:
            continue
        rows.append(dict(host=mom, option=option, seconds=entry["value"], source=entry["source"],
                         line=entry.get("line"), hooks=entry.get("hooks", []),
                         after_sighup=entry.get("after_sighup"),
                         why=entry.get("why", entry["source"])))
    return rows
