"""hpc.pbs.qmgr behaviour the other tests leave unchecked: a comma string is split into items for
append and remove (so the task stays idempotent) and the check-mode prediction keeps the
remaining items; the ``names`` errors; the exit code and command of a missing object (``qmgr -c
"list queue nosuchq"`` exits 1, transcript k_); node names given as YAML numbers; the results
hold what the server lists after the write (PBS lists a boolean as ``True``/``False``, a hook's
``enabled`` as ``true``/``false``), for one object and for several; qmgr's warnings on stderr;
a batch refused or a listing that cannot be read after the write; the diff headers naming each
object."""
import pytest

from ansible_collections.hpc.pbs.plugins.modules import qmgr as qmgr_module
from hpc_pbs_module_fakes import FakeQmgr, run_module

SERVER = {"server_state": "Active", "server_host": "vm", "scheduling": "True",
          "default_queue": "workq", "managers": "root@vm,other@vm"}
NODE = {"Mom": "mom1", "state": "free", "resources_available.ncpus": "2"}
HOOK = {"type": "site", "enabled": "false", "event": "queuejob", "user": "pbsadmin",
        "alarm": "30", "order": "1", "debug": "false", "fail_action": "none"}
PBSHOOK = {"type": "pbs", "enabled": "true", "event": "execjob_begin", "user": "pbsadmin",
           "alarm": "100", "order": "5", "debug": "false", "fail_action": "none"}
# is_true_or_false() (attr_fn_b.c) reads these words; encode_b lists ATR_TRUE / ATR_FALSE.
PBS_TRUE = ("True", "TRUE", "true", "t", "T", "1", "y", "Y")
SERVER_BOOLEANS = ("scheduling", "query_other_jobs", "resv_enable")


class BooleanListingQmgr(FakeQmgr):
    """The fake qmgr, listing a server boolean as real PBS does: decode_b() stores the
    truth of whatever word was set, encode_b() lists it as ``True`` or ``False``."""

    def do_set(self, command, words):
        out = FakeQmgr.do_set(self, command, words)
        if words[0] == "set" and words[1] == "server":
            attrs = self.lookup("server", None)[1]
            for attr in SERVER_BOOLEANS:
                if attr in attrs and attrs[attr] not in ("True", "False"):
                    attrs[attr] = "True" if attrs[attr] in PBS_TRUE else "False"
        return out


class GarbledListingQmgr(FakeQmgr):
    """The fake qmgr, printing a line after the listing of a write batch that is no part
    of a qmgr listing."""

    def run_command(self, module, args, data=None, binary_data=False, **kwargs):
        rc, out, err = FakeQmgr.run_command(self, module, args, data, binary_data, **kwargs)
        if "-a" in args:
            out += "this is not a qmgr listing\n"
        return rc, out, err


def make_pbs(fake_qmgr, tmp_path, cls=FakeQmgr):
    fake = fake_qmgr(cls)
    fake.add("server", "vm", SERVER)
    fake.add("queue", "workq", {"queue_type": "Execution", "enabled": "True"})
    for name in ("mom1", "mom2", "1001", "1002"):
        fake.add("node", name, dict(NODE, Mom=name))
    fake.add("hook", "h1", HOOK, body=b"import pbs\n")
    fake.add("hook", "h2", dict(HOOK, order="2"), body=b"import pbs\n")
    fake.add("pbshook", "PBS_cray_atom", PBSHOOK)
    fake.tmp = tmp_path / "moduletmp"
    fake.tmp.mkdir()
    return fake


@pytest.fixture
def pbs(fake_qmgr, tmp_path):
    return make_pbs(fake_qmgr, tmp_path)


def run(pbs, check_mode=False, diff=False, **args):
    args.setdefault("pbs_conf_file", pbs.conf)
    return run_module(qmgr_module.main, args, check_mode=check_mode, diff=diff, tmpdir=pbs.tmp)


# ------------------------------------------------------------ append / remove of a string

@pytest.mark.parametrize("list_mode, value, commands, predicted", [
    ("append", "pbsuser@*, root@vm", ["set server managers += pbsuser@*"],
     "root@vm,other@vm,pbsuser@*"),
    ("remove", "pbsuser@*,root@vm", ["set server managers -= root@vm"], "other@vm"),
], ids=["append", "remove"])
def test_a_comma_string_is_split_into_items_and_only_the_missing_ones_are_written(
        pbs, list_mode, value, commands, predicted):
    """list_mode append/remove: "a string value is split on , into items" (the form qmgr
    itself lists, ``a, b``, included); items already as wanted give no command, so the
    task is idempotent, and check mode predicts the items left."""
    code, result = run(pbs, check_mode=True, object_type="server", list_mode=list_mode,
                       attributes={"managers": value})
    assert code == 0, result
    assert result["commands"] == commands + ["list server"]
    assert result["attributes"]["managers"] == predicted
    assert not pbs.writes()

    code, result = run(pbs, object_type="server", list_mode=list_mode,
                       attributes={"managers": value})
    assert code == 0 and result["changed"] is True, result
    code, result = run(pbs, object_type="server", list_mode=list_mode,
                       attributes={"managers": value})
    assert code == 0 and result["changed"] is False and result["commands"] == [], result


def test_node_states_appended_as_a_string_with_spaces_are_checked_item_by_item(pbs):
    code, result = run(pbs, check_mode=True, object_type="node", name="mom1",
                       list_mode="append", attributes={"state": "offline, sleep"})
    assert code == 0, result
    assert result["commands"] == ["set node mom1 state += offline",
                                  "set node mom1 state += sleep", "list node mom1"]


