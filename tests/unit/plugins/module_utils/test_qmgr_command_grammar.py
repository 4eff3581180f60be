"""qmgr commands that no input can extend (module_utils.qmgr): object names and attribute
names checked in full against qmgr's grammar for their object type, several objects only as
a list, values without control characters, and every command fed to qmgr one whole line."""
import pytest

from ansible_collections.hpc.pbs.plugins.module_utils.server import qmgr
from ansible_collections.hpc.pbs.plugins.module_utils.server.qmgr import (
    QmgrError, QmgrValueError, attribute_name_problem, create_command, delete_command,
    export_command, import_command, list_command, object_name_problem, object_ref,
    set_command, stdin_line_problem, unset_command)
from hpc_pbs_module_fakes import CannedModule

INJECTED_ATTRIBUTE = "comment = x\ndelete hook reliable_job_startup\nset server comment"


# ------------------------------------------------------------------ the known attacks

def test_attribute_name_with_newlines_cannot_add_commands():
    with pytest.raises(QmgrValueError) as info:
        set_command("server", None, INJECTED_ATTRIBUTE, "y")
    message = str(info.value)
    assert "attribute name" in message and "accepted:" in message
    assert "newline" in message
    with pytest.raises(QmgrValueError):
        unset_command("server", None, INJECTED_ATTRIBUTE)
    with pytest.raises(QmgrValueError):
        list_command("server", None, [INJECTED_ATTRIBUTE])


def test_attribute_name_cannot_carry_a_second_assignment():
    for attribute in ("scheduling = False, comment", "scheduling=False,comment",
                      "comment,scheduling", "comment;set"):
        problem = attribute_name_problem("server", attribute)
        assert problem and "accepted:" in problem, attribute


def test_comma_in_a_node_name_is_refused_but_a_list_is_taken():
    problem = object_name_problem("node", "mom1,mom2")
    assert "comma" in problem and "accepted:" in problem
    with pytest.raises(QmgrValueError) as info:
        set_command("node", "mom1,mom2", "state", "offline", "+=")
    assert "as a list of names" in str(info.value)
    assert set_command("node", ["mom1", "mom2"], "state", "offline", "+=") == \
        "set node mom1,mom2 state += offline"
    assert list_command("node", ["mom1", "mom2"]) == "list node mom1,mom2"
    with pytest.raises(QmgrValueError):
        object_ref("node", ["mom1", "mom2,mom3"])
    with pytest.raises(QmgrValueError):
        object_ref("node", [])


def test_trailing_newline_in_a_hook_name_is_refused():
    """``re.match(r"^...$")`` would take it: ``$`` matches before a final newline."""
    problem = object_name_problem("hook", "reliable_job_startup\n")
    assert problem and "newline" in problem and "accepted:" in problem
    for build in (lambda n: delete_command("hook", n), lambda n: create_command("hook", n),
                  lambda n: list_command("hook", n),
                  lambda n: export_command("hook", n, "application/x-python"),
                  lambda n: import_command("hook", n, "application/x-config", "/tmp/x")):
        with pytest.raises(QmgrValueError):
            build("reliable_job_startup\n")
        assert build("reliable_job_startup").split()[2] == "reliable_job_startup"


# ------------------------------------------------------------------ names by object type

@pytest.mark.parametrize("object_type,name", [
    ("node", "mom1"), ("node", "001node"), ("node", "host[0]"), ("node", "n-1.example.com"),
    ("node", "a_b"), ("queue", "workq"), ("queue", "q-1_x"), ("queue", "a" * 15),
    ("sched", "default"), ("sched", "multisched_1"), ("hook", "reliable_job_startup"),
    ("hook", "h-1"), ("pbshook", "PBS_cray_atom"), ("server", "pbs-server.example.com"),
])
def test_names_pbs_takes_are_accepted(object_type, name):
    assert object_name_problem(object_type, name) is None
    assert object_ref(object_type, name) == "%s %s" % (object_type, name)


@pytest.mark.parametrize("object_type,name,wrong", [
    ("node", "", "nothing"), ("node", "mom 1", "white space"), ("node", "mom1\t", "control"),
    ("node", "mom1=x", "'='"), ("node", "mom'1", "quote"), ("node", 'mom"1', "quote"),
    ("node", "mom1;x", "';'"), ("node", "mom1@svr", "does not take"),
    ("node", "mom1\\", "does not take"), ("node", "-mom", "does not take"),
    ("node", "x" * 256, "more than 255"), ("queue", "1q", "does not take"),
    ("queue", "a" * 16, "more than 15"), ("queue", "work.q", "does not take"),
    ("hook", "1hook", "does not take"), ("hook", "h.x", "does not take"),
    ("hook", "h/../x", "does not take"), ("hook", "h\r", "newline"),
    ("sched", "default\n", "newline"), ("server", "vm,other", "comma"),
    ("node", "mom1\u2028", "white space"), ("node", "m\u00f6m", "does not take"),
])
def test_names_outside_the_grammar_are_refused_saying_why(object_type, name, wrong):
    problem = object_name_problem(object_type, name)
    assert problem and wrong in problem and "accepted:" in problem
    with pytest.raises(QmgrValueError):
        object_ref(object_type, name)


