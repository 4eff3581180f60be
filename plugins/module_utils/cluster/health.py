# -*- coding: utf-8 -*-
"""The health snapshot of ``hpc.pbs.cluster_info`` (option ``gather``; the rollout's health
gate) and the problems it shows.

Two registries, each the one place to extend:

- :data:`SNAPSHOT_READERS` - one entry per part of the snapshot (a ``gather`` choice and a
  key of the result ``health``): its name and the function that reads it (PBS's own JSON,
  ``pbsnodes -F json`` / ``qstat -f -t -F json``, or the hook files on disk).
- :data:`PROBLEM_KINDS` - one entry per kind of problem: its ``kind`` (the problems'
  ``kind``), the snapshot part it ``reads`` and its ``classify`` function, which takes that
  part and the module's parameters and returns ``[(name, detail)]``. A kind whose part was
  not gathered finds nothing. :func:`health_problems` reports the kinds in registry order,
  each kind's problems sorted by name; :func:`new_problems` compares by (kind, name).

A new problem kind that reads a part already read is one :class:`ProblemKind` entry (and
its line in cluster_info's RETURN ``problems``)."""

import os
from collections import namedtuple

from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hooks import (
    HOOK_FILE_SUFFIXES, mom_hook_differences)
from ansible_collections.hpc.pbs.plugins.module_utils.cluster.install_facts import file_sha256
from ansible_collections.hpc.pbs.plugins.module_utils.jobs.jobs import SYSTEM_HOLD
from ansible_collections.hpc.pbs.plugins.module_utils.common.module_error import ModuleError
from ansible_collections.hpc.pbs.plugins.module_utils.pbs.json_output import json_jobs, run_json
from ansible_collections.hpc.pbs.plugins.module_utils.pbs.pbs_command import PbsRunner

# Node states that make a vnode unusable for new jobs (pbsnodes' "state" pieces).
PROBLEM_NODE_STATES = ("down", "offline")


# -- snapshot readers ---------------------------------------------------------------------

def node_health(document):
    """``{vnode: {state: [..], comment, jobs: [..]}}`` from ``pbsnodes -F json``. The comment
    is text or None: pbsnodes prints a comment that reads as a number (``42``) as a JSON
    number."""
    nodes = {}
    for name, attrs in (document.get("nodes") or {}).items():
        state = str(attrs.get("state", ""))
        comment = attrs.get("comment")
        nodes[name] = dict(state=[piece for piece in state.split(",") if piece],
                           comment=None if comment is None else str(comment),
                           jobs=list(attrs.get("jobs") or []))
    return nodes


def held_job_health(document):
    """``{job id: {hold_types, job_state, comment, run_count}}`` of the jobs and subjobs of
    ``qstat -f -t -F json`` whose Hold_Types hold the system hold ``s``."""
    held = {}
    for jobid, attrs in json_jobs(document):
        hold_types = str(attrs.get("Hold_Types", "n"))
        if SYSTEM_HOLD in hold_types:
            held[jobid] = dict(hold_types=hold_types, job_state=attrs.get("job_state"),
                               comment=attrs.get("comment"), run_count=attrs.get("run_count"))
    return held


def hook_file_hashes(hooks_dir):
    """``{"NAME.EXT": sha256}`` of the hook files (.HK, .PY, .CF) in ``hooks_dir``; None
    when the directory does not exist."""
    try:
        entries = sorted(os.listdir(hooks_dir))
    except OSError:
        return None
    hashes = {}
    for entry in entries:
        if entry.endswith(HOOK_FILE_SUFFIXES):
            digest = file_sha256(os.path.join(hooks_dir, entry))
            if digest is not None:
                hashes[entry] = digest
    return hashes


def vnode_name_problem(name):
    """Why ``name`` (str) cannot be given to pbsnodes as a vnode name; None when it can."""
    if not name.strip():
        return "an empty name"
    if name.startswith("-"):
        return "%s starts with '-' (pbsnodes would take it for an option)" % name
    return None