# ------------------------------------------------------------------------ names

@pytest.mark.parametrize("names, message", [
    ([], "names is empty: give at least one node name"),
    (["mom1", "mom2", "mom1"], "names lists an object twice: ['mom1', 'mom2', 'mom1']"),
], ids=["empty", "twice"])
def test_a_names_list_empty_or_naming_an_object_twice_is_refused(pbs, names, message):
    code, result = run(pbs, object_type="node", names=names, attributes={"comment": "x"})
    assert code == 1 and result["msg"] == message, result
    assert not pbs.calls


def test_node_names_given_as_yaml_numbers_are_names(pbs):
    """names are strings (elements: str): a node named 1001 (a node name may start with a
    digit) written as a YAML number is that node."""
    code, result = run(pbs, object_type="node", names=[1001, 1002],
                       attributes={"comment": "rack 10"})
    assert code == 0, result
    assert result["commands"] == ['set node 1001 comment = "rack 10"',
                                  'set node 1002 comment = "rack 10"', "list node 1001,1002"]
    assert sorted(result["objects"]) == ["1001", "1002"]
    assert pbs.objects[("node", "1001")]["comment"] == "rack 10"


@pytest.mark.parametrize("args, cmd", [
    ({"name": "nosuchq"}, "list queue nosuchq"),
    ({"names": ["workq", "nosuchq"]}, "list queue workq,nosuchq"),
], ids=["name", "names"])
def test_a_missing_object_fails_with_the_list_command_and_its_exit_code(pbs, args, cmd):
    """qmgr -c "list queue nosuchq" exits 1 (transcript k_): the failure gives that command
    and exit code."""
    code, result = run(pbs, object_type="queue", attributes={"enabled": False}, **args)
    assert code == 1 and "queue nosuchq does not exist" in result["msg"], result
    assert result["rc"] == 1
    assert result["cmd"] == [pbs.qmgr_path, "-c", cmd]
    assert not pbs.writes()


# ------------------------------------------------------ what the server lists after a write

def test_the_result_holds_the_server_listing_not_the_words_written(fake_qmgr, tmp_path):
    """OpenPBS lists a server boolean set as ``false`` as ``False`` (encode_b)."""
    pbs = make_pbs(fake_qmgr, tmp_path, BooleanListingQmgr)
    code, result = run(pbs, object_type="server", attributes={"scheduling": "false"})
    assert code == 0 and result["changed"] is True, result
    assert result["commands"] == ["set server scheduling = false", "list server"]
    assert result["attributes"]["scheduling"] == "False"
    code, result = run(pbs, object_type="server", attributes={"scheduling": "false"})
    assert result["changed"] is False


def test_each_object_of_names_gets_its_own_listing_after_the_write(pbs):
    """A hook's enabled is listed as true/false whatever word set it (hook.c): each object
    of names gets its own listing, not another's and not the words written."""
    code, result = run(pbs, object_type="hook", names=["h1", "h2"],
                       attributes={"enabled": True})
    assert code == 0 and result["changed"] is True, result
    assert result["commands"] == ["set hook h1 enabled = True", "set hook h2 enabled = True",
                                  "list hook h1,h2"]
    objects = result["objects"]
    assert (objects["h1"]["enabled"], objects["h2"]["enabled"]) == ("true", "true")
    assert (objects["h1"]["order"], objects["h2"]["order"]) == ("1", "2")


def test_a_qmgr_warning_on_stderr_becomes_a_task_warning(pbs):
    """qmgr warns on stderr and exits 0 when a PBS hook is disabled (transcript b_)."""
    code, result = run(pbs, object_type="pbshook", name="PBS_cray_atom",
                       attributes={"enabled": False})
    assert code == 0 and result["changed"] is True, result
    assert result["attributes"]["enabled"] == "false"
    assert "qmgr: WARNING: Disabling a PBS hook results in an unsupported configuration!" \
        in result["warnings"]


def test_a_refused_batch_says_which_changes_qmgr_rejected(pbs):
    code, result = run(pbs, object_type="server", attributes={"rpp_retry": "abc"})
    assert code == 1
    assert result["msg"].startswith("qmgr rejected the changes to server at server attribute "
                                    "rpp_retry, value 'abc'"), result["msg"]


def test_a_listing_that_cannot_be_read_after_the_write_still_reports_a_change(
        fake_qmgr, tmp_path):
    pbs = make_pbs(fake_qmgr, tmp_path, GarbledListingQmgr)
    code, result = run(pbs, object_type="server", attributes={"comment": "x"})
    assert code == 1
    assert result["msg"].startswith("the changes were written but the listing after them "
                                    "cannot be parsed: unexpected line in qmgr list output: "
                                    "'this is not a qmgr listing'"), result["msg"]
    assert result["changed"] is True
    assert result["commands"] == ["set server comment = x", "list server"]
    assert pbs.objects[("server", "vm")]["comment"] == "x"


# ------------------------------------------------------------------------------ diff

def test_each_diff_is_headed_by_its_object(pbs):
    code, result = run(pbs, diff=True, object_type="node", names=["mom1", "mom2"],
                       attributes={"comment": "x"})
    assert code == 0, result
    headers = [(d["before_header"], d["after_header"]) for d in result["diff"]]
    assert headers == [("node mom1 (before)", "node mom1 (after)"),
                       ("node mom2 (before)", "node mom2 (after)")]
    assert "comment = x\n" in result["diff"][1]["after"]
