# -*- coding: utf-8 -*-
# Copyright: hpc.pbs developers
# Apache License 2.0
"""What the rolling rollout of reliable job startup (PP-928: the mom tunables
``$job_launch_delay`` / ``$sister_join_job_alarm`` and the hook files every mom holds) still
has to do on one mom, from one read of the mom and the server's view of its vnode.

One place for the rule, used by the rollout role's first look (every mom at once, on the
controller) and by its batches (each host again when its batch starts).
"""

from typing import Any, List, Mapping

from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hooks import mom_hook_differences

HOOK_FILES_DIFFER = "hook files differ: "
CONFIG_PENDING = "mom config differs or is not loaded"
NOT_READ = "not read: "
NO_MOM_PRIV = "no mom_priv on this host"
VNODE_UNKNOWN = "vnode unknown to the server"
LEFT_OFFLINE = "left offline by a rollout"


def hook_files_differ(server_files: Mapping[str, str], mom_files: Mapping[str, str]) -> List[str]:
    """The hook files whose mom copy is not the server's (every hook of ``server_files``
    required, by :func:`hooks.mom_hook_differences`).

    :param server_files: dict ``{"NAME.HK"|"NAME.PY"|"NAME.CF": sha256 hex}`` of the
        server's ``server_priv/hooks`` files.
    :param mom_files: the same of the mom's ``mom_priv/hooks`` copies; None counts as {}.
    :returns: sorted list of the file names whose sha256 differs or that the mom lacks.
    """
    server_files = server_files or {}
    return mom_hook_differences(server_files, mom_files or {}, [name.rsplit(".", 1)[0] for name in server_files])


def mom_work(look: Mapping[str, Any], server_files: Mapping[str, str], vnode: Mapping[str, Any],
             comment_prefix: str) -> List[str]:
    """Why a mom goes through the rollout's batches, ``[]`` when it is already done.

    :param look: the result ``hpc.pbs.cluster_info`` registered on the mom with
        ``gather: [hook_files]`` and ``mom_options`` (dict): ``mom_plan`` (``changed``,
        ``not_loaded``; None where the host has no ``mom_priv``) and
        ``health.hook_files.mom``; a failed or unreachable result (``failed`` /
        ``unreachable`` true, ``msg``) counts as not read.
    :param server_files: the server's hook files, as :func:`hook_files_differ` takes them.
    :param vnode: the server's view of the mom's vnode as ``hpc.pbs.cluster_info`` gives it
        (``health.nodes[NAME]``: ``state``, a list such as ``["offline", "job-busy"]``, and
        ``comment``, None when none), or None when the server does not know the vnode.
    :param comment_prefix: the start of the node comments a rollout writes; a vnode
        offline with such a comment was left offline by a rollout, which must finish it.
    :returns: list of texts, each one reason: ``"not read: <messages>"`` (then the config
        and hook files are not judged), ``"mom config differs or is not loaded"`` (the
        wanted tunables are not in the file, or the running pbs_mom has not loaded them),
        ``"hook files differ: <files>"``, ``"vnode unknown to the server"``, ``"left
        offline by a rollout"``.
    """
    look = look or {"failed": True, "msg": "no result"}
    not_read = [look.get("msg", "?") for key in ("failed", "unreachable") if look.get(key)]
    if not not_read and "mom_plan" in look and look["mom_plan"] is None:
        not_read.append(NO_MOM_PRIV)
    work = []
    if not_read:
        work.append(NOT_READ + "; ".join(str(msg) for msg in not_read))
    else:
        plan = look.get("mom_plan") or {}
        if plan.get("changed") or plan.get("not_loaded"):
            work.append(CONFIG_PENDING)
        differ = hook_files_differ(server_files, ((look.get("health") or {}).get("hook_files") or {}).get("mom"))
        if differ:
            work.append(HOOK_FILES_DIFFER + ", ".join(differ))
    if vnode is None:
        work.append(VNODE_UNKNOWN)
    elif "offline" in (vnode.get("state") or []) and str(vnode.get("comment") or "").startswith(comment_prefix):
        work.append(LEFT_OFFLINE)
    return work
