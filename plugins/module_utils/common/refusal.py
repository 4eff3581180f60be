# -*- coding: utf-8 -*-
"""The one way shared planning code refuses a task: it raises :class:`TaskRefused`; a module's
``main()`` turns it into ``fail_json`` (the task fails, nothing changed), as every
:class:`~module_error.ModuleError`, ``hpc.pbs.cluster_info`` into a failed plan in its
result."""

from ansible_collections.hpc.pbs.plugins.module_utils.common.module_error import ModuleError


class TaskRefused(ModuleError):
    """The task cannot be planned. ``msg``: what is wrong and what is accepted; ``extra``:
    further result keys (``problems``, ``invalid_events``, ``cmd``, ...);
    :meth:`~module_error.ModuleError.fail_kwargs` gives both to ``module.fail_json``."""
