"""Make this checkout importable as ``ansible_collections.hpc.pbs`` for the plugin tests.

A temporary ``ansible_collections/hpc/pbs`` symlink to the repository root is put on
``sys.path`` (the checkout itself is not laid out under ``ansible_collections``). This
directory is also put on ``sys.path`` so tests can import ``hpc_pbs_module_fakes``.
"""
import atexit
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def _make_collection_root():
    try:
        import ansible_collections.hpc.pbs.plugins  # noqa: F401  already importable
        return
    except ImportError:
        pass
    root = tempfile.mkdtemp(prefix="hpc_pbs_collections_")
    atexit.register(shutil.rmtree, root, True)
    namespace = os.path.join(root, "ansible_collections", "hpc")
    os.makedirs(namespace)
    os.symlink(REPO, os.path.join(namespace, "pbs"))
    sys.path.insert(0, root)
    # A namespace package cached before the path change would not see the new root.
    for name in [m for m in sys.modules if m == "ansible_collections" or m.startswith("ansible_collections.")]:
        del sys.modules[name]


_make_collection_root()
if HERE not in sys.path:
    sys.path.insert(0, HERE)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "sanity: runs ansible-test sanity / ansible-lint / ansible-doc on a copy "
                   "of the collection (minutes)")
