"""playbooks/audit.yml on the mock cluster: read-only, a drift table, a JSON report,
audit_fail_on_drift.

One 2-mom cluster (module scope): site.yml converges it, the audit finds no drift; then
drift is made by hand (a mom config line, a sched attribute, the hook's order) and the
audit must report exactly those rows, in the table and in the JSON report, change
nothing, and fail only when asked to.
"""
import json
import os
import re
import types
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


def read_report(path):
    with open(path) as handle:
        return json.load(handle)


def test_no_drift_after_site_yml(converged, env, tmp_path):
    report = str(tmp_path / "audit.json")
    rc, out, counts = run_playbook(converged, env, AUDIT, dict(DESIRED, audit_fail_on_drift=True,
                                                               audit_report_path=report))
    assert rc == 0, out
    assert "0 drift(s) on 0 host(s)" in out
    assert read_report(report) == []
    assert all(c["changed"] == 0 for c in counts.values()), counts


def test_drift_reported_read_only_and_fails_when_asked(converged, env, tmp_path):
    cluster = converged
    report = str(tmp_path / "audit.json")
    cluster.exec("mom2", ["sed", "-i", "s/^\\$job_launch_delay 16$/$job_launch_delay 7/",
                          "/var/spool/pbs/mom_priv/config"], check=True)
    cluster.exec(SERVER, [QMGR, "-c", "set sched default job_run_wait = none"], check=True)
    cluster.exec(SERVER, [QMGR, "-c", "set hook reliable_job_startup order = 5"], check=True)

    rc, out, counts = run_playbook(cluster, env, AUDIT, dict(DESIRED, audit_report_path=report))
    assert rc == 0, out  # drift is reported, not fatal, by default
    rows = drift_rows(out)
    assert len(rows) == 3, rows
    assert any(r.split()[:4] == ["mom2", "$job_launch_delay", "16", "7"] for r in rows), rows
    assert any(r.split()[:4] == ["pbs-server", "sched", "job_run_wait", "runjob_hook"] for r in rows), rows
    assert any(r.split()[:5] == ["pbs-server", "hook", "reliable_job_startup", "order", "1"] and r.split()[-1] == "5"
               for r in rows), rows
    assert "3 drift(s) on 2 host(s)" in out
    assert sorted(read_report(report), key=lambda r: (r["host"], r["object"], r["item"])) == [
        {"host": "mom2", "object": "mom_priv/config", "item": "$job_launch_delay", "desired": "16", "actual": "7"},
        {"host": "pbs-server", "object": "hook reliable_job_startup", "item": "order", "desired": "1", "actual": "5"},
        {"host": "pbs-server", "object": "sched", "item": "job_run_wait", "desired": "runjob_hook", "actual": "none"},
    ]
    # Read-only: nothing was put back.
    assert mom_config_lines(cluster, "mom2", "job_launch_delay") == ["$job_launch_delay 7"]
    sched = cluster.exec(SERVER, [QMGR, "-c", "list sched default job_run_wait"], check=True).stdout
    assert "job_run_wait = none" in sched
    assert all(c["changed"] == 0 for c in counts.values()), counts

    rc, out, _ = run_playbook(cluster, env, AUDIT, dict(DESIRED, audit_fail_on_drift=True, audit_report_path=report))
    assert rc != 0, out
    assert "3 drift(s) found (audit_fail_on_drift is set)" in out
    assert len(read_report(report)) == 3  # written before the play fails
    assert node_attributes(cluster, "mom2")["state"] == "free"


def test_sched_tuning_drift_found_without_pbs_sched_attributes(converged, env, tmp_path):
    """site.yml sets job_run_wait through sched_tuning alone: the audit checks it too."""
    cluster = converged
    report = str(tmp_path / "audit.json")
    cluster.exec(SERVER, [QMGR, "-c", "set sched default job_run_wait = execjob_hook"], check=True)
    desired = {k: v for k, v in DESIRED.items() if k != "pbs_sched_attributes"}
    rc, out, counts = run_playbook(cluster, env, AUDIT, dict(desired, sched_tuning_job_run_wait="runjob_hook",
                                                             audit_report_path=report))
    assert rc == 0, out
    assert {"host": "pbs-server", "object": "sched", "item": "job_run_wait", "desired": "runjob_hook",
            "actual": "execjob_hook"} in read_report(report), out
    assert any(r.split()[:4] == ["pbs-server", "sched", "job_run_wait", "runjob_hook"] for r in drift_rows(out)), out
    assert all(c["changed"] == 0 for c in counts.values()), counts


def test_cray_atom_and_cgroup_resize_audited_when_enabled(converged, env, tmp_path):
    """Their hooks are audited only with site_cray_atom / site_cgroup_resize, and a
    converged cgroup hook has no drift."""
    cluster = converged
    report = str(tmp_path / "audit.json")

    def optional_objects(extra):
        rc, out, counts = run_playbook(cluster, env, AUDIT, dict(DESIRED, audit_report_path=report, **extra))
        assert rc == 0, out
        assert all(c["changed"] == 0 for c in counts.values()), counts
        return {r["object"] for r in read_report(report) if "cray_atom" in r["object"] or "cgroup" in r["object"]}

    assert optional_objects({}) == set()
    found = optional_objects({"site_cray_atom": True, "site_cgroup_resize": True})
    assert any("cray_atom" in o for o in found), found
    assert any(o in ("hook cgroup_resize", "hook pbs_cgroups") for o in found), found

    rc, out, _ = run_playbook(cluster, env, os.path.join(REPO, "playbooks", "cgroup_resize.yml"), {})
    assert rc == 0, out
    found = optional_objects({"site_cgroup_resize": True})
    assert found == set(), found

def test_host_in_both_groups_keeps_server_and_mom_rows_once(converged, env, tmp_path):
    """pbs-server also listed in pbs_mom: its server rows survive the mom play, each row once."""
    cluster = converged
    report = str(tmp_path / "audit.json")
    with open(cluster.inventory) as handle:
        text = handle.read()
    server_line = re.search(r"(?m)^pbs-server .*$", text).group(0)
    inventory = tmp_path / "inventory.ini"
    inventory.write_text(text.replace("[pbs_mom]\n", "[pbs_mom]\n%s\n" % server_line, 1))
    cluster.exec(SERVER, [QMGR, "-c", "set hook reliable_job_startup alarm = 44"], check=True)
    rc, out, counts = run_playbook(types.SimpleNamespace(inventory=str(inventory)), env, AUDIT, dict(DESIRED, audit_report_path=report))
    assert rc == 0, out
    rows = [r for r in read_report(report) if r["host"] == "pbs-server"]
    keys = [(r["object"], r["item"]) for r in rows]
    assert len(keys) == len(set(keys)), rows  # no row twice
    assert ("hook reliable_job_startup", "alarm") in keys, rows  # server row kept
    # The server host has no mom config: its mom rows are there too.
    assert ("mom_priv/config", "$job_launch_delay") in keys, rows
    table = [r for r in drift_rows(out) if r.split()[0] == "pbs-server"]
    assert len(table) == len(rows), (table, rows)
