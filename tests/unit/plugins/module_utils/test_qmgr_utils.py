"""module_utils.qmgr: parsing of every qmgr list format in the transcripts, quoting."""

import glob
import os
import pytest
from ansible_collections.hpc.pbs.plugins.module_utils.server.qmgr import (
    QmgrValueError, parse_list_output, quote_value, set_command, split_list_value)
from ansible_collections.hpc.pbs.plugins.module_utils.pbs.pbs_conf import resolve_pbs_paths, PbsConfError
from ansible_collections.hpc.pbs.plugins.module_utils.server import qmgr
from hpc_pbs_module_fakes import CannedModule, FakeQmgr


FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "fixtures", "qmgr_list")


def fixture(number):
    with open(os.path.join(FIXTURES, "list_%02d.txt" % number)) as handle:
        return handle.read()


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(FIXTURES, "list_*.txt"))))
def test_every_transcript_listing_parses_with_every_attribute_line(path):
    with open(path) as handle:
        text = handle.read()
    objects = parse_list_output(text)
    assert objects
    attr_lines = [l for l in text.splitlines() if l.startswith("    ")]
    assert sum(len(attrs) for _kind, _name, attrs in objects) == len(attr_lines)
    headers = [l for l in text.splitlines() if l and not l.startswith((" ", "\t", "Max open"))]
    assert [(k + " " + n) for k, n, _attrs in objects] == headers


def test_wrapped_event_list_is_joined():
    [(kind, name, attrs)] = parse_list_output(fixture(2))
    assert (kind, name) == ("Hook", "pbs_cgroups")
    assert attrs["event"] == ("execjob_begin,execjob_epilogue,execjob_end,execjob_launch,"
                              "execjob_attach,execjob_resize,execjob_abort,"
                              "execjob_postsuspend,execjob_preresume,exechost_periodic,"
                              "exechost_startup")
    assert attrs["user"] == "pbsadmin" and attrs["fail_action"] == "offline_vnodes"


def test_several_pbshooks_in_one_listing():
    objects = parse_list_output(fixture(3))
    assert [n for _kind, n, _attrs in objects] == ["PBS_alps_inventory_check", "PBS_power", "PBS_cray_atom"]
    power = objects[1][2]
    assert split_list_value(power["event"])[-3:] == ["execjob_end", "exechost_periodic", "exechost_startup"]
    assert power["order"] == "2000"
    assert "freq" not in objects[2][2]


def test_server_values_with_spaces_and_trailing_blank():
    [(kind, name, attrs)] = parse_list_output(fixture(0))
    assert (kind, name) == ("Server", "vm")
    assert attrs["state_count"] == "Transit:0 Queued:0 Held:0 Waiting:0 Running:0 Exiting:0 Begun:0"
    assert attrs["resources_default.ncpus"] == "1"


def test_sched_list_value_with_comma_space():
    [(kind, name, attrs)] = parse_list_output(fixture(1))
    assert (kind, name) == ("Sched", "default")
    assert attrs["preempt_prio"] == "express_queue, normal_jobs"
    assert split_list_value(attrs["preempt_prio"]) == ["express_queue", "normal_jobs"]


def test_stdin_mode_output_skips_max_open_servers():
    objects = parse_list_output(fixture(38))
    assert objects == [("Server", "vm", {"default_queue": "workq"}),
                       ("Sched", "default", {"job_run_wait": "runjob_hook"})]


def test_comment_with_comma_and_equals_and_backslashes():
    assert parse_list_output(fixture(33))[0][2]["comment"] == "a,b c=d"
    assert parse_list_output(fixture(34))[0][2]["comment"] == "say \\hi\\"


def test_empty_event_list_is_empty_string():
    text = "Hook h1\n    type = site\n    event = \"\"\n    user = pbsadmin\n\n"
    assert parse_list_output(text)[0][2]["event"] == ""
    assert split_list_value("") == []


def test_garbage_is_refused():
    with pytest.raises(ValueError):
        parse_list_output("    orphan = 1\n")


