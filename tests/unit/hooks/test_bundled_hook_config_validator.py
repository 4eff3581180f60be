"""Each bundled hook checks its config against its own .schema.json and takes its defaults
from its .json: the block between ``# BEGIN GENERATED SCHEMA`` and ``# END GENERATED SCHEMA``
in the body is what tools/hooks_embed.py writes from them (and from
tools/hook_config_validator.py), and its validator says what jsonschema says."""
import importlib.util
import itertools
import json
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

REPO = Path(__file__).resolve().parents[3]
HOOKS_DIR = REPO / "files" / "hooks"
# Every bundled hook: a body with a default config and a schema beside it (a new one takes
# part in every test here without being named).
HOOKS = tuple(sorted(path.name[:-len(".schema.json")] for path in HOOKS_DIR.glob("*.schema.json")
                     if (HOOKS_DIR / path.name.replace(".schema.json", ".py")).is_file()))


def load_tool():
    spec = importlib.util.spec_from_file_location("hooks_embed_under_test", str(REPO / "tools" / "hooks_embed.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def tool():
    return load_tool()


def schema_of(name):
    return json.loads((HOOKS_DIR / (name + ".schema.json")).read_text())


def patterns_in(schema):
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "pattern":
                yield value
            else:
                yield from patterns_in(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from patterns_in(item)


def test_the_tool_finds_every_bundled_hook(tool):
    assert tool.hooks() == list(HOOKS)
    assert {"reliable_job_startup", "cray_atom", "cgroup_resize"} <= set(HOOKS)


@pytest.mark.parametrize("name", HOOKS)
def test_the_generated_block_of_each_body_is_current(tool, name):
    text, wanted = tool.stale(name)
    assert text == wanted, "files/hooks/%s.py is stale: run tools/hooks_embed.py --write" % name


def test_check_names_a_stale_body_and_write_mends_it(tool, tmp_path, monkeypatch, capsys):
    copy = tmp_path / "hooks"
    shutil.copytree(str(HOOKS_DIR), str(copy))
    monkeypatch.setattr(tool, "HOOKS_DIR", str(copy))
    assert tool.main(["--check"]) == 0
    defaults = json.loads((copy / "cray_atom.json").read_text())
    (copy / "cray_atom.json").write_text(json.dumps(dict(defaults, post_timeout=45)))
    assert tool.main(["--check"]) == 1
    assert "files/hooks/cray_atom.py: the generated block is stale" in capsys.readouterr().out
    assert tool.main(["--write"]) == 0
    assert tool.main(["--check"]) == 0
    assert "'post_timeout': 45" in (copy / "cray_atom.py").read_text()


@pytest.mark.parametrize("change, problem", [
    (lambda schema: schema["properties"]["post_timeout"].update(format="duration"),
     "cray_atom.schema.json/properties/post_timeout: keyword(s) format are not known"),
    (lambda schema: schema["properties"]["unix_socket_file"].update(pattern="^/(?=x)"),
     "only (...) and (?:...) groups are supported"),
    (lambda schema: schema["properties"].pop("require_socket") and schema["properties"].pop("post_timeout"),
     "cray_atom.json: key(s) post_timeout are not in cray_atom.schema.json"),
    (lambda schema: schema["properties"]["delete_timeout"].update(exclusiveMinimum=60),
     "cray_atom.json breaks cray_atom.schema.json: delete_timeout must be a number of seconds > 0, not 30"),
], ids=["unknown-keyword", "unsupported-pattern", "default-not-in-schema", "default-breaks-schema"])
def test_a_schema_the_block_cannot_be_made_from_is_refused_and_nothing_written(tool, tmp_path, monkeypatch, capsys,
                                                                               change, problem):
    copy = tmp_path / "hooks"
    shutil.copytree(str(HOOKS_DIR), str(copy))
    monkeypatch.setattr(tool, "HOOKS_DIR", str(copy))
    schema = schema_of("cray_atom")
    change(schema)
    (copy / "cray_atom.schema.json").write_text(json.dumps(schema))
    before = dict((path.name, path.read_text()) for path in copy.iterdir())
    assert tool.main(["--write"]) == 2
    assert problem in capsys.readouterr().err
    assert dict((path.name, path.read_text()) for path in copy.iterdir()) == before


@pytest.mark.parametrize("name", HOOKS)
def test_the_defaults_of_a_body_are_its_json_and_schema_defaults(load_hook, name):
    hook = load_hook(HOOKS_DIR / (name + ".py"))
    properties = schema_of(name)["properties"]
    expected = dict((key, value["default"]) for key, value in properties.items() if "default" in value)
    expected.update(json.loads((HOOKS_DIR / (name + ".json")).read_text()))
    assert hook.DEFAULT_CONFIG == expected
    assert hook.load_config() in (expected, (expected, None))
    assert set(expected) <= set(properties)


def test_cray_atom_defaults_take_the_schemas_default_for_a_key_the_builtin_hook_lacks(load_hook):
    hook = load_hook(HOOKS_DIR / "cray_atom.py")
    assert "require_socket" not in json.loads((HOOKS_DIR / "cray_atom.json").read_text())
    assert hook.DEFAULT_CONFIG["require_socket"] is False


# Values of every JSON type and of the shapes the three schemas care about: each one is tried
# for each property of each hook, alone and in a few pairs.
VALUE_POOL = [
    None, True, False, 0, 1, 2, -1, 0.5, 2.0, 1.5, -0.0, 10, 1e300, "", "x", "0", "1", "15", "007", "0%", "1%",
    "25%", "abc%", "1a", "a1", "N%", "%", "2%%", "/", "/x", "x/y", "/sys/fs/cgroup", "sys/fs/cgroup", "/a\nb",
    "/a\u0000b", "pbs_jobs", "pbs/jobs", "../escape", "a/../b", "a/..", "..", "a..b", ".hidden", "a//b", "a/",
    "job_start", "all", "none", "site", "select", "mem", "A-1_b", "_a", "a b", "a$b", "pad_select", "\u0661",
    "x\n", [], [0], [0, 1], [0, 0], [-1], [1.0], [True], ["workq"], ["workq", "workq"], ["workq", ""], [1, "x"],
    [[]], {}, {"0": 1}, {"1": "50%"}, {"x": 1}, {"0": 0}, {"0": True}, {"00": "2"}, {"-1": 1}, {"0": {"0": 1}},
]


def pool_configs(schema):
    rng = random.Random(928)
    keys = sorted(schema["properties"])
    configs = [{}, {"unknown_key": 1}, [], "text", None, 3]
    for key in keys:
        configs += [{key: value} for value in VALUE_POOL]
    for first, second in itertools.combinations(keys, 2):
        configs += [{first: rng.choice(VALUE_POOL), second: rng.choice(VALUE_POOL)} for _unused in range(8)]
    return configs


@pytest.mark.parametrize("name", HOOKS)
def test_the_body_and_jsonschema_agree_on_every_config_of_the_pool(load_hook, name):
    hook = load_hook(HOOKS_DIR / (name + ".py"))
    schema = schema_of(name)
    validator = jsonschema.Draft202012Validator(schema)
    valid = invalid = 0
    for config in pool_configs(schema):
        expected = validator.is_valid(config)
        problems = hook.schema_problems(config, hook.CONFIG_SCHEMA)
        assert (not problems) is expected, (config, problems, [e.message for e in validator.iter_errors(config)])
        if expected:
            valid += 1
            assert hook.check_config(config) == dict(hook.DEFAULT_CONFIG, **config)
        else:
            invalid += 1
            with pytest.raises(hook.ConfigError) as raised:
                hook.check_config(config)
            assert str(raised.value) == "; ".join(problems)
    assert valid > 20 and invalid > 100, (valid, invalid)


@pytest.mark.parametrize("name", HOOKS)
def test_every_problem_names_the_key_it_is_about(load_hook, name):
    hook = load_hook(HOOKS_DIR / (name + ".py"))
    schema = schema_of(name)
    for key in sorted(schema["properties"]):
        for value in VALUE_POOL:
            for problem in hook.schema_problems({key: value}, hook.CONFIG_SCHEMA):
                assert problem.startswith((key + " ", key + "[", key + ".")), problem
                assert problem.endswith(repr(value)) or "map key" in problem or "may not repeat" in problem \
                    or problem.startswith(key + "[") or problem.startswith(key + "."), problem


# Patterns of the three schemas and others of the subset the validator reads.
EXTRA_PATTERNS = ["a|b", "^(ab|a)*c$", "^x{2,3}$", "^x{2}$", "^x{2,}$", "(?:ab)+", "^[^a-c]*$", "[-a]", "[a-]",
                  "^[0-9]+\\.[0-9]*$", "^\\u0041\\/?$", "^$", ".", "^.$", "^a?b+$", "(^|/)x(/|$)", "^[\\]]$", "\\$"]


@pytest.mark.parametrize("pattern", sorted(set(itertools.chain(*(patterns_in(schema_of(name)) for name in HOOKS))))
                         + EXTRA_PATTERNS)
def test_the_pattern_search_says_what_re_search_says(tool, load_hook, pattern):
    """The tool reads the pattern, the body's matcher searches with what it read."""
    hook = load_hook(HOOKS_DIR / "reliable_job_startup.py")
    hook._SCHEMA_PATTERNS[pattern] = tool.pattern_compile(pattern)
    rng = random.Random(pattern)
    alphabet = ["a", "b", "c", "x", "0", "1", "9", "%", "/", ".", "_", "-", " ", "\n", "\u0000", "]", "$", "A"]
    texts = [""] + ["".join(rng.choice(alphabet) for _unused in range(rng.randint(1, 7))) for _unused in range(1500)]
    texts += [value for value in VALUE_POOL if isinstance(value, str)]
    for text in texts:
        assert hook.schema_pattern_search(pattern, text) is bool(re.search(pattern, text)), (pattern, text)


@pytest.mark.parametrize("name", HOOKS)
def test_each_body_carries_its_schemas_patterns_read_and_no_pattern_reader(tool, load_hook, name):
    hook = load_hook(HOOKS_DIR / (name + ".py"))
    patterns = set(patterns_in(schema_of(name)))
    assert patterns
    assert hook._SCHEMA_PATTERNS == dict((pattern, tool.pattern_compile(pattern)) for pattern in patterns)
    for pattern in patterns:
        assert hook.schema_pattern_search(pattern, "") is bool(re.search(pattern, ""))
    text = (HOOKS_DIR / (name + ".py")).read_text()
    assert "def _pattern_parse" not in text and "def _pattern_escape" not in text


def keywords_in(schema):
    if isinstance(schema, dict):
        for key, value in schema.items():
            yield key
            if key not in ("enum", "const", "default", "examples"):
                yield from keywords_in(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from keywords_in(item)


# What a body carries of the validator only when its schema uses the keyword.
KEYWORD_CODE = {"$ref": "def schema_resolve", "uniqueItems": "may not repeat", "not": '"not" in schema',
                "allOf": '"allOf"', "const": 'repr(schema["const"])', "pattern": "def schema_pattern_search",
                "anyOf": "def _schema_branch_words", "required": "lacks the required key",
                "exclusiveMinimum": '"exclusiveMinimum" in schema', "maximum": '"maximum" in schema',
                "maxLength": '"maxLength" in schema', "minItems": '"minItems"', "enum": '"one of %s"'}


@pytest.mark.parametrize("name", HOOKS)
def test_each_body_carries_the_validator_code_of_its_schemas_keywords_only(load_hook, name):
    used = set(keywords_in(load_hook(HOOKS_DIR / (name + ".py")).CONFIG_SCHEMA))
    annotations = {"$schema", "$id", "$comment", "title", "description", "default", "examples"}
    # a $ref alone is replaced by what it names: the body resolves no reference
    defined = set(schema_of(name).get("$defs", {}))
    assert used <= set(keywords_in(schema_of(name)))
    assert set(keywords_in(schema_of(name))) - used <= annotations | {"$ref", "$defs"} | defined
    assert "$ref" not in used
    block = (HOOKS_DIR / (name + ".py")).read_text().split("# BEGIN GENERATED SCHEMA")[1].split("# END GENERATED")[0]
    for keyword, code in KEYWORD_CODE.items():
        assert (code in block) is (keyword in used), (keyword, code)
    assert '"""' not in block and "\n#: " not in block


def test_a_section_of_the_validator_is_kept_when_one_of_its_keywords_is_used(tool):
    code = "a = 1\n#: if x y\nb = 2\n    #: if z\nc = 3\n    #: end\n#: end\n# note\nd = 4\n"
    assert tool.hook_code({"y"}, code) == "a = 1\nb = 2\nd = 4\n"
    assert tool.hook_code({"x", "z"}, code) == "a = 1\nb = 2\nc = 3\nd = 4\n"
    assert tool.hook_code({"z"}, code) == "a = 1\nd = 4\n"
    with pytest.raises(tool.EmbedError, match="not closed"):
        tool.hook_code(set(), "#: if x\na = 1\n")


def test_the_reliable_startup_body_checks_its_config_without_importing_re(tmp_path):
    """Importing re is most of a fresh pbs_python's cost for the queuejob hook."""
    config = tmp_path / "rjs.CF"
    config.write_text(json.dumps({"increment": {"0": "50%", "1": 2}, "keep_select_resource": "site",
                                  "queues": ["workq"]}))
    script = (
        "import sys, types\n"
        "pbs = types.ModuleType('pbs'); pbs.hook_config_filename = %r\n"
        "sys.modules['pbs'] = pbs\n"
        "namespace = {'__name__': 'hook_under_test'}\n"
        "exec(compile(open(%r).read(), 'hook', 'exec'), namespace)\n"
        "config, _ = namespace['load_config']()\n"
        "assert config['increment'] == {'0': '50%%', '1': 2}, config\n"
        "print(sorted(name for name in ('re', 'json', 'sre_compile') if name in sys.modules))\n"
        % (str(config), str(HOOKS_DIR / "reliable_job_startup.py")))
    result = subprocess.run([sys.executable, "-I", "-S", "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, universal_newlines=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize("name", HOOKS)
def test_each_body_with_its_generated_block_is_python_3_6_syntax(name):
    import ast  # pylint: disable=import-outside-toplevel
    ast.parse((HOOKS_DIR / (name + ".py")).read_text(), str(name), feature_version=(3, 6))


def test_a_ref_alone_is_replaced_by_what_it_names_and_a_recursive_one_is_kept(tool):
    single = {"type": "integer", "minimum": 1}
    other = {"$ref": "#/$defs/one", "x-must-be": "b"}
    schema = {"$defs": {"one": single}, "properties": {"a": {"$ref": "#/$defs/one"}, "b": other}}
    assert tool.inlined(schema, schema) == {"$defs": {"one": single}, "properties": {"a": single, "b": other}}
    schema["properties"].pop("b")
    assert tool.inlined(schema, schema) == {"properties": {"a": single}}
    tree = {"$defs": {"t": {"type": "object", "properties": {"x": {"$ref": "#/$defs/t"}}}},
            "properties": {"a": {"$ref": "#/$defs/t"}}}
    inlined = tool.inlined(tree, tree)
    assert inlined["properties"]["a"]["properties"]["x"] == {"$ref": "#/$defs/t"}
    assert "$ref" in tool.keywords_of(inlined) and "$defs" in inlined
