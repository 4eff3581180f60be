"""The bundled reliable startup hook parses without the json and re modules (importing them
is most of a fresh pbs_python's cost for the hook): its JSON reading gives what
``json.loads`` gives, value or error, and its exec_vnode chunk scan what the regular
expression gave."""
import json
import random
import re
from pathlib import Path

import pytest

HOOK = Path(__file__).resolve().parents[3] / "files" / "hooks" / "reliable_job_startup.py"
TEXTS = [
    '{"increment": 2, "tolerate": "job_start"}', '  {"a": [1, 2.5, -3e2, true, false, null]}\n',
    '"text"', "12", "-0.5", "[]", "{}", '{"a": NaN, "b": Infinity, "c": -Infinity}', '{"a": "\\u00e9\\n"}',
    '{"increment": 2,}', '{"a": 1} {"b": 2}', "", "   ", "{", '{"a": "tab\there"}', "\ufeff{}", "nul",
    '{"a": 1}x', "[1, 2", '{"a" 1}', "01",
]


@pytest.fixture
def hook(load_hook):
    return load_hook(HOOK)


def outcome(parse, text):
    try:
        return ("value", json.dumps(parse(text), sort_keys=True))
    except ValueError as err:
        return ("error", str(err))


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("scanner", [True, False], ids=["c-scanner", "json-module"])
def test_config_text_parses_as_json_loads_does(hook, monkeypatch, text, scanner):
    if not scanner:
        monkeypatch.setattr(hook, "_make_json_scanner", None)
    assert outcome(hook.parse_json, text) == outcome(json.loads, text)


def test_the_hook_imports_neither_json_nor_re():
    source = HOOK.read_text()
    assert not re.search(r"^(import|from) (json|re)\b", source, re.M)


def test_chunks_of_an_exec_vnode_are_those_of_the_regular_expression(hook):
    pieces = ["(", ")", "+", "mom1", ":ncpus=1", "[0]", "x", ""]
    rng = random.Random(928)
    for _unused in range(5000):
        text = "".join(rng.choice(pieces) for _unused in range(rng.randint(0, 12)))
        assert hook.parenthesized(text) == re.findall(r"\(([^()]*)\)", text), text


@pytest.mark.parametrize("text,whole", [("0", True), ("15", True), ("", False), ("1a", False), ("a1", False),
                                        ("1 2", False), ("-1", False), ("\u0661", False)])
def test_chunk_indexes_are_ascii_digits(hook, text, whole):
    pattern = hook.CONFIG_SCHEMA["properties"]["increment"]["anyOf"][1]["propertyNames"]["pattern"]
    assert hook.schema_pattern_search(pattern, text) is whole


@pytest.mark.parametrize("text,valid", [("pad_select", True), ("a", True), ("A-1_b", True), ("1a", False),
                                        ("_a", False), ("a b", False), ("a$b", False), ("", False)])
def test_resource_names_are_a_letter_then_letters_digits_underscore_or_dash(hook, text, valid):
    pattern = hook.CONFIG_SCHEMA["properties"]["keep_select_resource"]["pattern"]
    assert hook.schema_pattern_search(pattern, text) is valid
