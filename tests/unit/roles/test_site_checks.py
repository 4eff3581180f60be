"""site.yml checks every host's inputs before anything changes, each distinct set of values
once (``hpc.pbs.distinct_value_hosts``): a bad value that only one mom has is still refused,
naming it, before the server or any mom is touched.

No cluster: every inventory host is this machine (``ansible_connection=local``) with the fake
PBS of conftest.py, whose ``qmgr`` records each call in ``calls.log``.
"""
import sys
from pathlib import Path

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