@pytest.mark.parametrize("value,quoted", [
    ("runjob_hook", "runjob_hook"),
    ("True", "True"),
    ("pbsuser@*", "pbsuser@*"),
    ("/usr/sbin/sendmail", "/usr/sbin/sendmail"),
    ("hello world", '"hello world"'),
    ("a,b c=d", '"a,b c=d"'),
    ("queuejob,execjob_launch", '"queuejob,execjob_launch"'),
    ("-W tolerate_node_failures=job_start", '"-W tolerate_node_failures=job_start"'),
    ('say "hi"', "'say \"hi\"'"),
    ("it's", '"it\'s"'),
    ("", '""'),
])
def test_quote_value_follows_qmgr_rules(value, quoted):
    assert quote_value(value) == quoted


@pytest.mark.parametrize("value", ["both \" and '", "two\nlines"])
def test_unwritable_values_are_refused(value):
    with pytest.raises(QmgrValueError):
        quote_value(value)


def test_set_command_shapes():
    assert set_command("sched", "default", "job_run_wait", "none") == \
        "set sched default job_run_wait = none"
    assert set_command("server", None, "managers", "root@vm", "+=") == \
        "set server managers += root@vm"


def test_pbs_conf_resolution(tmp_path):
    conf = tmp_path / "pbs.conf"
    conf.write_text("PBS_EXEC=/opt/x\nPBS_HOME = /var/spool/y\n# PBS_SERVER=no\nPBS_SERVER=s1\n")
    paths = resolve_pbs_paths(str(conf), environ={})
    assert (paths.home, paths.exec_dir, paths.qmgr) == ("/var/spool/y", "/opt/x", "/opt/x/bin/qmgr")
    assert paths.conf["PBS_SERVER"] == "s1"
    paths = resolve_pbs_paths(None, environ={"PBS_CONF_FILE": str(conf), "PBS_HOME": "/h"})
    assert (paths.home, paths.exec_dir) == ("/h", "/opt/x")
    paths = resolve_pbs_paths(None, environ={"PBS_CONF_FILE": str(tmp_path / "missing")})
    assert (paths.home, paths.exec_dir) == ("/var/spool/pbs", "/opt/pbs")
    with pytest.raises(PbsConfError):
        resolve_pbs_paths(str(tmp_path / "missing"), environ={})


QMGR = "/opt/pbs/bin/qmgr"
NO_SERVER = "Connection refused\nqmgr: cannot connect to server vm\n"
STOPPED = (" qmgr stopped at the first rejected command; fix the value or attribute it "
           "names and run the task again.")


class FakeQmgrModule(object):
    """An AnsibleModule stand-in whose ``run_command`` is :class:`FakeQmgr`'s."""

    def __init__(self, fake):
        self.fake = fake

    def run_command(self, args, **kwargs):
        return self.fake.run_command(self, args, **kwargs)


def runner(rc=0, out="", err=""):
    return qmgr.Qmgr(CannedModule(rc, out, err), QMGR)


# -- hook content types ----------------------------------------------------------------------

@pytest.mark.parametrize("build, config_command", [
    (lambda content_type: qmgr.import_command("hook", "h1", content_type, "/tmp/h1.CF"),
     "import hook h1 application/x-config default /tmp/h1.CF"),
    (lambda content_type: qmgr.export_command("hook", "h1", content_type),
     "export hook h1 application/x-config default"),
])
def test_import_and_export_take_only_the_two_hook_content_types(build, config_command):
    """pbs_server knows ``application/x-python`` (the body) and ``application/x-config``
    (the config file); anything else is refused before qmgr runs, saying what is taken."""
    with pytest.raises(qmgr.QmgrValueError) as caught:
        build("text/x-python")
    assert str(caught.value) == "content type must be one of application/x-python, application/x-config"
    assert build("application/x-config") == config_command


# -- PBS boolean words -------------------------------------------------------------------------

@pytest.mark.parametrize("word, value", [
    ("True", True), ("t", True), ("Y", True), ("1", True),
    ("False", False), ("f", False), ("N", False), ("0", False),
    ("yes", None), ("no", None), ("on", None), ("off", None), ("", None), ("2", None),
])
def test_bool_word_knows_pbs_boolean_words_only(word, value):
    """is_true_or_false() takes true/t/y/1 and false/f/n/0; any other word is neither."""
    assert qmgr.bool_word(word) is value


# -- listings qmgr never prints ---------------------------------------------------------------

