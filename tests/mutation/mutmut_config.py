"""mutmut 2.x hooks of ``make mutation``: which unit tests run against each mutant, and how.

mutmut imports this file from the directory it runs in (``setup.cfg`` ``[mutmut]`` holds
the rest of the settings). For every mutant, :func:`pre_mutation` replaces the test
command by :func:`runner` over only the unit test files that exercise the mutated file
(:func:`tests_for`), so a mutant costs seconds, not the whole unit suite.

Every test command runs inside its own PID namespace (``unshare --pid --fork --kill-child
--mount-proc``): mutated code may signal a pid it read from a file or restart a "dead"
daemon, and no process outside the namespace can be reached from inside it. When mutmut
kills a command on timeout, ``--kill-child`` takes the whole namespace down with it.
"""
import functools
import os
import re
import shlex

TEST_DIRS = ("tests/unit/plugins", "tests/unit/hooks")
# Unit tests outside TEST_DIRS that read a product file: the modules' documentation.
EXTRA_TESTS = {"plugins/modules/": ("tests/unit/test_module_docs.py",)}
PRODUCT_DIRS = ("plugins/module_utils", "plugins/modules", "files/hooks")
# No pytest plugin autoload (testinfra, platformdirs: no unit test uses them): ~0.5 s a mutant.
# Not the real_pbs tests (each hook run by OpenPBS's own pbs_python, 30 s and more): they
# check that a hook runs unchanged under real PBS; its logic is tested under the emulator.
PYTEST = "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python -m pytest -x -q -p no:cacheprovider -m 'not real_pbs'"
# mutmut 2.x kills a mutant's tests after 10 times the baseline (the run of the mutated
# file's own tests, see run.py); never less than 10 x this, for a machine under load.
MUTANT_BASELINE_FLOOR_S = 10.0
# plugins.module_utils.<folder>.<module> import ..., or plugins.module_utils.<folder> import <module>
IMPORT_OF_UTIL = re.compile(r"plugins\.module_utils\.\w+(?:\.(\w+)|\s+import\s+\(?([\w\s,]+?)\)?\s*$)", re.M)


def runner(test_paths):
    """Command line (a str, split by mutmut with shlex) running pytest on ``test_paths``.

    pytest runs in a fresh PID namespace. Any non-zero exit of pytest (failures, 2 for a
    module that no longer imports, a signal) becomes 1, the only code mutmut 2.x counts
    as "killed", except 5 (no test ran), which counts as survived, as 0 does.
    """
    pytest = "%s %s; case $? in 0|5) exit 0;; *) exit 1;; esac" % (
        PYTEST, " ".join(shlex.quote(p) for p in test_paths))
    return "unshare --pid --fork --kill-child --mount-proc bash -c %s" % shlex.quote(pytest)


def _read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def _python_files(directory):
    """Sorted repository-relative paths of the ``*.py`` files under ``directory``."""
    found = []
    for root, _dirs, files in os.walk(directory):
        found.extend(os.path.join(root, name) for name in files if name.endswith(".py"))
    return sorted(found)


def _stem(path):
    return os.path.splitext(os.path.basename(path))[0]


def _imported_utils(source):
    """Names of the ``plugins/module_utils`` modules that ``source`` imports (a set)."""
    names = set()
    for dotted, listed in IMPORT_OF_UTIL.findall(source):
        names.update([dotted] if dotted else re.findall(r"\w+", listed))
    return names


@functools.lru_cache(maxsize=None)
def _importers():
    """Map: product file -> set of product files importing it directly."""
    products = [p for d in PRODUCT_DIRS for p in _python_files(d)]
    by_util = {_stem(p): p for p in products if p.startswith("plugins/module_utils/")}
    importers = {p: set() for p in products}
    for path in products:
        for name in _imported_utils(_read(path)):
            if name in by_util and by_util[name] != path:
                importers[by_util[name]].add(path)
    return importers


def _affected(path):
    """``path`` and every product file importing it, directly or not (a set)."""
    seen, todo = set(), [path]
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.add(current)
            todo.extend(_importers().get(current, ()))
    return seen


def _mentions(test_source, product):
    """Whether a test file's text names ``product``: a module by its import path, a hook by
    its source file (``NAME.py``) or as ``bundled("NAME")`` (a test that only names the
    hook, as a qmgr object or a role, does not run its body)."""
    stem = re.escape(_stem(product))
    if product.startswith("files/hooks/"):
        pattern = r"\b%s\.py\b|\bbundled\(\s*[\"']%s[\"']" % (stem, stem)
        return re.search(pattern, test_source) is not None
    package = r"module_utils\.\w+" if product.startswith("plugins/module_utils/") else "modules"
    pattern = r"plugins\.%s(?:\.%s\b|\s+import\s+\(?[\w\s,]*\b%s\b)" % (package, stem, stem)
    return re.search(pattern, test_source) is not None


@functools.lru_cache(maxsize=None)
def tests_for(path):
    """Test files (tuple of paths, the product file's own ``test_<stem>*`` first) that exercise
    product file ``path``.

    A test file is chosen when it names ``path`` or a product file importing it; when none
    does, every test directory is chosen (a mutant is never tested by nothing).
    """
    affected = _affected(path)
    tests = [t for d in TEST_DIRS for t in _python_files(d)
             if os.path.basename(t).startswith("test_")
             and any(_mentions(_read(t), product) for product in affected)]
    for prefix, extra in EXTRA_TESTS.items():
        if path.startswith(prefix):
            tests.extend(extra)
    return tuple(sorted(tests, key=functools.partial(_run_order, _stem(path)))) or TEST_DIRS


def _run_order(product_stem, test_path):
    """Sort key of the test files of product file ``product_stem``: its own ``test_<stem>*``
    files first, then the rest, each by path. pytest runs them in this order and ``-x`` stops
    at the first failure: a mutant that makes some other test wait forever is killed by the
    unit's own tests before that test runs, instead of timing out."""
    name = os.path.basename(test_path)
    return (not name.startswith("test_%s" % product_stem), test_path)


def pre_mutation(context):
    """mutmut hook: test the mutant of ``context.filename`` with its own tests only."""
    config = context.config
    config.baseline_time_elapsed = max(config.baseline_time_elapsed, MUTANT_BASELINE_FLOOR_S)
    config.test_command = runner(tests_for(os.path.normpath(context.filename)))
