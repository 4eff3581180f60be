# -*- coding: utf-8 -*-
"""Plans of hook and qmgr tasks inside one read of the server (``hpc.pbs.cluster_info``
options ``plan_hooks`` / ``plan_objects``): what ``hpc.pbs.hook`` (state present) and
``hpc.pbs.qmgr`` (state present, list_mode replace) would change, by their own planning code
(:mod:`hook_plan`, :mod:`qmgr_plan`), nothing written. A plan that cannot be made is a
failed plan in the result, not a failed module: an audit reports it as drift."""

from typing import Any, Dict, List, Tuple

from ansible.module_utils.common.text.converters import to_bytes

from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hook_plan import (
    HOOK_ATTRIBUTE_OPTIONS, check_hook_task, check_json, config_text, hook_diffs, plan_present,
    preflight_body)
from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hooks import body_problem
from ansible_collections.hpc.pbs.plugins.module_utils.server.qmgr import (
    OBJECT_TYPES, Qmgr, QmgrError)
from ansible_collections.hpc.pbs.plugins.module_utils.server.qmgr_plan import (
    describe, object_diffs, plan_objects)
from ansible_collections.hpc.pbs.plugins.module_utils.common.refusal import TaskRefused

# The options of a hook plan: those of hpc.pbs.hook that describe the hook itself.
HOOK_PLAN_OPTIONS = dict(HOOK_ATTRIBUTE_OPTIONS, name=dict(type="str", required=True),
                         events=dict(type="list", elements="str"), body=dict(type="str"))
OBJECT_PLAN_OPTIONS = dict(
    object_type=dict(type="str", required=True, choices=list(OBJECT_TYPES)),
    name=dict(type="str"),
    attributes=dict(type="dict", required=True),
)
PLACEHOLDER = "<temporary file>"


def _failed(plan, exc):
    plan.update(failed=True, msg=exc.msg, changed=False, commands=[])
    return plan


def hook_plan(module: Any, paths: Any, qmgr: Any, params: Dict[str, Any]) -> Dict[str, Any]:
    """The plan of one hook task ``params`` (HOOK_PLAN_OPTIONS): ``object`` ("hook NAME" or
    "pbshook NAME"), ``failed`` (and ``msg`` when true), ``changed``, ``commands``, ``diff``
    (as hpc.pbs.hook --diff: the attributes, then each file that would change) and, when a
    body that would go live was checked, ``preflight``. A body hpc.pbs.hook refuses before
    anything runs (:func:`hooks.body_problem`: over 100 MiB, not UTF-8) is a failed plan
    naming the problem, made without reading the server."""
    params = dict(params, state="present")
    name = params["name"]
    kind = "pbshook" if params["type"] == "pbs" else "hook"
    plan = dict(object="%s %s" % (kind, name), failed=False)
    try:
        check_hook_task(params)
        body = params["body"]
        if body is not None:
            body = to_bytes(body, errors="surrogate_or_strict")
            # The body checks of hpc.pbs.hook (size, UTF-8), before any qmgr call.
            problem = body_problem("body", body)
            if problem:
                raise TaskRefused("%s. hpc.pbs.hook would refuse this body: hook %s would be "
                                  "neither created nor touched." % (problem, name))
        config = config_text(params["config"])
        if config is not None:
            config = to_bytes(config, errors="surrogate_or_strict")
            if params["config_format"] == "json":
                check_json(config)
        listed = qmgr.list_object(kind, name)

        def preflight(to_check, current, wanted_config):
            return preflight_body(module.run_command, module.tmpdir, paths, params, name,
                                  current, to_check, wanted_config)

        planned = plan_present(qmgr, paths, params, listed[2] if listed else None, body,
                               config, preflight, lambda data: PLACEHOLDER)
    except (TaskRefused, QmgrError) as exc:
        return _failed(plan, exc)
    plan.update(changed=bool(planned["commands"]),
                commands=[str(c) for c in planned["commands"]],
                diff=hook_diffs(name, planned["before"], planned["after"],
                                (("PY", body, planned["body_now"]),
                                 ("CF", config, planned["config_now"]))))
    if planned["preflight"] is not None:
        plan["preflight"] = planned["preflight"]
    return plan


def object_plan(qmgr: Any, params: Dict[str, Any]) -> Dict[str, Any]:
    """The plan of one qmgr task ``params`` (OBJECT_PLAN_OPTIONS; ``sched`` defaults to
    ``default``, ``server`` to the default server): ``object`` ("sched default",
    "server"), ``failed`` (and ``msg``), ``changed``, ``commands``, ``diff`` (as
    hpc.pbs.qmgr --diff)."""
    object_type = params["object_type"]
    name = params["name"]
    if name is None:
        name = "default" if object_type == "sched" else None
    plan = dict(object=describe(object_type, name), failed=False)
    if name is None and object_type != "server":
        plan.update(failed=True, changed=False, commands=[],
                    msg="name is required for object_type %s" % object_type)
        return plan
    names = [name]
    try:
        before, commands, after = plan_objects(qmgr, object_type, names, params["attributes"])
    except (TaskRefused, QmgrError) as exc:
        return _failed(plan, exc)
    plan.update(changed=bool(commands), commands=[str(c) for c in commands],
                diff=object_diffs(object_type, names, before, after))
    return plan


def server_plans(module: Any, paths: Any, hooks: List[Dict[str, Any]],
                 objects: List[Dict[str, Any]]) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]:
    """``(hook_plans, object_plans)``: the plans of ``hooks`` and ``objects`` (lists of
    option dicts), in their order."""
    qmgr = Qmgr.for_paths(module, paths)
    return ([hook_plan(module, paths, qmgr, each) for each in hooks],
            [object_plan(qmgr, each) for each in objects])
