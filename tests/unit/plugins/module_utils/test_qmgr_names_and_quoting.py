"""Edges of the qmgr command builder the other tests leave unchecked.

The tests cover edges of ``plugins/module_utils/server/qmgr.py`` that the other unit tests leave
unchecked: the longest object names OpenPBS 23.06 stores (PBS_MAXSERVERNAME = PBS_MAXHOSTNAME
255, PBS_MAXSCHEDNAME 15, a hook name in a PBS_HOOK_NAME_SIZE 512 buffer with its NUL), the DEL
character (127, a control character like those below 32), a value holding only one kind of
quote (qmgr takes it quoted with the other kind), and what a failed qmgr call hands to
``fail_json``.
"""
import pytest

from ansible_collections.hpc.pbs.plugins.module_utils.server import qmgr

DEL = "\x7f"


# -- object names: the longest PBS stores -----------------------------------------------------

@pytest.mark.parametrize("object_type, longest", [
    ("server", 255), ("sched", 15), ("hook", 511), ("pbshook", 511),
])
def test_the_longest_name_is_accepted_and_one_more_character_refused(object_type, longest):
    assert qmgr.object_name_problem(object_type, "a" * longest) is None
    problem = qmgr.object_name_problem(object_type, "a" * (longest + 1))
    assert problem and "%d characters, more than %d" % (longest + 1, longest) in problem, problem


# -- DEL is a control character -----------------------------------------------------------------

def test_a_name_holding_del_is_refused_as_a_control_character():
    assert "it holds the control character '\\x7f'" in qmgr.object_name_problem("node", "n" + DEL)
    assert "it holds the control character '\\x7f'" in qmgr.attribute_name_problem("server", "comment" + DEL)


def test_a_character_above_del_is_no_control_character():
    """\\x80 is refused by the name grammar, not as a control character."""
    problem = qmgr.object_name_problem("node", "n\x80")
    assert "a character qmgr does not take there" in problem, problem


def test_a_value_holding_del_is_refused_as_a_control_character():
    problem = qmgr.value_problem("server", "comment", "a" + DEL + "b")
    assert problem == ("server attribute comment: a qmgr value cannot hold a newline or other "
                       "control character ('\\x7f' in 'a\\x7fb')")
    with pytest.raises(qmgr.QmgrValueError, match="control character"):
        qmgr.quote_value("a" + DEL + "b")


@pytest.mark.parametrize("char", ["\x01", "\x1b", DEL])
def test_quote_value_refuses_a_control_character(char):
    with pytest.raises(qmgr.QmgrValueError) as caught:
        qmgr.quote_value("a%sb" % char)
    assert str(caught.value) == "a qmgr value cannot contain a control character: %r" % ("a%sb" % char)


@pytest.mark.parametrize("value", ["a\nb", "a\rb", "\n"])
def test_quote_value_names_a_newline_as_such(value):
    with pytest.raises(qmgr.QmgrValueError) as caught:
        qmgr.quote_value(value)
    assert str(caught.value) == "a qmgr value cannot contain a newline: %r" % value


def test_a_tab_and_characters_above_del_are_quoted_not_refused():
    assert qmgr.quote_value("a\tb") == '"a\tb"'
    assert qmgr.quote_value("caf\xe9") == '"caf\xe9"'


# -- quotes ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("value, quoted", [
    ("it's", '"it\'s"'),
    ('say "hi"', "'say \"hi\"'"),
])
def test_a_value_with_one_kind_of_quote_is_written_with_the_other(value, quoted):
    assert qmgr.value_problem("server", "comment", value) is None
    assert str(qmgr.set_command("server", None, "comment", value)) == "set server comment = %s" % quoted


def test_a_value_with_both_quotes_is_refused():
    problem = qmgr.value_problem("server", "comment", "it's \"x\"")
    assert problem and "cannot take a value containing both \" and '" in problem, problem


# -- attribute names that are not strings ------------------------------------------------------

def test_an_attribute_name_that_is_no_string_says_what_is_accepted():
    assert qmgr.attribute_name_problem("server", 5) == (
        "attribute name 5 is not a string; accepted: an attribute name as qmgr lists it: a "
        "letter, then letters, digits or '_' (for server, queue and node also "
        "ATTRIBUTE.RESOURCE such as resources_available.ncpus)")


def test_a_refused_attribute_name_says_what_is_accepted():
    problem = qmgr.attribute_name_problem("hook", "resources_available.ncpus")
    assert problem.endswith("accepted: an attribute name as qmgr lists it: a letter, then "
                            "letters, digits or '_' (for server, queue and node also "
                            "ATTRIBUTE.RESOURCE such as resources_available.ncpus)"), problem


# -- a failed call ---------------------------------------------------------------------------------

def test_a_failed_call_hands_qmgrs_stdout_and_stderr_to_fail_json():
    """In stdin mode qmgr prints ``Max open servers: 49`` on stdout, a refused value on
    stderr (transcript k_: exit 166, error 15014)."""
    stderr = ("qmgr obj= svr=default: Illegal attribute or resource value\n"
              "qmgr: Error (15014) returned from server\n")
    error = qmgr.QmgrError("qmgr failed", ["/opt/pbs/bin/qmgr", "-a"], 166,
                           "Max open servers: 49\n", stderr,
                           commands=["set server scheduler_iteration = abc"])
    assert error.fail_kwargs() == dict(msg="qmgr failed", cmd=["/opt/pbs/bin/qmgr", "-a"], rc=166,
                                       stdout="Max open servers: 49\n", stderr=stderr,
                                       commands=["set server scheduler_iteration = abc"])


# -- several objects -------------------------------------------------------------------------------

def test_only_a_name_with_a_comma_gets_the_several_objects_hint():
    """qmgr runs ``list node a,b`` once per name, but this collection takes several objects
    only as a list of names: a comma in one name is refused with that hint, other bad names
    with their own problem only."""
    with pytest.raises(qmgr.QmgrValueError) as caught:
        qmgr.object_ref("node", "n1,n2")
    assert str(caught.value).startswith("node name 'n1,n2' is not accepted: it holds a comma")
    assert str(caught.value).endswith(" (several objects are given as a list of names, never in one name)")
    with pytest.raises(qmgr.QmgrValueError) as caught:
        qmgr.object_ref("node", "n1 n2")
    assert str(caught.value) == ("node name 'n1 n2' is not accepted: it holds white space; accepted: a "
                                 "letter or digit, then letters, digits, '.', '_', '-', '[' or ']'")
    assert qmgr.object_ref("node", ["n1", "n2"]) == "node n1,n2"