@pytest.mark.parametrize("out, why", [
    # a wrapped value continues the attribute line before it; after a header or a blank
    # line there is no attribute to continue
    ("Server vm\n\tworkq\n", "continuation line outside of an attribute: '\\tworkq'"),
    ("Hook h1\n    event = queuejob,\n\n\texecjob_begin\n",
     "continuation line outside of an attribute: '\\texecjob_begin'"),
    ("Server vm now\n", "unexpected line in qmgr list output: 'Server vm now'"),
    ("Server\n", "unexpected line in qmgr list output: 'Server'"),
])
def test_an_unparsable_listing_is_a_qmgr_error_saying_which_line(out, why):
    with pytest.raises(ValueError) as caught:
        qmgr.parse_list_output(out)
    assert str(caught.value) == why
    with pytest.raises(qmgr.QmgrError) as caught:
        runner(0, out).list_object("server")
    assert caught.value.msg == "cannot parse the output of 'list server': %s" % why
    assert (caught.value.cmd, caught.value.rc, caught.value.stdout) == ([QMGR, "-c", "list server"], 0, out)
    with pytest.raises(qmgr.QmgrError) as caught:
        runner(0, out).list_objects("node", ["n1", "n2"])
    assert caught.value.msg == "cannot parse the output of 'list node n1,n2': %s" % why
    assert caught.value.cmd == [QMGR, "-c", "list node n1,n2"]


# -- failed reads -------------------------------------------------------------------------------

def test_a_failed_list_object_names_the_object_and_the_command():
    """No server: qmgr exits 3 (connect_servers() failed) with its reason on stderr."""
    with pytest.raises(qmgr.QmgrError) as caught:
        runner(3, "", NO_SERVER).list_object("queue", "workq")
    error = caught.value
    assert error.msg == ("qmgr could not list queue workq (rc 3): Connection refused\nqmgr: cannot "
                         "connect to server vm. Check that pbs_server is running and that this "
                         "user is a PBS manager.")
    assert (error.cmd, error.rc, error.stdout, error.stderr) == (
        [QMGR, "-c", "list queue workq"], 3, "", NO_SERVER)


def test_a_failed_list_objects_names_the_objects_and_the_command():
    with pytest.raises(qmgr.QmgrError) as caught:
        runner(3, "", NO_SERVER).list_objects("node", ["n1", "n2"])
    error = caught.value
    assert error.msg == ("qmgr could not list node n1,n2 (rc 3): Connection refused\nqmgr: cannot "
                         "connect to server vm. Check that pbs_server is running and that this "
                         "user is a PBS manager.")
    assert (error.cmd, error.rc, error.stderr) == ([QMGR, "-c", "list node n1,n2"], 3, NO_SERVER)


def test_a_failed_export_names_the_content_type_and_the_hook():
    """Transcript b_: ``export hook nosuch application/x-python default`` exits 32."""
    err = "qmgr obj=nosuch svr=default: nosuch does not exist!\nqmgr: hook error returned from server\n"
    with pytest.raises(qmgr.QmgrError) as caught:
        runner(32, "", err).export_hook("hook", "nosuch", "application/x-python")
    error = caught.value
    assert error.msg == ("qmgr could not export application/x-python of hook nosuch (rc 32): "
                         "qmgr obj=nosuch svr=default: nosuch does not exist!\nqmgr: hook error "
                         "returned from server")
    assert error.cmd == [QMGR, "-c", "export hook nosuch application/x-python default"]


# -- a failed batch without markers -------------------------------------------------------------

def test_a_write_followed_by_a_listing_is_not_blamed_when_a_later_listing_fails():
    """``list queue a,b`` prints ``a`` and then fails on the missing ``b`` (qmgr's
    execute() lists name by name): the set before it took effect, as the listing after it
    shows, so no command is named as the rejected one."""
    err = "qmgr obj=b svr=default: Unknown queue\nqmgr: Error (15018) returned from server\n"
    out = "Max open servers: 49\nQueue a\n    queue_type = Execution\n    comment = x\n\n"
    batch = [qmgr.set_command("queue", "a", "comment", "x"), qmgr.list_command("queue", ["a", "b"])]
    with pytest.raises(qmgr.QmgrError) as caught:
        runner(2, out, err).run_batch(batch, "the changes to queue a")
    error = caught.value
    assert error.msg == ("qmgr rejected the changes to queue a (rc 2): qmgr obj=b svr=default: "
                         "Unknown queue; qmgr: Error (15018) returned from server." + STOPPED)
    assert (error.rejected, error.applied, error.not_applied) == (None, None, None)


