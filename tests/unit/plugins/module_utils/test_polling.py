"""The one poll loop of the modules (plugins/module_utils/common/polling.py), on a fake clock."""
import pytest

from ansible_collections.hpc.pbs.plugins.module_utils.common.polling import WaitTimeout, wait_until


class FakeClock(object):
    """A clock that only moves when :meth:`sleep` is called; remembers each sleep."""

    def __init__(self):
        self.now = 1000.0
        self.sleeps = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


def answers(*values):
    """A check that returns ``values`` one per call; counts its calls."""
    pending = list(values)

    def check():
        check.calls += 1
        return pending.pop(0)
    check.calls = 0
    return check


def wait(check, clock, timeout=1, interval=0.25, **kwargs):
    return wait_until(check, timeout, interval, "the thing", clock=clock, sleep=clock.sleep, **kwargs)


def test_a_check_already_true_returns_at_once_without_sleeping():
    clock = FakeClock()
    assert wait(answers("ready"), clock) == "ready"
    assert clock.sleeps == []


def test_the_check_is_called_again_after_each_interval_until_it_answers():
    clock, check = FakeClock(), answers(None, None, 42)
    assert wait(check, clock) == 42
    assert check.calls == 3 and clock.sleeps == [0.25, 0.25]


@pytest.mark.parametrize("falsy", [0, False, "", []])
def test_a_falsy_answer_other_than_none_ends_the_wait(falsy):
    assert wait(answers(falsy), FakeClock()) == falsy


def test_the_wait_gives_up_at_the_deadline_with_the_callers_text():
    clock, check = FakeClock(), answers(*[None] * 10)
    with pytest.raises(WaitTimeout) as raised:
        wait(check, clock, timeout=1, interval=0.25, timeout_text="pbs_mom did not log in 1 s")
    assert str(raised.value) == "pbs_mom did not log in 1 s"
    # Called at 0, 0.25, 0.5, 0.75 and 1.0 s: the last call is at the deadline itself.
    assert check.calls == 5 and clock.now == 1001.0


def test_the_default_timeout_text_says_what_was_awaited_and_how_long():
    with pytest.raises(WaitTimeout, match=r"^gave up waiting for the thing after 2 s$"):
        wait(answers(*[None] * 20), FakeClock(), timeout=2)


def test_a_zero_timeout_still_calls_the_check_once():
    clock, check = FakeClock(), answers(None)
    with pytest.raises(WaitTimeout):
        wait(check, clock, timeout=0)
    assert check.calls == 1 and clock.sleeps == []
