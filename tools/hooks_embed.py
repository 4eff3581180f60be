#!/usr/bin/env python3
"""Write or check the generated block of each bundled hook body (files/hooks/<hook>.py).

A bundled hook is one folder's worth of files: ``files/hooks/<hook>.py`` (the body PBS runs),
``<hook>.json`` (its default config) and ``<hook>.schema.json`` (the rules of its config).
A PBS hook is a single file run without the collection, so the body carries what it needs of
the other two between the lines ``# BEGIN GENERATED SCHEMA`` and ``# END GENERATED SCHEMA``:

- ``CONFIG_SCHEMA``: the schema without its annotations (description, title, ...);
- ``DEFAULT_CONFIG``: the schema's property ``default`` values overlaid with ``<hook>.json``;
- the validator of tools/hook_config_validator.py (``schema_problems(config, CONFIG_SCHEMA)``).

Usage: ``tools/hooks_embed.py --check`` (exit 1 naming every stale body) or ``--write``.
Every body in files/hooks that has both a .json and a .schema.json takes part. A schema
that uses a keyword the validator does not know, a pattern it cannot read or a default
config key the schema does not name is refused (exit 2): nothing is written.
"""
import argparse
import ast
import importlib.util
import json
import os
import sys

TOOLS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TOOLS)
HOOKS_DIR = os.path.join(REPO, "files", "hooks")
VALIDATOR = os.path.join(TOOLS, "hook_config_validator.py")
BEGIN = "# BEGIN GENERATED SCHEMA"
END = "# END GENERATED SCHEMA"
# Keywords the validator checks, and annotations it ignores (dropped from CONFIG_SCHEMA but
# x-must-be, which the messages use).
CHECKED = {"type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
           "minLength", "maxLength", "pattern", "items", "minItems", "maxItems", "uniqueItems",
           "properties", "additionalProperties", "required", "minProperties", "maxProperties",
           "propertyNames", "anyOf", "allOf", "not", "$ref", "$defs", "x-must-be"}
ANNOTATIONS = {"$schema", "$id", "$comment", "title", "description", "default", "examples"}
# Keywords whose value is a schema / a list of schemas / a map of schemas.
ONE_SCHEMA = ("items", "propertyNames", "not", "additionalProperties")
SCHEMA_LIST = ("anyOf", "allOf")
SCHEMA_MAP = ("properties", "$defs")


class EmbedError(ValueError):
    """A schema or default config the generated block cannot be made from."""


