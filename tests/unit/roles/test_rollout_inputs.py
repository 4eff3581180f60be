"""Bad input to playbooks/rollout.yml (and the mom_tunables role it calls) stops the run
before any host is touched (issue 8, point 2; PP-928 interfaces 3 and 4 for the tunables).

No cluster: every inventory host is this machine (``ansible_connection=local``) with a
fake PBS whose ``qmgr`` only appends its arguments to ``calls.log`` and fails, and whose
PBS_HOME starts without ``mom_priv/config``. A bad input must leave ``calls.log`` absent,
``mom_priv/config`` absent and no mom in the recap. The control case (good input) shows
that the same harness does see the first contact: the hook install calls ``qmgr``.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from local_playbook import run_local_playbook

REPO = Path(__file__).resolve().parents[3]
PLAYBOOK = REPO / "playbooks" / "rollout.yml"
VENV_BIN = Path(sys.executable).parent
GOOD = {"rollout_batch_size": 1, "mom_tunables_job_launch_delay": 40, "mom_tunables_sister_join_job_alarm": 40}


def run_rollout(fake, extra_vars):
    host = "ansible_connection=local ansible_python_interpreter=%s" % sys.executable
    variables = dict(extra_vars, rollout_pbs_conf_file=str(fake["conf"]),
                     reliable_job_startup_pbs_conf_file=str(fake["conf"]),
                     mom_tunables_pbs_conf_file=str(fake["conf"]))
    return run_local_playbook(fake, PLAYBOOK, "[pbs_server]\nsrv %s\n[pbs_mom]\nmom1 %s\nmom2 %s\n" % (host, host, host),
                              variables)


def assert_nothing_touched(fake, rc, output, recap):
    assert rc != 0, output
    assert recap.get("srv") == 1, output  # the server play failed on the input check
    assert "mom1" not in recap and "mom2" not in recap, output
    assert "PLAY [Roll out to the moms batch by batch]" not in output, output
    assert not fake["calls"].exists(), fake["calls"].read_text()
    assert not fake["mom_config"].exists()


def test_good_input_reaches_the_fake_pbs(fake_pbs):
    """Control: the harness notices contact (qmgr called), so the other tests can fail."""
    rc, output, recap = run_rollout(fake_pbs, GOOD)
    assert rc != 0, output
    assert fake_pbs["calls"].exists(), output
    assert "qmgr" in fake_pbs["calls"].read_text()


@pytest.mark.parametrize("batch_size", ["abc", "0", "-1", "10%%", "1.5"])
def test_bad_batch_size(fake_pbs, batch_size):
    rc, output, recap = run_rollout(fake_pbs, dict(GOOD, rollout_batch_size=batch_size))
    assert "rollout_batch_size must be N or N% (N >= 1)" in output, output
    assert_nothing_touched(fake_pbs, rc, output, recap)


@pytest.mark.parametrize("option", ["mom_tunables_job_launch_delay", "mom_tunables_sister_join_job_alarm"])
@pytest.mark.parametrize("value", [0, -5, 1.5, "abc", True])
def test_bad_tunable(fake_pbs, option, value):
    rc, output, recap = run_rollout(fake_pbs, dict(GOOD, **{option: value}))
    # The role's argument spec (type int) refuses 1.5 and "abc" first; validate.yml the rest.
    assert re.search(r"%s must be null or whole seconds >= 1|argument '%s' is of type \S+ and we were unable to "
                     r"convert to int" % (option, option), output), output
    assert_nothing_touched(fake_pbs, rc, output, recap)


@pytest.mark.parametrize("name", ["rollout_drian", "rollout_batchsize", "mom_tunables_reload_timout",
                                  "rollout_canary_host", "rollout_health_max_problems"])
def test_unknown_option(fake_pbs, name):
    rc, output, recap = run_rollout(fake_pbs, dict(GOOD, **{name: 1}))
    assert re.search(r"rollout: unknown variable\(s\) %s;" % name, output), output
    assert_nothing_touched(fake_pbs, rc, output, recap)


def test_unknown_hook_config_key(fake_pbs):
    rc, output, recap = run_rollout(fake_pbs, dict(GOOD, reliable_job_startup_config={"no_such_key": 1}))
    assert "reliable_job_startup_config is not a valid config" in output, output
    assert_nothing_touched(fake_pbs, rc, output, recap)


@pytest.mark.parametrize("extra", [{"rollout_max_fail_percentage": 101}, {"rollout_drain_timeout": 0},
                                   {"rollout_canary_hosts": -1}, {"rollout_canary_hosts": "one"},
                                   {"rollout_canary_hosts": 1.5}, {"rollout_health_max_new_problems": -1},
                                   {"rollout_health_max_new_problems": "many"}])
def test_bad_rollout_limits(fake_pbs, extra):
    rc, output, recap = run_rollout(fake_pbs, dict(GOOD, **extra))
    assert "rollout_max_fail_percentage" in output and "must be N or N%" in output, output
    assert_nothing_touched(fake_pbs, rc, output, recap)


@pytest.mark.parametrize("extra", [{"rollout_canary_hosts": 0, "rollout_health_max_new_problems": 3},
                                   {"rollout_canary_hosts": 2, "rollout_health_max_new_problems": 0}])
def test_new_gate_variables_are_known_and_accepted(fake_pbs, extra):
    """The canary and health gate variables pass the input checks: the run reaches the fake
    PBS (its qmgr, which fails), as the control case does."""
    rc, output, recap = run_rollout(fake_pbs, dict(GOOD, **extra))
    assert "unknown variable" not in output and "must be N or N%" not in output, output
    assert fake_pbs["calls"].exists(), output


def list_tasks(tmp_path, *options):
    """``ansible-playbook --list-tasks`` of rollout.yml with ``options`` (no host contacted)."""
    collections = tmp_path / "collections" / "ansible_collections" / "hpc"
    collections.mkdir(parents=True, exist_ok=True)
    if not (collections / "pbs").exists():
        (collections / "pbs").symlink_to(REPO)
    inventory = tmp_path / "inventory.ini"
    inventory.write_text("[pbs_server]\nsrv ansible_connection=local\n[pbs_mom]\nmom1 ansible_connection=local\n")
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(tmp_path / "collections"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_LOCAL_TEMP=str(tmp_path / "ansible-local"))
    argv = [str(VENV_BIN / "ansible-playbook"), "-i", str(inventory), str(PLAYBOOK), "--list-tasks"] + list(options)
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, stdin=subprocess.DEVNULL, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


GATE_TASKS = ("Read the cluster's health before the batch", "Read the cluster's health after the batch",
              "Stop the rollout at the health gate")


def test_tags_select_the_parts(tmp_path):
    """Tags as site.yml and audit.yml name the parts; the input checks always run."""
    scheduler = list_tasks(tmp_path, "--tags", "scheduler")
    assert "Set the scheduler attributes" in scheduler and "Refuse unknown rollout_" in scheduler
    assert "Install the reliable_job_startup hook with its config" not in scheduler and "Roll out to one host" not in scheduler
    server_hook = list_tasks(tmp_path, "--tags", "server_hook")
    assert "Install the reliable_job_startup hook with its config" in server_hook and "Set the server attributes" in server_hook
    assert "Set the scheduler attributes" not in server_hook and "Mark the node offline" not in server_hook
    moms = list_tasks(tmp_path, "--tags", "mom_tunables")
    assert "Mark the node offline" in moms and all(task in moms for task in GATE_TASKS)
    assert "Install the reliable_job_startup hook with its config" not in moms
    without_gate = list_tasks(tmp_path, "--skip-tags", "health_gate")
    assert "Mark the node offline" in without_gate and "Install the reliable_job_startup hook with its config" in without_gate
    assert not any(task in without_gate for task in GATE_TASKS)


@pytest.mark.parametrize("path", ["/proc/rollout-report.json", "/nonexistent-dir/rollout-report.json", "/tmp"])
def test_report_path_that_cannot_be_written_stops_the_run(fake_pbs, path):
    rc, output, recap = run_rollout(fake_pbs, dict(GOOD, rollout_report_path=path))
    assert "rollout_report_path: " in output and "or leave it unset for no report" in output, output
    assert_nothing_touched(fake_pbs, rc, output, recap)


@pytest.mark.parametrize("value", ["many", -1])
def test_bad_recap_list_limit_stops_the_run(fake_pbs, value):
    rc, output, recap = run_rollout(fake_pbs, dict(GOOD, rollout_recap_list_moms=value))
    assert re.search(r"rollout_recap_list_moms must be a whole number >= 0|argument 'rollout_recap_list_moms' is of "
                     r"type \S+ and we were unable to convert to int", output), output
    assert_nothing_touched(fake_pbs, rc, output, recap)


def test_report_path_in_a_writable_directory_passes_the_checks(fake_pbs, tmp_path):
    rc, output, recap = run_rollout(fake_pbs, dict(GOOD, rollout_report_path=str(tmp_path / "report.json"),
                                                   rollout_recap_list_moms=0))
    assert "rollout_report_path: " not in output and "unknown variable" not in output, output
    assert fake_pbs["calls"].exists(), output
