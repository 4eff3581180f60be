"""default_qsub_arguments editing (PP-928 interface 1) with qsub's option rules."""

import pytest
from ansible_collections.hpc.pbs.plugins.module_utils.jobs import qsub_args
from ansible_collections.hpc.pbs.plugins.module_utils.jobs.qsub_args import (
    QsubArgumentsError, edit_default_qsub_arguments, parse_qsub_arguments, split_w_items, tolerate_value)


@pytest.mark.parametrize("current, value, expected", [
    ("", "job_start", "-W tolerate_node_failures=job_start"),
    (None, "all", "-W tolerate_node_failures=all"),
    ("-r n -W umask=022 -W group_list=x", "job_start",
     "-r n -W umask=022 -W group_list=x -W tolerate_node_failures=job_start"),
    ("-r n -W tolerate_node_failures=all -m n", "job_start",
     "-r n -W tolerate_node_failures=job_start -m n"),
    ("-W umask=022,tolerate_node_failures=all -V", None, "-W umask=022 -V"),
    ("-W tolerate_node_failures=all", None, ""),
    ("-W tolerate_node_failures=bogus", "none", "-W tolerate_node_failures=none"),
    ("-W tolerate_node_failures=all -W tolerate_node_failures=none", "all",
     "-W tolerate_node_failures=all"),
    ('-N "my job" -r n', "all", '-N "my job" -r n -W tolerate_node_failures=all'),
])
def test_edit_keeps_everything_else(current, value, expected):
    new, changed = edit_default_qsub_arguments(current, value)
    assert new == expected and changed is True
    assert tolerate_value(parse_qsub_arguments(new)) == value


@pytest.mark.parametrize("current, value", [
    ("-r n -W tolerate_node_failures=job_start", "job_start"),
    ("-r n", None),
    ("", None),
    ("-ry -W umask=022,tolerate_node_failures=all", "all"),
])
def test_unchanged_when_already_right(current, value):
    assert edit_default_qsub_arguments(current, value) == (current, False)


@pytest.mark.parametrize("current", [
    "-W 'unbalanced", "-x", "-r", "-W noequals", "/bin/sleep 5", "-r n -- script",
])
def test_refuses_to_edit_what_it_cannot_parse(current):
    with pytest.raises(QsubArgumentsError):
        edit_default_qsub_arguments(current, "all")


def test_refuses_an_unknown_value_and_an_unwritable_token():
    with pytest.raises(QsubArgumentsError):
        edit_default_qsub_arguments("", "bogus")
    with pytest.raises(QsubArgumentsError):
        edit_default_qsub_arguments("-N 'a\"b'", "all")


def test_strict_parse_rejects_a_bogus_tolerate_value():
    with pytest.raises(QsubArgumentsError, match="illegal -W value"):
        parse_qsub_arguments("-W tolerate_node_failures=bogus")
    assert parse_qsub_arguments("-W tolerate_node_failures=bogus", check_tolerate=False)


@pytest.mark.parametrize("value, items", [
    ("umask=022,group_list=x", ["umask=022", "group_list=x"]),
    ("a='x,y',b", ["a='x,y'", "b"]),
    ('a="it\'s,here",b', ['a="it\'s,here"', "b"]),
    ("a='',b", ["a=''", "b"]),
])
def test_commas_split_only_outside_quotes(value, items):
    assert split_w_items(value) == items


@pytest.mark.parametrize("value, quote", [("a='x,b", "'"), ('a="x', '"')])
def test_an_unbalanced_quote_is_an_error_naming_it(value, quote):
    with pytest.raises(QsubArgumentsError) as error:
        split_w_items(value)
    assert str(error.value) == "unbalanced %s in -W value %r" % (quote, value)


def test_a_w_item_after_another_option_is_still_checked():
    with pytest.raises(QsubArgumentsError, match="qsub needs name=value items"):
        parse_qsub_arguments("-r n -W noequals")


@pytest.mark.parametrize("current, value, expected", [
    ("-W tolerate_node_failures=none,umask=022,group_list=x", "all",
     "-W tolerate_node_failures=all,umask=022,group_list=x"),
    ("-W tolerate_node_failures=none,umask=022 -r n", None, "-W umask=022 -r n"),
    ("-W tolerate_node_failures=none,tolerate_node_failures=all,umask=022", "job_start",
     "-W tolerate_node_failures=job_start,umask=022"),
])
def test_items_after_the_tolerate_item_are_kept(current, value, expected):
    assert edit_default_qsub_arguments(current, value) == (expected, True)


@pytest.mark.parametrize("rendered, says", [
    # unbalanced quote: shlex cannot split it
    ("-W 'tolerate_node_failures=all", "does not parse back"),
    # a tolerate value qsub refuses
    ("-r n -W tolerate_node_failures=bogus", "qsub: illegal -W value"),
    # the other options lost, the tolerate value right
    ("-W tolerate_node_failures=all", "parses back as"),
])
def test_a_new_text_that_does_not_parse_back_is_refused(monkeypatch, rendered, says):
    monkeypatch.setattr(qsub_args, "render_options", lambda options: rendered)
    with pytest.raises(QsubArgumentsError) as error:
        edit_default_qsub_arguments("-r n", "all")
    assert says in str(error.value)
    assert repr(rendered) in str(error.value)
