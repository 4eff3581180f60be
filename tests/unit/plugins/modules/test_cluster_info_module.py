"""hpc.pbs.cluster_info on a temporary PBS_HOME with qmgr faked at the process boundary."""
import hashlib
import os

import pytest

from ansible_collections.hpc.pbs.plugins.modules import cluster_info
from hpc_pbs_module_fakes import run_module


@pytest.fixture
def pbs(pbs_install, fake_qmgr):
    pbs_install.write_conf("PBS_SERVER=vm\nPBS_START_SERVER=1\nPBS_START_MOM=1\nPBS_START_SCHED=1\n")
    (pbs_install.home / "mom_priv" / "hooks").mkdir(parents=True)
    (pbs_install.home / "pbs_version").write_text("23.06.06\n")
    fake = fake_qmgr()
    fake.add("server", "vm", {"pbs_version": "23.06.06",
                              "default_qsub_arguments": "-r n -W tolerate_node_failures=job_start"})
    fake.add("sched", "default", {"job_run_wait": "execjob_hook"})
    fake.add("hook", "rjs", {"type": "site", "enabled": "true",
                             "event": "queuejob,execjob_launch", "alarm": "30", "order": "1",
                             "fail_action": "none"}, body=b"import pbs\n")
    fake.add("pbshook", "PBS_cray_atom", {"type": "pbs", "enabled": "false",
                                          "event": "execjob_begin,execjob_end", "alarm": "300",
                                          "order": "100", "fail_action": "offline_vnodes"})
    fake.home = pbs_install.home
    return fake


def run(pbs, **args):
    args.setdefault("pbs_conf_file", pbs.conf)
    return run_module(cluster_info.main, args, check_mode=True)


def test_reports_server_hooks_and_settings_in_one_qmgr_call(pbs):
    code, result = run(pbs)
    assert code == 0, result
    assert result["changed"] is False and result["installed"] is True
    assert result["pbs_version"] == "23.06.06"
    assert result["pbs_features"]["clear_topjob_estimates_enable"] is True
    assert len(pbs.calls) == 1 and pbs.reads()[0][0][1:] == ["-a"] and not pbs.writes()
    server = result["server"]
    assert server["tolerate_node_failures"] == "job_start"
    assert server["job_run_wait"] == "execjob_hook"
    assert server["hooks"]["rjs"] == dict(
        type="site", events=["queuejob", "execjob_launch"], enabled=True, order=1, alarm=30,
        fail_action=["none"], sha256=hashlib.sha256(b"import pbs\n").hexdigest())
    assert server["hooks"]["PBS_cray_atom"]["type"] == "pbs"
    assert server["hooks"]["PBS_cray_atom"]["enabled"] is False
    assert result["daemons"]["server"]["configured"] is True
    assert result["daemons"]["mom"]["running"] is False
    assert result["pbs_conf"]["values"]["PBS_SERVER"] == "vm"


def test_alarm_sums_add_the_enabled_site_and_pbs_hooks_of_each_event(pbs):
    """What mom_tunables compares $sister_join_job_alarm / $job_launch_delay with."""
    assert run(pbs)[1]["server"]["alarm_sums"] == {"execjob_begin": 0, "execjob_prologue": 0}
    pbs.objects[("pbshook", "PBS_cray_atom")]["enabled"] = "true"
    pbs.add("hook", "begin2", {"type": "site", "enabled": "True", "event": "execjob_begin,execjob_prologue",
                               "alarm": "45", "order": "2"})
    pbs.add("hook", "off", {"type": "site", "enabled": "false", "event": "execjob_prologue", "alarm": "99"})
    assert run(pbs)[1]["server"]["alarm_sums"] == {"execjob_begin": 345, "execjob_prologue": 45}


