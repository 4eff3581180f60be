# -*- coding: utf-8 -*-
"""The one way a module's work ends in a failure: it raises :class:`ModuleError`.

Each module of the collection has a single exit, as kubernetes.core's runner has: its
``main()`` builds the ``AnsibleModule``, calls the work function, which returns the result
(dict) or raises ``ModuleError``, and turns that into the one ``module.exit_json`` or
``module.fail_json``. No other function of a module calls them. Standard library only.
"""

from typing import Any, Dict


class ModuleError(Exception):
    """The task fails. ``msg``: what went wrong and what to do (str); ``extra``: further
    result keys of the failure (``cmd``, ``rc``, ``changed``, ...)."""

    def __init__(self, msg: str, **extra: Any) -> None:
        Exception.__init__(self, msg)
        self.msg = msg
        self.extra = extra

    def fail_kwargs(self) -> Dict[str, Any]:
        """Keyword arguments for ``module.fail_json``."""
        return dict(self.extra, msg=self.msg)
