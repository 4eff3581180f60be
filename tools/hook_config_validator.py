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
# A pattern is searched as Python's re.search does, for the regular expressions made of
# ^ $ . literals, escapes of punctuation (\. \/ ...) and \uXXXX, classes [...] [^...], groups (...) (?:...)
# with |, and the quantifiers * + ? {m} {m,} {m,n}.
_SCHEMA_TYPE_WORDS = {"integer": "an integer", "number": "a number", "string": "a string",
                      "boolean": "true or false", "array": "a list", "object": "a JSON object",
                      "null": "null"}
_SCHEMA_PATTERNS = {}


def _schema_type_fits(value, kind):
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer())
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, {"string": str, "boolean": bool, "array": list, "object": dict,
                              "null": type(None)}[kind])


def _schema_json_key(value):
    """A key telling JSON values apart as JSON does (true is not 1; 1.0 is 1)."""
    if isinstance(value, bool) or value is None:
        return (type(value).__name__, value)
    if isinstance(value, (int, float)):
        return ("number", value)
    if isinstance(value, list):
        return ("array", tuple(_schema_json_key(item) for item in value))
    if isinstance(value, dict):
        return ("object", tuple(sorted((key, _schema_json_key(item)) for key, item in value.items())))
    return (type(value).__name__, value)


def _pattern_escape(pattern, index):
    """The set ``(negate, items)`` of the escape at ``pattern[index]`` (after the backslash) and
    the index after it."""
    char = pattern[index]
    if char == "u":
        return (False, [(chr(int(pattern[index + 1:index + 5], 16)),) * 2]), index + 5
    if char.isalnum():
        # \d, \w, \s... are Unicode classes to Python's re and ASCII ones to ECMA-262's
        raise ValueError("pattern %r: escape \\%s is not supported (write a class: [0-9], ...)" % (pattern, char))
    return (False, [(char, char)]), index + 1


def _pattern_parse(pattern, index, depth):
    """``(alternatives, index)``: each alternative a list of ``(node, low, high)``."""
    alternatives, sequence = [], []
    while index < len(pattern):
        char = pattern[index]
        if char == "|":
            alternatives.append(sequence)
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
            node, index = ("group", inner), index + 1
        elif char == "[":
            index += 1
            negate = pattern.startswith("^", index)
            index += negate
            items = []
            while True:
                if index >= len(pattern):
                    raise ValueError("pattern %r: unbalanced [" % pattern)
                if pattern[index] == "]" and items:
                    break
                if pattern[index] == "\\":
                    (_unused, escaped), index = _pattern_escape(pattern, index + 1)
                    items.extend(escaped)
                    continue
                low, index = pattern[index], index + 1
                if pattern.startswith("-", index) and index + 1 < len(pattern) and pattern[index + 1] != "]":
                    high = pattern[index + 1]
                    if high == "\\":
                        (_unused, escaped), index = _pattern_escape(pattern, index + 2)
                        high = escaped[0][0]
                    else:
                        index += 2
                    items.append((low, high))
                else:
                    items.append((low, low))
            node, index = ("set", negate, items), index + 1
        elif char == "\\":
            escaped, index = _pattern_escape(pattern, index + 1)
            node = ("set",) + escaped
        elif char in "^$.":
            node, index = (char,), index + 1
        elif char in "*+?{":
            raise ValueError("pattern %r: nothing to repeat at %d" % (pattern, index))
        else:
            node, index = ("set", False, [(char, char)]), index + 1
        low, high = 1, 1
        if index < len(pattern) and pattern[index] in "*+?":
            low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[pattern[index]]
            index += 1
        elif pattern.startswith("{", index):
            end = pattern.find("}", index)
            bounds = pattern[index + 1:end].split(",") if end > 0 else []
            if not 1 <= len(bounds) <= 2 or not all(bound.isdigit() for bound in bounds if bound) or not bounds[0]:
                raise ValueError("pattern %r: bad repetition at %d" % (pattern, index))
            low = int(bounds[0])
            high = low if len(bounds) == 1 else int(bounds[1]) if bounds[1] else None
            index = end + 1
        if index < len(pattern) and pattern[index] in "*+?{":
            raise ValueError("pattern %r: lazy or nested quantifiers are not supported" % pattern)
        sequence.append((node, low, high))
    alternatives.append(sequence)
    return alternatives, index


