"""mockpbs.hookrun: hooks run in a child process the way pbs_python runs them
(PROTOCOL.md "Hook runner"), including the PP-928 seed's sample hooks end to end."""
import subprocess
import sys
import textwrap

import mockpbs
from mockpbs import hookrun, pbslog

SEED_SELECT = "ncpus=3:mem=1gb+ncpus=2:mem=2gb+ncpus=1:mem=3gb"
SEED_EXEC_VNODE = ("(borg:ncpus=3:mem=1048576kb)+(federer:ncpus=2:mem=2097152kb)+(lendl:ncpus=2:mem=2097152kb)"
                   "+(agassi:ncpus=1:mem=3145728kb)+(sampras:ncpus=1:mem=3145728kb)")
SEED_EXEC_HOST = "borg/0*3+federer/0*2+lendl/0*2+agassi/0+sampras/0"

# The seed's queuejob and execjob_launch hooks ("Case of Reliable Job Startup"); the seed
# page indents `e.reject(...)` by 3 spaces, a Python IndentationError, fixed to 4 here.
SEED_QUEUEJOB_HOOK = """\
import pbs
e=pbs.event()

j = e.job

j.tolerate_node_failures = "job_start"

e.job.Resource_List["site"] = str(e.job.Resource_List["select"])

new_select = e.job.Resource_List["select"].increment_chunks(1)
e.job.Resource_List["select"] = new_select
"""
SEED_LAUNCH_HOOK = """\
import pbs
e=pbs.event()

if 'PBS_NODEFILE' not in e.env:

    e.accept()

j = e.job
pj = j.release_nodes(keep_select=e.job.Resource_List["site"])

if pj is None:          # was not successful pruning the nodes

    j.rerun()        # rerun (requeue) the job

    e.reject("something went wrong pruning the job back to its original select request")
"""


def make_hook(tmp_path, body, name="h", alarm=10, config=None):
    body_path = tmp_path / ("%s.PY" % name)
    body_path.write_text(textwrap.dedent(body))
    config_path = None
    if config is not None:
        config_path = tmp_path / ("%s.CF" % name)
        config_path.write_text(config)
        config_path = str(config_path)
    return {"name": name, "body": str(body_path), "config": config_path, "alarm": alarm,
            "user": "pbsadmin", "debug": False}


def queuejob_context():
    return {"job": {"id": "20.borg", "Job_Name": "jobr.scr", "queue": "workq",
                    "Resource_List": {"select": SEED_SELECT, "place": "scatter:excl"}},
            "hostname": "borg", "server": "borg", "daemon": "server",
            "requestor": "bayucan", "requestor_host": "borg"}


def launch_context(failed=("federer", "sampras"), env=None):
    hosts = ["borg", "federer", "lendl", "agassi", "sampras"]
    vnodes = {h: {"name": h, "host": h, "state": "free", "resources_available": {"ncpus": "4"},
                  "resources_assigned": {}, "comment": None} for h in hosts}
    return {"job": {"id": "20.borg", "exec_vnode": SEED_EXEC_VNODE, "exec_host": SEED_EXEC_HOST,
                    "schedselect": "1:ncpus=3:mem=1gb+2:ncpus=2:mem=2gb+2:ncpus=1:mem=3gb",
                    "tolerate_node_failures": "job_start", "Hold_Types": "n", "run_count": "1",
                    "Resource_List": {"select": "1:ncpus=3:mem=1gb+2:ncpus=2:mem=2gb+2:ncpus=1:mem=3gb",
                                      "site": "1:ncpus=3:mem=1gb+1:ncpus=2:mem=2gb+1:ncpus=1:mem=3gb"}},
            "vnode_list": vnodes,   # the failed ones too, as the mom writes it
            "vnode_list_fail": {h: v for h, v in vnodes.items() if h in failed},
            "env": env if env is not None else {"PBS_NODEFILE": "/var/spool/pbs/aux/20.borg", "HOME": "/home/u"},
            "argv": ["/bin/bash", "jobr.scr"], "progname": "/bin/bash", "in_ms_mom": True,
            "hostname": "borg", "server": "borg", "daemon": "mom",
            "failed_mom_list": list(failed), "succeeded_mom_list": [h for h in hosts if h not in failed],
            "requestor": "pbs_mom", "requestor_host": "borg"}


