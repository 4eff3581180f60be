"""The reliable_job_startup hook under the ``pbs`` emulator: what the other tests leave unchecked.
Its built-in defaults (every other test gives the hook the full bundled config file, so a
default the file repeats was never the one in force), increments of the wrong type or the text
"1", and the hook's own name in its messages."""
import json
from pathlib import Path

import pytest

from mockpbs.hookrun import run_hook

REPO = Path(__file__).resolve().parents[3]
HOOK_BODY = REPO / "files" / "hooks" / "reliable_job_startup.py"
HOOK_NAME = "reliable_job_startup"
VNODES = {name: {"name": name, "host": name, "state": "free", "resources_available": {"ncpus": "1"}}
          for name in ("ms", "s1", "s2")}


def run_with_empty_config(tmp_path, event, context):
    """Run the hook for ``event`` with the config file ``{}`` (every key defaulted)."""
    config_path = tmp_path / (HOOK_NAME + ".CF")
    config_path.write_text("{}")
    hook = {"name": HOOK_NAME, "body": str(HOOK_BODY), "config": str(config_path), "alarm": 30,
            "user": "pbsadmin", "debug": False}
    result = run_hook(hook, event, context, str(tmp_path))
    assert result["exception"] is None, result["exception"]
    assert result["accepted"], result["reject_msg"]
    return result


def test_the_default_increment_pads_each_chunk_by_one(tmp_path):
    job = {"id": None, "Job_Name": "STDIN", "Job_Owner": "pbsuser@pbs-server", "queue": "workq",
           "Resource_List": {"select": "ncpus=1+ncpus=1"}}
    context = {"job": job, "daemon": "server", "server": "pbs-server", "hostname": "pbs-server",
               "requestor": "pbsuser", "requestor_host": "pbs-server"}
    result = run_with_empty_config(tmp_path, "queuejob", context)
    assert result["job"]["Resource_List"]["select"] == "1:ncpus=1+2:ncpus=1"
    assert result["job"]["Resource_List"]["site"] == "1:ncpus=1+1:ncpus=1"
    assert result["job"]["tolerate_node_failures"] == "job_start"


def test_failed_vnodes_are_offlined_by_default(tmp_path):
    job = {"id": "7.pbs-server", "queue": "workq", "tolerate_node_failures": "job_start",
           "Resource_List": {"select": "1:ncpus=1+2:ncpus=1", "ncpus": "3", "nodect": "3",
                             "place": "scatter", "site": "1:ncpus=1+1:ncpus=1"},
           "schedselect": "1:ncpus=1+2:ncpus=1", "exec_vnode": "(ms:ncpus=1)+(s1:ncpus=1)+(s2:ncpus=1)",
           "exec_host": "ms/0+s1/0+s2/0", "Hold_Types": "n", "run_count": "1"}
    context = {"job": job, "vnode_list": dict(VNODES), "vnode_list_fail": {"s1": VNODES["s1"]},
               "env": {"PBS_JOBID": "7.pbs-server", "PBS_NODEFILE": "/var/spool/pbs/aux/7.pbs-server"},
               "argv": ["/bin/sleep", "10"], "progname": "/bin/sleep", "in_ms_mom": True,
               "hostname": "ms", "server": "pbs-server", "failed_mom_list": ["s1"],
               "succeeded_mom_list": ["ms", "s2"], "daemon": "mom"}
    result = run_with_empty_config(tmp_path, "execjob_launch", context)
    assert set(result["vnodes"]) == {"s1"} and result["vnodes"]["s1"]["state"] == "offline"
    assert result["job"]["exec_vnode"] == "(ms:ncpus=1)+(s2:ncpus=1)"


def run_queuejob(tmp_path, config, hook_name=HOOK_NAME):
    """Run the hook's queuejob for ``select=ncpus=1+ncpus=1`` with ``config`` (the whole
    config file, a dict) as hook ``hook_name``; returns the hook runner's result."""
    config_path = tmp_path / (hook_name + ".CF")
    config_path.write_text(json.dumps(config))
    hook = {"name": hook_name, "body": str(HOOK_BODY), "config": str(config_path), "alarm": 30,
            "user": "pbsadmin", "debug": False}
    job = {"id": None, "Job_Name": "STDIN", "Job_Owner": "pbsuser@pbs-server", "queue": "workq",
           "Resource_List": {"select": "ncpus=1+ncpus=1"}}
    context = {"job": job, "daemon": "server", "server": "pbs-server", "hostname": "pbs-server",
               "requestor": "pbsuser", "requestor_host": "pbs-server"}
    result = run_hook(hook, "queuejob", context, str(tmp_path))
    assert result["exception"] is None, result["exception"]
    return result


@pytest.mark.parametrize("increment", [1.5, True, [1]], ids=["float", "boolean", "list"])
def test_an_increment_of_another_type_is_rejected_naming_it(tmp_path, increment):
    result = run_queuejob(tmp_path, {"increment": increment})
    assert not result["accepted"]
    assert ("increment must be an integer >= 1 or a string \"N\" or \"N%%\", or a map {\"<chunk index>\": "
            "increment}, not %r" % increment
            in result["reject_msg"])


def test_an_increment_of_text_1_is_accepted(tmp_path):
    result = run_queuejob(tmp_path, {"increment": "1"})
    assert result["accepted"], result["reject_msg"]
    assert result["job"]["Resource_List"]["select"] == "1:ncpus=1+2:ncpus=1"


def test_the_hook_names_itself_by_the_name_it_was_given(tmp_path):
    result = run_queuejob(tmp_path, {"increment": 0}, hook_name="site_rjs")
    assert not result["accepted"]
    assert result["reject_msg"].startswith("site_rjs: ")


@pytest.mark.parametrize("config, problem", [
    ({"increment": "0"}, "increment must be a whole number \"N\" or a percentage \"N%\" with N >= 1, not '0'"),
    ({"keep_select_resource": 5}, "keep_select_resource must be a resource name (a letter, then letters, digits, _ or -), "
                                  "not 5"),
    ({"queues": ["workq", ""]}, "queues[1] must be a queue name, not ''"),
], ids=["text-0", "resource-not-text", "empty-queue-name"])
def test_a_config_value_out_of_its_rules_is_rejected_naming_it(tmp_path, config, problem):
    result = run_queuejob(tmp_path, config)
    assert not result["accepted"]
    assert problem in result["reject_msg"]
