"""JSON Schema checks the other tests leave unchecked: schemas given as bytes or as JSON that is
not an object, an ``additionalProperties`` without ``properties``, a missing required key,
alternatives that share keywords, and a missing ``jsonschema`` library."""
import sys

import pytest

from ansible_collections.hpc.pbs.plugins.module_utils.common import json_schema
from ansible_collections.hpc.pbs.plugins.module_utils.common.json_schema import (
    JsonSchemaError, JsonSchemaUnavailable, load_schema, schema_errors)

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def test_a_schema_may_be_json_bytes():
    assert load_schema(b'{"type": "object"}') == {"type": "object"}
    assert schema_errors({"n": "x"}, b'{"properties": {"n": {"type": "integer"}}}') == [
        "n: 'x' is not of type 'integer'"]


@pytest.mark.parametrize("schema, kind", [("[1]", "list"), (3, "int"), (b'"text"', "str")])
def test_a_schema_that_is_not_an_object_is_refused(schema, kind):
    with pytest.raises(JsonSchemaError) as error:
        load_schema(schema)
    assert str(error.value) == "the schema must be a dict or JSON text, not %s" % kind


def test_additional_properties_without_properties_gives_jsonschemas_message():
    assert schema_errors({"a": 1}, {"additionalProperties": False}) == [
        "top level: Additional properties are not allowed ('a' was unexpected)"]


def test_a_missing_required_key_lists_no_allowed_keys():
    assert schema_errors({}, SCHEMA) == ["top level: 'n' is a required property"]


def test_an_alternative_of_another_type_is_left_out_whole():
    # the string branch fails on its type and its enum: neither is about an integer
    schema = {"anyOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "integer", "minimum": 1}]}
    assert schema_errors(0, schema) == ["top level: 0 is less than the minimum of 1"]


def test_a_missing_jsonschema_library_is_reported_with_the_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    monkeypatch.setattr(json_schema, "jsonschema", json_schema._NOT_IMPORTED)
    monkeypatch.setattr(json_schema, "JSONSCHEMA_IMPORT_ERROR", None)
    with pytest.raises(JsonSchemaUnavailable) as error:
        schema_errors({}, SCHEMA)
    assert str(error.value).startswith("the Python library 'jsonschema' cannot be imported "
                                       "(pip install jsonschema): ")
    assert "jsonschema" in str(json_schema.JSONSCHEMA_IMPORT_ERROR)
    assert isinstance(json_schema.JSONSCHEMA_IMPORT_ERROR, ImportError)
