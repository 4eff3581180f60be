# Copyright: hpc.pbs developers
# Apache License 2.0
"""Filter ``hpc.pbs.bundled_hook_problems``: the problems of a role's settings for a bundled
hook (name, order, alarm, and the config against the hook's own JSON Schema)."""

from __future__ import annotations

DOCUMENTATION = r"""
name: bundled_hook_problems
short_description: Say what is wrong with a role's settings for a bundled hook
version_added: 0.1.0
author: hpc.pbs developers
description:
  - The one validate step of the roles that install a bundled hook (C(reliable_job_startup),
    C(cray_atom), C(cgroup_resize)). Returns one message per problem of O(_input), each naming
    the role's variable (O(prefix) followed by C(_) and the key); an empty list means every
    setting is accepted.
  - V(hook_name), V(hook_order) and V(hook_alarm) follow the rules of the
    C(hpc.pbs.hook_setting_problem) filter (those of M(hpc.pbs.hook)), in the words the roles
    have always used, for example C(cray_atom_hook_order must be 1-1000, not 0).
  - >-
    V(hook_fail_action) follows the rule of O(hpc.pbs.hook#module:fail_action) of M(hpc.pbs.hook) -
    a list of V(none), V(offline_vnodes), V(clear_vnodes_upon_recovery) and V(scheduler_restart_cycle),
    V(none) alone, for example C(cray_atom_hook_fail_action is empty: give [none] or a list of actions, not []).
  - V(config) is the role's config variable (a dict, or null for none). It is merged key by key
    over the hook's default config C(files/hooks/<hook>.json), as the roles install it, and the
    result is checked against C(files/hooks/<hook>.schema.json) with the C(jsonschema) library
    (the messages of the C(hpc.pbs.json_schema_errors) filter), giving one message
    C(<prefix>_config is not a valid config of the <hook> hook (files/hooks/<hook>.schema.json)) followed
    by every problem. An empty or null V(config) is the default config alone, which is not
    checked again (the collection's own tests check each bundled default config against its
    schema), so that a run that leaves the config alone does not import C(jsonschema).
  - The bundled hook files are found in the collection itself (C(files/hooks) beside C(plugins)),
    in a checkout and in an installed collection alike.
positional: _input, hook
options:
  _input:
    description:
      - The settings to check, a dict with any of the keys V(hook_name) (text), V(hook_order)
        (a whole number, site hook order 1-1000), V(hook_alarm) (whole seconds >= 1), V(hook_fail_action) (a list of text)
        and V(config) (a dict or null).
    type: dict
    required: true
  hook:
    description:
      - The bundled hook, the name of its files in C(files/hooks), V(reliable_job_startup),
        V(cray_atom) or V(cgroup_resize).
    type: str
    required: true
  prefix:
    description:
      - The start of the variable names in the messages; the default is O(hook), which is also
        the role's name.
    type: str
notes:
  - Raises an error (the task fails) for an unknown O(hook) or key of O(_input), and when
    C(jsonschema) is missing on the controller while a non-empty V(config) is given.
"""

EXAMPLES = r"""
- name: Check the hook attributes
  ansible.builtin.assert:
    that: __problems | length == 0
    fail_msg: "cray_atom: {{ __problems | join('; ') }}"
  vars:
    __problems: >-
      {{ {'hook_name': cray_atom_hook_name, 'hook_order': cray_atom_hook_order,
          'hook_alarm': cray_atom_hook_alarm} | hpc.pbs.bundled_hook_problems('cray_atom') }}
  # for cray_atom_hook_order 0: "cray_atom: cray_atom_hook_order must be 1-1000, not 0"

- name: Check the hook config against the hook's JSON Schema
  ansible.builtin.assert:
    that: __problems | length == 0
    fail_msg: "{{ __problems | join('; ') }}"
  vars:
    __problems: "{{ {'config': cray_atom_config} | hpc.pbs.bundled_hook_problems('cray_atom') }}"
  # for cray_atom_config {post_timeout: 0}: "cray_atom_config is not a valid config of the cray_atom
  # hook (files/hooks/cray_atom.schema.json): post_timeout: 0 is less than or equal to the minimum of 0 (...)"
"""

RETURN = r"""
_value:
  description: One message per problem, each naming the variable; empty when all are accepted.
  type: list
  elements: str
"""

import json

from ansible.errors import AnsibleFilterError

from ansible_collections.hpc.pbs.plugins.filter.hook_setting_problem import hook_setting_problem
from ansible_collections.hpc.pbs.plugins.module_utils.common.json_schema import JsonSchemaError, schema_errors
from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hooks import fail_action_problem
from ansible_collections.hpc.pbs.plugins.plugin_utils.bundled_hooks import BundledHookError, bundled_hook_part

KEYS = ("hook_name", "hook_order", "hook_alarm", "hook_fail_action", "config")


def _shown(value):
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def bundled_hook_problems(settings, hook, prefix=None):
    """The problems of ``settings`` (keys :data:`KEYS`) for the bundled hook ``hook``.

    :returns: list of str, each naming ``<prefix>_<key>``; ``[]`` when all are accepted.
    :raises AnsibleFilterError: unknown hook or key, jsonschema missing, unreadable hook files.
    """
    prefix = prefix or hook
    if not isinstance(settings, dict):
        raise AnsibleFilterError("hpc.pbs.bundled_hook_problems: the input must be a dict of %s, not %s"
                                 % (", ".join(KEYS), type(settings).__name__))
    unknown = sorted(set(settings) - set(KEYS))
    if unknown:
        raise AnsibleFilterError("hpc.pbs.bundled_hook_problems: unknown key(s) %s; known keys: %s"
                                 % (", ".join(unknown), ", ".join(KEYS)))
    problems = []
    if "hook_name" in settings:
        problem = hook_setting_problem(settings["hook_name"], "name")
        if problem:
            problems.append("%s_hook_name %s: %s" % (prefix, _shown(settings["hook_name"]), problem))
    for key, setting in (("hook_order", "order"), ("hook_alarm", "alarm")):
        if key in settings:
            problem = hook_setting_problem(settings[key], setting)
            if problem:
                problems.append("%s_%s %s, not %s" % (prefix, key, problem, _shown(settings[key])))
    if "hook_fail_action" in settings:
        problem = fail_action_problem(settings["hook_fail_action"])
        if problem:
            problems.append("%s_hook_%s, not %s" % (prefix, problem, _shown(settings["hook_fail_action"])))
    if "config" in settings:
        try:
            defaults = bundled_hook_part(hook, "config")
            schema = bundled_hook_part(hook, "schema")
        except BundledHookError as err:
            raise AnsibleFilterError("hpc.pbs.bundled_hook_problems: %s" % err)
        config = settings["config"]
        if config is not None and not isinstance(config, dict):
            problems.append("%s_config must be a dict of the %s hook's config keys, not %s"
                            % (prefix, hook, _shown(config)))
        elif config:
            # An empty config is the default config alone, which the collection's tests check
            # against the schema: importing jsonschema for it would cost every run ~50 ms.
            merged = dict(defaults)
            merged.update(config)
            try:
                errors = schema_errors(merged, schema)
            except JsonSchemaError as err:
                raise AnsibleFilterError("hpc.pbs.bundled_hook_problems needs jsonschema on the controller: %s" % err)
            if errors:
                problems.append("%s_config is not a valid config of the %s hook (files/hooks/%s.schema.json): %s"
                                % (prefix, hook, hook, "; ".join(errors)))
    return problems


class FilterModule:
    """hpc.pbs filter for the settings of a bundled hook."""

    def filters(self):
        return {"bundled_hook_problems": bundled_hook_problems}
