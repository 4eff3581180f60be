# -*- coding: utf-8 -*-
"""What ``hpc.pbs.cluster_info`` reports of an execution host (a ``mom_priv`` directory):
the hooks the server copied to the mom, the effective ``$job_launch_delay`` /
``$sister_join_job_alarm`` and the cgroup layout (``mom``), and with ``mom_options`` what
``hpc.pbs.mom_config`` would make of ``mom_priv/config`` (``mom_plan``), nothing written."""

import os

from ansible_collections.hpc.pbs.plugins.module_utils.moms.cgroup_layout import read_layout
from ansible_collections.hpc.pbs.plugins.module_utils.cluster.effective_timeouts import effective_values
from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hooks import read_hook_dir
from ansible_collections.hpc.pbs.plugins.module_utils.cluster.install_facts import (
    hook_summary, read_text)
from ansible_collections.hpc.pbs.plugins.module_utils.common.module_error import ModuleError
from ansible_collections.hpc.pbs.plugins.module_utils.moms.mom_config import (
    current_options, planned_text)
from ansible_collections.hpc.pbs.plugins.module_utils.moms.mom_config_options import (
    MomConfigValueError, plan)
from ansible_collections.hpc.pbs.plugins.module_utils.moms.mom_daemon import (
    last_config_read, process_alive, read_mom_pid, running_differences)


def mom_facts(paths):
    """The result ``mom`` (see cluster_info's RETURN); None without ``mom_priv``."""
    if not os.path.isdir(os.path.join(paths.home, "mom_priv")):
        return None
    hooks = read_hook_dir(paths.mom_hooks_dir)
    config = current_options(read_text(paths.mom_config) or "")
    facts = dict(hooks=dict((name, hook_summary(attrs, os.path.join(paths.mom_hooks_dir,
                                                                    name + ".PY")))
                            for name, attrs in hooks.items()))
    facts.update(effective_values(config, hooks))
    facts["cgroup"] = read_layout()
    return facts


def mom_plan(module, paths, options):
    """What mom_config (state present) would make of ``mom_priv/config`` for ``options``:
    see RETURN ``mom_plan``. Raises ModuleError on a value the mom would refuse."""
    try:
        desired, remove, dummy = plan(options, "present")
    except MomConfigValueError as exc:
        raise ModuleError("mom_options: %s" % exc)
    before = read_text(paths.mom_config) or ""
    after = planned_text(before, desired, remove)
    options = current_options(after)
    return dict(path=paths.mom_config, changed=after != before, before=before, after=after,
                options=options, not_loaded=not_loaded(paths, options, set(desired) | remove))


def not_loaded(paths, file_options, names):
    """The options of ``names`` that the running mom holds otherwise than ``file_options``
    say (what it logged at its last config read; mom_config reloads it for them):
    ``[{name, running, in_file}]``. Empty when the mom does not run or none of its logs
    shows a config read."""
    pid = read_mom_pid(paths.mom_lock)
    if pid is None or not process_alive(pid):
        return []
    read = last_config_read(paths.mom_logs_dir)
    if read is None:
        return []
    return [dict(name=name, running=running, in_file=in_file)
            for name, running, in_file in running_differences(read, file_options, names)]