def load_validator():
    """tools/hook_config_validator.py as a module (the same text the bodies get)."""
    spec = importlib.util.spec_from_file_location("hook_config_validator", VALIDATOR)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def validator_code():
    """The validator's text without its leading comment (the block's own header says where it
    comes from)."""
    with open(VALIDATOR, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    while lines and (lines[0].startswith("#") or not lines[0].strip()):
        lines.pop(0)
    return "\n".join(lines).rstrip() + "\n"


def hooks():
    """The names of the bundled hooks: ``<name>.py`` with ``<name>.json`` and ``<name>.schema.json``."""
    names = []
    for entry in sorted(os.listdir(HOOKS_DIR)):
        name = entry[:-3]
        if entry.endswith(".py") and all(os.path.isfile(os.path.join(HOOKS_DIR, name + ext))
                                         for ext in (".json", ".schema.json")):
            names.append(name)
    return names


def read_json(path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def stripped(schema, where, patterns):
    """``schema`` without annotations; raises EmbedError on a keyword the validator lacks.
    Collects every pattern into ``patterns``."""
    if isinstance(schema, bool):
        return schema
    if not isinstance(schema, dict):
        raise EmbedError("%s: a schema must be an object or a boolean" % where)
    unknown = sorted(set(schema) - CHECKED - ANNOTATIONS)
    if unknown:
        raise EmbedError("%s: keyword(s) %s are not known to tools/hook_config_validator.py"
                         % (where, ", ".join(unknown)))
    result = {}
    for key, value in schema.items():
        if key in ANNOTATIONS:
            continue
        if key in ONE_SCHEMA:
            value = stripped(value, "%s/%s" % (where, key), patterns)
        elif key in SCHEMA_LIST:
            value = [stripped(item, "%s/%s/%d" % (where, key, index), patterns) for index, item in enumerate(value)]
        elif key in SCHEMA_MAP:
            value = dict((name, stripped(item, "%s/%s/%s" % (where, key, name), patterns))
                         for name, item in value.items())
        elif key == "pattern":
            patterns.append(value)
        elif key == "$ref" and not value.startswith("#/$defs/"):
            raise EmbedError("%s: $ref %r must point into the schema's own $defs" % (where, value))
        result[key] = value
    return result


def default_config(name, schema):
    """The schema's property defaults overlaid with ``<name>.json``."""
    path = os.path.join(HOOKS_DIR, name + ".json")
    config = read_json(path)
    properties = schema.get("properties", {})
    if not isinstance(config, dict):
        raise EmbedError("%s must hold a JSON object" % path)
    unknown = sorted(set(config) - set(properties))
    if unknown:
        raise EmbedError("%s: key(s) %s are not in %s.schema.json" % (path, ", ".join(unknown), name))
    defaults = dict((key, prop["default"]) for key, prop in properties.items()
                    if isinstance(prop, dict) and "default" in prop)
    defaults.update(config)
    return defaults


def literal(value, indent=0):
    """``value`` (JSON data) as a Python literal, a dict or list of several items one item a
    line with hanging indents (PEP 8 clean), keys in the order of the file."""
    inner = " " * (indent + 4)
    if isinstance(value, dict) and value:
        items = ["%s%r: %s" % (inner, key, literal(item, indent + 4)) for key, item in value.items()]
        return "{\n" + ",\n".join(items) + ",\n" + " " * indent + "}"
    if isinstance(value, list) and value:
        flat = repr(value)
        if len(flat) + indent < 80 and not any(isinstance(item, (dict, list)) for item in value):
            return flat
        return "[\n" + ",\n".join(inner + literal(item, indent + 4) for item in value) + ",\n" + " " * indent + "]"
    return repr(value)


def assignment(name, value):
    """``<name> = <literal>``; raises EmbedError unless the literal reads back as ``value``."""
    text = literal(value)
    if ast.literal_eval(text) != value:
        raise EmbedError("%s cannot be written as a Python literal" % name)
    return "%s = %s\n" % (name, text)


def block(name, validator=None):
    """The generated block of hook ``name``, from its BEGIN line to its END line included."""
    validator = validator or load_validator()
    schema = read_json(os.path.join(HOOKS_DIR, name + ".schema.json"))
    patterns = []
    config_schema = stripped(schema, "%s.schema.json" % name, patterns)
    for pattern in patterns:
        try:
            validator.schema_pattern_search(pattern, "")
        except ValueError as err:
            raise EmbedError("%s.schema.json: %s" % (name, err))
    defaults = default_config(name, schema)
    problems = validator.schema_problems(defaults, config_schema)
    if problems:
        raise EmbedError("%s.json breaks %s.schema.json: %s" % (name, name, "; ".join(problems)))
    return "".join([
        BEGIN, ": written by tools/hooks_embed.py --write from %s.schema.json,\n" % name,
        "# %s.json and tools/hook_config_validator.py. Edit those and run it again, not this block.\n" % name,
        assignment("CONFIG_SCHEMA", config_schema),
        assignment("DEFAULT_CONFIG", defaults),
        "\n\n", validator_code(), END, "\n"])


def current_block(text):
    """``(start, end)`` offsets of the generated block in a body's ``text``; raises EmbedError
    unless there is exactly one."""
    start = text.find("\n" + BEGIN)
    end = text.find("\n" + END + "\n")
    if start < 0 or end < start or text.count(BEGIN) != 1 or text.count(END) != 1:
        raise EmbedError("the body needs one line beginning %r and, after it, one %r" % (BEGIN, END))
    return start + 1, end + len(END) + 2


def body_path(name):
    return os.path.join(HOOKS_DIR, name + ".py")


def stale(name, validator=None):
    """``(text now, text it should be)`` of hook ``name``'s body."""
    with open(body_path(name), encoding="utf-8") as handle:
        text = handle.read()
    start, end = current_block(text)
    return text, text[:start] + block(name, validator) + text[end:]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="exit 1 when a body's block is stale")
    mode.add_argument("--write", action="store_true", help="rewrite the stale blocks")
    args = parser.parse_args(argv)
    validator = load_validator()
    try:
        results = [(name,) + stale(name, validator) for name in hooks()]
    except (EmbedError, ValueError, OSError) as err:
        print("hooks_embed: %s" % err, file=sys.stderr)
        return 2
    out_of_date = [(name, wanted) for name, text, wanted in results if text != wanted]
    for name, wanted in out_of_date:
        if args.write:
            with open(body_path(name), "w", encoding="utf-8") as handle:
                handle.write(wanted)
            print("wrote files/hooks/%s.py" % name)
        else:
            print("files/hooks/%s.py: the generated block is stale; run tools/hooks_embed.py --write" % name)
    return 1 if out_of_date and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