def test_mom_defaults_from_enabled_hook_alarms_and_explicit_values(pbs):
    hooks = pbs.home / "mom_priv" / "hooks"
    (hooks / "a.HK").write_text("type=site\nevent=execjob_begin,execjob_prologue\nalarm=40\n")
    (hooks / "b.HK").write_text("type=site\nevent=execjob_begin\nalarm=20\n")
    (hooks / "c.HK").write_text("enabled=false\nevent=execjob_prologue\nalarm=99\n")
    (pbs.home / "mom_priv" / "config").write_text("$job_launch_delay 45\n")
    code, result = run(pbs, query_server="never")
    assert code == 0 and result["server"] is None and not pbs.calls
    mom = result["mom"]
    assert mom["sister_join_job_alarm"]["value"] == 60
    assert mom["sister_join_job_alarm"]["source"] == "hooks"
    assert mom["sister_join_job_alarm"]["line"] is None
    assert mom["sister_join_job_alarm"]["after_sighup"] == 30
    assert [h["name"] for h in mom["sister_join_job_alarm"]["hooks"]] == ["a", "b"]
    assert mom["sister_join_job_alarm"]["why"] == (
        "no config line; the sum of the alarms of the enabled execjob_begin hooks: a 40 s + b 20 s")
    assert mom["job_launch_delay"] == dict(value=45, source="mom_config", default=40,
                                           hooks=[dict(name="a", alarm=40)], line="$job_launch_delay 45",
                                           after_sighup=45, why="mom_priv/config line $job_launch_delay 45")
    assert mom["hooks"]["c"]["enabled"] is False


def test_no_hooks_gives_the_30_second_default(pbs):
    code, result = run(pbs, query_server="never")
    assert result["mom"]["job_launch_delay"] == dict(
        value=30, source="default", default=30, hooks=[], line=None, after_sighup=30,
        why="no config line and no enabled execjob_prologue hook: 30 s")


def test_host_without_pbs_is_reported_not_failed(tmp_path, monkeypatch):
    monkeypatch.setenv("PBS_CONF_FILE", str(tmp_path / "none"))
    code, result = run_module(cluster_info.main, {})
    assert code == 0 and result["installed"] is False and result["server"] is None


def test_bad_choice_is_refused(pbs):
    code, result = run(pbs, query_server="sometimes")
    assert code == 1 and "query_server" in result["msg"] and not pbs.calls


def test_qmgr_failure_fails_with_its_text(pbs):
    del pbs.objects[("sched", "default")]
    code, result = run(pbs)
    assert code == 1 and result["rc"] != 0
    assert os.path.basename(result["cmd"][0]) == "qmgr"


MOM_PLAN_CASES = [
    ("$clienthost vm\n", {"job_launch_delay": 45}, True),
    ("$job_launch_delay  45\r\n", {"job_launch_delay": 45}, False),
    ("$job_launch_delay 45\n$sister_join_job_alarm 60\n", {"sister_join_job_alarm": None}, True),
    ("", {"sister_join_job_alarm": None}, False),
]


@pytest.mark.parametrize("text, options, changed", MOM_PLAN_CASES)
def test_mom_plan_is_what_mom_config_would_write(pbs, text, options, changed):
    """The audit reads a mom in one call: cluster_info's mom_plan must be mom_config's own
    check-mode plan (same before/after texts) for the same options."""
    from ansible_collections.hpc.pbs.plugins.modules import mom_config
    config = pbs.home / "mom_priv" / "config"
    config.write_bytes(text.encode())
    code, result = run(pbs, query_server="never", mom_options=options)
    assert code == 0, result
    code, planned = run_module(mom_config.main, dict(options=options, reload="never", pbs_conf_file=pbs.conf),
                               check_mode=True, diff=True)
    assert code == 0, planned
    assert result["mom_plan"] == dict(path=str(config), changed=changed, before=text,
                                      after=planned["diff"]["after"], options=planned["options"], not_loaded=[])
    assert planned["changed"] is changed
    assert config.read_bytes() == text.encode()


