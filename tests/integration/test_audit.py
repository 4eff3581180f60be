"""playbooks/audit.yml on the mock cluster: read-only, a drift table, audit_fail_on_drift.

One 2-mom cluster (module scope): site.yml converges it, the audit finds no drift; then
drift is made by hand (a mom config line, a sched attribute, the hook's order) and the
audit must report exactly those rows, change nothing, and fail only when asked to.
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_rollout import (QMGR, REPO, SERVER, ansible_env, mom_config_lines,  # noqa: E402
                          node_attributes, run_playbook)

pytestmark = [pytest.mark.integration, pytest.mark.cluster_moms(2)]

AUDIT = os.path.join(REPO, "playbooks", "audit.yml")
SITE = os.path.join(REPO, "playbooks", "site.yml")
DESIRED = {"reliable_job_startup_job_launch_delay": 16, "reliable_job_startup_sister_join_job_alarm": 16,
           "pbs_sched_attributes": {"job_run_wait": "runjob_hook"}}


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return ansible_env(tmp_path_factory.mktemp("ansible"))


@pytest.fixture(scope="module")
def converged(pbs_cluster, env):
    rc, out, _ = run_playbook(pbs_cluster, env, SITE, DESIRED)
    assert rc == 0, out
    return pbs_cluster


def drift_rows(output):
    """Rows of the printed table: ``[(host, item, desired, actual)]``."""
    rows = []
    for line in output.splitlines():
        line = line.strip().rstrip(",").strip('"')
        parts = line.split()
        if len(parts) >= 4 and parts[0] in ("pbs-server", "mom1", "mom2") and "ok=" not in line:
            rows.append(line)
    return rows


def test_no_drift_after_site_yml(converged, env):
    rc, out, counts = run_playbook(converged, env, AUDIT, dict(DESIRED, audit_fail_on_drift=True))
    assert rc == 0, out
    assert "0 drift(s) on 0 host(s)" in out
    assert all(c["changed"] == 0 for c in counts.values()), counts


def test_drift_reported_read_only_and_fails_when_asked(converged, env):
    cluster = converged
    cluster.exec("mom2", ["sed", "-i", "s/^\\$job_launch_delay 16$/$job_launch_delay 7/",
                          "/var/spool/pbs/mom_priv/config"], check=True)
    cluster.exec(SERVER, [QMGR, "-c", "set sched default job_run_wait = none"], check=True)
    cluster.exec(SERVER, [QMGR, "-c", "set hook reliable_job_startup order = 5"], check=True)

    rc, out, counts = run_playbook(cluster, env, AUDIT, DESIRED)
    assert rc == 0, out  # drift is reported, not fatal, by default
    rows = drift_rows(out)
    assert len(rows) == 3, rows
    assert any(r.split()[:4] == ["mom2", "$job_launch_delay", "16", "7"] for r in rows), rows
    assert any(r.split()[:4] == ["pbs-server", "sched", "job_run_wait", "runjob_hook"] for r in rows), rows
    assert any(r.split()[:5] == ["pbs-server", "hook", "reliable_job_startup", "order", "1"] and r.split()[-1] == "5"
               for r in rows), rows
    assert "3 drift(s) on 2 host(s)" in out
    # Read-only: nothing was put back.
    assert mom_config_lines(cluster, "mom2", "job_launch_delay") == ["$job_launch_delay 7"]
    sched = cluster.exec(SERVER, [QMGR, "-c", "list sched default job_run_wait"], check=True).stdout
    assert "job_run_wait = none" in sched
    assert all(c["changed"] == 0 for c in counts.values()), counts

    rc, out, _ = run_playbook(cluster, env, AUDIT, dict(DESIRED, audit_fail_on_drift=True))
    assert rc != 0, out
    assert "3 drift(s) found (audit_fail_on_drift is set)" in out
    assert node_attributes(cluster, "mom2")["state"] == "free"
