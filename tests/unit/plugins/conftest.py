"""Make this checkout importable as ``ansible_collections.hpc.pbs`` for the plugin tests.

A temporary ``ansible_collections/hpc/pbs`` symlink to the repository root is put on
``sys.path`` (the checkout itself is not laid out under ``ansible_collections``). This
directory is also put on ``sys.path`` so tests can import ``hpc_pbs_module_fakes``.

Fixtures shared by the module tests: ``pbs_install`` (a pbs.conf and where it points),
``answer_commands`` (a fake wired as ``AnsibleModule.run_command``), ``fake_qmgr`` (a
:class:`hpc_pbs_module_fakes.FakeQmgr` so wired) and ``pbs`` (that fake with a server).
"""
import atexit
import os
import shutil
import sys
import tempfile

import pytest

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


class PbsInstall(object):
    """Where the modules under test find PBS: ``conf`` (the pbs.conf path, str), ``home``
    and ``exec_dir`` (PBS_HOME / PBS_EXEC as ``pathlib.Path``, not created)."""

    def __init__(self, conf, home, exec_dir):
        self.conf, self.home, self.exec_dir = conf, home, exec_dir
        self.write_conf()

    def write_conf(self, other_lines=""):
        """(Re)write pbs.conf: ``other_lines`` (e.g. ``"PBS_SERVER=vm\\n"``), then
        PBS_HOME and PBS_EXEC."""
        with open(self.conf, "w") as handle:
            handle.write("%sPBS_HOME=%s\nPBS_EXEC=%s\n" % (other_lines, self.home, self.exec_dir))


@pytest.fixture
def pbs_install(tmp_path, monkeypatch):
    """A pbs.conf under ``tmp_path`` naming PBS_HOME ``tmp_path/home`` and PBS_EXEC
    ``tmp_path/exec``, with PBS_HOME, PBS_EXEC and PBS_CONF_FILE removed from the
    environment (the modules must read the file they are given): a :class:`PbsInstall`."""
    for var in ("PBS_HOME", "PBS_EXEC", "PBS_CONF_FILE"):
        monkeypatch.delenv(var, raising=False)
    return PbsInstall(str(tmp_path / "pbs.conf"), tmp_path / "home", tmp_path / "exec")


@pytest.fixture
def answer_commands(pbs_install, monkeypatch):
    """``answer_commands(fake, passes_module=True) -> fake``: every
    ``AnsibleModule.run_command`` of the test goes to ``fake.run_command`` (with the
    module as first argument when ``passes_module``, as :class:`FakeQmgr` takes it);
    ``fake.conf`` is set to the pbs.conf path of :func:`pbs_install`."""
    from ansible.module_utils.basic import AnsibleModule

    def wire(fake, passes_module=True):
        def run_command(self, args, **kw):
            check_pbs_environment(args, kw.get("environ_update"), fake.conf)
            if passes_module:
                return fake.run_command(self, args, **kw)
            return fake.run_command(args, **kw)
        monkeypatch.setattr(AnsibleModule, "run_command", run_command)
        fake.conf = pbs_install.conf
        return fake

    return wire


def check_pbs_environment(args, environ, conf):
    """Every PBS command a module runs reads the pbs.conf the module read (``conf``), in the
    C locale, whatever ``/etc/pbs.conf`` or the module's environment say."""
    environ = environ or {}
    assert environ.get("PBS_CONF_FILE") == conf, (
        "%s was run without PBS_CONF_FILE=%s (environ_update: %r)" % (args[0], conf, environ))
    assert all(environ.get(name) == "C" for name in ("LANG", "LC_ALL", "LC_MESSAGES")), (
        "%s was run outside the C locale (environ_update: %r)" % (args[0], environ))


@pytest.fixture
def fake_qmgr(pbs_install, answer_commands):
    """``fake_qmgr(cls=FakeQmgr) -> fake``: a qmgr fake (class ``cls``) at
    ``PBS_EXEC/bin/qmgr`` answering the test's commands, with no object yet."""
    from hpc_pbs_module_fakes import FakeQmgr

    def make(cls=FakeQmgr):
        return answer_commands(cls(str(pbs_install.exec_dir / "bin" / "qmgr"), str(pbs_install.home)))

    return make


@pytest.fixture
def pbs(fake_qmgr):
    """The usual fake PBS of the module tests: :class:`FakeQmgr` with an active server
    ``vm`` (scheduling on). Test files that need other objects define their own ``pbs``
    on :func:`fake_qmgr`."""
    fake = fake_qmgr()
    fake.add("server", "vm", {"server_state": "Active", "scheduling": "True"})
    return fake