def test_a_rejected_command_given_as_text_is_named_by_its_text():
    """``run_batch`` takes plain str commands too: the refused one is named by its text."""
    err = ("qmgr obj= svr=default: Illegal attribute or resource value\n"
           "qmgr: Error (15014) returned from server\n")
    with pytest.raises(qmgr.QmgrError) as caught:
        runner(2, "Max open servers: 49\n", err).run_batch(["set server rpp_retry = abc"],
                                                           "the changes to server")
    error = caught.value
    assert error.msg == ("qmgr rejected the changes to server at command 'set server rpp_retry = abc' "
                         "(rc 2): qmgr obj= svr=default: Illegal attribute or resource value; qmgr: "
                         "Error (15014) returned from server." + STOPPED)
    assert error.rejected == {"command": "set server rpp_retry = abc"}
    assert error.fail_kwargs()["rejected"] == {"command": "set server rpp_retry = abc"}


# -- a batch with markers -----------------------------------------------------------------------

@pytest.fixture
def server(tmp_path):
    """A :class:`FakeQmgr` with server ``vm`` and a :class:`qmgr.Qmgr` running it."""
    fake = FakeQmgr(QMGR, str(tmp_path))
    fake.add("server", "vm", {"server_state": "Active", "scheduling": "True"})
    return fake, qmgr.Qmgr(FakeQmgrModule(fake), QMGR)


COMMENT = qmgr.set_command("server", None, "comment", "x")
RPP_OK = qmgr.set_command("server", None, "rpp_retry", "5")
RPP_BAD = qmgr.set_command("server", None, "rpp_retry", "abc")


@pytest.mark.parametrize("writes, applied, not_applied", [
    ([COMMENT, RPP_BAD], "['set server comment = x']", "['set server rpp_retry = abc']"),
    ([RPP_BAD, COMMENT], "none", "['set server rpp_retry = abc', 'set server comment = x']"),
])
def test_two_writes_with_markers_say_which_took_effect(server, writes, applied, not_applied):
    """With ``-a`` qmgr stops at the first rejected command; the marker listings printed
    before it tell how many of the writes took effect, already with two writes."""
    fake, runner_ = server
    with pytest.raises(qmgr.QmgrError) as caught:
        runner_.run_batch(writes + [qmgr.list_command("server")], "the changes to server",
                          marker=qmgr.marker_command("server"))
    error = caught.value
    assert error.msg == ("qmgr rejected the changes to server at server attribute rpp_retry, "
                         "value 'abc' (command 'set server rpp_retry = abc') (rc 2): qmgr obj= "
                         "svr=default: Illegal attribute or resource value; qmgr: Error (15014) "
                         "returned from server. Applied before it: %s; not applied: %s." % (
                             applied, not_applied) + STOPPED)
    assert [str(c) for c in error.applied] == [str(c) for c in writes[:writes.index(RPP_BAD)]]
    assert error.rejected["command"] == "set server rpp_retry = abc"
    assert fake.objects[("server", "vm")].get("comment") == ("x" if writes[0] is COMMENT else None)


def test_marker_listings_never_reach_the_caller(server):
    """Only the listing the batch asked for is returned, whatever the markers printed."""
    runner_ = server[1]
    out, dummy = runner_.run_batch([COMMENT, RPP_OK, qmgr.list_command("server")],
                                   "the changes to server", marker=qmgr.marker_command("server"))
    assert qmgr.parse_list_output(out) == [("Server", "vm", {
        "server_state": "Active", "scheduling": "True", "comment": "x", "rpp_retry": "5"})]
    assert out.startswith("Server vm\n")


HOOK_LISTING = ("Hook h1\n    type = site\n    enabled = true\n    event = queuejob,\n"
                "\texecjob_begin\n\n")
MARKER_LISTING = "Hook h1\n    enabled = true\n\n"


@pytest.mark.parametrize("count, rest", [
    (0, MARKER_LISTING * 2 + HOOK_LISTING),
    (1, MARKER_LISTING + HOOK_LISTING),
    (2, HOOK_LISTING),
    (3, ""),
    (4, ""),
])
def test_drop_marker_listings_drops_exactly_the_first_count_listings(count, rest):
    """A listing starts at its header line; wrapped value lines (a tab) and attribute lines
    (four spaces) belong to the listing above them."""
    assert qmgr.drop_marker_listings(MARKER_LISTING * 2 + HOOK_LISTING, count) == rest
