"""The mock's shared foundations: select specs, exec_vnode/exec_host, sizes, log and
accounting line formats, hook definitions, pbs.conf discovery."""
import re

import pytest

from mockpbs import hookdefs, pbsconf, pbslog, selectspec


def test_select_missing_count_means_one_and_order_is_kept():
    chunks = selectspec.parse_select("ncpus=3:mem=1gb+2:ncpus=1")
    assert [(c.count, c.resources) for c in chunks] == [(1, [("ncpus", "3"), ("mem", "1gb")]), (2, [("ncpus", "1")])]
    assert selectspec.format_select(chunks) == "1:ncpus=3:mem=1gb+2:ncpus=1"
    assert selectspec.format_select(chunks, force_count=False) == "ncpus=3:mem=1gb+2:ncpus=1"


@pytest.mark.parametrize("bad", ["", "ncpus", "x:ncpus=1", "ncpus=", "1:=3", "ncpus=1++ncpus=1"])
def test_select_rejects_malformed_specs(bad):
    with pytest.raises(selectspec.SelectSpecError):
        selectspec.parse_select(bad)


def test_expand_chunks_gives_one_entry_per_single_chunk():
    assert len(selectspec.expand_chunks(selectspec.parse_select("1:ncpus=1+2:ncpus=1+2:ncpus=1"))) == 5


@pytest.mark.parametrize("text,kb", [("1gb", 1048576), ("2048kb", 2048), ("1mb", 1024), ("1025b", 2), ("1kw", 8)])
def test_size_to_kb(text, kb):
    assert selectspec.size_to_kb(text) == kb


def test_format_kb_uses_largest_whole_unit():
    assert selectspec.format_kb(6291456) == "6gb"
    assert selectspec.format_kb(1536) == "1536kb"
    assert selectspec.format_kb(2048) == "2mb"


def test_exec_vnode_and_exec_host_round_trip():
    text = "(borg:ncpus=3:mem=1048576kb)+(lendl:ncpus=2:mem=2097152kb+lendl[1]:ncpus=1)"
    parsed = selectspec.parse_exec_vnode(text)
    assert parsed[1][1] == ("lendl[1]", [("ncpus", "1")])
    assert selectspec.format_exec_vnode(parsed) == text
    hosts = selectspec.parse_exec_host("borg/0*3+lendl/0*2+agassi/0")
    assert hosts == [("borg", 0, 3), ("lendl", 0, 2), ("agassi", 0, None)]
    assert selectspec.format_exec_host(hosts) == "borg/0*3+lendl/0*2+agassi/0"


def test_daemon_log_line_format_matches_real_mom(tmp_path):
    log = pbslog.DaemonLog(str(tmp_path), "pbs_mom")
    line = log.svr(pbslog.PBSEVENT_SYSTEM, "job_launch_delay", "45")
    assert re.match(r"^\d\d/\d\d/\d{4} \d\d:\d\d:\d\d;0002;pbs_mom;Svr;job_launch_delay;45$", line)
    assert open(log.path()).read() == line + "\n"


def test_accounting_record_format(tmp_path):
    acct = pbslog.AccountingLog(str(tmp_path))
    line = acct.record("s", "17.vm", [("user", "pbsuser"), ("exec_host", "vm/0+vm/1")])
    assert re.match(r"^\d\d/\d\d/\d{4} \d\d:\d\d:\d\d;s;17\.vm;user=pbsuser exec_host=vm/0\+vm/1$", line)


def test_events_sort_in_server_order_and_error_lists_them():
    assert hookdefs.sort_events(["execjob_launch", "queuejob", "execjob_prologue"]) == [
        "queuejob", "execjob_prologue", "execjob_launch"]
    assert (hookdefs.BAD_EVENT_MESSAGE % "yaya").endswith(
        'execjob_attach,execjob_resize,execjob_abort,execjob_postsuspend,execjob_preresume or "" for no event')


def test_hk_round_trip_and_alarm_sums():
    hk = "hook_name=h1\nuser=pbsuser\nevent=queuejob,execjob_prologue\norder=5\nalarm=45\n"
    assert hookdefs.format_hk(hookdefs.parse_hk(hk)) == hk
    hooks = {
        "a": {"event": "execjob_begin", "alarm": "30"},
        "b": {"event": "execjob_begin,execjob_end", "alarm": "20"},
        "c": {"event": "execjob_begin", "alarm": "99", "enabled": "false"},
    }
    assert hookdefs.enabled_alarm_sum(hooks, "execjob_begin") == 50
    assert hookdefs.enabled_alarm_sum(hooks, "execjob_prologue") is None


def test_pbs_conf_from_env_file(tmp_path, monkeypatch):
    conf = tmp_path / "pbs.conf"
    conf.write_text("PBS_SERVER=head\nPBS_HOME=/x/spool\n# comment\n")
    monkeypatch.setenv("PBS_CONF_FILE", str(conf))
    monkeypatch.delenv("PBS_HOME", raising=False)
    monkeypatch.delenv("PBS_EXEC", raising=False)
    values = pbsconf.load()
    assert values["PBS_SERVER"] == "head" and values["PBS_HOME"] == "/x/spool" and values["PBS_EXEC"] == "/opt/pbs"
