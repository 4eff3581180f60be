"""The documentation of every hpc.pbs module: complete, tied to its PBS designs, examples valid.

The module files are read, not imported: ``DOCUMENTATION``, ``EXAMPLES`` and ``RETURN``
are taken from the module's source with :mod:`ast` and parsed as YAML, and the options of
the doc fragments named in ``extends_documentation_fragment`` are merged in as
ansible-doc does.

Checked here:

* every option (and suboption) has a non-empty description and a type;
* every return value, nested ones included, has a sample;
* the options and return values that implement a PBS design name it by its public name
  (:data:`DESIGN_REFERENCES`, one row per option), and no user-facing text of the
  collection names the project's own specification files (``seed ...``);
* every task of ``EXAMPLES`` is a mapping, every call of the module in it uses only
  documented options or aliases, gives the required options and, for literal values,
  one of the documented choices; every module has at least one such call.

ansible-test validate-modules (``tests/unit/test_sanity_gates.py``) compares the
documentation with the argument spec; this file checks what it does not.
"""
import ast
import os
import re

import pytest
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODULE_DIR = os.path.join(REPO, "plugins", "modules")
FRAGMENT_DIR = os.path.join(REPO, "plugins", "doc_fragments")
COLLECTION = "hpc.pbs"
# The modules that act on PBS (the action group ``hpc.pbs.pbs``), then the others.
PBS_MODULES = ("accounting_report", "cluster_info", "held_jobs", "hook", "mom_config", "offline_nodes", "qmgr",
               "tolerate_node_failures")
MODULES = PBS_MODULES + ("controller_file",)

PP928 = "PP-928"
JOB_ARRAY_DESIGN = "subjob run_count, hold and release design"
JOB_RUN_WAIT_DESIGN = "job_run_wait design"
CRAY_ATOM_DESIGN = "Shasta ATOM hook design"

# (module, "options" or "return", dotted option / return key) -> texts its description
# must contain (compared with white space collapsed, case-sensitively).
DESIGN_REFERENCES = {
    ("tolerate_node_failures", "options", "value"): [
        "PP-928 interface 1", "C(all)", "C(job_start)", "C(none)"],
    ("tolerate_node_failures", "options", "state"): ["PP-928 interface 1"],
    ("hook", "options", "events"): ["execjob_resize", "PP-928 interface 9", CRAY_ATOM_DESIGN],
    ("hook", "options", "alarm"): [
        "Seconds", "PP-928 interface 3", "PP-928 interface 4", "C($sister_join_job_alarm)",
        "C($job_launch_delay)"],
    ("hook", "options", "type"): [CRAY_ATOM_DESIGN],
    ("hook", "options", "fail_action"): [CRAY_ATOM_DESIGN, "offline_vnodes"],
    ("hook", "options", "config"): [CRAY_ATOM_DESIGN],
    ("mom_config", "options", "options"): [
        "C(job_launch_delay) (PP-928 interface 4", "C(sister_join_job_alarm) (PP-928 interface 3",
        "seconds"],
    ("held_jobs", "options", "state"): [JOB_ARRAY_DESIGN, "run_count of subjobs", "interface 3"],
    ("held_jobs", "options", "job_ids"): [JOB_ARRAY_DESIGN, "interface 3"],
    ("qmgr", "options", "object_type"): ["C(server)", "C(sched)", "C(pbshook)"],
    ("qmgr", "options", "attributes"): [
        "C(job_run_wait)", JOB_RUN_WAIT_DESIGN, "C(execjob_hook)", "C(runjob_hook)",
        "C(default_qsub_arguments)", "PP-928 interface 1"],
    ("cluster_info", "options", "query_server"): [PP928 + " interface 1", JOB_RUN_WAIT_DESIGN],
    ("cluster_info", "return", "mom"): ["PP-928 interface 3", "PP-928 interface 4", "seconds"],
    ("cluster_info", "return", "server"): ["PP-928 interface 1", JOB_RUN_WAIT_DESIGN],
}