def test_accept_ends_hook(tmp_path):
    hook = make_hook(tmp_path, """
        import pbs
        pbs.event().accept()
        raise RuntimeError("not reached")
    """)
    result = hookrun.run_hook(hook, "queuejob", queuejob_context(), str(tmp_path))
    assert result["accepted"] is True and result["exception"] is None and result["alarm"] is False


def test_hook_falling_off_the_end_is_accepted(tmp_path):
    result = hookrun.run_hook(make_hook(tmp_path, "x = 1\n"), "queuejob", queuejob_context(), str(tmp_path))
    assert result["accepted"] is True and result["reject_msg"] is None


def test_reject_message_reported(tmp_path):
    hook = make_hook(tmp_path, """
        import pbs
        pbs.event().reject("no way")
        pbs.event().accept()
    """)
    result = hookrun.run_hook(hook, "queuejob", queuejob_context(), str(tmp_path))
    assert result["accepted"] is False and result["reject_msg"] == "no way"


def test_uncaught_exception_rejects_with_traceback(tmp_path):
    hook = make_hook(tmp_path, """
        import pbs
        pbs.logmsg(pbs.LOG_DEBUG, "before")
        {}["missing"]
    """)
    result = hookrun.run_hook(hook, "queuejob", queuejob_context(), str(tmp_path))
    assert result["accepted"] is False
    assert "KeyError: 'missing'" in result["exception"]
    assert result["logs"] == [[0x0006, "Hook", "Server@borg", "before"]]


def test_alarm_kills_child(tmp_path):
    hook = make_hook(tmp_path, """
        import time
        time.sleep(60)
    """, alarm=1)
    result = hookrun.run_hook(hook, "execjob_begin", launch_context(), str(tmp_path))
    assert result["alarm"] is True and result["accepted"] is False


def test_name_is_builtins_and_pbs_is_the_emulator(tmp_path):
    hook = make_hook(tmp_path, """
        import pbs
        if __name__ != "builtins" or not hasattr(pbs, "select") or pbs.__name__ != "mockpbs.pbs":
            pbs.event().reject("wrong: %s %s" % (__name__, pbs.__name__))
    """)
    result = hookrun.run_hook(hook, "queuejob", queuejob_context(), str(tmp_path))
    assert result["accepted"] is True, result


def test_config_file_visible(tmp_path):
    hook = make_hook(tmp_path, """
        import os, pbs
        with open(pbs.hook_config_filename) as f:
            data = f.read()
        if os.environ.get("PBS_HOOK_CONFIG_FILE") != pbs.hook_config_filename:
            pbs.event().reject("env mismatch")
        pbs.event().reject("config=" + data)
    """, config='{"increment": 2}')
    result = hookrun.run_hook(hook, "queuejob", queuejob_context(), str(tmp_path))
    assert result["reject_msg"] == 'config={"increment": 2}'


def test_hook_prints_do_not_break_the_channel(tmp_path):
    hook = make_hook(tmp_path, 'print("{noise")\nimport pbs\npbs.event().reject("ok")\n')
    result = hookrun.run_hook(hook, "queuejob", queuejob_context(), str(tmp_path))
    assert result["reject_msg"] == "ok"


def test_job_and_vnode_changes_reported(tmp_path):
    hook = make_hook(tmp_path, """
        import pbs
        e = pbs.event()
        e.job.Hold_Types = pbs.hold_types("s")
        e.job.rerun()
        for vn in e.vnode_list_fail:
            pbs.logjobmsg(e.job.id, "launch: offline vnode_list_fail[%s]" % vn)
            e.vnode_list_fail[vn].state = pbs.ND_OFFLINE
        e.vnode_list["lendl"].comment = "checked"
        e.env["EXTRA"] = "1"
        e.progname = "/bin/sh"
        e.reject("unsuccessful at LAUNCH")
    """)
    log = pbslog.DaemonLog(str(tmp_path / "mom_logs"), "pbs_mom")
    result = hookrun.run_hook(hook, "execjob_launch", launch_context(), str(tmp_path), log=log)
    assert result["accepted"] is False and result["reject_msg"] == "unsuccessful at LAUNCH"
    assert result["job"] == {"Hold_Types": "s"}
    assert result["rerun"] is True
    assert result["vnodes"] == {"federer": {"state": "offline"}, "sampras": {"state": "offline"},
                                "lendl": {"comment": "checked"}}
    assert result["env"]["EXTRA"] == "1" and result["progname"] == "/bin/sh" and "argv" not in result
    assert result["logs"][0] == [0x0008, "Job", "20.borg", "launch: offline vnode_list_fail[federer]"]
    written = open(log.path()).read()
    assert ";0008;pbs_mom;Job;20.borg;launch: offline vnode_list_fail[sampras]" in written


