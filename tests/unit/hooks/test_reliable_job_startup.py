"""The bundled reliable_job_startup hook under the ``pbs`` emulator (mockpbs.hookrun).

Seed: pp-928-reliable-job-startup.txt, "Case of Reliable Job Startup" and interfaces 1,
5, 6, 7 and 8. Each test runs the unchanged hook file in a child process, as pbs_python
would, and checks what the hook changed (result shape: PROTOCOL.md "Hook runner").
"""
import json
from pathlib import Path

import pytest

from mockpbs.hookrun import run_hook

REPO = Path(__file__).resolve().parents[3]
HOOK_BODY = REPO / "files" / "hooks" / "reliable_job_startup.py"
DEFAULT_CONFIG = json.loads((REPO / "files" / "hooks" / "reliable_job_startup.json").read_text())
HOOK_NAME = "reliable_job_startup"


def run(tmp_path, event, context, config=None, config_text=None):
    """Run the hook for ``event``; ``config`` (dict merged over the bundled default) or
    ``config_text`` (raw file content) becomes its config file."""
    config_path = tmp_path / (HOOK_NAME + ".CF")
    if config_text is None:
        config_text = json.dumps(dict(DEFAULT_CONFIG, **(config or {})))
    config_path.write_text(config_text)
    hook = {"name": HOOK_NAME, "body": str(HOOK_BODY), "config": str(config_path), "alarm": 30,
            "user": "pbsadmin", "debug": False}
    result = run_hook(hook, event, context, str(tmp_path))
    assert result["exception"] is None, result["exception"]
    assert not result["alarm"]
    return result


# ---------------------------------------------------------------- queuejob
def queuejob_context(select=None, queue="workq", tolerate=None, resources=None):
    resource_list = dict(resources or {})
    if select is not None:
        resource_list["select"] = select
    job = {"id": None, "Job_Name": "STDIN", "Job_Owner": "pbsuser@pbs-server", "queue": queue,
           "Resource_List": resource_list}
    if tolerate is not None:
        job["tolerate_node_failures"] = tolerate
    return {"job": job, "daemon": "server", "server": "pbs-server", "hostname": "pbs-server",
            "requestor": "pbsuser", "requestor_host": "pbs-server"}


def test_queuejob_pads_demo_case_and_keeps_original_select_in_site(tmp_path):
    result = run(tmp_path, "queuejob", queuejob_context("ncpus=1+ncpus=1+ncpus=1"))
    assert result["accepted"]
    assert result["job"]["Resource_List"]["select"] == "1:ncpus=1+2:ncpus=1+2:ncpus=1"
    assert result["job"]["Resource_List"]["site"] == "1:ncpus=1+1:ncpus=1+1:ncpus=1"
    assert result["job"]["tolerate_node_failures"] == "job_start"
    assert any("padded to 1:ncpus=1+2:ncpus=1+2:ncpus=1" in record[3] for record in result["logs"])


def test_queuejob_uses_configured_tolerate_and_keep_select_resource(tmp_path):
    result = run(tmp_path, "queuejob", queuejob_context("1:ncpus=1+1:ncpus=1"),
                 config={"tolerate": "all", "keep_select_resource": "software", "increment": "2"})
    assert result["job"]["tolerate_node_failures"] == "all"
    assert result["job"]["Resource_List"]["software"] == "1:ncpus=1+1:ncpus=1"
    assert "site" not in result["job"]["Resource_List"]
    assert result["job"]["Resource_List"]["select"] == "1:ncpus=1+3:ncpus=1"


@pytest.mark.parametrize("select, increment, padded", [
    # PP-928 interface 7 examples
    ("5:ncpus=3:mem=1gb+1:ncpus=2:mem=2gb+2:ncpus=1:mem=3gb", "50%",
     "7:ncpus=3:mem=1gb+2:ncpus=2:mem=2gb+3:ncpus=1:mem=3gb"),
    ("ncpus=3:mem=1gb+1:ncpus=2:mem=2gb+2:ncpus=1:mem=3gb", "25%",
     "1:ncpus=3:mem=1gb+2:ncpus=2:mem=2gb+3:ncpus=1:mem=3gb"),
    ("ncpus=3:mem=1gb+1:ncpus=2:mem=2gb+2:ncpus=1:mem=3gb", {"0": 1, "1": 4, "2": "50%"},
     "1:ncpus=3:mem=1gb+5:ncpus=2:mem=2gb+3:ncpus=1:mem=3gb"),
    # chunks the map does not name are not padded (PBS itself would raise on them)
    ("1:ncpus=1+1:ncpus=2+2:ncpus=1", {"1": 2}, "1:ncpus=1+3:ncpus=2+2:ncpus=1"),
    ("3:ncpus=1+2:ncpus=4", {"0": "100%"}, "5:ncpus=1+2:ncpus=4"),
])
def test_queuejob_percent_and_map_increments(tmp_path, select, increment, padded):
    result = run(tmp_path, "queuejob", queuejob_context(select), config={"increment": increment})
    assert result["accepted"], result["reject_msg"]
    assert result["job"]["Resource_List"]["select"] == padded
    explicit = "+".join(c if c.split(":")[0].isdigit() else "1:" + c for c in select.split("+"))
    assert result["job"]["Resource_List"]["site"] == explicit


