"""``-W`` value splitting (qsub's ``comma_token``) that mutation testing found untested
(docs/testing.md, "Mutation testing"): commas inside quotes, quotes of the other kind
inside quotes, and the unbalanced-quote error."""
import pytest

from ansible_collections.hpc.pbs.plugins.module_utils.qsub_args import (
    QsubArgumentsError, parse_qsub_arguments, split_w_items)


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
