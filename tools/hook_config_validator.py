# The config validator of the bundled hooks (files/hooks/*.py): checks a parsed hook config
# against CONFIG_SCHEMA, the hook's .schema.json, with the standard library only (Python 3.6
# and later; no re module: importing it costs a queuejob hook more than the rest of its body).
# tools/hooks_embed.py copies this text into each hook body between its GENERATED markers;
# edit it here, then run tools/hooks_embed.py --write.
#
# The JSON Schema subset it knows (tools/hooks_embed.py refuses a schema using another keyword):
# type, enum, const, minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength,
# pattern, items, minItems, maxItems, uniqueItems, properties, additionalProperties, required,
# minProperties, maxProperties, propertyNames, anyOf, allOf, not, $ref (#/$defs/<name>); the
# annotations $schema, $id, $defs, $comment, title, description, default, examples and
# x-must-be (the words of the hook's message: "<key> must be <x-must-be>, not <value>", for
# every keyword of that schema but a "not" of named values: "<key> may not be <value>").
# A pattern is searched as Python's re.search does; tools/hooks_embed.py reads each pattern of
# the schema when it writes the block (pattern_compile: the regular expressions it accepts are
# listed there) and writes the result into _SCHEMA_PATTERNS, so the body carries only the
# matcher (schema_pattern_search), not the reader.
#
# What a hook body gets of this text (tools/hooks_embed.py, hook_code): no comment line, and
# of the lines between "#: if <keyword> ..." and its "#: end" (they nest) only those of a
# section naming a keyword the hook's schema uses. Docstrings would be compiled into every
# body: the functions here have comments instead.
_SCHEMA_TYPE_WORDS = {"integer": "an integer", "number": "a number", "string": "a string",
                      "boolean": "true or false", "array": "a list", "object": "a JSON object",
                      "null": "null"}


def _schema_type_fits(value, kind):
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer())
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, {"string": str, "boolean": bool, "array": list, "object": dict,
                              "null": type(None)}[kind])


#: if enum const uniqueItems
def _schema_json_key(value):
    # A key telling JSON values apart as JSON does (true is not 1; 1.0 is 1).
    if isinstance(value, bool) or value is None:
        return (type(value).__name__, value)
    if isinstance(value, (int, float)):
        return ("number", value)
    if isinstance(value, list):
        return ("array", tuple(_schema_json_key(item) for item in value))
    if isinstance(value, dict):
        return ("object", tuple(sorted((key, _schema_json_key(item)) for key, item in value.items())))
    return (type(value).__name__, value)


#: end
#: if pattern
_SCHEMA_PATTERNS = {}  # tools/hooks_embed.py writes the schema's patterns, read, here


# A read pattern (tools/hooks_embed.py, pattern_compile) is a sequence: a flat tuple of
# (node, low, high) triples, the node repeated low to high (None: no bound) times. A node is
# "^", "$", ".", a class: "s" (or "n": not) then the first and last character of each range,
# or a group: a tuple of sequences (its alternatives).
def _pattern_ends(sequence, position, text, start, count):
    # Every end of a match of sequence[position:] at start, the node at position already
    # matched count times, in re's order.
    if position == len(sequence):
        yield start
        return
    node, low, high = sequence[position:position + 3]
    if high is None or count < high:
        for end in _pattern_node_ends(node, text, start):
            if end != start or count < low:
                yield from _pattern_ends(sequence, position, text, end, count + 1)
    if count >= low:
        yield from _pattern_ends(sequence, position + 3, text, start, 0)


def _pattern_node_ends(node, text, start):
    if node.__class__ is tuple:
        for alternative in node:
            yield from _pattern_ends(alternative, 0, text, start, 0)
    elif node == "^":
        if start == 0:
            yield start
    elif node == "$":
        if start == len(text) or (start == len(text) - 1 and text[start] == "\n"):
            yield start
    elif start < len(text):
        char = text[start]
        if node == ".":
            if char != "\n":
                yield start + 1
        elif (node[0] == "n") != any(node[index] <= char <= node[index + 1] for index in range(1, len(node), 2)):
            yield start + 1


def schema_pattern_search(pattern, text):
    # True when pattern (one of the schema's) matches somewhere in text, as re.search would say.
    for start in range(len(text) + 1):
        for _unused in _pattern_ends(_SCHEMA_PATTERNS[pattern], 0, text, start, 0):
            return True
    return False


#: end
def _schema_path(path, key):
    if isinstance(key, int):
        return "%s[%d]" % (path, key)
    return "%s.%s" % (path, key) if path else key


#: if anyOf
def _schema_fits_type(value, schema, root):
    # False when schema (through $ref and anyOf) takes no value of the type of value.
    #: if $ref
    if "$ref" in schema:
        return _schema_fits_type(value, schema_resolve(root, schema["$ref"]), root)
    #: end
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not any(_schema_type_fits(value, kind) for kind in kinds):
            return False
    if "anyOf" in schema:
        return any(_schema_fits_type(value, branch, root) for branch in schema["anyOf"])
    return True


#: end
#: if $ref
def schema_resolve(root, reference):
    if not reference.startswith("#/"):
        raise ValueError("$ref %r: only references into the same schema are supported" % reference)
    schema = root
    for part in reference[2:].split("/"):
        schema = schema[part.replace("~1", "/").replace("~0", "~")]
    return schema