# Keys a task may hold besides the module call (playbook keywords of a task).
TASK_KEYWORDS = frozenset((
    "name", "register", "when", "loop", "loop_control", "with_items", "with_dict",
    "vars", "become", "become_user", "check_mode", "diff", "changed_when", "failed_when",
    "ignore_errors", "notify", "tags", "delegate_to", "run_once", "until", "retries",
    "delay", "environment", "no_log", "throttle", "timeout", "args", "module_defaults",
    "any_errors_fatal", "ignore_unreachable", "collections",
))


def module_strings(path):
    """Return ``{name: text}`` of the string constants assigned at a file's top level."""
    with open(path) as handle:
        tree = ast.parse(handle.read(), path)
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = node.value.value
    return found


def fragment_options(name):
    """Options of the doc fragment ``hpc.pbs.NAME`` or ``ansible.builtin.NAME`` (its class's
    DOCUMENTATION)."""
    if name.startswith("ansible.builtin."):
        import ansible.plugins.doc_fragments
        directory, stem = os.path.dirname(ansible.plugins.doc_fragments.__file__), name[len("ansible.builtin."):]
    else:
        assert name.startswith(COLLECTION + "."), "fragment from elsewhere: %s" % name
        directory, stem = FRAGMENT_DIR, name[len(COLLECTION) + 1:]
    path = os.path.join(directory, stem + ".py")
    with open(path) as handle:
        tree = ast.parse(handle.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "DOCUMENTATION" for t in node.targets):
            return yaml.safe_load(node.value.value).get("options") or {}
    raise AssertionError("no DOCUMENTATION in %s" % path)


def load_docs(module):
    """Return ``{"documentation", "examples", "returns"}`` of a module, parsed; fragments merged."""
    strings = module_strings(os.path.join(MODULE_DIR, module + ".py"))
    documentation = yaml.safe_load(strings["DOCUMENTATION"])
    options = dict(documentation.get("options") or {})
    for fragment in documentation.get("extends_documentation_fragment") or []:
        for name, spec in fragment_options(fragment).items():
            options.setdefault(name, spec)
    documentation["options"] = options
    return {"module": module, "documentation": documentation,
            "examples": yaml.safe_load(strings["EXAMPLES"]),
            "returns": yaml.safe_load(strings["RETURN"])}


def description_text(spec):
    text = spec.get("description")
    if isinstance(text, list):
        text = " ".join(str(t) for t in text)
    return re.sub(r"\s+", " ", str(text or "")).strip()


def walk_options(options, prefix=""):
    """Yield ``(dotted name, spec)`` for every option and suboption."""
    for name, spec in (options or {}).items():
        yield prefix + name, spec
        yield from walk_options(spec.get("suboptions"), prefix + name + ".")


def find_entry(entries, dotted, child_key):
    spec = None
    for part in dotted.split("."):
        assert entries and part in entries, "%s not documented" % dotted
        spec = entries[part]
        entries = spec.get(child_key)
    return spec


def module_calls(module, examples):
    """Yield ``(task name, args)`` of every call of ``module`` in EXAMPLES."""
    names = {"%s.%s" % (COLLECTION, module), module}
    for task in examples:
        for key in set(task) & names:
            yield task.get("name"), task[key]


