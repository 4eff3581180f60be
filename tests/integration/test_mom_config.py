"""hpc.pbs.mom_config on the test cluster, on both backends (the mock and a real OpenPBS):
values the module can refuse never reach pbs_mom (file, pid and log untouched); a file
written but never reloaded (an interrupted run) is reloaded on the next run, which says
``changed``; a stopped pbs_mom fails the task saying when the values take effect, and the
mom started again runs with them.
"""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_rollout import PBS_HOME, ansible_env, run_playbook, wait_until  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.cluster_moms(1)]

MOM = "mom1"
CONFIG = "%s/mom_priv/config" % PBS_HOME
LOCK = "%s/mom_priv/mom.lock" % PBS_HOME

# The hostile-input report's mom_config cases: (options, text the refusal must hold).
REFUSED = [
    ({"max_check_poll": "abc"}, "max_check_poll: 'abc' is refused"),
    ({"restrict_user": "maybe"}, "a boolean (true/false, yes/no, on/off, 1/0)"),
    ({"usecp": "nocolon"}, "'host:/from/path /to/path'"),
    ({"prologalarm": 0}, "prologalarm: 0 is refused"),
    ({"cputmult": 0}, "a decimal number > 0 and <= 1000"),
    ({"job_launch_delay": 10 ** 25}, "whole seconds 1-86400"),
]


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return ansible_env(tmp_path_factory.mktemp("ansible"))


def write_playbook(tmp_path, name, tasks):
    path = tmp_path / name
    path.write_text(json.dumps([{"hosts": MOM, "gather_facts": False, "tasks": tasks}],
                               indent=1))
    return str(path)


def mom_state(cluster):
    """``(config text, pid in mom.lock, whether that pid runs, HUPs in today's log)``."""
    out = cluster.exec(MOM, ["sh", "-c", 'cat %s; echo "@@"; cat %s; echo "@@"; '
                             'kill -0 "$(cat %s)" && echo alive; echo "@@"; '
                             'cat %s/mom_logs/$(date +%%Y%%m%%d) | grep -c catch_hup'
                             % (CONFIG, LOCK, LOCK, PBS_HOME)]).stdout
    config, pid, alive, hups = out.split("@@\n")
    return config, pid.strip(), alive.strip() == "alive", hups.strip()


def config_task(name, options, register, **more):
    args = dict(options=options)
    args.update(more)
    return {"name": name, "hpc.pbs.mom_config": args, "register": register,
            "ignore_errors": True}


def test_refused_values_leave_the_file_and_the_mom_alone(pbs_cluster, env, tmp_path):
    tasks = [config_task("refuse %s" % next(iter(options)), options, "case%d" % index)
             for index, (options, _text) in enumerate(REFUSED)]
    tasks += [{"name": "Check case %d" % index, "ansible.builtin.assert": {
        "that": ["case%d is failed" % index, "case%d is not changed" % index,
                 "%r in case%d.msg" % (text, index), "'accepted' in case%d.msg" % index,
                 "'mom config not changed' in case%d.msg" % index],
        "fail_msg": "{{ case%d | to_json }}" % index}} for index, (_o, text) in enumerate(REFUSED)]
    before = mom_state(pbs_cluster)
    assert before[2], before
    rc, out, counts = run_playbook(pbs_cluster, env, write_playbook(tmp_path, "refused.yml", tasks), {})
    assert rc == 0, out
    assert counts[MOM]["failed"] == 0, out
    assert mom_state(pbs_cluster) == before     # same file, same live pid, no SIGHUP


def test_a_write_never_reloaded_is_reloaded_on_the_next_run(pbs_cluster, env, tmp_path):
    tasks = [
        # an interrupted run: the file is written, the mom is not reloaded
        config_task("write only", {"job_launch_delay": 37}, "written", reload="never"),
        config_task("re-run", {"job_launch_delay": 37}, "rerun"),
        config_task("again", {"job_launch_delay": 37}, "again"),
        {"ansible.builtin.assert": {"that": [
            "written is changed and not written.reloaded",
            "rerun is changed and rerun.reloaded",
            "'pbs_mom runs with' in rerun.reload_reason",
            "'the file has 37' in rerun.reload_reason",
            "again is not changed and not again.reloaded"],
            "fail_msg": "{{ [written, rerun, again] | to_json }}"}},
    ]
    rc, out, counts = run_playbook(pbs_cluster, env, write_playbook(tmp_path, "rerun.yml", tasks), {})
    assert rc == 0, out
    log = pbs_cluster.exec(MOM, ["sh", "-c", "cat %s/mom_logs/$(date +%%Y%%m%%d)" % PBS_HOME]).stdout
    assert ";pbs_mom;Svr;job_launch_delay;37" in log


def test_a_stopped_mom_fails_the_task_saying_when_the_values_take_effect(pbs_cluster, env, tmp_path):
    pbs_cluster.stop_mom(MOM)
    try:
        tasks = [config_task("mom stopped", {"job_launch_delay": 38}, "stopped"),
                 config_task("maintenance", {"job_launch_delay": 38}, "maintenance",
                             mom_not_running="warn"),
                 {"ansible.builtin.assert": {"that": [
                     "stopped is failed and stopped is changed",
                     "'pbs_mom is not running' in stopped.msg",
                     "'take effect at its next start' in stopped.msg",
                     "'was changed by this task (job_launch_delay ' in stopped.msg",
                     "' -> 38)' in stopped.msg",
                     "maintenance is not failed and maintenance is not changed"],
                     "fail_msg": "{{ [stopped, maintenance] | to_json }}"}}]
        rc, out, counts = run_playbook(pbs_cluster, env,
                                       write_playbook(tmp_path, "stopped.yml", tasks), {})
        assert rc == 0, out
        assert "$job_launch_delay 38\n" in mom_state(pbs_cluster)[0]
    finally:
        pbs_cluster.start_mom(MOM)
    wait_until(lambda: mom_state(pbs_cluster)[2], "pbs_mom of %s running again" % MOM)
    # started again, the mom read the file: nothing left to do
    tasks = [config_task("after start", {"job_launch_delay": 38}, "started"),
             {"ansible.builtin.assert": {"that": ["started is not failed",
                                                  "started is not changed"],
                                         "fail_msg": "{{ started | to_json }}"}}]
    rc, out, counts = run_playbook(pbs_cluster, env, write_playbook(tmp_path, "started.yml", tasks), {})
    assert rc == 0, out