def test_resize_job_and_vnodes_read_only(tmp_path):
    hook = make_hook(tmp_path, """
        import pbs
        e = pbs.event()
        errors = []
        try:
            e.job.Hold_Types = pbs.hold_types("s")
        except AssertionError:
            errors.append("job")
        try:
            e.vnode_list["borg"].state = pbs.ND_OFFLINE
        except AssertionError:
            errors.append("vnode")
        pbs.event().reject(",".join(errors))
    """)
    result = hookrun.run_hook(hook, "execjob_resize", launch_context(failed=()), str(tmp_path))
    assert result["reject_msg"] == "job,vnode"
    assert result["job"] == {} and result["vnodes"] == {}


def test_seed_queuejob_hook_end_to_end(tmp_path):
    hook = make_hook(tmp_path, SEED_QUEUEJOB_HOOK, name="qjob")
    result = hookrun.run_hook(hook, "queuejob", queuejob_context(), str(tmp_path))
    assert result["accepted"] is True, result["exception"]
    assert result["job"] == {
        "tolerate_node_failures": "job_start",
        "Resource_List": {"site": SEED_SELECT,
                          "select": "1:ncpus=3:mem=1gb+2:ncpus=2:mem=2gb+2:ncpus=1:mem=3gb"},
    }


def test_seed_launch_hook_prunes_end_to_end(tmp_path):
    hook = make_hook(tmp_path, SEED_LAUNCH_HOOK, name="launch")
    result = hookrun.run_hook(hook, "execjob_launch", launch_context(), str(tmp_path))
    assert result["accepted"] is True, result["exception"]
    assert result["job"] == {
        "exec_vnode": "(borg:ncpus=3:mem=1048576kb)+(lendl:ncpus=2:mem=2097152kb)+(agassi:ncpus=1:mem=3145728kb)",
        "exec_host": "borg/0*3+lendl/0*2+agassi/0",
        "exec_host2": "borg/0*3+lendl/0*2+agassi/0",
        "schedselect": "1:ncpus=3:mem=1gb+1:ncpus=2:mem=2gb+1:ncpus=1:mem=3gb",
    }
    assert result["rerun"] is False


def test_seed_launch_hook_rejects_and_reruns_when_pruning_fails(tmp_path):
    hook = make_hook(tmp_path, SEED_LAUNCH_HOOK, name="launch")
    context = launch_context(failed=("federer", "lendl", "sampras"))
    result = hookrun.run_hook(hook, "execjob_launch", context, str(tmp_path))
    assert result["accepted"] is False and result["rerun"] is True
    assert result["reject_msg"] == "something went wrong pruning the job back to its original select request"
    assert [r[3] for r in result["logs"]][1] == (
        "NEED chunks for keep_select (1:ncpus=3:mem=1gb+1:ncpus=2:mem=2gb+1:ncpus=1:mem=3gb)")


def test_seed_launch_hook_accepts_task_spawn_without_nodefile(tmp_path):
    hook = make_hook(tmp_path, SEED_LAUNCH_HOOK, name="launch")
    result = hookrun.run_hook(hook, "execjob_launch", launch_context(env={"HOME": "/h"}), str(tmp_path))
    assert result["accepted"] is True and result["job"] == {}


def test_pbs_python_version():
    out = subprocess.run([sys.executable, "-c", "from mockpbs import hookrun; hookrun.pbs_python_main(['--version'])"],
                         capture_output=True, text=True, check=True).stdout
    assert out == "pbs_version = %s\n" % mockpbs.PBS_VERSION == "pbs_version = 23.06.06\n"


def test_pbs_python_runs_interpreter_with_arguments():
    code = "from mockpbs import hookrun; hookrun.pbs_python_main(['-c', 'print(6*7)'])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "42\n"
