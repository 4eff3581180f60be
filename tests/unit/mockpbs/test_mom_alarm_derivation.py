"""Mock pbs_mom: the $sister_join_job_alarm / $job_launch_delay it holds when its config
has no line for them, as real pbs_mom (OpenPBS 22.05.11 and 23.06.06) derives them.

Reference: mom_main.c (read_config() sets -1, the hooks directory read at the start sums
the enabled hooks of each event, initialize() turns a -1 left into 30), requests.c
req_copy_hookfile (sums again with ``if ... else if``, keeps the value when no hook counts,
``log_err``: ``joinjob_alarm_time updated to N``), mom_func.c process_hup (config re-read,
hooks not). module_utils/cluster/effective_timeouts.py states the same rule for the collection.
"""
import os

import pytest

from mockpbs import wire
from mockpbs.mom.daemon import Mom
from mockpbs.testaddr import release_address, reserve_address

BEGIN_45 = "type=site\nenabled=true\nevent=execjob_begin\nalarm=45\n"
BEGIN_45_OFF = "type=site\nenabled=false\nevent=execjob_begin\nalarm=45\n"
BOTH_10 = "type=site\nenabled=true\nevent=execjob_begin,execjob_prologue\nalarm=10\n"
PROLOGUE_20 = "type=site\nenabled=true\nevent=execjob_prologue\nalarm=20\n"
BEGIN_100_OFF = "type=site\nenabled=false\nevent=execjob_begin\nalarm=100\n"


@pytest.fixture
def mom_factory(tmp_path):
    moms = []

    def make(config_text=None, hooks=None):
        """A mom on ``tmp_path/mom1`` (the same home each call: a second call is the
        restart); ``hooks`` {name: .HK text} written before it starts."""
        home = tmp_path / "mom1"
        (home / "mom_priv" / "hooks").mkdir(parents=True, exist_ok=True)
        if config_text is not None:
            (home / "mom_priv" / "config").write_text(config_text)
        for name, text in (hooks or {}).items():
            (home / "mom_priv" / "hooks" / (name + ".HK")).write_text(text)
        mom = Mom(str(home), "mom1", "mom1", reserve_address(), "server", server_address="127.0.0.1",
                  server_port=1, exit_on_bad_config=lambda: None)
        moms.append(mom)
        assert mom.start(hello=False)
        return mom

    yield make
    for mom in moms:
        mom.stop()
        release_address(mom.address)


def copy(mom, name, hk):
    reply = wire.request(mom.address, wire.MOM_PORT, {"op": "hook_copy", "name": name, "files": {"HK": hk}})
    assert reply == {"ok": True}


def held(mom):
    return mom.join_alarm(), mom.launch_delay()


def updates(mom):
    """The ``... updated to N`` messages the mom logged, in order (class, object, text)."""
    found = []
    for name in sorted(os.listdir(os.path.join(mom.pbs_home, "mom_logs"))):
        with open(os.path.join(mom.pbs_home, "mom_logs", name)) as handle:
            for line in handle.read().splitlines():
                if " updated to " in line:
                    found.append(line.split(";", 1)[1])
    return found


def join_line(n):
    return "0001;pbs_mom;Svr;pbs_mom;req_copy_hookfile, joinjob_alarm_time updated to %d" % n


def launch_line(n):
    return "0001;pbs_mom;Svr;pbs_mom;req_copy_hookfile, job_launch_delay updated to %d" % n


def test_start_without_hooks_holds_30(mom_factory):
    assert held(mom_factory("")) == (30, 30)


def test_start_sums_enabled_hooks_a_hook_with_both_events_counts_for_both(mom_factory):
    mom = mom_factory("", {"b45": BEGIN_45, "both": BOTH_10, "p20": PROLOGUE_20, "off": BEGIN_100_OFF})
    assert held(mom) == (55, 30)
    assert updates(mom) == []           # the start logs nothing


def test_start_config_line_wins_over_hooks(mom_factory):
    mom = mom_factory("$sister_join_job_alarm 7\n$job_launch_delay 8\n", {"b45": BEGIN_45, "p20": PROLOGUE_20})
    assert held(mom) == (7, 8)
    copy(mom, "both", BOTH_10)
    assert held(mom) == (7, 8)
    assert updates(mom) == []


def test_copy_both_events_hook_counts_for_join_only_while_join_has_no_line(mom_factory):
    mom = mom_factory("")
    copy(mom, "both", BOTH_10)
    # join: 10 (logged); launch: no hook counted for it, so it keeps its 30.
    assert held(mom) == (10, 30)
    assert updates(mom) == [join_line(10)]
    copy(mom, "p20", PROLOGUE_20)
    assert held(mom) == (10, 20)
    assert updates(mom) == [join_line(10), join_line(10), launch_line(20)]


def test_copy_with_a_join_line_a_both_events_hook_counts_for_launch(mom_factory):
    mom = mom_factory("$sister_join_job_alarm 7\n")
    copy(mom, "both", BOTH_10)
    assert held(mom) == (7, 10)
    assert updates(mom) == [launch_line(10)]


def test_disabling_the_last_hook_keeps_the_value_held(mom_factory):
    mom = mom_factory("")
    copy(mom, "b45", BEGIN_45)
    assert held(mom) == (45, 30)
    copy(mom, "b45", BEGIN_45_OFF)
    assert held(mom) == (45, 30)        # not 30: no hook counted, the value stays
    assert updates(mom) == [join_line(45)]


def test_sighup_holds_30_until_the_next_copy_or_restart(mom_factory):
    mom = mom_factory("", {"b45": BEGIN_45, "both": BOTH_10})
    assert held(mom) == (55, 10)
    assert mom.hangup() is True
    assert held(mom) == (30, 30)        # the hooks are not read again
    copy(mom, "p20", PROLOGUE_20)
    assert held(mom) == (55, 20)        # both-events hook: join only, at a copy
    assert mom.hangup() is True
    assert held(mom) == (30, 30)
    mom.stop()
    restarted = mom_factory(None)
    assert held(restarted) == (55, 30)  # the start: both-events hook counts for both


def test_sighup_with_a_line_then_without_it(mom_factory):
    mom = mom_factory("$sister_join_job_alarm 7\n", {"b45": BEGIN_45})
    assert held(mom) == (7, 30)
    with open(os.path.join(mom.priv, "config"), "w") as handle:
        handle.write("")
    assert mom.hangup() is True
    assert held(mom) == (30, 30)        # the line gone: 30, not the hooks' 45
    copy(mom, "b45", BEGIN_45)
    assert held(mom) == (45, 30)
