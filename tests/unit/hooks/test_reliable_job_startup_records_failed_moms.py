"""The reliable_job_startup hook's record of a pruned launch in the job's ``accounting_id``
(config ``record_failed_moms``), which hpc.pbs.accounting_report reads back from the server's
accounting records. The cases follow what real OpenPBS 23.06.06 gives the launch hook: a
sister that never joined is in neither ``failed_mom_list`` nor ``succeeded_mom_list``; a
sister that rejected at execjob_begin is in ``failed_mom_list``."""
import json
import re
from pathlib import Path

import pytest

from mockpbs.hookrun import run_hook

REPO = Path(__file__).resolve().parents[3]
HOOK_BODY = REPO / "files" / "hooks" / "reliable_job_startup.py"
VNODES = {name: {"name": name, "host": name, "state": "free", "resources_available": {"ncpus": "1"}}
          for name in ("ms", "s1", "s2")}


def run(tmp_path, event, context, config, hook_name):
    config_path = tmp_path / "hook.CF"
    config_path.write_text(json.dumps(config))
    hook = {"name": hook_name, "body": str(HOOK_BODY), "config": str(config_path), "alarm": 30,
            "user": "pbsadmin", "debug": False}
    result = run_hook(hook, event, context, str(tmp_path))
    assert result["exception"] is None, result["exception"]
    return result


def launch_context(failed):
    """The primary mom ms launching job 7 (1:ncpus=1+2:ncpus=1 padded from
    1:ncpus=1+1:ncpus=1, on ms, s1, s2); the moms of ``failed`` reported an error."""
    job = {"id": "7.pbs-server", "queue": "workq", "tolerate_node_failures": "job_start",
           "Resource_List": {"select": "1:ncpus=1+2:ncpus=1", "ncpus": "3", "nodect": "3",
                             "place": "scatter", "site": "1:ncpus=1+1:ncpus=1"},
           "schedselect": "1:ncpus=1+2:ncpus=1", "exec_vnode": "(ms:ncpus=1)+(s1:ncpus=1)+(s2:ncpus=1)",
           "exec_host": "ms/0+s1/0+s2/0", "Hold_Types": "n", "run_count": "1"}
    return {"job": job, "vnode_list": dict(VNODES), "vnode_list_fail": {n: VNODES[n] for n in failed},
            "env": {"PBS_JOBID": "7.pbs-server", "PBS_NODEFILE": "/var/spool/pbs/aux/7.pbs-server"},
            "argv": ["/bin/sleep", "10"], "progname": "/bin/sleep", "in_ms_mom": True,
            "hostname": "ms", "server": "pbs-server", "failed_mom_list": list(failed),
            "succeeded_mom_list": [h for h in ("ms", "s1", "s2") if h not in failed], "daemon": "mom"}


RECORD_RE = re.compile(r"^rjs_failed=([a-z0-9,]*)/released=([a-z0-9,]*)/chunks=([0-9]+)/at=([0-9]+)$")


def recorded(result):
    value = result["job"].get("accounting_id")
    match = RECORD_RE.match(value or "")
    assert match, value
    return match.group(1), match.group(2), int(match.group(3)), int(match.group(4))


def test_a_sister_that_never_joined_is_recorded_as_failed(tmp_path):
    context = launch_context(())
    context["succeeded_mom_list"] = ["ms", "s2"]          # s1 silent: in neither list
    result = run(tmp_path, "execjob_launch", context, {}, hook_name="rjs")
    assert result["accepted"], result["reject_msg"]
    failed, released, chunks, _at = recorded(result)
    assert (failed, released, chunks) == ("s1", "s1", 1)


def test_a_sister_that_rejected_is_recorded_as_failed(tmp_path):
    result = run(tmp_path, "execjob_launch", launch_context(("s2",)), {}, hook_name="rjs")
    assert result["accepted"], result["reject_msg"]
    failed, released, chunks, _at = recorded(result)
    assert (failed, released, chunks) == ("s2", "s2", 1)


def test_a_healthy_padded_chunk_released_is_not_a_failed_sister(tmp_path):
    result = run(tmp_path, "execjob_launch", launch_context(()), {}, hook_name="rjs")
    assert result["accepted"], result["reject_msg"]
    failed, released, chunks, at = recorded(result)
    assert failed == "" and chunks == 1 and released in ("s1", "s2")
    assert at > 1700000000


def test_record_failed_moms_false_records_nothing(tmp_path):
    result = run(tmp_path, "execjob_launch", launch_context(("s2",)), {"record_failed_moms": False},
                 hook_name="rjs")
    assert result["accepted"], result["reject_msg"]
    assert "accounting_id" not in result["job"]


def test_a_site_accounting_id_is_kept(tmp_path):
    context = launch_context(("s2",))
    context["job"]["accounting_id"] = "site-project-42"
    result = run(tmp_path, "execjob_launch", context, {}, hook_name="rjs")
    assert result["accepted"], result["reject_msg"]
    assert "accounting_id" not in result["job"]
    messages = [record[3] for record in result["logs"] if record[2] == "7.pbs-server"]
    assert "rjs: accounting_id 'site-project-42' kept, failed moms not recorded" in messages


def test_an_earlier_runs_record_is_replaced(tmp_path):
    context = launch_context(())
    context["job"]["accounting_id"] = "rjs_failed=s1/released=s1/chunks=1/at=1"
    result = run(tmp_path, "execjob_launch", context, {}, hook_name="rjs")
    failed, _released, _chunks, at = recorded(result)
    assert failed == "" and at > 1


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_record_failed_moms_must_be_a_boolean(tmp_path, value):
    result = run(tmp_path, "execjob_launch", launch_context(()), {"record_failed_moms": value}, hook_name="rjs")
    assert not result["accepted"]
    assert "record_failed_moms must be true or false, not %r" % (value,) in result["reject_msg"]
