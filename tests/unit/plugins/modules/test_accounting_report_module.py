"""hpc.pbs.accounting_report with qstat and qmgr faked at the process boundary, on the real
OpenPBS 23.06.06 accounting file of tests/integration/test_report.py (see
tests/unit/plugins/module_utils/test_accounting.py), checked against the shipped schema."""
import json
import os
import shutil
import time

import jsonschema
import pytest
from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpc.pbs.plugins.modules import accounting_report
from hpc_pbs_module_fakes import run_module

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
REAL = os.path.join(REPO, "tests", "unit", "plugins", "module_utils", "data", "accounting_openpbs_23.06.06")
SCHEMA = os.path.join(REPO, "files", "schemas", "accounting_report.schema.json")
HOOK_CONFIG = {"tolerate": "job_start", "increment": 1, "keep_select_resource": "site", "queues": [],
               "offline_failed_vnodes": True, "record_failed_moms": True}


@pytest.fixture
def install(tmp_path, monkeypatch):
    """A PBS server host: pbs.conf, the real accounting day, qstat and qmgr answering."""
    home = tmp_path / "spool"
    acct = home / "server_priv" / "accounting"
    acct.mkdir(parents=True)
    shutil.copy(REAL, str(acct / "20261128"))
    conf = tmp_path / "pbs.conf"
    conf.write_text("PBS_HOME=%s\nPBS_EXEC=/opt/pbs\nPBS_SERVER=pbs-server\n" % home)
    calls = []
    answers = {"qstat": (0, "pbs_version = 23.06.06\n", ""),
               "qmgr": (0, json.dumps(HOOK_CONFIG, indent=2) + "\n", "")}

    def run_command(self, args, **kwargs):
        calls.append((list(args), kwargs.get("environ_update", {}).get("PBS_CONF_FILE")))
        return answers[os.path.basename(args[0])]
    monkeypatch.setattr(AnsibleModule, "run_command", run_command)
    return {"conf": str(conf), "acct": str(acct), "calls": calls, "answers": answers}


def window(**more):
    args = {"window_start": "2026-11-28", "window_end": "2026-11-29"}
    args.update(more)
    return args


def test_report_of_the_real_day_matches_the_schema(install):
    code, result = run_module(accounting_report.main, dict(window(), pbs_conf_file=install["conf"]))
    assert code == 0, result
    report = result["report"]
    with open(SCHEMA) as handle:
        jsonschema.validate(report, json.load(handle))
    assert result["changed"] is False
    assert report["pbs_version"] == "23.06.06" and report["server"] == "pbs-server"
    assert report["totals"]["saved_jobs"] == 5 and report["totals"]["failed_sisters"] == 5
    assert report["hook_config"] == HOOK_CONFIG and report["keep_select_resource"] == "site"
    assert report["window"]["files"] == [os.path.join(install["acct"], "20261128")]
    assert report["window"]["end_epoch"] - report["window"]["start_epoch"] == 86400
    assert [c[0] for c in install["calls"]] == [
        ["/opt/pbs/bin/qmgr", "-c", "export hook reliable_job_startup application/x-config default"],
        ["/opt/pbs/bin/qstat", "--version"]]
    assert all(conf == install["conf"] for _args, conf in install["calls"])
    assert 'pbs_rjs_saved_jobs{queue="_all"} 5' in result["prometheus"].splitlines()
    table = "\n".join(result["table"])
    assert "worst nodes: mom2 (failed 4 of 6 starts), mom3 (failed 1 of 6 starts)" in table
    assert result["table"][0].startswith("reliable job startup report: 2026-11-28T00:00:00")
    assert result["warnings"] == []


def test_without_a_hook_config_the_defaults_are_used(install):
    install["answers"]["qmgr"] = (1, "", "qmgr obj=nosuch svr=default: Unknown Hook\n")
    install["answers"]["qstat"] = (2, "", "")
    code, result = run_module(accounting_report.main, dict(window(), pbs_conf_file=install["conf"],
                                                           hook_name="nosuch"))
    assert code == 0, result
    assert result["report"]["hook_config"] is None and result["report"]["pbs_version"] is None
    assert result["report"]["recommendation"]["current_increment"] == 1


def test_an_unparsable_line_is_a_warning_naming_file_and_line(install):
    path = os.path.join(install["acct"], "20261128")
    with open(path, "a") as handle:
        handle.write("garbage\n")
    code, result = run_module(accounting_report.main, dict(window(), pbs_conf_file=install["conf"]))
    assert code == 0
    number = len(open(REAL).read().splitlines()) + 1
    assert result["report"]["problems"] == [{"file": path, "line": number, "error": "not 4 fields separated by ';'"}]
    assert result["warnings"] == ["accounting %s line %d could not be read: not 4 fields separated by ';'" % (path, number)]
    assert "unreadable accounting: %s line %d: not 4 fields separated by ';'" % (path, number) in result["table"]


@pytest.mark.parametrize("args, message", [
    (window(window_start="yesterday"), "window_start 'yesterday' is not YYYY-MM-DD[ HH:MM[:SS]] nor epoch seconds"),
    (window(window_end="29/11/2026"), "window_end '29/11/2026' is not YYYY-MM-DD[ HH:MM[:SS]] nor epoch seconds"),
    ({"window_days": 0}, "window_days must be above 0, not 0.0"),
    (window(failure_target=1.0), "failure_target must be a fraction above 0 and below 1 (0.01 is 1%), not 1.0"),
    (window(failure_target=0), "failure_target must be a fraction above 0 and below 1 (0.01 is 1%), not 0.0"),
    (window(worst_nodes=-1), "worst_nodes must be 0 or more, not -1"),
    (window(keep_select_resource="a b"), "keep_select_resource 'a b' is not a resource name"),
    ({"window_start": "2026-11-29", "window_end": "2026-11-28"}, "window_start must be before window_end"),
])
def test_bad_input_is_refused_before_anything_is_run(install, args, message):
    code, result = run_module(accounting_report.main, dict(args, pbs_conf_file=install["conf"]))
    assert code == 1 and result["failed"]
    assert message in result["msg"] and result["msg"].endswith("Nothing was read.")
    assert install["calls"] == []


def test_the_default_window_is_the_last_seven_days(install):
    code, result = run_module(accounting_report.main, {"pbs_conf_file": install["conf"]})
    assert code == 0
    window_ = result["report"]["window"]
    assert window_["end_epoch"] - window_["start_epoch"] == 7 * 86400
    assert abs(window_["end_epoch"] - time.time()) < 60


@pytest.mark.parametrize("text, expected", [
    ("2026-11-28", "2026-11-28 00:00:00"), ("2026-11-28 06:44", "2026-11-28 06:44:00"),
    ("2026-11-28T06:44:19", "2026-11-28 06:44:19")])
def test_time_forms(text, expected):
    assert accounting_report.parse_when(text) == time.mktime(time.strptime(expected, "%Y-%m-%d %H:%M:%S"))
    assert accounting_report.parse_when("1795848259") == 1795848259.0
