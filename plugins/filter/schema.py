# Copyright: hpc.pbs developers
# Apache License 2.0
"""Filter ``hpc.pbs.json_schema_errors``: validate data against a JSON Schema on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
name: json_schema_errors
short_description: Validate data against a JSON Schema and return readable error messages
version_added: 0.1.0
author: hpc.pbs developers
description:
  - Validates O(_input) against a JSON Schema (any draft the C(jsonschema) library knows, chosen
    from the schema's C($schema); draft 2020-12 when it has none) and returns one readable
    message per problem, sorted by where the problem is. An empty list means the data is valid.
  - Used by the roles of this collection to check a hook config against the bundled
    C(files/hooks/<hook>.schema.json) before anything is changed on a host.
  - >-
    Each message reads C(<path>: <problem>), where C(<path>) is the key path in dotted form
    (V(increment), V(increment.0), V(queues[1])) or V(top level). Where a value must match one
    of several alternatives (C(anyOf)/C(oneOf)), the message names the problem in the
    alternative of the value's own type (for V(-1) the C(minimum), for V(abc%) the C(pattern))
    rather than "not valid under any of the given schemas"; the C(description) of the property
    is appended in parentheses when the schema has one.
  - Runs on the controller and needs the Python library C(jsonschema) there.
positional: _input, schema
options:
  _input:
    description: The data to validate, for example a hook config dict. It must be JSON-serializable.
    type: raw
    required: true
  schema:
    description:
      - The JSON Schema, as a dict or as JSON text (for example from C(lookup('file', ...))).
    type: raw
    required: true
notes:
  - Raises an error (the task fails) when C(jsonschema) is missing, when O(schema) is not valid
    JSON or not a valid schema, or when O(_input) cannot be represented as JSON.
"""

EXAMPLES = r"""
- name: Fail with the schema's messages when the hook config is invalid
  ansible.builtin.assert:
    that: config_errors | length == 0
    fail_msg: "{{ config_errors | join('; ') }}"
  vars:
    config_errors: >-
      {{ {'increment': 'abc%'} | hpc.pbs.json_schema_errors(lookup('ansible.builtin.file',
         'reliable_job_startup.schema.json')) }}
  # config_errors == ["increment: 'abc%' does not match '^0*[1-9][0-9]*%?$' (chunks added ...)"]
"""

RETURN = r"""
_value:
  description: One readable message per validation error; empty when the data is valid.
  type: list
  elements: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.hpc.pbs.plugins.module_utils.common.json_schema import (
    JsonSchemaError, JsonSchemaUnavailable, schema_errors)


def json_schema_errors(instance, schema):
    """Validate ``instance`` against the JSON Schema ``schema``; return readable messages.

    The validation is :func:`ansible_collections.hpc.pbs.plugins.module_utils.common.json_schema.
    schema_errors`, the one the ``hpc.pbs.hook`` action plugin uses.

    :param instance: JSON-serializable data (dict, list, str, int, float, bool, None).
    :param schema: the schema as a dict, or its JSON text.
    :returns: list of str, ``"<path>: <problem>"``, sorted by path; ``[]`` when valid.
    :raises AnsibleFilterError: jsonschema missing, schema not JSON or not a valid schema,
        instance not JSON-serializable.
    """
    try:
        return schema_errors(instance, schema)
    except JsonSchemaUnavailable as err:
        raise AnsibleFilterError("hpc.pbs.json_schema_errors needs jsonschema on the controller: %s" % err)
    except JsonSchemaError as err:
        raise AnsibleFilterError("hpc.pbs.json_schema_errors: %s" % err)


class FilterModule:
    """hpc.pbs filters for JSON Schema validation."""

    def filters(self):
        return {"json_schema_errors": json_schema_errors}
