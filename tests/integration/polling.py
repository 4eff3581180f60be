"""The one poll loop of the test tooling (the launcher, the demo, the integration tests).

Standard library only: the launcher imports it before any virtual environment is known.
"""
import time


class WaitTimeout(AssertionError):
    """A condition did not come true in time."""


def poll(predicate, timeout, interval=0.3):
    """Call ``predicate()`` every ``interval`` seconds until it returns a true value or
    ``timeout`` seconds have passed; returns that value, or the last (false) one. The
    predicate is called at least once, and once more at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(min(interval, max(0.0, deadline - time.monotonic())))


def wait_for(predicate, timeout, what, interval=0.3, explain=None):
    """:func:`poll` that raises :class:`WaitTimeout` ("timed out after Ns waiting for
    WHAT", then the text of ``explain()`` when given) instead of returning a false value."""
    value = poll(predicate, timeout, interval)
    if value:
        return value
    raise WaitTimeout("timed out after %ss waiting for %s%s" % (
        timeout, what, "\n" + explain() if explain else ""))
