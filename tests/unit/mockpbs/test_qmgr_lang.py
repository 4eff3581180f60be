"""Unit tests of qmgr directive parsing and list/print formatting (mockpbs.cli.qmgr_lang)."""
import pytest

from mockpbs.cli import qmgr_lang


def test_abbreviated_set_server_parses_attribute_and_value():
    command = qmgr_lang.parse("s s scheduler_iteration=300")
    assert (command.verb, command.objtype, command.name) == ("set", "server", None)
    assert command.attrs == [("scheduler_iteration", "=", "300")]


def test_list_sched_distinguishes_object_name_from_attribute_list():
    command = qmgr_lang.parse("list sched default job_run_wait,throughput_mode")
    assert command.name == "default"
    assert [a[0] for a in command.attrs] == ["job_run_wait", "throughput_mode"]
    assert qmgr_lang.parse("list server default_queue").attrs == [("default_queue", None, None)]


def test_quoted_pieces_concatenate_without_escapes():
    assert qmgr_lang.parse('set server comment = "say \\"hi\\""').attrs[0][2] == "say \\hi\\"
    assert qmgr_lang.parse("set server comment = 'it''s'").attrs[0][2] == "its"
    assert qmgr_lang.parse('set server comment = "a,b c=d"').attrs[0][2] == "a,b c=d"
    assert qmgr_lang.parse('set hook h1 event = ""').attrs == [("event", "=", "")]


def test_create_with_several_attributes_and_spaces_after_commas():
    command = qmgr_lang.parse("set pbshook PBS_cray_atom alarm=300, order=100, fail_action=offline_vnodes")
    assert command.attrs == [("alarm", "=", "300"), ("order", "=", "100"), ("fail_action", "=", "offline_vnodes")]
    command = qmgr_lang.parse('create hook h2 event="queuejob,modifyjob",enabled=false,alarm=20')
    assert command.attrs[0] == ("event", "=", "queuejob,modifyjob")


@pytest.mark.parametrize("line,position,rc", [
    ("set server comment = hello world", 27, 4),
    ("set server no_such_attr = 1", 24, 4),
    ("set server default_qsub_arguments = -r y", 39, 4),
    ("create hook 1bad-name", 12, 3),
    ("delete hook 1bad", 12, 3),
])
def test_syntax_errors_carry_caret_column_and_exit_code(line, position, rc):
    with pytest.raises(qmgr_lang.QmgrSyntaxError) as info:
        qmgr_lang.parse(line)
    assert (info.value.position, info.value.rc) == (position, rc)


def test_import_directive_keeps_type_encoding_and_file():
    command = qmgr_lang.parse("import hook h1 application/x-python default /root/x.py")
    assert (command.content_type, command.encoding, command.filename) == (
        "application/x-python", "default", "/root/x.py")


def test_list_value_wraps_after_80_columns_then_after_every_comma():
    text = qmgr_lang.format_list_value(
        "event", "periodic,execjob_begin,execjob_prologue,execjob_epilogue,execjob_end,"
                 "exechost_periodic,exechost_startup")
    assert text == ("    event = periodic,execjob_begin,execjob_prologue,execjob_epilogue,\n"
                    "\texecjob_end,\n\texechost_periodic,\n\texechost_startup\n")
    assert qmgr_lang.format_list_value("preempt_prio", "express_queue, normal_jobs") == \
        "    preempt_prio = express_queue, normal_jobs\n"


def test_print_quotes_values_with_blanks_and_splits_list_attributes():
    assert qmgr_lang.format_print_attr("server", "comment", "say \\hi\\") == 'set server comment = "say \\hi\\"\n'
    assert qmgr_lang.format_print_attr("server", "managers", "pbsuser@*,root@vm") == \
        "set server managers = pbsuser@*\nset server managers += root@vm\n"
    assert qmgr_lang.format_print_attr("hook h1", "event", "queuejob,execjob_launch") == \
        "set hook h1 event = queuejob\nset hook h1 event += execjob_launch\n"