def checked_vnodes(module):
    """The option ``vnodes`` without repeats, in its order (``[]``: every vnode). Raises
    ModuleError when a name is unusable or ``nodes`` is not gathered."""
    vnodes = []
    for name in module.params["vnodes"]:
        name_problem = vnode_name_problem(name)
        if name_problem:
            raise ModuleError("vnodes: %s is not a vnode name" % name_problem)
        if name not in vnodes:
            vnodes.append(name)
    if vnodes and "nodes" not in module.params["gather"]:
        raise ModuleError("vnodes limits gather=[nodes]: add nodes to gather")
    return vnodes


def pbsnodes_argv(bin_dir, vnodes):
    """``pbsnodes`` printing JSON of ``vnodes`` (list of names), of every vnode when empty."""
    pbsnodes = os.path.join(bin_dir, "pbsnodes")
    if vnodes:
        return [pbsnodes, "-v", "-F", "json"] + list(vnodes)
    return [pbsnodes, "-a", "-F", "json"]


# The one key of the entry ``pbsnodes -v NAME -F json`` prints for a vnode the server
# refused: the vnode's own name in OpenPBS 23.06 (``{NAME: "Unknown node "}``), ``Error`` in
# 22.05 (``{"Error": "Unknown node "}``, PBS Professional 2022): feature
# ``pbsnodes_refusal_by_name`` of the version table. Both are read whatever the version,
# since a PBS Professional release may not tell which it prints.
REFUSED_VNODE_KEYS = ("{name}", "Error")


def unknown_vnodes(document, vnodes):
    """``[(name, why)]`` of the ``vnodes`` that pbsnodes' JSON ``document`` holds no vnode
    for: the entry real pbsnodes prints for a vnode the server refused (one key of
    :data:`REFUSED_VNODE_KEYS` holding the server's text, ``why``), or no entry at all."""
    listed = document.get("nodes") or {}
    unknown = []
    for name in vnodes:
        entry = listed.get(name)
        if entry is None:
            unknown.append((name, "not listed by pbsnodes"))
            continue
        keys = [key.format(name=name) for key in REFUSED_VNODE_KEYS]
        refused = [key for key in entry if key in keys and not isinstance(entry[key], dict)]
        if len(entry) == 1 and refused:
            unknown.append((name, str(entry[refused[0]]).strip()))
    return unknown


def read_nodes(module, paths, runner, vnodes):  # pylint: disable=unused-argument
    """Part ``nodes``: :func:`node_health` of ``vnodes`` (every vnode when empty); raises
    ModuleError naming each named vnode the server does not know."""
    bin_dir = os.path.join(paths.exec_dir, "bin")
    document = run_json(runner, pbsnodes_argv(bin_dir, vnodes), "the vnodes")
    unknown = unknown_vnodes(document, vnodes)
    if unknown:
        raise ModuleError("vnodes: the PBS server does not know %s" % ", ".join(
            "%s (%s)" % (name, why) for name, why in unknown), unknown_vnodes=[name for name, dummy in unknown])
    return node_health(document)


def read_held_jobs(module, paths, runner, vnodes):  # pylint: disable=unused-argument
    """Part ``held_jobs``: :func:`held_job_health` of every job and subjob."""
    qstat = os.path.join(paths.exec_dir, "bin", "qstat")
    argv = [qstat, "-f", "-t", "-F", "json"]
    document = run_json(runner, argv, "the jobs")
    try:
        return held_job_health(document)
    except ValueError as exc:
        raise ModuleError("cannot read the jobs: %s printed %s" % (qstat, exc), cmd=argv)


def read_hook_files(module, paths, runner, vnodes):  # pylint: disable=unused-argument
    """Part ``hook_files``: :func:`hook_file_hashes` of ``server_priv/hooks`` and
    ``mom_priv/hooks``."""
    return dict(server=hook_file_hashes(paths.server_hooks_dir),
                mom=hook_file_hashes(paths.mom_hooks_dir))


