"""module_utils.qmgr: parsing of every qmgr list format in the transcripts, quoting."""
import glob
import os

import pytest

from ansible_collections.hpc.pbs.plugins.module_utils.qmgr import (
    QmgrValueError, parse_list_output, quote_value, set_command, split_list_value)
from ansible_collections.hpc.pbs.plugins.module_utils.pbs_conf import resolve_pbs_paths, PbsConfError

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
