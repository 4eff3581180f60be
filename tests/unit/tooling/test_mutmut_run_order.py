"""tests/mutation/mutmut_config.py runs a product file's own test files first, so that a
mutant making some other test wait is killed by the unit's own tests first (pytest -x)."""
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(REPO, "tests", "mutation"))
import mutmut_config  # noqa: E402


def test_the_product_files_own_tests_come_first():
    tests = mutmut_config.tests_for("plugins/module_utils/server/qmgr.py")
    names = [os.path.basename(path) for path in tests]
    own = [name for name in names if name.startswith("test_qmgr")]
    assert own and names[:len(own)] == own, names
    assert len(names) > len(own)  # the other files naming it follow
