"""Rules of the collection's Python code, read from the source with ``ast``:

- one exit per module: in ``plugins/modules/*.py`` only ``main()`` calls ``exit_json`` /
  ``fail_json`` (the work functions return the result or raise ``ModuleError``), once each,
  and ``plugins/module_utils`` never does;
- a module whose action plugin does all the work (``hpc.pbs.controller_file``) is its
  documentation only: three strings, no code;
- Python 3 classes: no ``class X(object)`` anywhere in ``plugins/``.
"""
import ast
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))
PLUGINS = os.path.join(REPO, "plugins")
MODULES_DIR = os.path.join(PLUGINS, "modules")
ACTION_DIR = os.path.join(PLUGINS, "action")
# The documentation of an action plugin that runs no module (as ansible.builtin.debug's).
ACTION_ONLY = ["controller_file.py"]
MODULES = sorted(name for name in os.listdir(MODULES_DIR)
                 if name.endswith(".py") and name != "__init__.py" and name not in ACTION_ONLY)
EXITS = ("exit_json", "fail_json")
MODULE_UTILS_DIR = os.path.join(PLUGINS, "module_utils")
MODULE_UTILS = sorted(os.path.relpath(os.path.join(root, name), MODULE_UTILS_DIR)
                      for root, _dirs, files in os.walk(MODULE_UTILS_DIR) for name in files
                      if name.endswith(".py") and name != "__init__.py")


def exit_calls(source):
    """``[(function, exit name, line)]`` of every call of an attribute named exit_json or
    fail_json in ``source``; ``function`` is the name of the innermost enclosing def
    (``<module>`` at the top level), so a def nested in ``main`` is not ``main``."""
    calls = []

    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, getattr(child, "name", "<lambda>"))
                continue
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute) \
                    and child.func.attr in EXITS:
                calls.append((function, child.func.attr, child.lineno))
            visit(child, function)

    visit(ast.parse(source), "<module>")
    return calls


def object_based_classes(source):
    """``[(class name, line)]`` of the classes of ``source`` that name ``object`` as a
    base."""
    return [(node.name, node.lineno) for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.ClassDef)
            and any(isinstance(base, ast.Name) and base.id == "object" for base in node.bases)]


def read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def plugin_files():
    for root, _dirs, files in os.walk(PLUGINS):
        for name in sorted(files):
            if name.endswith(".py"):
                yield os.path.relpath(os.path.join(root, name), PLUGINS)


def test_the_checks_see_what_they_look_for():
    source = (
        "def main():\n"
        "    module.exit_json(changed=False)\n"
        "    def inner():\n"
        "        module.fail_json(msg='x')\n"
        "def work(module):\n"
        "    module.fail_json(msg='y')\n"
        "class A(object):\n"
        "    pass\n"
        "class B:\n"
        "    pass\n"
        "class C(A, object):\n"
        "    pass\n")
    assert exit_calls(source) == [("main", "exit_json", 2), ("inner", "fail_json", 4),
                                  ("work", "fail_json", 6)]
    assert object_based_classes(source) == [("A", 7), ("C", 11)]


@pytest.mark.parametrize("name", MODULES)
def test_only_main_exits(name):
    """Every exit_json / fail_json of a module is in main(): the work functions return the
    result or raise ModuleError."""
    calls = exit_calls(read(os.path.join(MODULES_DIR, name)))
    outside = [call for call in calls if call[0] != "main"]
    assert not outside, "%s: exit_json / fail_json outside main(): %s" % (name, outside)
    assert any(call[1] == "exit_json" for call in calls), "%s: main() never exits" % name


@pytest.mark.parametrize("name", ACTION_ONLY)
def test_an_action_only_module_is_its_documentation_and_has_its_action_plugin(name):
    tree = ast.parse(read(os.path.join(MODULES_DIR, name)))
    assigned = [target.id for node in tree.body if isinstance(node, ast.Assign) for target in node.targets]
    assert assigned == ["DOCUMENTATION", "EXAMPLES", "RETURN"] and len(tree.body) == 3, \
        "%s: documentation only, its action plugin does the work" % name
    assert os.path.isfile(os.path.join(ACTION_DIR, name)), "%s: no plugins/action/%s" % (name, name)


@pytest.mark.parametrize("name", MODULE_UTILS)
def test_module_utils_never_exit(name):
    """The module utilities raise ModuleError (or their own errors); only a module's main()
    ends the task."""
    calls = exit_calls(read(os.path.join(MODULE_UTILS_DIR, name)))
    assert not calls, "plugins/module_utils/%s calls exit_json / fail_json: %s" % (name, calls)


@pytest.mark.parametrize("name", MODULES)
def test_main_has_one_exit_and_one_failure(name):
    calls = exit_calls(read(os.path.join(MODULES_DIR, name)))
    for exit_name in EXITS:
        lines = [line for function, called, line in calls if called == exit_name]
        assert len(lines) == 1, "%s: main() calls %s %d times (lines %s); it turns the work's " \
            "result or ModuleError into one exit" % (name, exit_name, len(lines), lines)


def test_no_class_names_object_as_its_base():
    found = []
    for path in plugin_files():
        for class_name, line in object_based_classes(read(os.path.join(PLUGINS, path))):
            found.append("plugins/%s:%d class %s(object)" % (path, line, class_name))
    assert not found, "Python 3 classes need no object base: %s" % found
