"""Fixtures shared by the bundled hooks' unit tests.

``load_hook``: a bundled hook file loaded in-process as a module, for tests that call its
functions one by one. pbs_python runs a hook with ``__name__ == "builtins"``; loaded under
another name, the hook defines its functions and does not run its event code.
"""
import importlib.util
import sys
import types

import pytest


class EventIncompatibleError(Exception):
    """Stands in for ``pbs.EventIncompatibleError``, which a hook catches around attributes
    an event lacks."""


def stand_in_pbs(**names):
    """A minimal ``pbs`` module: the log levels and log calls every bundled hook uses
    (levels as OpenPBS's ``pbs`` numbers them), no hook config file, and ``names`` on top."""
    pbs = types.ModuleType("pbs")
    pbs.EventIncompatibleError = EventIncompatibleError
    pbs.hook_config_filename = None
    pbs.LOG_DEBUG, pbs.LOG_WARNING, pbs.LOG_ERROR = 128, 4, 2
    pbs.logmsg = lambda *args: None
    pbs.logjobmsg = lambda *args: None
    for name, value in names.items():
        setattr(pbs, name, value)
    return pbs


@pytest.fixture
def load_hook(monkeypatch):
    """``load_hook(path, **pbs_names)``: the hook file at ``path`` as a module named
    ``<stem>_under_test``, importing :func:`stand_in_pbs` (with ``pbs_names``) as ``pbs``;
    ``sys.modules["pbs"]`` is restored after the test."""

    def load(path, **pbs_names):
        monkeypatch.setitem(sys.modules, "pbs", stand_in_pbs(**pbs_names))
        spec = importlib.util.spec_from_file_location("%s_under_test" % path.stem, str(path))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load