def _pattern_ends(sequence, position, text, start):
    """Every end of a match of ``sequence[position:]`` at ``start``, in re's order."""
    if position == len(sequence):
        yield start
        return
    node, low, high = sequence[position]
    yield from _pattern_repeat(sequence, position, node, low, high, text, start, 0)


def _pattern_repeat(sequence, position, node, low, high, text, start, count):
    if high is None or count < high:
        for end in _pattern_node_ends(node, text, start):
            if end == start and count >= low:
                continue
            yield from _pattern_repeat(sequence, position, node, low, high, text, end, count + 1)
    if count >= low:
        yield from _pattern_ends(sequence, position + 1, text, start)


def _pattern_node_ends(node, text, start):
    kind = node[0]
    if kind == "group":
        for alternative in node[1]:
            yield from _pattern_ends(alternative, 0, text, start)
    elif kind == "^":
        if start == 0:
            yield start
    elif kind == "$":
        if start == len(text) or (start == len(text) - 1 and text[start] == "\n"):
            yield start
    elif start < len(text):
        char = text[start]
        if kind == ".":
            if char != "\n":
                yield start + 1
        elif node[1] != any(low <= char <= high for low, high in node[2]):
            yield start + 1


def schema_pattern_search(pattern, text):
    """True when ``pattern`` matches somewhere in ``text``, as ``re.search`` would say."""
    compiled = _SCHEMA_PATTERNS.get(pattern)
    if compiled is None:
        alternatives, index = _pattern_parse(pattern, 0, 0)
        if index != len(pattern):
            raise ValueError("pattern %r: unbalanced )" % pattern)
        compiled = _SCHEMA_PATTERNS[pattern] = [(("group", alternatives), 1, 1)]
    for start in range(len(text) + 1):
        for _unused in _pattern_ends(compiled, 0, text, start):
            return True
    return False


def _schema_path(path, key):
    if isinstance(key, int):
        return "%s[%d]" % (path, key)
    return "%s.%s" % (path, key) if path else key


def _schema_fits_type(value, schema, root):
    """False when ``schema`` (through $ref and anyOf) takes no value of the type of ``value``."""
    if "$ref" in schema:
        return _schema_fits_type(value, schema_resolve(root, schema["$ref"]), root)
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not any(_schema_type_fits(value, kind) for kind in kinds):
            return False
    if "anyOf" in schema:
        return any(_schema_fits_type(value, branch, root) for branch in schema["anyOf"])
    return True


def schema_resolve(root, reference):
    if not reference.startswith("#/"):
        raise ValueError("$ref %r: only references into the same schema are supported" % reference)
    schema = root
    for part in reference[2:].split("/"):
        schema = schema[part.replace("~1", "/").replace("~0", "~")]
    return schema


