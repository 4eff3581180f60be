"""hpc.pbs.tolerate_node_failures with qmgr faked at the process boundary."""
import pytest

from ansible_collections.hpc.pbs.plugins.modules import tolerate_node_failures as tnf
from hpc_pbs_module_fakes import run_module


def server(pbs):
    return pbs.objects[("server", "vm")]


def run(pbs, check_mode=False, diff=False, **args):
    args.setdefault("pbs_conf_file", pbs.conf)
    return run_module(tnf.main, args, check_mode=check_mode, diff=diff)


def test_sets_keeps_the_rest_and_is_idempotent(pbs):
    server(pbs)["default_qsub_arguments"] = "-r n -W umask=022 -W group_list=x"
    code, result = run(pbs, value="job_start", diff=True)
    assert code == 0, result
    assert result["changed"] is True and result["value"] == "job_start"
    assert server(pbs)["default_qsub_arguments"] == \
        "-r n -W umask=022 -W group_list=x -W tolerate_node_failures=job_start"
    assert result["commands"][0] == ('set server default_qsub_arguments = "-r n -W umask=022 '
                                     '-W group_list=x -W tolerate_node_failures=job_start"')
    assert len(pbs.reads()) == 1 and len(pbs.writes()) == 1
    assert "tolerate_node_failures=job_start" in result["diff"]["after"]
    assert "tolerate_node_failures" not in result["diff"]["before"]

    pbs.calls = []
    code, result = run(pbs, value="job_start")
    assert code == 0 and result["changed"] is False and not pbs.writes()


def test_check_mode_predicts_without_writing(pbs):
    code, result = run(pbs, value="all", check_mode=True)
    assert code == 0 and result["changed"] is True
    assert result["default_qsub_arguments"] == "-W tolerate_node_failures=all"
    assert "default_qsub_arguments" not in server(pbs) and not pbs.writes()


def test_absent_unsets_when_nothing_else_is_left(pbs):
    server(pbs)["default_qsub_arguments"] = "-W tolerate_node_failures=all"
    code, result = run(pbs, state="absent")
    assert code == 0 and result["changed"] is True and result["value"] is None
    assert "default_qsub_arguments" not in server(pbs)
    assert result["commands"][0] == "unset server default_qsub_arguments"


def test_replaces_a_bogus_value(pbs):
    server(pbs)["default_qsub_arguments"] = "-W tolerate_node_failures=bogus"
    code, result = run(pbs, value="none")
    assert code == 0 and server(pbs)["default_qsub_arguments"] == \
        "-W tolerate_node_failures=none"


@pytest.mark.parametrize("current", ["-W 'open", "-x", "-r n /bin/sleep 5", "-W noequals"])
def test_unparsable_current_value_is_left_alone(pbs, current):
    server(pbs)["default_qsub_arguments"] = current
    code, result = run(pbs, value="all")
    assert code == 1 and "not changed" in result["msg"]
    assert server(pbs)["default_qsub_arguments"] == current and not pbs.writes()


@pytest.mark.parametrize("args", [
    {"value": "bogus"}, {"value": "all", "state": "gone"}, {"state": "present"},
    {"value": ["all"]}, {"value": "all; rm -rf /"},
])
def test_bad_input_changes_nothing(pbs, args):
    code, result = run(pbs, **args)
    assert code == 1 and result["msg"]
    assert "default_qsub_arguments" not in server(pbs) and not pbs.calls


def test_shell_metacharacters_in_the_site_part_stay_literal(pbs):
    server(pbs)["default_qsub_arguments"] = '-N "a;b|c$(x)"'
    code, result = run(pbs, value="all")
    # "$" cannot be written literally inside double quotes: refused, nothing written
    assert code == 1 and "cannot write" in result["msg"] and not pbs.writes()
    server(pbs)["default_qsub_arguments"] = "-N 'a;b|c&d'"
    code, result = run(pbs, value="all")
    assert code == 0, result
    assert server(pbs)["default_qsub_arguments"] == \
        '-N "a;b|c&d" -W tolerate_node_failures=all'
    assert all(isinstance(args, list) for args, data in pbs.calls)


def test_missing_pbs_conf_fails_clearly(tmp_path, monkeypatch):
    monkeypatch.setenv("PBS_CONF_FILE", str(tmp_path / "none"))
    code, result = run_module(tnf.main, {"value": "all"})
    assert code == 1 and "does not seem to be installed" in result["msg"]


def test_no_server_listed_fails_clearly(pbs):
    pbs.objects.clear()
    code, result = run(pbs, value="all")
    assert code == 1 and "qmgr listed no server" in result["msg"]
