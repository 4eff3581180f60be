"""default_qsub_arguments editing (PP-928 interface 1) with qsub's option rules."""
import pytest

from ansible_collections.hpc.pbs.plugins.module_utils.qsub_args import (
    QsubArgumentsError, edit_default_qsub_arguments, parse_qsub_arguments, tolerate_value)


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
