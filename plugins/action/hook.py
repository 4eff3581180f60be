# -*- coding: utf-8 -*-
# Copyright: hpc.pbs developers
# Apache License 2.0
"""Action plugin of ``hpc.pbs.hook``: the config is checked against ``config_schema`` on the
controller, so the PBS server needs no ``jsonschema``.

Ansible picks this plugin for every ``hpc.pbs.hook`` task. With ``config_schema`` given:

- ``config`` (a dict/list, or JSON text) or the file ``config_src`` on the managed host
  (read with ``ansible.builtin.slurp``) is validated with
  ``module_utils/common/json_schema.schema_errors`` - the validation of the
  ``hpc.pbs.json_schema_errors`` filter;
- a config that breaks the schema fails the task before the module runs (nothing changed
  on the host); otherwise the module runs without ``config_schema`` (already checked).

A config that is not JSON text, or a ``config_src`` that cannot be read, is left to the
module, which refuses it with its own message (it parses JSON before anything else).
"""

import base64
import json

from ansible.plugins.action import ActionBase

from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hooks import config_refusal_message
from ansible_collections.hpc.pbs.plugins.module_utils.common.json_schema import (
    JsonSchemaError, schema_errors)


class ActionModule(ActionBase):
    """Validate ``config`` against ``config_schema`` here, then run the module."""

    TRANSFERS_FILES = False
    _supports_check_mode = True
    _supports_async = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        module_args = dict(self._task.args)
        if module_args.get("config_schema") is not None:
            refusal = self._schema_refusal(module_args, task_vars)
            if refusal is not None:
                result.update(refusal)
                return result
        wrap_async = bool(self._task.async_val) and not self._connection.has_native_async
        try:
            result.update(self._execute_module(module_name=self._module_name(),
                                               module_args=module_args, task_vars=task_vars,
                                               wrap_async=wrap_async))
        finally:
            if not wrap_async:
                self._remove_tmp_path(self._connection._shell.tmpdir)
        return result

    def _module_name(self):
        """The module this task runs (``hpc.pbs.hook`` as resolved by Ansible)."""
        return getattr(self._task, "resolved_action", None) or self._task.action

    def _schema_refusal(self, module_args, task_vars):
        """Check the config; drop ``config_schema`` from ``module_args`` once checked.

        Returns the failed result (dict) when the config or the schema is refused, None
        when the module may run."""
        data = self._config_data(module_args, task_vars)
        if data is _NOT_JSON:
            return None
        try:
            errors = schema_errors(data, module_args["config_schema"])
        except JsonSchemaError as err:
            return dict(failed=True, changed=False,
                        msg="config_schema: %s (checked on the controller). Nothing was "
                            "changed." % err)
        if errors:
            return dict(failed=True, changed=False, schema_errors=errors,
                        msg=config_refusal_message(errors) + " (checked on the controller)")
        del module_args["config_schema"]
        return None

    def _config_data(self, module_args, task_vars):
        """The config as data (dict, list, ...), or :data:`_NOT_JSON` when it is not JSON
        text or cannot be read here."""
        config = module_args.get("config")
        if config is None and module_args.get("config_src"):
            config = self._slurp(module_args["config_src"], task_vars)
        if isinstance(config, (bytes, str)):
            try:
                return json.loads(config)
            except ValueError:
                return _NOT_JSON
        if config is None:
            return _NOT_JSON
        return config

    def _slurp(self, path, task_vars):
        """Bytes of ``path`` on the managed host; None when it cannot be read."""
        slurped = self._execute_module(module_name="ansible.builtin.slurp",
                                       module_args={"src": path}, task_vars=task_vars)
        if slurped.get("failed") or "content" not in slurped:
            return None
        return base64.b64decode(slurped["content"])


_NOT_JSON = object()