def example_problems(module, documentation, examples):
    """Everything wrong with EXAMPLES as tasks of ``module``; an empty list when valid."""
    if not isinstance(examples, list) or not examples:
        return ["EXAMPLES is not a non-empty list of tasks"]
    problems = []
    options = documentation["options"]
    accepted = {}
    for name, spec in options.items():
        accepted[name] = name
        for alias in spec.get("aliases") or []:
            accepted[alias] = name
    calls = 0
    for task in examples:
        if not isinstance(task, dict):
            problems.append("task is not a mapping: %r" % (task,))
            continue
        actions = [k for k in task if k not in TASK_KEYWORDS]
        if len(actions) != 1:
            problems.append("task %r calls %d modules: %s" % (task.get("name"), len(actions), actions))
            continue
        if not task.get("name"):
            problems.append("task calling %s has no name" % actions[0])
    for task_name, args in module_calls(module, [t for t in examples if isinstance(t, dict)]):
        calls += 1
        args = args or {}
        if not isinstance(args, dict):
            problems.append("%r: arguments are not a mapping: %r" % (task_name, args))
            continue
        given = set()
        for key, value in args.items():
            if key not in accepted:
                problems.append("%r: undocumented option %r" % (task_name, key))
                continue
            option = accepted[key]
            given.add(option)
            choices = options[option].get("choices")
            literal = not (isinstance(value, str) and "{{" in value)
            if choices and literal and value is not None:
                values = value if isinstance(value, list) else [value]
                for item in values:
                    if item not in choices:
                        problems.append("%r: %s=%r is not one of %s" % (task_name, key, item, choices))
        for name, spec in options.items():
            if spec.get("required") and name not in given:
                problems.append("%r: required option %r missing" % (task_name, name))
    if not calls:
        problems.append("no task calls %s.%s" % (COLLECTION, module))
    return problems


@pytest.fixture(scope="module", params=MODULES)
def docs(request):
    return load_docs(request.param)


def test_every_module_file_is_covered():
    found = sorted(f[:-3] for f in os.listdir(MODULE_DIR)
                   if f.endswith(".py") and not f.startswith("_"))
    assert found == sorted(MODULES)


def test_module_defaults_group_holds_every_module():
    """``module_defaults: {group/hpc.pbs.pbs: {pbs_conf_file: ...}}`` reaches every module."""
    with open(os.path.join(REPO, "meta", "runtime.yml")) as handle:
        runtime = yaml.safe_load(handle)
    assert sorted(runtime["action_groups"]["pbs"]) == sorted(PBS_MODULES)


def test_documentation_names_the_module(docs):
    module, documentation = docs["module"], docs["documentation"]
    assert documentation["module"] == module
    assert documentation.get("short_description")
    assert documentation.get("options"), module


def test_documentation_has_the_ecosystems_attributes_and_see_also(docs):
    """check_mode / diff_mode / platform as ansible.builtin.action_common_attributes defines
    them, and a see-also section naming only modules of this collection or links."""
    documentation = docs["documentation"]
    assert "ansible.builtin.action_common_attributes" in documentation["extends_documentation_fragment"]
    attributes = documentation.get("attributes") or {}
    assert sorted(attributes) == ["check_mode", "diff_mode", "platform"], attributes
    for name in ("check_mode", "diff_mode"):
        assert attributes[name]["support"] in ("full", "partial", "none"), attributes
    assert attributes["platform"]["platforms"] == "posix"
    seealso = documentation.get("seealso") or []
    modules = [entry["module"] for entry in seealso if "module" in entry]
    assert modules and all(m.startswith(COLLECTION + ".") and m.split(".")[-1] in MODULES for m in modules), seealso


def test_every_option_has_description_and_type(docs):
    module, documentation = docs["module"], docs["documentation"]
    for name, spec in walk_options(documentation["options"]):
        assert description_text(spec), "%s: option %s has no description" % (module, name)
        assert spec.get("type"), "%s: option %s has no type" % (module, name)
        if spec.get("type") == "list":
            assert spec.get("elements"), "%s: list option %s has no elements" % (module, name)


def test_every_return_value_has_description_and_type(docs):
    module, returns = docs["module"], docs["returns"]
    assert returns, module
    for name, spec in walk_options(returns):
        assert description_text(spec), "%s: return %s has no description" % (module, name)
        assert spec.get("type"), "%s: return %s has no type" % (module, name)


def walk_returns(returns, prefix=""):
    """Yield ``(dotted name, spec)`` for every return value and the values it contains."""
    for name, spec in (returns or {}).items():
        yield prefix + name, spec
        yield from walk_returns(spec.get("contains"), prefix + name + ".")


