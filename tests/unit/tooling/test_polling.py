"""tests/integration/polling.py: the one poll loop of the test tooling, on a fake clock."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "integration"))
import polling  # noqa: E402  pylint: disable=wrong-import-position


@pytest.fixture
def clock(monkeypatch):
    """time.monotonic/time.sleep of polling on a fake clock; the list of sleeps."""
    now = [100.0]
    sleeps = []

    def sleep(seconds):
        sleeps.append(seconds)
        now[0] += seconds
    monkeypatch.setattr(polling.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(polling.time, "sleep", sleep)
    return sleeps


def test_the_first_true_value_is_returned_without_sleeping(clock):
    assert polling.poll(lambda: "yes", 5) == "yes"
    assert clock == []


def test_poll_returns_the_last_false_value_after_a_last_look_at_the_deadline(clock):
    answers = iter([0, None, "", 0, [], {}, ()])
    seen = []

    def predicate():
        seen.append(next(answers))
        return seen[-1]
    assert polling.poll(predicate, 1, interval=0.3) == []
    assert clock == pytest.approx([0.3, 0.3, 0.3, 0.1])
    assert len(seen) == 5


def test_a_zero_timeout_still_looks_once(clock):
    calls = []
    assert polling.poll(lambda: calls.append(1), 0) is None
    assert calls == [1] and clock == []


def test_wait_for_names_what_it_waited_for_and_adds_the_explanation(clock):
    with pytest.raises(polling.WaitTimeout, match=r"^timed out after 2s waiting for the job\nstate Q$"):
        polling.wait_for(lambda: None, 2, "the job", interval=1, explain=lambda: "state Q")
    assert issubclass(polling.WaitTimeout, AssertionError)


def test_wait_for_returns_the_value_once_true(clock):
    answers = iter([None, None, {"job_state": "R"}])
    assert polling.wait_for(lambda: next(answers), 10, "the job", interval=2) == {"job_state": "R"}
    assert clock == [2, 2]