@pytest.mark.parametrize("explicit", ["all", "job_start"])
def test_queuejob_keeps_users_explicit_tolerate(tmp_path, explicit):
    result = run(tmp_path, "queuejob", queuejob_context("1:ncpus=1+1:ncpus=1", tolerate=explicit),
                 config={"tolerate": "job_start" if explicit == "all" else "all"})
    assert result["accepted"]
    assert "tolerate_node_failures" not in result["job"]
    assert result["job"]["Resource_List"]["select"] == "1:ncpus=1+2:ncpus=1"


def test_queuejob_explicit_none_opts_the_job_out(tmp_path):
    result = run(tmp_path, "queuejob", queuejob_context("1:ncpus=1+1:ncpus=1", tolerate="none"))
    assert result["accepted"]
    assert result["job"] == {}


def test_queuejob_leaves_job_without_select_alone(tmp_path):
    result = run(tmp_path, "queuejob", queuejob_context(None, resources={"ncpus": "2"}))
    assert result["accepted"]
    assert result["job"] == {}


@pytest.mark.parametrize("queue, queues, padded", [
    ("workq", ["long", "big"], False),
    ("big", ["long", "big"], True),
    ("workq", [], True),
    (None, [], True),  # no -q at submission: every queue matches
])
def test_queuejob_queue_filter(tmp_path, queue, queues, padded):
    result = run(tmp_path, "queuejob", queuejob_context("1:ncpus=1+1:ncpus=1", queue=queue),
                 config={"queues": queues})
    assert result["accepted"]
    assert ("Resource_List" in result["job"]) is padded
    assert ("tolerate_node_failures" in result["job"]) is padded


@pytest.mark.parametrize("config_text, problem", [
    ("{not json", "is not valid JSON"),
    (json.dumps({"increment": "abc%"}), "increment must be a whole number \"N\" or a percentage \"N%\" with N >= 1, not 'abc%'"),
    (json.dumps({"increment": -1}), "increment must be >= 1, not -1"),
    (json.dumps({"increment": {"x": 1}}), "increment map key 'x' is not a chunk index"),
    (json.dumps({"incremnet": 2}), "unknown key(s) incremnet"),
    (json.dumps({"tolerate": "none"}), "tolerate must be one of job_start, all"),
    (json.dumps({"keep_select_resource": "select"}), "keep_select_resource may not be 'select'"),
    (json.dumps({"queues": "workq"}), "queues must be a list"),
    (json.dumps({"offline_failed_vnodes": "yes"}), "offline_failed_vnodes must be true or false"),
    (json.dumps([1]), "must be a JSON object"),
])
def test_queuejob_broken_config_rejects_naming_file_and_problem(tmp_path, config_text, problem):
    result = run(tmp_path, "queuejob", queuejob_context("1:ncpus=1+1:ncpus=1"), config_text=config_text)
    assert not result["accepted"]
    assert str(tmp_path / (HOOK_NAME + ".CF")) in result["reject_msg"]
    assert problem in result["reject_msg"]
    assert result["job"] == {}


# ---------------------------------------------------------------- execjob_launch
VNODES = {
    "ms": {"name": "ms", "host": "ms", "state": "free", "resources_available": {"ncpus": "1"}},
    "s1": {"name": "s1", "host": "s1", "state": "free", "resources_available": {"ncpus": "1"}},
    "s2": {"name": "s2", "host": "s2", "state": "free", "resources_available": {"ncpus": "1"}},
}


def launch_context(failed=(), in_ms_mom=True, nodefile=True, site="1:ncpus=1+1:ncpus=1", tolerate="job_start"):
    resource_list = {"select": "1:ncpus=1+2:ncpus=1", "ncpus": "3", "nodect": "3", "place": "scatter"}
    if site is not None:
        resource_list["site"] = site
    job = {"id": "7.pbs-server", "queue": "workq", "Resource_List": resource_list,
           "schedselect": "1:ncpus=1+2:ncpus=1",
           "exec_vnode": "(ms:ncpus=1)+(s1:ncpus=1)+(s2:ncpus=1)",
           "exec_host": "ms/0+s1/0+s2/0", "Hold_Types": "n", "run_count": "1"}
    if tolerate is not None:
        job["tolerate_node_failures"] = tolerate
    env = {"PBS_JOBID": "7.pbs-server", "HOME": "/home/pbsuser"}
    if nodefile:
        env["PBS_NODEFILE"] = "/var/spool/pbs/aux/7.pbs-server"
    return {"job": job, "vnode_list": dict(VNODES),   # the failed ones too, as the mom writes it
            "vnode_list_fail": {n: VNODES[n] for n in failed}, "env": env,
            "argv": ["/bin/sleep", "10"], "progname": "/bin/sleep", "in_ms_mom": in_ms_mom,
            "hostname": "ms" if in_ms_mom else "s1", "server": "pbs-server",
            "failed_mom_list": list(failed),
            "succeeded_mom_list": [h for h in ("ms", "s1", "s2") if h not in failed],
            "daemon": "mom"}


