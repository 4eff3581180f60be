"""The reliable_job_startup hook under the ``pbs`` emulator: what the other tests leave unchecked.
The hook's name in the messages of both events, its bundled name when PBS gives none
(``pbs_python --hook`` run on an input without a ``hook_name`` line leaves
``pbs.event().hook_name`` empty), a config file it cannot read, an increment the config rules
accept but PBS's ``increment_chunks()`` cannot apply, and the failed vnodes named at launch."""
import json
from pathlib import Path

from mockpbs.hookrun import run_hook

REPO = Path(__file__).resolve().parents[3]
HOOK_BODY = REPO / "files" / "hooks" / "reliable_job_startup.py"
VNODES = {name: {"name": name, "host": name, "state": "free", "resources_available": {"ncpus": "1"}}
          for name in ("ms", "s1", "s2")}


def run(tmp_path, event, context, config, hook_name):
    """Run the hook as ``hook_name`` for ``event``; ``config`` (a dict) is written as its
    config file, or, when it is a Path, is the config file's path as is."""
    if isinstance(config, Path):
        config_path = config
    else:
        config_path = tmp_path / "hook.CF"
        config_path.write_text(json.dumps(config))
    hook = {"name": hook_name, "body": str(HOOK_BODY), "config": str(config_path), "alarm": 30,
            "user": "pbsadmin", "debug": False}
    result = run_hook(hook, event, context, str(tmp_path))
    assert result["exception"] is None, result["exception"]
    return result


def queuejob_context():
    job = {"id": None, "Job_Name": "STDIN", "Job_Owner": "pbsuser@pbs-server", "queue": "workq",
           "Resource_List": {"select": "ncpus=1+ncpus=1"}}
    return {"job": job, "daemon": "server", "server": "pbs-server", "hostname": "pbs-server",
            "requestor": "pbsuser", "requestor_host": "pbs-server"}


def launch_context(failed):
    """The primary mom launching job 7 (select 1:ncpus=1+2:ncpus=1 padded from
    1:ncpus=1+1:ncpus=1, on ms, s1, s2) with the moms of ``failed`` not joined."""
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


def test_without_a_hook_name_from_pbs_the_hook_names_itself_by_its_bundled_name(tmp_path):
    # pbs_python.c: hook_name stays "" unless the input has a hook_name line; the role
    # installs the hook as reliable_job_startup (reliable_job_startup_hook_name).
    result = run(tmp_path, "queuejob", queuejob_context(), {"increment": 0}, hook_name="")
    assert not result["accepted"]
    assert result["reject_msg"].startswith("reliable_job_startup: config file ")


def test_an_unreadable_config_file_is_rejected_naming_it(tmp_path):
    missing = tmp_path / "gone.CF"
    result = run(tmp_path, "queuejob", queuejob_context(), missing, hook_name="site_rjs")
    assert not result["accepted"]
    assert result["reject_msg"].startswith("site_rjs: cannot read config file %s: " % missing)
    assert "No such file or directory" in result["reject_msg"]
    assert result["job"] == {}


def test_an_increment_pbs_cannot_apply_rejects_the_job_naming_hook_select_and_increment(tmp_path):
    # "N%" with N of 310 digits passes the config rules; PBS's increment_chunks() computes
    # ceil(count * (N / 100 + 1.0)), float("1" + "0" * 309) is inf: OverflowError
    # (tests/reference/increment_chunks_quirks.md, item 6, as for "inf%").
    increment = "1" + "0" * 309 + "%"
    result = run(tmp_path, "queuejob", queuejob_context(), {"increment": increment}, hook_name="site_rjs")
    assert not result["accepted"]
    assert result["reject_msg"].startswith("site_rjs: cannot pad select 1:ncpus=1+1:ncpus=1 with increment %r: "
                                           % increment)
    assert "infinity" in result["reject_msg"]
    assert "select" not in result["job"].get("Resource_List", {})


def test_launch_unsatisfiable_names_hook_and_every_failed_vnode(tmp_path):
    result = run(tmp_path, "execjob_launch", launch_context(("s1", "s2")), {}, hook_name="site_rjs")
    assert not result["accepted"]
    assert result["rerun"]
    assert result["reject_msg"] == (
        "site_rjs: could not prune job 7.pbs-server back to its original select 1:ncpus=1+1:ncpus=1: "
        "not enough healthy nodes (failed vnodes: s1, s2); job held (s) and requeued")


def test_launch_pruned_log_names_hook_and_the_failed_vnode(tmp_path):
    result = run(tmp_path, "execjob_launch", launch_context(("s1",)), {}, hook_name="site_rjs")
    assert result["accepted"], result["reject_msg"]
    job_messages = [record[3] for record in result["logs"] if record[2] == "7.pbs-server"]
    assert ("site_rjs: pruned to select 1:ncpus=1+1:ncpus=1, exec_vnode=(ms:ncpus=1)+(s2:ncpus=1) "
            "(failed vnodes: s1)") in job_messages