def test_mom_plan_refuses_a_value_the_mom_would_refuse_and_is_null_without_options(pbs):
    code, result = run(pbs, query_server="never", mom_options={"job_launch_delay": "soon"})
    assert code == 1 and result["msg"].startswith("mom_options: ") and "job_launch_delay" in result["msg"], result
    code, result = run(pbs, query_server="never")
    assert code == 0 and result["mom_plan"] is None


def test_mom_plan_names_the_values_a_running_mom_has_not_loaded(pbs):
    """As mom_config's check mode: a live mom (pid in mom.lock) that logged another value at
    its last config read than the file holds must be reloaded, although the file is right."""
    from ansible_collections.hpc.pbs.plugins.modules import mom_config
    (pbs.home / "mom_priv" / "config").write_text("$job_launch_delay 45\n")
    (pbs.home / "mom_priv" / "mom.lock").write_text("%d\n" % os.getpid())
    logs = pbs.home / "mom_logs"
    logs.mkdir()
    (logs / "20261124").write_text("11/24/2026 10:00:00;0100;pbs_mom;Svr;parse_config;file config\n"
                                   "11/24/2026 10:00:00;0002;pbs_mom;Svr;job_launch_delay;30\n")
    options = {"job_launch_delay": 45, "sister_join_job_alarm": None}
    code, result = run(pbs, query_server="never", mom_options=options)
    assert code == 0, result
    assert result["mom_plan"]["changed"] is False
    assert result["mom_plan"]["not_loaded"] == [dict(name="job_launch_delay", running="30", in_file="45")]
    code, planned = run_module(mom_config.main, dict(options=options, reload="changed", pbs_conf_file=pbs.conf),
                               check_mode=True)
    assert code == 0 and planned["reload_reason"].startswith("the running pbs_mom had not loaded the file"), planned
    (logs / "20261124").write_text("11/24/2026 11:00:00;0100;pbs_mom;Svr;parse_config;file config\n"
                                   "11/24/2026 11:00:00;0002;pbs_mom;Svr;job_launch_delay;45\n")
    code, result = run(pbs, query_server="never", mom_options=options)
    assert result["mom_plan"]["not_loaded"] == []


# -- plan_hooks / plan_objects: hpc.pbs.hook's and hpc.pbs.qmgr's plans in the one read --

RJS = dict(name="rjs", events=["queuejob", "execjob_launch"], enabled=True, order=1, alarm=30)


def module_plan(main, args):
    """The result of hpc.pbs.hook / hpc.pbs.qmgr itself in check mode with --diff."""
    code, result = run_module(main, args, check_mode=True, diff=True)
    assert code == 0, result
    return result


def test_a_hook_plan_is_what_the_hook_module_would_change(pbs, monkeypatch):
    """Also the preflight: the new body is compiled by the hook interpreter, run for real."""
    import subprocess
    from ansible.module_utils.basic import AnsibleModule
    from ansible_collections.hpc.pbs.plugins.modules import hook
    faked = AnsibleModule.run_command
    interpreter_calls = []

    def run_command(self, args, cwd=None, environ_update=None, **kw):
        if args[0] == pbs.qmgr_path:
            return faked(self, args, environ_update=environ_update, **kw)
        interpreter_calls.append(args)
        proc = subprocess.run(args, cwd=cwd, env=dict(os.environ, **(environ_update or {})),
                              capture_output=True, text=True, check=False)
        return proc.returncode, proc.stdout, proc.stderr

    monkeypatch.setattr(AnsibleModule, "run_command", run_command)
    wanted = dict(RJS, order=5, body="import pbs\npbs.event().accept()\n")
    code, result = run(pbs, query_server="never", plan_hooks=[wanted])
    assert code == 0, result
    plan, = result["hook_plans"]
    assert plan["object"] == "hook rjs" and plan["failed"] is False and plan["changed"] is True
    assert "set hook rjs order = 5" in plan["commands"]
    assert any(c.startswith("import hook rjs application/x-python") for c in plan["commands"])
    assert [d["after_header"] for d in plan["diff"]] == ["hook rjs attributes", "rjs.PY"]
    assert "order = 1\n" in plan["diff"][0]["before"] and "order = 5\n" in plan["diff"][0]["after"]
    assert not pbs.writes()
    assert plan["preflight"] and len(interpreter_calls) >= 1
    expected = module_plan(hook.main, dict(wanted, pbs_conf_file=pbs.conf))
    # The module's batches end with a "list hook" each (the listing after the writes).
    assert plan["commands"] == [c for c in expected["commands"] if not c.startswith("list ")]
    assert plan["diff"] == expected["diff"]
    assert plan["preflight"] == expected["preflight"]


