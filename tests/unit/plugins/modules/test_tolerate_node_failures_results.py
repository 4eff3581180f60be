"""hpc.pbs.tolerate_node_failures: results and failure paths the other tests leave unchecked; qmgr
faked at the process boundary."""
from ansible_collections.hpc.pbs.plugins.modules import tolerate_node_failures as tnf
from hpc_pbs_module_fakes import run_module


def server(pbs):
    return pbs.objects[("server", "vm")]


def run(pbs, check_mode=False, diff=False, **args):
    args.setdefault("pbs_conf_file", pbs.conf)
    return run_module(tnf.main, args, check_mode=check_mode, diff=diff)


def test_the_result_names_the_previous_value_and_the_diff_names_the_server(pbs):
    server(pbs)["default_qsub_arguments"] = "-r n"
    code, result = run(pbs, value="all", diff=True)
    assert code == 0, result
    assert result["previous"] == "-r n"
    assert result["diff"] == {
        "before": "default_qsub_arguments = -r n\n",
        "after": "default_qsub_arguments = -r n -W tolerate_node_failures=all\n",
        "before_header": "server", "after_header": "server"}


def test_a_value_qmgr_cannot_take_fails_before_any_write(pbs):
    server(pbs)["default_qsub_arguments"] = '-N "a\x07b"'
    code, result = run(pbs, value="all")
    assert code == 1 and not pbs.writes()
    assert result["msg"].startswith("default_qsub_arguments not changed: server attribute "
                                    "default_qsub_arguments: a qmgr value cannot hold")


def test_a_read_back_qmgr_prints_unparsable_fails_saying_it_was_written(pbs, monkeypatch):
    def unparsable(_text):
        raise ValueError("line 1 is not an attribute")
    monkeypatch.setattr(tnf, "parse_list_output", unparsable)
    code, result = run(pbs, value="all")
    assert code == 1 and result["changed"] is True
    assert result["msg"] == ("default_qsub_arguments was written but cannot be read back: "
                             "line 1 is not an attribute")
    assert server(pbs)["default_qsub_arguments"] == "-W tolerate_node_failures=all"
