# -*- coding: utf-8 -*-
"""What ``hpc.pbs.cluster_info`` reports of the PBS server (result ``server``): one
``qmgr`` call (commands on stdin) lists the server, the default scheduler, the site hooks
and the pbshooks; from it each hook's fields, the server's default
``tolerate_node_failures``, the scheduler's ``job_run_wait``, the server's version and the
alarm sums of the enabled execjob_begin / execjob_prologue hooks."""

from ansible_collections.hpc.pbs.plugins.module_utils.cluster.effective_timeouts import (
    OPTION_EVENT, enabled_alarms)
from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hooks import hook_file_paths
from ansible_collections.hpc.pbs.plugins.module_utils.cluster.install_facts import hook_summary
from ansible_collections.hpc.pbs.plugins.module_utils.common.module_error import ModuleError
from ansible_collections.hpc.pbs.plugins.module_utils.server.qmgr import (
    Qmgr, QmgrError, parse_list_output)
from ansible_collections.hpc.pbs.plugins.module_utils.jobs.qsub_args import (
    QsubArgumentsError, parse_qsub_arguments, tolerate_value)

SERVER_QUERIES = ("list server", "list sched default", "list hook", "list pbshook")


def server_facts(module, paths):
    """The result ``server`` (see cluster_info's RETURN). Raises ModuleError when qmgr fails
    or prints a listing it cannot parse (raises ModuleError: QmgrError is one); warns when the server's default_qsub_arguments
    cannot be parsed as qsub options."""
    qmgr = Qmgr.for_paths(module, paths)
    try:
        out, dummy = qmgr.run_batch(list(SERVER_QUERIES), "the server queries")
        objects = parse_list_output(out)
    except QmgrError as exc:
        raise
    except ValueError as exc:
        raise ModuleError("cannot parse qmgr's listing: %s" % exc)
    server = next((attrs for kind, name, attrs in objects if kind == "Server"), {})
    sched = next((attrs for kind, name, attrs in objects if kind == "Sched"), {})
    listed_hooks = dict((name, attrs) for kind, name, attrs in objects if kind == "Hook")
    hooks = dict((name, hook_summary(attrs, hook_file_paths(paths.server_hooks_dir,
                                                            name)["body"]))
                 for name, attrs in listed_hooks.items())
    alarm_sums = dict((event, sum(alarm for dummy, alarm in enabled_alarms(listed_hooks, event)))
                      for event in sorted(set(OPTION_EVENT.values())))
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
                pbs_version=server.get("pbs_version"), alarm_sums=alarm_sums)
