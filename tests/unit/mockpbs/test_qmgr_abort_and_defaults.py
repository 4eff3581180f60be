"""The mock qmgr against OpenPBS 23.06 qmgr (src/cmds/qmgr.c main() and execute(), the
reference transcripts and the facts measured on a real OpenPBS):

- ``-a`` stops at the first directive that fails: exit 1 for a syntax error, 2 for a request
  the server refused; a directive naming several objects stops at the first one refused.
  Without ``-a`` every directive runs and the exit code is the last directive's.
- ``list sched nosuch`` exits 0 and prints nothing; ``list queue nosuchq`` exits 1 with
  ``Unknown queue`` and ``Error (15018)``.
- ``unset server scheduler_iteration`` leaves ``scheduler_iteration = 600`` listed (the
  server writes some defaults back, mgr_server_unset()); other attributes disappear.
"""
import pytest

from mockpbs import testaddr
from mockpbs.cli import qmgr
from mockpbs.testing import server as testing

NODES = ("n1", "n2", "n3")
ILLEGAL_VALUE = ("qmgr obj= svr=default: Illegal attribute or resource value\n"
                 "qmgr: Error (15014) returned from server\n")


@pytest.fixture
def server(tmp_path, monkeypatch):
    daemon = testing.start_server(tmp_path, monkeypatch)
    with testaddr.reserved_addresses(len(NODES)) as mom_addresses:
        for name, address in zip(NODES, mom_addresses):
            assert run("create node %s Mom=%s" % (name, address))[0] == 0
        yield daemon
        daemon.stop()


def run(command, *flags):
    return testing.run_cli(qmgr.main, list(flags) + ["-c", command])


def feed(lines, *flags):
    return testing.run_cli(qmgr.main, list(flags), stdin="".join(l + "\n" for l in lines))


def listed(command):
    rc, out, _unused = run(command)
    assert rc == 0
    return out


# ------------------------------------------------------------------ -a with -c

def test_syntax_error_exits_1_with_a_and_4_without(server):
    rc, _unused, err = run("set server no_such_attr = 1", "-a")
    assert rc == 1 and err.startswith("qmgr: Syntax error\n")
    assert run("set server no_such_attr = 1")[0] == 4


def test_refused_request_exits_2_with_a_and_its_error_number_without(server):
    assert run("set server scheduler_iteration = abc", "-a") == (2, "", ILLEGAL_VALUE)
    assert run("set server scheduler_iteration = abc") == (166, "", ILLEGAL_VALUE)
    assert run("list queue nosuchq", "-a")[0] == 2


# ------------------------------------------------------------------ -a on stdin

def test_stdin_with_a_stops_at_the_first_refused_directive(server):
    rc, out, err = feed(["set server comment = before",
                         "set server scheduler_iteration = abc",
                         "set server mail_from = after"], "-a")
    assert rc == 2 and err == ILLEGAL_VALUE
    assert out == "Max open servers: 49\n"
    assert "comment = before" in listed("list server comment")
    assert "mail_from = adm" in listed("list server mail_from")


def test_stdin_with_a_stops_at_a_syntax_error(server):
    rc, _unused, err = feed(["set server comment = one", "set server no_such_attr = 1",
                             "set server comment = two"], "-a")
    assert rc == 1 and "Syntax error" in err
    assert "comment = one" in listed("list server comment")


def test_stdin_without_a_runs_everything_and_exits_with_the_last_directives_code(server):
    rc, _unused, err = feed(["set server scheduler_iteration = abc", "set server comment = x"])
    assert rc == 0 and err == ILLEGAL_VALUE
    assert "comment = x" in listed("list server comment")
    rc, _unused, _unused = feed(["set server comment = y", "set server scheduler_iteration = abc"])
    assert rc == 166


def test_stdin_skips_blank_and_comment_lines(server):
    rc, _unused, _unused = feed(["set server scheduler_iteration = abc", "", "# a comment"])
    assert rc == 166


def test_a_stops_a_name_list_at_the_first_refused_object(server):
    rc, _unused, err = run("set node n1,nosuch,n3 comment=x", "-a")
    assert rc == 2 and "qmgr obj=nosuch svr=default: Unknown node" in err
    assert "comment = x" in listed("list node n1 comment")
    assert "comment" not in listed("list node n3 comment")
    rc, _unused, _unused = run("set node n1,nosuch,n3 comment=y")
    assert rc == 15062 % 256
    assert "comment = y" in listed("list node n3 comment")


def test_unknown_option_is_refused_with_usage(server):
    rc, _unused, err = testing.run_cli(qmgr.main, ["-x", "-c", "list server"])
    assert rc == 1 and "Usage: qmgr [-a] [-c command]" in err


# ------------------------------------------------------------------ missing objects

@pytest.mark.parametrize("command", ["list sched nosuch", "print sched nosuch",
                                     "list sched nosuch scheduling"])
def test_unknown_scheduler_lists_nothing_and_exits_0(server, command):
    assert run(command) == (0, "", "")


def test_default_scheduler_is_still_listed_by_name(server):
    out = listed("list sched default job_run_wait")
    assert out == "Sched default\n    job_run_wait = runjob_hook\n\n"


def test_unknown_queue_exits_1_naming_it(server):
    assert run("list queue nosuchq") == (
        1, "", "qmgr obj=nosuchq svr=default: Unknown queue\n"
               "qmgr: Error (15018) returned from server\n")


# ------------------------------------------------------------------ unset and defaults

@pytest.mark.parametrize("attribute,value", [
    ("scheduler_iteration", "600"), ("log_events", "511"), ("query_other_jobs", "True"),
    ("resources_default.ncpus", "1"), ("max_array_size", "10000"), ("scheduling", "True"),
])
def test_server_unset_keeps_listing_the_default(server, attribute, value):
    assert run("set server %s = 7" % attribute)[0] in (0, 166)
    assert run("unset server %s" % attribute)[0] == 0
    assert "    %s = %s\n" % (attribute, value) in listed("list server")


@pytest.mark.parametrize("attribute", ["default_queue", "node_fail_requeue",
                                       "resend_term_delay", "max_job_sequence_id",
                                       "default_chunk.ncpus", "comment"])
def test_server_unset_of_other_attributes_removes_them_from_the_listing(server, attribute):
    assert run("unset server %s" % attribute)[0] == 0
    assert "    %s = " % attribute not in listed("list server")


def test_sched_unset_keeps_listing_the_default(server):
    assert run("set sched scheduler_iteration = 300")[0] == 0
    assert run("unset sched scheduler_iteration")[0] == 0
    assert "scheduler_iteration = 600" in listed("list sched default scheduler_iteration")
