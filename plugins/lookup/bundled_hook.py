# Copyright: hpc.pbs developers
# Apache License 2.0
"""Lookup ``hpc.pbs.bundled_hook``: a part of a bundled hook of the collection (files/hooks)."""

from __future__ import annotations

DOCUMENTATION = r"""
name: bundled_hook
short_description: Read the body, default config or JSON Schema of a bundled hook
version_added: 0.1.0
author: hpc.pbs developers
description:
  - Returns, for each bundled hook named in O(_terms), one part of it from the collection's
    C(files/hooks) directory (found from the collection itself, in a checkout and in an
    installed collection alike), without a path relative to a role or playbook.
  - A bundled hook C(<hook>) is C(files/hooks/<hook>.py) (its body), C(<hook>.json) (its
    default config) and C(<hook>.schema.json) (the JSON Schema of its config).
options:
  _terms:
    description: Names of bundled hooks, V(reliable_job_startup), V(cray_atom) or V(cgroup_resize).
    type: list
    elements: str
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
  - Fails naming the bundled hooks when a term is not one of them.
"""

EXAMPLES = r"""
- name: Install the bundled cray_atom hook with its default config
  hpc.pbs.hook:
    name: cray_atom
    body: "{{ lookup('hpc.pbs.bundled_hook', 'cray_atom') }}"
    config: "{{ lookup('hpc.pbs.bundled_hook', 'cray_atom', part='config') | to_nice_json }}"
"""

RETURN = r"""
_raw:
  description: One element per term, the part asked for (str for body and path, dict for config and schema).
  type: list
  elements: raw
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.hpc.pbs.plugins.plugin_utils.bundled_hooks import (
    BundledHookError, bundled_hook_part, bundled_hook_path)

PARTS = ("body", "config", "schema", "path")


class LookupModule(LookupBase):
    """hpc.pbs.bundled_hook lookup."""

    def run(self, terms, variables=None, **kwargs):
        # The options are read here rather than through set_options(), so that the lookup
        # also runs where it is not loaded by Ansible's plugin loader (the unit tests).
        part = kwargs.pop("part", "body")
        if kwargs:
            raise AnsibleLookupError("hpc.pbs.bundled_hook: unknown option(s) %s; the only option is part"
                                     % ", ".join(sorted(kwargs)))
        if part not in PARTS:
            raise AnsibleLookupError("hpc.pbs.bundled_hook: part must be one of %s, not %r" % (", ".join(PARTS), part))
        results = []
        for term in terms:
            try:
                if part == "path":
                    results.append(bundled_hook_path(term, "body"))
                else:
                    results.append(bundled_hook_part(term, part))
            except BundledHookError as err:
                raise AnsibleLookupError("hpc.pbs.bundled_hook: %s" % err)
        return results
