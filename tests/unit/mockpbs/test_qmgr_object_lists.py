"""qmgr directives on a comma-separated list of object names (``list node mom1,mom2``,
``set node mom1,mom2 state=offline``), as OpenPBS qmgr does: ``check_list()`` validates the
list while parsing (rc 3, caret one column before an empty or bad name), then
``execute()`` runs the directive once per name in list order, printing each object's
block in turn; an object that fails is reported (``qmgr obj=NAME svr=default: ...``) and
the later ones still run; the exit code is that of the last failure."""
import pytest

from mockpbs import testaddr
from mockpbs.cli import qmgr
from mockpbs.cli import qmgr_lang
from mockpbs.testing import server as testing

NODES = ("n1", "n2", "n3")


@pytest.fixture
def server(tmp_path, monkeypatch):
    daemon = testing.start_server(tmp_path, monkeypatch)
    # Addresses no mom listens on (reserved, so no concurrent test puts one there).
    with testaddr.reserved_addresses(len(NODES)) as mom_addresses:
        for name, address in zip(NODES, mom_addresses):
            assert run("create node %s Mom=%s" % (name, address))[0] == 0
        yield daemon
        daemon.stop()


def run(command):
    return testing.run_cli(qmgr.main, ["-c", command])


# ---------------------------------------------------------------- parsing

def test_name_list_parses_into_names_in_order():
    command = qmgr_lang.parse("list node n2,n1 state,comment")
    assert command.names == ["n2", "n1"] and command.name == "n2"
    assert command.attrs == [("state", None, None), ("comment", None, None)]
    command = qmgr_lang.parse("set node n1,n3 state=offline, comment='a b'")
    assert command.names == ["n1", "n3"]
    assert command.attrs == [("state", "=", "offline"), ("comment", "=", "a b")]


def test_per_object_gives_one_directive_per_name():
    command = qmgr_lang.parse("set node n1,n2 comment=x")
    split = command.per_object()
    assert [(c.verb, c.objtype, c.name, c.names, c.attrs) for c in split] == [
        ("set", "node", "n1", ["n1"], [("comment", "=", "x")]),
        ("set", "node", "n2", ["n2"], [("comment", "=", "x")])]
    single = qmgr_lang.parse("list node n1")
    assert single.per_object() == [single]


def test_single_name_and_attribute_first_directives_are_unchanged():
    assert qmgr_lang.parse("set server scheduling=true,comment=x").names == []
    assert qmgr_lang.parse("list server scheduling,default_queue").names == []
    assert qmgr_lang.parse("list hook h1 alarm,order").names == ["h1"]


@pytest.mark.parametrize("line,position", [
    ("list node n1,,n2", 12),     # empty name: caret on the comma before it
    ("list node n1,", 12),        # trailing comma
    ("set node n1, state=offline", 11),
    ("list hook h1,1bad", 12),    # hook names start with a letter
])
def test_bad_name_lists_are_syntax_errors_with_rc_3(line, position):
    with pytest.raises(qmgr_lang.QmgrSyntaxError) as info:
        qmgr_lang.parse(line)
    assert (info.value.position, info.value.rc) == (position, 3)


def test_bad_name_list_prints_qmgrs_syntax_error(server):
    rc, out, err = run("list node n1,,n2")
    assert (rc, out) == (3, "")
    assert err == "qmgr: Syntax error\nlist node n1,,n2\n" + " " * 12 + "^\n"


# ---------------------------------------------------------------- against the server

def test_list_prints_each_objects_block_in_turn(server):
    rc, out, err = run("list node n2,n1")
    assert (rc, err) == (0, "")
    assert [line for line in out.splitlines() if line.startswith("Node ")] == ["Node n2", "Node n1"]
    assert out == run("list node n2")[1] + run("list node n1")[1]


def test_list_with_attributes_on_each_object(server):
    assert run("set node n1 comment=first")[0] == 0
    rc, out, err = run("list node n1,n3 comment")
    assert (rc, err) == (0, "")
    assert out == "Node n1\n    comment = first\n\nNode n3\n\n"


def test_set_applies_to_every_named_object_only(server):
    rc, out, err = run("set node n1,n3 state=offline,comment=maintenance")
    assert (rc, out, err) == (0, "", "")
    for name in ("n1", "n3"):
        listing = run("list node %s state,comment" % name)[1]
        state = [line for line in listing.splitlines() if line.startswith("    state = ")]
        assert "offline" in state[0].split(" = ")[1].split(",")
        assert "    comment = maintenance" in listing.splitlines()
    assert "offline" not in run("list node n2 state")[1]
    assert "comment" not in run("list node n2")[1]
    assert run("unset node n1,n3 comment")[0] == 0
    assert "comment" not in run("list node n1")[1] + run("list node n3")[1]


def test_missing_object_is_reported_and_the_others_still_run(server):
    rc, out, err = run("list node n1,nosuch,n2")
    assert rc == 1
    assert [line for line in out.splitlines() if line.startswith("Node ")] == ["Node n1", "Node n2"]
    assert err == ("qmgr obj=nosuch svr=default: Unknown node\n"
                   "qmgr: Error (15062) returned from server\n")
    rc, out, err = run("set node nosuch,n2 comment=after")
    assert out == "" and "qmgr obj=nosuch svr=default: Unknown node\n" in err
    assert rc == run("set node nosuch comment=after")[0] != 0
    assert "comment = after" in run("list node n2")[1]


def test_stdin_mode_accepts_name_lists(server):
    rc, out, err = testing.run_cli(qmgr.main, [], stdin="set node n2,n3 comment=batch\nlist node n3,n2 comment\n")
    assert (rc, err) == (0, "")
    assert out == "Max open servers: 49\nNode n3\n    comment = batch\n\nNode n2\n    comment = batch\n\n"
