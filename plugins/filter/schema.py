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

import json

from ansible.errors import AnsibleFilterError

try:
    import jsonschema
    from jsonschema.validators import validator_for
except ImportError as import_error:  # reported when the filter is used, not when it is loaded
    jsonschema = None
    JSONSCHEMA_IMPORT_ERROR = import_error
else:
    JSONSCHEMA_IMPORT_ERROR = None

COMBINATORS = ("anyOf", "oneOf")


def _format_path(path):
    """``['increment', '0']`` -> ``increment.0``; ``['queues', 1]`` -> ``queues[1]``."""
    text = ""
    for element in path:
        if isinstance(element, int):
            text += "[%d]" % element
        else:
            text += ("." if text else "") + str(element)
    return text or "top level"


def _is_type_mismatch(error):
    """True when ``error`` only says the value is of another type than a branch wants."""
    if error.validator == "type" and not error.relative_path:
        return True
    if error.validator in COMBINATORS and error.context:
        return all(_is_type_mismatch(child) for child in error.context if not child.relative_path)
    return False


def _branches(error):
    """The errors of ``error.context`` grouped by the alternative (anyOf/oneOf index)."""
    branches = {}
    for child in error.context:
        branches.setdefault(child.relative_schema_path[0], []).append(child)
    return [branches[index] for index in sorted(branches)]


def _leaf_errors(error):
    """The errors that say what is really wrong, descending into anyOf/oneOf.

    An alternative whose only complaint is the value's type is irrelevant when another
    alternative accepts that type; when every alternative rejects the type, the
    combinator error itself is returned."""
    if error.validator not in COMBINATORS or not error.context:
        return [error]
    relevant = [branch for branch in _branches(error) if not any(_is_type_mismatch(e) for e in branch)]
    if not relevant:
        return [error]
    leaves = []
    for branch in relevant:
        for child in branch:
            leaves.extend(_leaf_errors(child))
    return leaves


def _message(error):
    if error.validator == "not":
        return "%r is not allowed here" % (error.instance,)
    if error.validator in COMBINATORS:
        return "%r has the wrong type" % (error.instance,)
    if error.validator == "additionalProperties" and isinstance(error.schema.get("properties"), dict):
        return "%s; allowed keys: %s" % (error.message, ", ".join(sorted(error.schema["properties"])))
    return error.message


def _describe(error):
    description = error.schema.get("description") if error.path and isinstance(error.schema, dict) else None
    suffix = " (%s)" % description if description else ""
    messages = []
    for leaf in _leaf_errors(error):
        text = "%s: %s%s" % (_format_path(leaf.absolute_path), _message(leaf), suffix)
        if text not in messages:
            messages.append(text)
    return messages


def json_schema_errors(instance, schema):
    """Validate ``instance`` against the JSON Schema ``schema``; return readable messages.

    :param instance: JSON-serializable data (dict, list, str, int, float, bool, None).
    :param schema: the schema as a dict, or its JSON text.
    :returns: list of str, ``"<path>: <problem>"``, sorted by path; ``[]`` when valid.
    :raises AnsibleFilterError: jsonschema missing, schema not JSON or not a valid schema,
        instance not JSON-serializable.
    """
    if jsonschema is None:
        raise AnsibleFilterError(
            "hpc.pbs.json_schema_errors needs the Python library 'jsonschema' on the controller "
            "(pip install jsonschema): %s" % JSONSCHEMA_IMPORT_ERROR)
    if isinstance(schema, (str, bytes)):
        try:
            schema = json.loads(schema)
        except ValueError as err:
            raise AnsibleFilterError("hpc.pbs.json_schema_errors: the schema is not valid JSON: %s" % err)
    if not isinstance(schema, dict):
        raise AnsibleFilterError("hpc.pbs.json_schema_errors: the schema must be a dict or JSON text, not %s"
                                 % type(schema).__name__)
    try:
        # A round trip through JSON turns Ansible's tagged/lazy containers into plain data,
        # so that type checks and messages see what a JSON file would hold.
        instance = json.loads(json.dumps(instance))
        schema = json.loads(json.dumps(schema))
    except (TypeError, ValueError) as err:
        raise AnsibleFilterError("hpc.pbs.json_schema_errors: data cannot be represented as JSON: %s" % err)
    validator_class = validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        validator_class.check_schema(schema)
    except jsonschema.exceptions.SchemaError as err:
        raise AnsibleFilterError("hpc.pbs.json_schema_errors: invalid JSON Schema: %s" % err.message)
    errors = sorted(validator_class(schema).iter_errors(instance), key=lambda e: [str(p) for p in e.absolute_path])
    messages = []
    for error in errors:
        for text in _describe(error):
            if text not in messages:
                messages.append(text)
    return messages


class FilterModule(object):
    """hpc.pbs filters for JSON Schema validation."""

    def filters(self):
        return {"json_schema_errors": json_schema_errors}
