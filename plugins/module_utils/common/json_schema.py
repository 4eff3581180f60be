# -*- coding: utf-8 -*-
# Copyright: hpc.pbs developers
# Apache License 2.0
"""JSON Schema validation with readable messages: the one place the collection checks data
against a JSON Schema (the ``hpc.pbs.json_schema_errors`` filter, the ``hpc.pbs.hook``
action plugin on the controller, and the ``hpc.pbs.hook`` module where it runs alone).

Needs the Python library ``jsonschema`` where it runs; :func:`schema_errors` raises
:class:`JsonSchemaUnavailable` when it is missing.
"""

import json
from typing import Any, Dict, List, Union

# jsonschema is imported on first use, not with this file: every Ansible worker that loads
# the collection's filters imports this file, and jsonschema costs ~0.2 s of CPU to import.
# None once an import failed (JSONSCHEMA_IMPORT_ERROR says why).
_NOT_IMPORTED = object()
jsonschema = _NOT_IMPORTED
JSONSCHEMA_IMPORT_ERROR = None

COMBINATORS = ("anyOf", "oneOf")


def _jsonschema():
    """The ``jsonschema`` module, imported on the first call; None when it cannot be."""
    global jsonschema, JSONSCHEMA_IMPORT_ERROR  # pylint: disable=global-statement
    if jsonschema is _NOT_IMPORTED:
        try:
            import jsonschema as library  # pylint: disable=import-outside-toplevel,redefined-outer-name
            import jsonschema.validators  # noqa: F401 pylint: disable=import-outside-toplevel
        except ImportError as import_error:
            library, JSONSCHEMA_IMPORT_ERROR = None, import_error
        jsonschema = library
    return jsonschema


class JsonSchemaError(ValueError):
    """Validation could not be done: the schema or the data is unusable (message says why)."""


class JsonSchemaUnavailable(JsonSchemaError):
    """The Python library ``jsonschema`` cannot be imported here."""


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


def _plain(value, what):
    """``value`` after a round trip through JSON (plain dicts, lists, str, numbers).

    Ansible's tagged/lazy containers become plain data, so that type checks and messages
    see what a JSON file would hold. Raises :class:`JsonSchemaError` when it is not JSON."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError) as err:
        raise JsonSchemaError("%s cannot be represented as JSON: %s" % (what, err))


def load_schema(schema: Union[str, Dict[str, Any]]) -> Dict[str, Any]:
    """The schema as a dict: ``schema`` is a dict or its JSON text.

    Raises :class:`JsonSchemaError` when it is not JSON or not a JSON object."""
    if isinstance(schema, bytes):
        schema = schema.decode("utf-8", "replace")
    if isinstance(schema, str):
        try:
            schema = json.loads(schema)
        except ValueError as err:
            raise JsonSchemaError("the schema is not valid JSON: %s" % err)
    if not isinstance(schema, dict):
        raise JsonSchemaError("the schema must be a dict or JSON text, not %s" % type(schema).__name__)
    return schema


def schema_errors(instance: Any, schema: Union[str, Dict[str, Any]]) -> List[str]:
    """Validate ``instance`` against the JSON Schema ``schema``; return readable messages.

    :param instance: JSON-serializable data (dict, list, str, int, float, bool, None).
    :param schema: the schema as a dict, or its JSON text. Its draft comes from its
        ``$schema``; draft 2020-12 when it has none.
    :returns: list of str, ``"<path>: <problem>"`` (path in dotted form: ``increment``,
        ``increment.0``, ``queues[1]``, or ``top level``), sorted by path; ``[]`` when valid.
        Where a value must match one of several alternatives (anyOf/oneOf) the message
        names the problem in the alternative of the value's own type; the property's
        ``description`` is appended in parentheses when the schema has one.
    :raises JsonSchemaUnavailable: ``jsonschema`` cannot be imported.
    :raises JsonSchemaError: the schema is not JSON, not an object or not a valid schema;
        the instance is not JSON-serializable.
    """
    library = _jsonschema()
    if library is None:
        raise JsonSchemaUnavailable("the Python library 'jsonschema' cannot be imported (pip install "
                                    "jsonschema): %s" % JSONSCHEMA_IMPORT_ERROR)
    schema = _plain(load_schema(schema), "the schema")
    instance = _plain(instance, "the data")
    validator_class = library.validators.validator_for(schema, default=library.Draft202012Validator)
    try:
        validator_class.check_schema(schema)
    except library.exceptions.SchemaError as err:
        raise JsonSchemaError("invalid JSON Schema: %s" % err.message)
    errors = sorted(validator_class(schema).iter_errors(instance), key=lambda e: [str(p) for p in e.absolute_path])
    messages = []
    for error in errors:
        for text in _describe(error):
            if text not in messages:
                messages.append(text)
    return messages