# (part, reader): each reader is called as reader(module, paths, runner, vnodes).
SNAPSHOT_READERS = (
    ("nodes", read_nodes),
    ("held_jobs", read_held_jobs),
    ("hook_files", read_hook_files),
)
SNAPSHOT_PARTS = [part for part, dummy in SNAPSHOT_READERS]


def gather_health(module, paths, parts, vnodes=()):
    """The snapshot of ``parts`` (see the option ``gather``), in registry order; ``nodes``
    of ``vnodes`` only when given (see the option ``vnodes``)."""
    runner = PbsRunner.for_module(module, paths)
    return dict((part, reader(module, paths, runner, vnodes))
                for part, reader in SNAPSHOT_READERS if part in parts)


# -- problem kinds ------------------------------------------------------------------------

def vnode_problems(nodes, params):
    """A vnode down or offline whose comment does not start with ``own_comment_prefix``."""
    own_comment_prefix = params["own_comment_prefix"]
    found = []
    for name, node in sorted(nodes.items()):
        bad = [state for state in node["state"] if state in PROBLEM_NODE_STATES]
        comment = node.get("comment") or ""
        if not bad or (own_comment_prefix and comment.startswith(own_comment_prefix)):
            continue
        detail = "vnode %s is %s" % (name, ",".join(node["state"]))
        if comment:
            detail += " (comment: %s)" % comment
        found.append((name, detail))
    return found


def held_job_problems(held_jobs, params):  # pylint: disable=unused-argument
    """A job or subjob with a system hold."""
    found = []
    for jobid, job in sorted(held_jobs.items()):
        detail = "job %s has a system hold (Hold_Types %s, run_count %s)" % (
            jobid, job["hold_types"], job.get("run_count"))
        if job.get("comment"):
            detail += " (comment: %s)" % job["comment"]
        found.append((jobid, detail))
    return found


def hook_file_problems(hook_files, params):
    """A mom of ``mom_hook_files`` whose hook files differ from the server's, or lack a file
    of a hook in ``required_hooks``. Nothing without ``mom_hook_files`` or without the
    server's hooks directory; a mom given as None is not compared."""
    server_files = (hook_files or {}).get("server")
    found = []
    if not params["mom_hook_files"] or server_files is None:
        return found
    for mom, mom_files in sorted(params["mom_hook_files"].items()):
        if mom_files is None:
            continue
        differs = mom_hook_differences(server_files, mom_files, params["required_hooks"])
        if differs:
            found.append((mom, "mom %s: hook files differ from the server's: %s"
                          % (mom, ", ".join(differs))))
    return found


ProblemKind = namedtuple("ProblemKind", ["kind", "reads", "classify"])

# One entry per kind of problem, in the order the problems are reported.
PROBLEM_KINDS = (
    ProblemKind("vnode", "nodes", vnode_problems),
    ProblemKind("held_job", "held_jobs", held_job_problems),
    ProblemKind("hook_files", "hook_files", hook_file_problems),
)


def problem(kind, name, detail):
    return dict(kind=kind, name=name, detail=detail)


def health_problems(health, params, kinds=None):
    """Every problem of the snapshot ``health`` (see RETURN ``problems``): those of each
    entry of ``kinds`` (:data:`PROBLEM_KINDS` by default) whose part was gathered."""
    found = []
    for each in PROBLEM_KINDS if kinds is None else kinds:
        if each.reads in health:
            found += [problem(each.kind, name, detail)
                      for name, detail in each.classify(health[each.reads], params)]
    return found


def new_problems(problems, baseline):
    """The ``problems`` whose (kind, name) is not in ``baseline``."""
    known = set((old.get("kind"), old.get("name")) for old in baseline or [])
    return [each for each in problems if (each["kind"], each["name"]) not in known]