def test_unknown_object_type_and_non_string_names_are_refused():
    assert "unknown qmgr object type" in object_name_problem("resource", "x")
    assert "not a string" in object_name_problem("node", 5)
    with pytest.raises(QmgrValueError):
        object_ref("resource", "x")


# ------------------------------------------------------------------ attribute names

@pytest.mark.parametrize("object_type,attribute", [
    ("server", "resources_available.ncpus"), ("node", "resources_available.ncpus"),
    ("queue", "resources_max.mem"), ("node", "resources_available.my-res_2"),
    ("server", "default_qsub_arguments"), ("queue", "Priority"), ("node", "Mom"),
    ("hook", "enabled"), ("sched", "job_run_wait"),
])
def test_attribute_names_pbs_takes_are_accepted(object_type, attribute):
    assert attribute_name_problem(object_type, attribute) is None


@pytest.mark.parametrize("object_type,attribute,wrong", [
    ("hook", "resources_available.ncpus", "resource part"),
    ("sched", "resources_available.ncpus", "resource part"),
    ("server", "resources_available.", "resource name"),
    ("server", "resources_available.1cpu", "resource name"),
    ("server", "a.b.c", "resource name"), ("server", "_x", "does not take"),
    ("server", "max-run", "does not take"), ("server", "comment\n", "newline"),
    ("server", "", "does not take"), ("server", "comment ", "white space"),
])
def test_attribute_names_outside_the_grammar_are_refused(object_type, attribute, wrong):
    problem = attribute_name_problem(object_type, attribute)
    assert problem and wrong in problem and "accepted:" in problem


# ------------------------------------------------------------------ values and lines

@pytest.mark.parametrize("value", ["a\nb", "a\rb", "a\x00b", "a\x1bb", "a\x7fb"])
def test_values_with_control_characters_are_refused(value):
    with pytest.raises(QmgrValueError) as info:
        set_command("server", None, "comment", value)
    assert "control character" in str(info.value) or "newline" in str(info.value)


def test_tab_and_separators_inside_a_value_are_quoted_not_refused():
    assert set_command("server", None, "comment", "a\tb; c # d, e = f") == \
        'set server comment = "a\tb; c # d, e = f"'


@pytest.mark.parametrize("line,wrong", [
    ("set server comment = a;delete hook h1", "';'"),
    ("set server comment = x #y", "comment"),
    ("list node mom1\\", "continuation"),
    ("set server comment = 'abc", "unclosed quote"),
    ("list server\nlist sched", "newline"),
])
def test_stdin_line_problem_follows_qmgrs_reader(line, wrong):
    assert wrong in stdin_line_problem(line)


@pytest.mark.parametrize("line", [
    "set server comment = 'a;b'", 'set server comment = "a #b"', "set node a#b comment = x",
    "list server", "set server comment = \"it's\"",
])
def test_stdin_line_problem_accepts_quoted_separators(line):
    assert stdin_line_problem(line) is None


def test_run_batch_and_run_one_never_feed_a_line_that_holds_two_commands():
    module = CannedModule()
    runner = qmgr.Qmgr(module, "/opt/pbs/bin/qmgr")
    with pytest.raises(QmgrValueError):
        runner.run_batch(["set server comment = x\ndelete hook h1"], "test")
    with pytest.raises(QmgrValueError):
        runner.run_batch(["list server", "unset server comment;delete hook h1"], "test")
    with pytest.raises(QmgrValueError):
        runner.run_one("list hook h1\ndelete hook h1")
    assert module.calls == []


# ------------------------------------------------------------------ errors name their command

def test_a_rejected_single_write_names_object_attribute_and_value():
    err = ("qmgr obj= svr=default: Illegal attribute or resource value\n"
           "qmgr: Error (15014) returned from server\n")
    runner = qmgr.Qmgr(CannedModule(2, "Max open servers: 49\n", err), "/opt/pbs/bin/qmgr")
    command = set_command("server", None, "rpp_retry", "abc")
    with pytest.raises(QmgrError) as info:
        runner.run_batch([command, list_command("server")], "the changes to server")
    exc = info.value
    assert "server attribute rpp_retry, value 'abc'" in exc.msg
    assert "set server rpp_retry = abc" in exc.msg
    assert "Illegal attribute or resource value" in exc.msg
    assert exc.rejected == {"command": "set server rpp_retry = abc", "object_type": "server",
                            "name": None, "attribute": "rpp_retry", "value": "abc"}
    assert exc.fail_kwargs()["rejected"] == exc.rejected


def test_a_rejected_node_write_names_the_node():
    err = "qmgr obj=mom1 svr=default: Illegal attribute or resource value\n"
    runner = qmgr.Qmgr(CannedModule(2, "", err), "/opt/pbs/bin/qmgr")
    command = set_command("node", "mom1", "comment", "a b")
    with pytest.raises(QmgrError) as info:
        runner.run_batch([command], "the changes to node mom1")
    assert "node mom1 attribute comment, value 'a b'" in info.value.msg


def test_command_objects_remember_their_parts():
    command = set_command("node", ["n1", "n2"], "state", "offline", "+=")
    assert command.parts() == {"command": "set node n1,n2 state += offline",
                               "object_type": "node", "name": "n1,n2",
                               "attribute": "state", "value": "offline"}
    assert unset_command("sched", "default", "comment").describe() == \
        "sched default attribute comment"