def schema_problems(value, schema, root=None, path=""):
    """The problems of ``value`` against ``schema``, one readable message each: ``[]`` when it
    is valid. ``path`` names the value (``""``: the whole config)."""
    root = schema if root is None else root
    name = path or "the config"
    shown = repr(value) if path else type(value).__name__

    def must_be(words):
        return ["%s must be %s, not %s" % (name, schema.get("x-must-be", words), shown)]

    if "$ref" in schema:
        return schema_problems(value, schema_resolve(root, schema["$ref"]), root, path)
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not any(_schema_type_fits(value, kind) for kind in kinds):
            return must_be(" or ".join(_SCHEMA_TYPE_WORDS[kind] for kind in kinds))
    if "enum" in schema and _schema_json_key(value) not in [_schema_json_key(item) for item in schema["enum"]]:
        return must_be("one of %s" % ", ".join(str(item) for item in schema["enum"]))
    if "const" in schema and _schema_json_key(value) != _schema_json_key(schema["const"]):
        return must_be(repr(schema["const"]))
    problems = []
    if "anyOf" in schema:
        fitting = [branch for branch in schema["anyOf"] if _schema_fits_type(value, branch, root)]
        if not fitting:
            return must_be(" or ".join(_schema_branch_words(branch, root) for branch in schema["anyOf"]))
        branch_problems = [schema_problems(value, branch, root, path) for branch in fitting]
        if all(branch_problems):
            problems += branch_problems[0]
    for branch in schema.get("allOf", ()):
        problems += schema_problems(value, branch, root, path)
    if "not" in schema and not schema_problems(value, schema["not"], root, path):
        if "x-must-be" in schema and not ("enum" in schema["not"] or "const" in schema["not"]):
            problems += must_be("")
        else:
            problems.append("%s may not be %s" % (name, shown))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        for keyword, sign, bad in (("minimum", ">=", lambda limit: value < limit),
                                   ("exclusiveMinimum", ">", lambda limit: value <= limit),
                                   ("maximum", "<=", lambda limit: value > limit),
                                   ("exclusiveMaximum", "<", lambda limit: value >= limit)):
            if keyword in schema and bad(schema[keyword]):
                problems += must_be("%s %s" % (sign, schema[keyword]))
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            problems += must_be("at least %d character(s) long" % schema["minLength"])
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            problems += must_be("at most %d character(s) long" % schema["maxLength"])
        if "pattern" in schema and not schema_pattern_search(schema["pattern"], value):
            problems += must_be("a string matching %s" % schema["pattern"])
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            problems += must_be("a list of at least %d item(s)" % schema["minItems"])
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            problems += must_be("a list of at most %d item(s)" % schema["maxItems"])
        if schema.get("uniqueItems"):
            seen = []
            for item in value:
                if _schema_json_key(item) in seen:
                    problems.append("%s may not repeat %r" % (name, item))
                    break
                seen.append(_schema_json_key(item))
        if "items" in schema:
            for index, item in enumerate(value):
                problems += schema_problems(item, schema["items"], root, _schema_path(path, index))
    if isinstance(value, dict):
        known = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        unknown = sorted(key for key in value if key not in known)
        if extra is False and unknown:
            problems.append("%sunknown key(s) %s; known keys: %s"
                            % (path + " has " if path else "", ", ".join(unknown), ", ".join(sorted(known))))
        missing = [key for key in schema.get("required", ()) if key not in value]
        if missing:
            problems.append("%s lacks the required key(s) %s" % (name, ", ".join(missing)))
        if len(value) < schema.get("minProperties", 0):
            problems += must_be("a map of at least %d key(s)" % schema["minProperties"])
        if "maxProperties" in schema and len(value) > schema["maxProperties"]:
            problems += must_be("a map of at most %d key(s)" % schema["maxProperties"])
        names = schema.get("propertyNames")
        for key in sorted(value):
            if names is not None and schema_problems(key, names, root, "key"):
                problems.append("%s map key %r is not %s" % (
                    name, key, names.get("x-must-be", "a string matching %s" % names.get("pattern"))))
            if key in known:
                problems += schema_problems(value[key], known[key], root, _schema_path(path, key))
            elif isinstance(extra, dict):
                problems += schema_problems(value[key], extra, root, _schema_path(path, key))
    return problems


def _schema_branch_words(schema, root):
    if "$ref" in schema:
        schema = schema_resolve(root, schema["$ref"])
    if "x-must-be" in schema:
        return schema["x-must-be"]
    if "anyOf" in schema:
        return " or ".join(_schema_branch_words(branch, root) for branch in schema["anyOf"])
    kinds = schema.get("type", ())
    kinds = [kinds] if isinstance(kinds, str) else kinds
    return " or ".join(_SCHEMA_TYPE_WORDS[kind] for kind in kinds) or "another value"
