"""Test files and tests are named by what they check: no file named after the round of work
that found its tests (``test_mutants_*``, a ``_2`` / ``_a`` suffix), and no test whose name
says it kills mutants rather than what it asserts (docs/development.md, "Test tiers")."""
import ast
import os
import re

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ROUND_FILE = re.compile(r"^test_(mutants?_.*|.*_([0-9]+|[a-z]))\.py$")
ROUND_TEST = re.compile(r"mutant|_kills_mutants?\b|_round_?[0-9]", re.IGNORECASE)


def round_named(root):
    """``[path or path::test]`` of the test files and tests under ``root`` named by a round."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in ("__pycache__", "output", ".pytest_cache")]
        for name in sorted(files):
            if not (name.startswith("test_") and name.endswith(".py")):
                continue
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, root)
            if ROUND_FILE.match(name):
                found.append(relative)
            with open(path, encoding="utf-8") as handle:
                tree = ast.parse(handle.read(), path)
            found += ["%s::%s" % (relative, node.name) for node in ast.walk(tree)
                      if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name.startswith(("test", "Test"))
                      and ROUND_TEST.search(node.name)]
    return found


def test_no_test_file_or_test_is_named_by_a_round():
    assert round_named(os.path.join(REPO, "tests")) == []


def test_round_names_are_found(tmp_path):
    for name in ("test_mutants_qmgr.py", "test_qsub_args_2.py", "test_cgroup_resize_b.py", "test_qmgr.py",
                 "test_cray_atom_py36.py"):
        (tmp_path / name).write_text("def test_x():\n    pass\n")
    (tmp_path / "test_hook.py").write_text("def test_kills_mutant_17():\n    pass\n\n\n"
                                           "def test_end_kills_leftover_processes():\n    pass\n")
    assert round_named(str(tmp_path)) == [
        "test_cgroup_resize_b.py", "test_hook.py::test_kills_mutant_17", "test_mutants_qmgr.py",
        "test_qsub_args_2.py"]