def test_every_return_value_has_a_sample(docs):
    """ansible-doc and the docs site show a sample for every return value (nested ones too),
    so a user sees the shape of what the module returns."""
    module, returns = docs["module"], docs["returns"]
    missing = [name for name, spec in walk_returns(returns) if "sample" not in spec]
    assert missing == [], "%s: return values without a sample" % module


@pytest.mark.parametrize("key", sorted(DESIGN_REFERENCES), ids=lambda k: "%s-%s-%s" % k)
def test_option_names_its_pbs_design(key):
    module, kind, dotted = key
    loaded = load_docs(module)
    if kind == "options":
        spec = find_entry(loaded["documentation"]["options"], dotted, "suboptions")
    else:
        spec = find_entry(loaded["returns"], dotted, "contains")
    text = description_text(spec)
    missing = [ref for ref in DESIGN_REFERENCES[key] if ref not in text]
    assert not missing, "%s %s %s misses %s in: %s" % (module, kind, dotted, missing, text)


def test_examples_are_tasks_with_documented_options_only(docs):
    assert example_problems(docs["module"], docs["documentation"], docs["examples"]) == []


def test_example_check_finds_wrong_examples():
    loaded = load_docs("tolerate_node_failures")
    wrong = [
        {"name": "typo in an option", "hpc.pbs.tolerate_node_failures": {"valeu": "all"}},
        {"name": "value out of choices", "hpc.pbs.tolerate_node_failures": {"value": "some"}},
        {"hpc.pbs.tolerate_node_failures": {"value": "all"}},
        {"name": "two modules", "hpc.pbs.tolerate_node_failures": {}, "ansible.builtin.debug": {}},
    ]
    problems = example_problems("tolerate_node_failures", loaded["documentation"],
                                loaded["examples"] + wrong)
    assert len(problems) == 4, problems
    assert any("undocumented option 'valeu'" in p for p in problems)
    assert any("'some' is not one of" in p for p in problems)
    documentation = load_docs("qmgr")["documentation"]
    problems = example_problems("qmgr", documentation, [
        {"name": "no object_type", "hpc.pbs.qmgr": {"attributes": {"comment": "x"}}}])
    assert problems == ["'no object_type': required option 'object_type' missing"]
    assert example_problems("qmgr", documentation, [{"name": "x", "ansible.builtin.debug": {}}]) \
        == ["no task calls hpc.pbs.qmgr"]


def test_aliases_are_accepted_in_examples():
    documentation = load_docs("hook")["documentation"]
    tasks = [{"name": "alias", "hpc.pbs.hook": {"name": "h", "event": ["queuejob"], "content": "x"}}]
    assert example_problems("hook", documentation, tasks) == []


USER_FACING = ("plugins", "roles", "playbooks", "files", "docs", "meta", "changelogs",
               "README.md", "galaxy.yml")


SPEC_FILE_WORDS = re.compile(r"\bseeds?\b|job-array-subjob-run-count|sched-job-run-wait|shasta-pbs-cray-atom"
                             r"|pp-928-reliable-job-startup", re.IGNORECASE)


def test_no_user_facing_text_names_the_specification_files():
    """Users know the PBS designs by their public names (PP-928 interface N, the Shasta ATOM
    hook design), not by this project's file names for them."""
    found = []
    for top in USER_FACING:
        path = os.path.join(REPO, top)
        walked = [(path, [], [""])] if os.path.isfile(path) else os.walk(path)
        for folder, _dirs, names in walked:
            for name in names:
                full = os.path.join(folder, name) if name else folder
                try:
                    with open(full, encoding="utf-8") as handle:
                        text = handle.read()
                except (UnicodeDecodeError, OSError):
                    continue
                found += ["%s:%d" % (os.path.relpath(full, REPO), number)
                          for number, line in enumerate(text.splitlines(), 1)
                          if SPEC_FILE_WORDS.search(line)]
    assert found == []
