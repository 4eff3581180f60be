"""libcjson 1.7 as OpenPBS 23.06's commands use it for ``-F json``: what
``cJSON_ParseWithOpts`` makes of an attribute's text (:func:`cjson_parse`,
:func:`json_parsed`, :func:`variable_list_object`) and how ``cJSON_Print`` writes a
document (:func:`cjson_print`). Shared by ``qstat`` and ``pbsnodes``."""
import json
import math
import re
import sys

# The prefix of a number that strtod converts, in the characters cJSON hands it.
_CJSON_NUMBER_RUN = re.compile(r"[0-9+\-eE.]*")
_STRTOD_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_JSON_DECODER = json.JSONDecoder(strict=False)


class NotJson(ValueError):
    """The text is not one whole JSON value (cJSON_ParseWithOpts would return NULL)."""


def _skip_cjson_whitespace(text, index):
    """cJSON skips every character up to and including the space (code points <= 32)."""
    while index < len(text) and ord(text[index]) <= 32:
        index += 1
    return index


def _cjson_number(text, index):
    """``(float, end)`` of the number at ``index``: cJSON copies the run of number
    characters (at most 63) and lets strtod convert what it can of it."""
    run = _CJSON_NUMBER_RUN.match(text, index).group(0)[:63]
    converted = _STRTOD_DECIMAL.match(run)
    if not converted:
        raise NotJson(text)
    return float(converted.group(0)), index + converted.end()


def cjson_parse(text):
    """The value ``cJSON_ParseWithOpts(text, NULL, require_null_terminated=1)`` returns:
    ``None`` for JSON null, bool, ``float`` for every number, str, list or dict. Raises
    :class:`NotJson` when cJSON would return NULL. Strings, arrays and objects are decoded
    with Python's json module (values that start with ``"``, ``[`` or ``{`` are rare in
    job attributes)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    index = _skip_cjson_whitespace(text, 0)
    rest = text[index:]
    for literal, value in (("null", None), ("false", False), ("true", True)):
        if rest.startswith(literal):
            parsed, end = value, index + len(literal)
            break
    else:
        if rest[:1] == "-" or "0" <= rest[:1] <= "9":
            parsed, end = _cjson_number(text, index)
        elif rest[:1] in ('"', "[", "{"):
            try:
                parsed, end = _JSON_DECODER.raw_decode(text, index)
            except ValueError:
                raise NotJson(text)
        else:
            raise NotJson(text)
    if _skip_cjson_whitespace(text, end) != len(text):
        raise NotJson(text)
    return parsed


def json_parsed(text):
    """``pbs_json_insert_parsed``: the JSON value of ``text``, else ``text`` as a string."""
    try:
        return cjson_parse(text)
    except NotJson:
        return text


def variable_list_object(text):
    """``Variable_List`` as qstat's JSON shows it: ``{name: parsed value}``. A piece runs
    to the next comma not escaped by a backslash (``\\,`` becomes ``,``) and splits at its
    first ``=``; a trailing comma starts no piece."""
    out = {}
    index = 0
    while index < len(text):
        piece = []
        while index < len(text) and text[index] != ",":
            if text[index] == "\\" and text[index + 1:index + 2] == ",":
                index += 1
            piece.append(text[index])
            index += 1
        name, _unused, value = "".join(piece).partition("=")
        out[name] = json_parsed(value)
        index += 1
    return out


def cjson_number_text(number):
    """cJSON 1.7.15's print_number: ``null`` for NaN and infinities, else ``%1.15g`` or,
    when that does not read back as the same double, ``%1.17g`` (so ``-0`` stays ``-0``)."""
    if (isinstance(number, float) and math.isnan(number)) or number in (float("inf"), float("-inf")):
        return "null"
    text = "%1.15g" % number
    if abs(float(text) - number) > max(abs(float(text)), abs(number)) * sys.float_info.epsilon:
        text = "%1.17g" % number
    return text


def cjson_print(value, depth=0):
    """``cJSON_Print`` (formatted): objects one member a line, indented with tabs, a tab
    after each ``:``; arrays on one line, ``", "`` between items."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return cjson_number_text(float(value))
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(cjson_print(item, depth + 1) for item in value) + "]"
    members = ["%s%s:\t%s" % ("\t" * (depth + 1), json.dumps(key, ensure_ascii=False),
                              cjson_print(item, depth + 1)) for key, item in value.items()]
    body = "".join(member + (",\n" if index < len(members) - 1 else "\n")
                   for index, member in enumerate(members))
    return "{\n" + body + "\t" * depth + "}"
