"""Attributes qmgr does not know, answered as a real OpenPBS 23.06 answers them (captured on
the openpbs test-cluster backend): after an object name the request goes to the server,
which refuses it whole with PBSE_NOATTR; without a name the word is taken for a name and the
``=`` after it is a syntax error."""
import pytest

from mockpbs import testaddr
from mockpbs.cli import common, qmgr
from mockpbs.testing import server as testing

ROOT = {"user": "root", "group": "root", "host": "vm"}
UNDEFINED = "qmgr obj=%s svr=%s: Undefined attribute \nqmgr: Error (15002) returned from server\n"


@pytest.fixture
def server(tmp_path, monkeypatch):
    monkeypatch.setattr(common, "identity", lambda: dict(ROOT))
    with testaddr.reserved_addresses(1) as (address,):
        daemon = testing.start_server(tmp_path, monkeypatch, address=address)
        yield
        daemon.stop()


def qmgr_c(directive):
    return testing.run_cli(qmgr.main, ["-c", directive])


@pytest.mark.parametrize("directive, obj, svr, rc", [
    ("set sched default no_such_attribute = 1", "default", "default", 154),
    ("set queue workq no_such = 1", "workq", "default", 154),
    ("set server vm no_such = 1", "vm", "vm", 154),
    ("unset sched default no_such", "default", "default", 154),
    ("list sched default no_such", "default", "default", 1),
])
def test_unknown_attribute_after_a_name_is_refused_by_the_server(server, directive, obj, svr, rc):
    assert qmgr_c(directive) == (rc, "", UNDEFINED % (obj, svr))


def test_a_refused_request_changes_none_of_its_attributes(server):
    before = qmgr_c("list sched default scheduler_iteration")
    assert qmgr_c("set sched default no_such = 1, scheduler_iteration = 300")[0] == 154
    assert qmgr_c("list sched default scheduler_iteration") == before


def test_unknown_word_without_a_name_is_a_name_then_a_syntax_error(server):
    rc, out, err = qmgr_c("set sched no_such_attribute = 1")
    assert (rc, out) == (4, "")
    assert err == ("qmgr: Syntax error\nset sched no_such_attribute = 1\n"
                   "                            ^\n")
