"""site.yml checks every host's inputs before anything changes, each distinct set of values
once (``hpc.pbs.distinct_value_hosts``): a bad value that only one mom has is still refused,
naming it, before the server or any mom is touched.

No cluster: every inventory host is this machine (``ansible_connection=local``) with the fake
PBS of conftest.py, whose ``qmgr`` records each call in ``calls.log``.
"""
import sys
from pathlib import Path

import yaml

from local_playbook import run_local_playbook

PLAYBOOK = Path(__file__).resolve().parents[3] / "playbooks" / "site.yml"
HOST = "ansible_connection=local ansible_python_interpreter=%s" % sys.executable


def run_site(fake, mom2_vars=""):
    inventory = "[pbs_server]\nsrv %s\n[pbs_mom]\nmom1 %s\nmom2 %s %s\n" % (HOST, HOST, HOST, mom2_vars)
    return run_local_playbook(fake, PLAYBOOK, inventory, {"reliable_job_startup_pbs_conf_file": str(fake["conf"])})


def test_good_inputs_reach_the_fake_pbs(fake_pbs):
    """Control: with good inputs the run gets past the checks and calls qmgr."""
    rc, output, recap = run_site(fake_pbs)
    assert "must be null or whole seconds" not in output, output
    assert fake_pbs["calls"].exists(), output


def test_a_bad_value_only_one_mom_has_is_refused_before_anything_changes(fake_pbs):
    rc, output, recap = run_site(fake_pbs, "reliable_job_startup_job_launch_delay=0")
    assert rc != 0, output
    assert "reliable_job_startup_job_launch_delay must be null or whole seconds >= 1" in output, output
    assert recap.get("mom2") == 1, output  # the check ran on mom2, the only host with that value
    assert not fake_pbs["calls"].exists(), fake_pbs["calls"].read_text()
    assert not fake_pbs["mom_config"].exists()
    assert "Set $job_launch_delay" not in output, output


def test_the_hosts_to_check_are_found_once_not_once_per_host():
    """The first host of each distinct set of inputs is found by one run_once task. As a play
    variable it was templated again for every host's end_host condition, each time reading
    every host's variables: a cost that grew with the square of the hosts (0.8 s of the
    controller at 32 moms, about an hour at 2,500)."""
    plays = yaml.safe_load(PLAYBOOK.read_text())
    checks = plays[0]
    assert not [name for name, value in (checks.get("vars") or {}).items() if "distinct_value_hosts" in str(value)]
    finders = [task for task in checks["tasks"] if "distinct_value_hosts" in str(task)]
    assert len(finders) == 1, finders
    assert finders[0].get("run_once") is True, finders[0]
    assert "ansible.builtin.set_fact" in finders[0], finders[0]


def test_a_bad_hook_config_is_refused_on_the_first_host_only_before_anything_changes(fake_pbs):
    """The hook config is one value for the run (the server's): it is checked against its
    JSON Schema on the first host that checks, as run_once would, not on every host whose
    other inputs differ (mom2 here), and nothing is touched."""
    inventory = "[pbs_server]\nsrv %s\n[pbs_mom]\nmom1 %s\nmom2 %s reliable_job_startup_job_launch_delay=5\n" % (
        HOST, HOST, HOST)
    rc, output, recap = run_local_playbook(fake_pbs, PLAYBOOK, inventory, {
        "reliable_job_startup_pbs_conf_file": str(fake_pbs["conf"]), "reliable_job_startup_config": {"increment": 0}})
    assert rc != 0, output
    assert ("reliable_job_startup: reliable_job_startup_config is not a valid config of the "
            "reliable_job_startup hook") in output, output
    assert recap.get("srv") == 1 and recap.get("mom2") == 0, output  # mom2 checked its own values only
    assert not fake_pbs["calls"].exists(), fake_pbs["calls"].read_text()
    assert not fake_pbs["mom_config"].exists()
