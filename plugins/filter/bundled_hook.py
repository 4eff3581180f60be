# Copyright: hpc.pbs developers
# Apache License 2.0
"""Filter ``hpc.pbs.bundled_hook``: a part of a bundled hook of the collection (files/hooks)."""

from __future__ import annotations

DOCUMENTATION = r"""
name: bundled_hook
short_description: Read the body, default config or JSON Schema of a bundled hook
version_added: 0.1.0
author: hpc.pbs developers
description:
  - Returns one part of the bundled hook named by O(_input), read from the collection's
    C(files/hooks) directory (found from the collection itself, in a checkout and in an
    installed collection alike), without a path relative to a role or playbook.
  - A bundled hook C(<hook>) is C(files/hooks/<hook>.py) (its body), C(<hook>.json) (its
    default config) and C(<hook>.schema.json) (the JSON Schema of its config).
positional: _input, part
options:
  _input:
    description: The name of a bundled hook, V(reliable_job_startup), V(cray_atom) or V(cgroup_resize).
    type: str
    required: true
  part:
    description:
      - V(body) - the text of the hook body, exactly as in the file (no whitespace stripped).
      - V(config) - the default config, parsed (a dict).
      - V(schema) - the JSON Schema of the config, parsed (a dict).
      - V(path) - the absolute path of the hook body on the controller.
    type: str
    default: body
    choices: [body, config, schema, path]
notes:
  - Raises an error (the task fails) naming the bundled hooks when O(_input) is not one of them,
    and for any other O(part).
"""

EXAMPLES = r"""
- name: Install the bundled cray_atom hook with its default config
  hpc.pbs.hook:
    name: cray_atom
    body: "{{ 'cray_atom' | hpc.pbs.bundled_hook }}"
    config: "{{ 'cray_atom' | hpc.pbs.bundled_hook('config') | to_nice_json }}"
"""

RETURN = r"""
_value:
  description: The part asked for (str for body and path, dict for config and schema).
  type: raw
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.hpc.pbs.plugins.plugin_utils.bundled_hooks import (
    BundledHookError, bundled_hook_part, bundled_hook_path)

PARTS = ("body", "config", "schema", "path")


def bundled_hook(hook, part="body"):
    """``part`` (:data:`PARTS`) of the bundled hook ``hook``.

    :raises AnsibleFilterError: not a bundled hook, another part, unreadable file.
    """
    if part not in PARTS:
        raise AnsibleFilterError("hpc.pbs.bundled_hook: part must be one of %s, not %r" % (", ".join(PARTS), part))
    try:
        return bundled_hook_path(hook, "body") if part == "path" else bundled_hook_part(hook, part)
    except BundledHookError as err:
        raise AnsibleFilterError("hpc.pbs.bundled_hook: %s" % err)


class FilterModule:
    """hpc.pbs filter reading a bundled hook."""

    def filters(self):
        return {"bundled_hook": bundled_hook}