@pytest.mark.parametrize("context", [
    launch_context(failed=("s1",), in_ms_mom=False),
    launch_context(failed=("s1",), nodefile=False),
], ids=["sister", "spawned-task"])
def test_launch_on_sister_or_spawned_task_does_nothing(tmp_path, context):
    result = run(tmp_path, "execjob_launch", context)
    assert result["accepted"]
    assert result["job"] == {} and result["vnodes"] == {} and not result["rerun"]


def test_launch_on_sister_ignores_even_a_broken_config(tmp_path):
    result = run(tmp_path, "execjob_launch", launch_context(in_ms_mom=False), config_text="{")
    assert result["accepted"]


def test_launch_without_failures_releases_the_padding(tmp_path):
    result = run(tmp_path, "execjob_launch", launch_context())
    assert result["accepted"]
    assert result["job"]["exec_vnode"] == "(ms:ncpus=1)+(s1:ncpus=1)"
    assert result["job"]["schedselect"] == "1:ncpus=1+1:ncpus=1"
    assert result["vnodes"] == {}


def test_launch_with_failed_sister_offlines_it_and_prunes_to_site(tmp_path):
    result = run(tmp_path, "execjob_launch", launch_context(failed=("s1",)))
    assert result["accepted"], result["reject_msg"]
    assert result["vnodes"]["s1"]["state"] == "offline"
    assert "7.pbs-server" in result["vnodes"]["s1"]["comment"]
    assert set(result["vnodes"]) == {"s1"}
    assert result["job"]["exec_vnode"] == "(ms:ncpus=1)+(s2:ncpus=1)"
    assert result["job"]["exec_host"] == "ms/0+s2/0"
    assert result["job"]["schedselect"] == "1:ncpus=1+1:ncpus=1"
    assert not result["rerun"]
    job_messages = [r[3] for r in result["logs"] if r[2] == "7.pbs-server"]
    assert any("offlined failed vnode s1" in m for m in job_messages)
    assert any("pruned to select 1:ncpus=1+1:ncpus=1" in m for m in job_messages)


def test_launch_does_not_offline_when_configured_not_to(tmp_path):
    result = run(tmp_path, "execjob_launch", launch_context(failed=("s1",)),
                 config={"offline_failed_vnodes": False})
    assert result["accepted"]
    assert result["vnodes"] == {}
    assert result["job"]["exec_vnode"] == "(ms:ncpus=1)+(s2:ncpus=1)"


def test_launch_uses_configured_keep_select_resource(tmp_path):
    context = launch_context(failed=("s2",), site=None)
    context["job"]["Resource_List"]["software"] = "1:ncpus=1+1:ncpus=1"
    result = run(tmp_path, "execjob_launch", context, config={"keep_select_resource": "software"})
    assert result["accepted"]
    assert result["job"]["exec_vnode"] == "(ms:ncpus=1)+(s1:ncpus=1)"


def test_launch_unsatisfiable_holds_requeues_and_rejects(tmp_path):
    result = run(tmp_path, "execjob_launch", launch_context(failed=("s1", "s2")))
    assert not result["accepted"]
    assert result["rerun"]
    assert result["job"]["Hold_Types"] == "s"
    assert "exec_vnode" not in result["job"]
    assert ("could not prune job 7.pbs-server back to its original select 1:ncpus=1+1:ncpus=1: "
            "not enough healthy nodes") in result["reject_msg"]
    assert {n: v["state"] for n, v in result["vnodes"].items()} == {"s1": "offline", "s2": "offline"}


def test_launch_of_job_that_was_not_padded_changes_nothing(tmp_path):
    result = run(tmp_path, "execjob_launch", launch_context(failed=("s1",), site=None))
    assert result["accepted"]
    assert result["job"] == {} and result["vnodes"] == {} and not result["rerun"]


def test_launch_of_job_not_tolerant_changes_nothing(tmp_path):
    result = run(tmp_path, "execjob_launch", launch_context(failed=("s1",), tolerate="none"))
    assert result["accepted"]
    assert result["job"] == {} and result["vnodes"] == {} and not result["rerun"]


def test_launch_with_broken_config_holds_requeues_and_names_file(tmp_path):
    result = run(tmp_path, "execjob_launch", launch_context(failed=("s1",)),
                 config_text=json.dumps({"increment": 0}))
    assert not result["accepted"]
    assert result["rerun"]
    assert result["job"]["Hold_Types"] == "s"
    assert str(tmp_path / (HOOK_NAME + ".CF")) in result["reject_msg"]
    assert "increment must be >= 1, not 0" in result["reject_msg"]
