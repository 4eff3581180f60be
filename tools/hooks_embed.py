#!/usr/bin/env python
"""Write or check the generated block of each bundled hook body (files/hooks/<hook>.py).

A bundled hook is one folder's worth of files: ``files/hooks/<hook>.py`` (the body PBS runs),
``<hook>.json`` (its default config) and ``<hook>.schema.json`` (the rules of its config).
A PBS hook is a single file run without the collection, so the body carries what it needs of
the other two between the lines ``# BEGIN GENERATED SCHEMA`` and ``# END GENERATED SCHEMA``:

- ``CONFIG_SCHEMA``: the schema without its annotations (description, title, ...), each
  ``$ref`` without other keywords replaced by the schema it names;
- ``DEFAULT_CONFIG``: the schema's property ``default`` values overlaid with ``<hook>.json``;
- ``_SCHEMA_PATTERNS``: every ``pattern`` of the schema, read here (``pattern_compile``) into
  the tuples the body's matcher walks, so that the body does not carry (and compile on every
  event) a pattern reader;
- the validator of tools/hook_config_validator.py (``schema_problems(config, CONFIG_SCHEMA)``),
  without its comments and with only the sections (``#: if <keyword> ...`` .. ``#: end``) of
  the keywords the hook's schema uses: pbs_python compiles the whole body on every event.

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
import re
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
# A line of tools/hook_config_validator.py opening a section kept only for a schema using one
# of the keywords it names, and the line closing it.
SECTION_IF = re.compile(r"^ *#: if ([^ ].*)$")
SECTION_END = re.compile(r"^ *#: end$")


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


def hook_code(keywords, code=None):
    """The validator's text as a body gets it: no comment line, no section of keywords the
    schema does not use (``keywords``), no run of more than two blank lines."""
    kept, stack, out, blanks = True, [], [], 0
    for number, line in enumerate((code or validator_code()).splitlines(), 1):
        opening, closing = SECTION_IF.match(line), SECTION_END.match(line)
        if opening:
            stack.append(kept)
            kept = kept and bool(keywords & set(opening.group(1).split()))
            continue
        if closing:
            if not stack:
                raise EmbedError("tools/hook_config_validator.py line %d: '#: end' without '#: if'" % number)
            kept = stack.pop()
            continue
        if not kept or line.lstrip().startswith("#"):
            continue
        blanks = blanks + 1 if not line.strip() else 0
        if blanks <= 2:
            out.append(line)
    if stack:
        raise EmbedError("tools/hook_config_validator.py: a '#: if' section is not closed")
    return "\n".join(out).strip("\n") + "\n"


# The patterns a hook body can search (hook_config_validator.py, schema_pattern_search), as re.search
# does: the regular expressions made of ^ $ . literals, escapes of punctuation (\. \/ ...) and
# \uXXXX, classes [...] [^...], groups (...) (?:...) with |, and the quantifiers * + ? {m} {m,}
# {m,n}. pattern_compile reads one into the tuples the matcher walks.
def _pattern_escape(pattern, index):
    """The range of the escape at ``pattern[index]`` (after the backslash: its character twice)
    and the index after it."""
    char = pattern[index]
    if char == "u":
        return chr(int(pattern[index + 1:index + 5], 16)) * 2, index + 5
    if char.isalnum():
        # \d, \w, \s... are Unicode classes to Python's re and ASCII ones to ECMA-262's
        raise ValueError("pattern %r: escape \\%s is not supported (write a class: [0-9], ...)" % (pattern, char))
    return char * 2, index + 1


def _pattern_class(pattern, index):
    """The node of the class opening at ``pattern[index]`` (after the ``[``), the index after it."""
    negate = pattern.startswith("^", index)
    index += negate
    items = ""
    while True:
        if index >= len(pattern):
            raise ValueError("pattern %r: unbalanced [" % pattern)
        if pattern[index] == "]" and items:
            break
        if pattern[index] == "\\":
            escaped, index = _pattern_escape(pattern, index + 1)
            items += escaped
            continue
        low, index = pattern[index], index + 1
        if pattern.startswith("-", index) and index + 1 < len(pattern) and pattern[index + 1] != "]":
            high = pattern[index + 1]
            if high == "\\":
                escaped, index = _pattern_escape(pattern, index + 2)
                high = escaped[0]
            else:
                index += 2
            items += low + high
        else:
            items += low * 2
    return ("n" if negate else "s") + items, index + 1


def _pattern_bounds(pattern, index):
    """``(low, high, index after)`` of the quantifier at ``pattern[index]``, (1, 1) for none."""
    if index < len(pattern) and pattern[index] in "*+?":
        return {"*": (0, None), "+": (1, None), "?": (0, 1)}[pattern[index]] + (index + 1,)
    if pattern.startswith("{", index):
        end = pattern.find("}", index)
        bounds = pattern[index + 1:end].split(",") if end > 0 else []
        if not 1 <= len(bounds) <= 2 or not all(bound.isdigit() for bound in bounds if bound) or not bounds[0]:
            raise ValueError("pattern %r: bad repetition at %d" % (pattern, index))
        low = int(bounds[0])
        return low, low if len(bounds) == 1 else int(bounds[1]) if bounds[1] else None, end + 1
    return 1, 1, index


def _pattern_parse(pattern, index, depth):
    """``(alternatives, index)``: each alternative a flat tuple of ``node, low, high`` triples."""
    alternatives, sequence = [], []
    while index < len(pattern):
        char = pattern[index]
        if char == "|":
            alternatives.append(tuple(sequence))
            sequence, index = [], index + 1
            continue
        if char == ")":
            if not depth:
                raise ValueError("pattern %r: unbalanced )" % pattern)
            break
        if char == "(":
            start = index + 3 if pattern.startswith("(?:", index) else index + 1
            if pattern.startswith("(?", index) and start == index + 1:
                raise ValueError("pattern %r: only (...) and (?:...) groups are supported" % pattern)
            inner, index = _pattern_parse(pattern, start, depth + 1)
            if index >= len(pattern):
                raise ValueError("pattern %r: unbalanced (" % pattern)
            node, index = inner, index + 1
        elif char == "[":
            node, index = _pattern_class(pattern, index + 1)
        elif char == "\\":
            escaped, index = _pattern_escape(pattern, index + 1)
            node = "s" + escaped
        elif char in "^$.":
            node, index = char, index + 1
        elif char in "*+?{":
            raise ValueError("pattern %r: nothing to repeat at %d" % (pattern, index))
        else:
            node, index = "s" + char * 2, index + 1
        low, high, index = _pattern_bounds(pattern, index)
        if index < len(pattern) and pattern[index] in "*+?{":
            raise ValueError("pattern %r: lazy or nested quantifiers are not supported" % pattern)
        sequence.extend((node, low, high))
    alternatives.append(tuple(sequence))
    return tuple(alternatives), index


def pattern_compile(pattern):
    """``pattern`` read into what hook_config_validator.py's ``schema_pattern_search`` walks (a
    sequence of one group, see the comment there); raises ValueError naming a pattern it
    cannot read."""
    alternatives, index = _pattern_parse(pattern, 0, 0)
    if index != len(pattern):
        raise ValueError("pattern %r: unbalanced )" % pattern)
    return (alternatives, 1, 1)


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


def stripped(schema, where, patterns, keywords=None):
    """``schema`` without annotations; raises EmbedError on a keyword the validator lacks.
    Collects every pattern into ``patterns`` and every keyword the schema uses into the set
    ``keywords``."""
    keywords = set() if keywords is None else keywords
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
        keywords.add(key)
        if key in ONE_SCHEMA:
            value = stripped(value, "%s/%s" % (where, key), patterns, keywords)
        elif key in SCHEMA_LIST:
            value = [stripped(item, "%s/%s/%d" % (where, key, index), patterns, keywords)
                     for index, item in enumerate(value)]
        elif key in SCHEMA_MAP:
            value = dict((name, stripped(item, "%s/%s/%s" % (where, key, name), patterns, keywords))
                         for name, item in value.items())
        elif key == "pattern":
            patterns.append(value)
        elif key == "$ref" and not value.startswith("#/$defs/"):
            raise EmbedError("%s: $ref %r must point into the schema's own $defs" % (where, value))
        result[key] = value
    return result


def inlined(schema, root):
    """``schema`` (stripped) with each ``{"$ref": ...}`` that has no other keyword replaced by
    the schema it points at, and without ``$defs`` when nothing refers to it any more: the
    same checks and messages, and a body without the code that resolves references."""
    def inline(node, through):
        if isinstance(node, list):
            return [inline(item, through) for item in node]
        if not isinstance(node, dict):
            return node
        if set(node) == {"$ref"} and node["$ref"] not in through:  # a recursive one stays
            target = root
            for part in node["$ref"][2:].split("/"):
                target = target[part.replace("~1", "/").replace("~0", "~")]
            return inline(target, through + (node["$ref"],))
        return dict((key, value if key in ("enum", "const") else inline(value, through))
                    for key, value in node.items())

    result = inline(schema, ())
    if isinstance(result, dict) and "$ref" not in json.dumps(dict(result, **{"$defs": None})):
        result.pop("$defs", None)
    return result


def keywords_of(schema):
    """Every keyword (not property name) of the stripped ``schema``."""
    found = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            found.add(key)
            if key in ONE_SCHEMA:
                found |= keywords_of(value)
            elif key in SCHEMA_LIST:
                for item in value:
                    found |= keywords_of(item)
            elif key in SCHEMA_MAP:
                for item in value.values():
                    found |= keywords_of(item)
    return found


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
    if isinstance(value, (list, tuple)) and value:
        flat = repr(value)
        if isinstance(value, tuple) and len(flat) + indent < 140 or len(flat) + indent < 80 and not any(
                isinstance(item, (dict, list)) for item in value):
            return flat
        left, right = "()" if isinstance(value, tuple) else "[]"
        return left + "\n" + ",\n".join(inner + literal(item, indent + 4) for item in value) + ",\n" \
            + " " * indent + right
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
    config_schema = inlined(config_schema, config_schema)
    keywords = keywords_of(config_schema)
    compiled = {}
    for pattern in patterns:
        try:
            compiled[pattern] = pattern_compile(pattern)
        except ValueError as err:
            raise EmbedError("%s.schema.json: %s" % (name, err))
    validator._SCHEMA_PATTERNS.update(compiled)  # pylint: disable=protected-access
    defaults = default_config(name, schema)
    problems = validator.schema_problems(defaults, config_schema)
    if problems:
        raise EmbedError("%s.json breaks %s.schema.json: %s" % (name, name, "; ".join(problems)))
    code = hook_code(keywords)
    marker = "_SCHEMA_PATTERNS = {}"
    if compiled:
        lines = code.split("\n")
        at = [index for index, line in enumerate(lines) if line.startswith(marker)]
        if len(at) != 1:
            raise EmbedError("tools/hook_config_validator.py needs one line %r in its pattern section" % marker)
        lines[at[0]] = assignment("_SCHEMA_PATTERNS", dict(sorted(compiled.items()))).rstrip("\n")
        code = "\n".join(lines)
    return "".join([
        BEGIN, ": written by tools/hooks_embed.py --write from %s.schema.json,\n" % name,
        "# %s.json and tools/hook_config_validator.py. Edit those and run it again, not this block.\n" % name,
        assignment("CONFIG_SCHEMA", config_schema),
        assignment("DEFAULT_CONFIG", defaults),
        "\n\n", code, END, "\n"])


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
