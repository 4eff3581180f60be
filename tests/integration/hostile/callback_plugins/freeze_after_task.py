# -*- coding: utf-8 -*-
"""Test-only callback: freeze ansible-playbook right after a named task returned.

Environment: ``HOSTILE_FREEZE_TASK`` (the task name, without the role prefix) and
``HOSTILE_FREEZE_MARKER`` (a path). When the first result of that task arrives the plugin
writes the marker file and sleeps until the process is interrupted: the strategy cannot
start the next task nor a handler, so a test can interrupt the run at exactly that point
(between ``mom_config``'s write and the reload handler). Without the variables it does
nothing.
"""
import os
import time

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: freeze_after_task
type: aggregate
short_description: freeze the run after a named task (hpc.pbs tests only)
description: [Writes HOSTILE_FREEZE_MARKER and sleeps after the first result of HOSTILE_FREEZE_TASK.]
"""


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "freeze_after_task"
    CALLBACK_NEEDS_ENABLED = True

    def _freeze(self, result):
        wanted = os.environ.get("HOSTILE_FREEZE_TASK")
        marker = os.environ.get("HOSTILE_FREEZE_MARKER")
        if not wanted or not marker or result._task.name != wanted:
            return
        with open(marker, "w") as handle:
            handle.write(result._host.get_name() + "\n")
        while True:  # until SIGINT (KeyboardInterrupt) ends the run
            time.sleep(0.1)

    def v2_runner_on_ok(self, result):
        self._freeze(result)