def test_a_hook_as_wanted_plans_no_change(pbs):
    code, result = run(pbs, query_server="never", plan_hooks=[dict(RJS, body="import pbs\n")])
    assert code == 0, result
    plan, = result["hook_plans"]
    assert plan["changed"] is False and plan["commands"] == [], plan
    assert plan["diff"][0]["before"] == plan["diff"][0]["after"]
    assert len(plan["diff"]) == 1  # the body is the server's: no file diff


@pytest.mark.parametrize("wanted, message", [
    (dict(RJS, type="pbs", body="x = 1\n"), "cannot be managed on a built-in pbshook"),
    (dict(RJS, order=0), "outside the acceptable range"),
    (dict(RJS, config="{not json"), "the hook config is not valid JSON"),
    (dict(name="PBS_missing", type="pbs", enabled=True), "pbshook PBS_missing does not exist"),
], ids=["pbshook-body", "order", "config", "missing-pbshook"])
def test_a_hook_task_the_module_refuses_is_a_failed_plan(pbs, wanted, message):
    code, result = run(pbs, query_server="never", plan_hooks=[wanted],
                       plan_objects=[dict(object_type="sched", attributes={"job_run_wait": "none"})])
    assert code == 0, result
    plan, = result["hook_plans"]
    assert plan["failed"] is True and message in plan["msg"] and plan["commands"] == [], plan
    assert result["object_plans"][0]["failed"] is False  # the other plans still made
    assert not pbs.writes()


def test_object_plans_are_what_the_qmgr_module_would_change(pbs):
    from ansible_collections.hpc.pbs.plugins.modules import qmgr
    tasks = [dict(object_type="sched", attributes={"job_run_wait": "runjob_hook"}),
             dict(object_type="server", attributes={"pbs_version": "23.06.06"})]
    code, result = run(pbs, query_server="never", plan_objects=tasks)
    assert code == 0, result
    sched, server = result["object_plans"]
    assert sched["object"] == "sched default" and sched["changed"] is True
    assert sched["commands"] == ["set sched default job_run_wait = runjob_hook"]
    assert server["object"] == "server" and server["changed"] is False and server["commands"] == []
    assert not pbs.writes()
    expected = module_plan(qmgr.main, dict(tasks[0], pbs_conf_file=pbs.conf))
    assert sched["diff"] == expected["diff"]
    assert sched["commands"] == expected["commands"][:-1]  # the module's batch ends with a list


@pytest.mark.parametrize("task, message", [
    (dict(object_type="sched", attributes={"bad name": 1}), "bad name"),
    (dict(object_type="queue", name="workq", attributes={"enabled": True}), "queue workq does not exist"),
    (dict(object_type="queue", attributes={"enabled": True}), "name is required for object_type queue"),
], ids=["attribute", "missing-object", "no-name"])
def test_a_qmgr_task_the_module_refuses_is_a_failed_plan(pbs, task, message):
    code, result = run(pbs, query_server="never", plan_objects=[task])
    assert code == 0, result
    plan, = result["object_plans"]
    assert plan["failed"] is True and message in plan["msg"], plan
    assert not pbs.writes()


def test_without_plans_no_plan_is_made(pbs):
    code, result = run(pbs, query_server="never")
    assert code == 0 and result["hook_plans"] == [] and result["object_plans"] == []
    assert not pbs.calls