#: end
def schema_problems(value, schema, root=None, path=""):
    # The problems of value against schema, one readable message each: [] when it is valid.
    # path names the value ("": the whole config).
    root = schema if root is None else root
    name = path or "the config"
    shown = repr(value) if path else type(value).__name__

    def must_be(words):
        return ["%s must be %s, not %s" % (name, schema.get("x-must-be", words), shown)]

    #: if $ref
    if "$ref" in schema:
        return schema_problems(value, schema_resolve(root, schema["$ref"]), root, path)
    #: end
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not any(_schema_type_fits(value, kind) for kind in kinds):
            return must_be(" or ".join(_SCHEMA_TYPE_WORDS[kind] for kind in kinds))
    #: if enum
    if "enum" in schema and _schema_json_key(value) not in [_schema_json_key(item) for item in schema["enum"]]:
        return must_be("one of %s" % ", ".join(str(item) for item in schema["enum"]))
    #: end
    #: if const
    if "const" in schema and _schema_json_key(value) != _schema_json_key(schema["const"]):
        return must_be(repr(schema["const"]))
    #: end
    problems = []
    #: if anyOf
    if "anyOf" in schema:
        fitting = [branch for branch in schema["anyOf"] if _schema_fits_type(value, branch, root)]
        if not fitting:
            return must_be(" or ".join(_schema_branch_words(branch, root) for branch in schema["anyOf"]))
        branch_problems = [schema_problems(value, branch, root, path) for branch in fitting]
        if all(branch_problems):
            problems += branch_problems[0]
    #: end
    #: if allOf
    for branch in schema.get("allOf", ()):
        problems += schema_problems(value, branch, root, path)
    #: end
    #: if not
    if "not" in schema and not schema_problems(value, schema["not"], root, path):
        if "x-must-be" in schema and not ("enum" in schema["not"] or "const" in schema["not"]):
            problems += must_be("")
        else:
            problems.append("%s may not be %s" % (name, shown))
    #: end
    #: if minimum exclusiveMinimum maximum exclusiveMaximum
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        #: if minimum
        if "minimum" in schema and value < schema["minimum"]:
            problems += must_be(">= %s" % schema["minimum"])
        #: end
        #: if exclusiveMinimum
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            problems += must_be("> %s" % schema["exclusiveMinimum"])
        #: end
        #: if maximum
        if "maximum" in schema and value > schema["maximum"]:
            problems += must_be("<= %s" % schema["maximum"])
        #: end
        #: if exclusiveMaximum
        if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
            problems += must_be("< %s" % schema["exclusiveMaximum"])
        #: end
    #: end
    #: if minLength maxLength pattern
    if isinstance(value, str):
        #: if minLength
        if len(value) < schema.get("minLength", 0):
            problems += must_be("at least %d character(s) long" % schema["minLength"])
        #: end
        #: if maxLength
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            problems += must_be("at most %d character(s) long" % schema["maxLength"])
        #: end
        #: if pattern
        if "pattern" in schema and not schema_pattern_search(schema["pattern"], value):
            problems += must_be("a string matching %s" % schema["pattern"])
        #: end
    #: end
    #: if minItems maxItems uniqueItems items
    if isinstance(value, list):
        #: if minItems
        if len(value) < schema.get("minItems", 0):
            problems += must_be("a list of at least %d item(s)" % schema["minItems"])
        #: end
        #: if maxItems
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            problems += must_be("a list of at most %d item(s)" % schema["maxItems"])
        #: end
        #: if uniqueItems
        if schema.get("uniqueItems"):
            seen = []
            for item in value:
                if _schema_json_key(item) in seen:
                    problems.append("%s may not repeat %r" % (name, item))
                    break
                seen.append(_schema_json_key(item))
        #: end
        #: if items
        if "items" in schema:
            for index, item in enumerate(value):
                problems += schema_problems(item, schema["items"], root, _schema_path(path, index))
        #: end
    #: end
    #: if properties additionalProperties required minProperties maxProperties propertyNames
    if isinstance(value, dict):
        known = schema.get("properties", {})
        #: if additionalProperties
        extra = schema.get("additionalProperties", True)
        unknown = sorted(key for key in value if key not in known)
        if extra is False and unknown:
            problems.append("%sunknown key(s) %s; known keys: %s"
                            % (path + " has " if path else "", ", ".join(unknown), ", ".join(sorted(known))))
        #: end
        #: if required
        missing = [key for key in schema.get("required", ()) if key not in value]
        if missing:
            problems.append("%s lacks the required key(s) %s" % (name, ", ".join(missing)))
        #: end
        #: if minProperties
        if len(value) < schema.get("minProperties", 0):
            problems += must_be("a map of at least %d key(s)" % schema["minProperties"])
        #: end
        #: if maxProperties
        if "maxProperties" in schema and len(value) > schema["maxProperties"]:
            problems += must_be("a map of at most %d key(s)" % schema["maxProperties"])
        #: end
        #: if propertyNames
        names = schema.get("propertyNames")
        #: end
        for key in sorted(value):
            #: if propertyNames
            if names is not None and schema_problems(key, names, root, "key"):
                problems.append("%s map key %r is not %s" % (
                    name, key, names.get("x-must-be", "a string matching %s" % names.get("pattern"))))
            #: end
            if key in known:
                problems += schema_problems(value[key], known[key], root, _schema_path(path, key))
            #: if additionalProperties
            elif isinstance(extra, dict):
                problems += schema_problems(value[key], extra, root, _schema_path(path, key))
            #: end
    #: end
    return problems


#: if anyOf
def _schema_branch_words(schema, root):
    #: if $ref
    if "$ref" in schema:
        schema = schema_resolve(root, schema["$ref"])
    #: end
    if "x-must-be" in schema:
        return schema["x-must-be"]
    if "anyOf" in schema:
        return " or ".join(_schema_branch_words(branch, root) for branch in schema["anyOf"])
    kinds = schema.get("type", ())
    kinds = [kinds] if isinstance(kinds, str) else kinds
    return " or ".join(_SCHEMA_TYPE_WORDS[kind] for kind in kinds) or "another value"
#: end
