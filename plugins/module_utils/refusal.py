# -*- coding: utf-8 -*-
"""The one way shared planning code refuses a task: it raises :class:`TaskRefused`; a module
turns it into ``fail_json`` (the task fails, nothing changed), ``hpc.pbs.cluster_info`` into a
failed plan in its result."""


class TaskRefused(Exception):
    """The task cannot be planned. ``msg``: what is wrong and what is accepted; ``extra``:
    further result keys (``problems``, ``invalid_events``, ``cmd``, ...)."""

    def __init__(self, msg, **extra):
        Exception.__init__(self, msg)
        self.msg = msg
        self.extra = extra

    def fail_kwargs(self):
        """Keyword arguments for ``module.fail_json``."""
        return dict(self.extra, msg=self.msg)
