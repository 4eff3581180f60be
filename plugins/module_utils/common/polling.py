# -*- coding: utf-8 -*-
# Copyright: hpc.pbs developers
# Apache License 2.0
"""Waiting with a deadline: the one poll loop of the collection's modules (the mom's reload,
its exit and restart, the lock on its config file).
"""

import time
from typing import Any, Callable, Optional


class WaitTimeout(Exception):
    """:func:`wait_until` gave up: ``str(error)`` is the caller's timeout text."""


def wait_until(check: Callable[[], Any], timeout: float, interval: float, what: str,
               timeout_text: Optional[str] = None, clock: Callable[[], float] = time.monotonic,
               sleep: Callable[[float], Any] = time.sleep) -> Any:
    """Call ``check()`` every ``interval`` seconds until it returns something other than None.

    :param check: callable without arguments, returning None while the awaited thing has not
        happened and any other value (the result) once it has. It is called at least once,
        and once more after each ``interval``; the deadline is looked at after each call.
    :param timeout: seconds (int or float >= 0) from now until the wait gives up.
    :param interval: seconds (int or float > 0) slept between two calls.
    :param what: str, what is waited for (for the default timeout text), e.g.
        ``"pbs_mom pid 42 to exit"``.
    :param timeout_text: str, the error text on timeout; default ``"gave up waiting for
        <what> after <timeout> s"``.
    :param clock: callable giving seconds (float), monotonic; ``sleep``: callable(seconds).
        Both only for tests.
    :returns: the first value of ``check()`` that is not None.
    :raises WaitTimeout: the deadline passed with ``check()`` still None; its text is
        ``timeout_text``.
    """
    deadline = clock() + timeout
    while True:
        result = check()
        if result is not None:
            return result
        if clock() >= deadline:
            raise WaitTimeout(timeout_text or "gave up waiting for %s after %s s" % (what, timeout))
        sleep(interval)
