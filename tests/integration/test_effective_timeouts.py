"""The effective $sister_join_job_alarm / $job_launch_delay of each mom, as audit.yml reports
them (hpc.pbs.cluster_info's read on every mom), on both backends, and on real OpenPBS the
proof that the mom waits what the rule says (module_utils/cluster/effective_timeouts.py).

One 2-mom cluster (module scope). A mom whose mom_priv/config has no line for an option
derives it from its hooks: the sum of the alarms of the enabled execjob_begin (join) /
execjob_prologue (launch) hooks, 30 s with none; a config line wins. Real pbs_mom sums the
hooks at its start and when the server copies it a .HK file (logging ``joinjob_alarm_time
updated to N``), and after a SIGHUP holds 30 s until one of these happens again.
"""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pbsjobs  # noqa: E402
from test_site_sched import ansible_env, run_playbook  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.cluster_moms(2)]

REPO = pbsjobs.REPO
AUDIT = os.path.join(REPO, "playbooks", "audit.yml")
CGROUP_RESIZE = os.path.join(REPO, "playbooks", "cgroup_resize.yml")
MOMS = ["mom1", "mom2"]
HOOK = "slow_begin"
BODY = "import pbs\npbs.event().accept()\n"
# Small enough for a frozen sister's wait to cost a few seconds.
SHORT_ALARM = 5
SELECT = ["-W", "tolerate_node_failures=job_start", "-l", "select=ncpus=1+ncpus=1", "-l", "place=scatter"]


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return ansible_env(tmp_path_factory.mktemp("ansible"))


@pytest.fixture(scope="module")
def cluster(pbs_cluster):
    """Both moms without a line for either option, no hook of ours."""
    pbsjobs.delete_hook(pbs_cluster, HOOK)
    for mom in MOMS:
        pbsjobs.set_mom_config(pbs_cluster, mom, {})
    return pbs_cluster


def timeouts(cluster, env, tmp_path, named=False):
    """``{(mom, option): row}`` of audit.yml's effective timeouts report (mom_tunables part):
    at ``audit_timeouts_report_path`` when ``named``, else where it goes by default (beside
    the drift report)."""
    extra = {"audit_report_path": str(tmp_path / "drift.json")}
    if named:
        extra["audit_timeouts_report_path"] = str(tmp_path / "timeouts.json")
    report = extra.get("audit_timeouts_report_path", str(tmp_path / "audit-effective-timeouts.json"))
    if os.path.exists(report):
        os.unlink(report)
    rc, out, counts = run_playbook(cluster, env, AUDIT, extra, "--tags", "mom_tunables")
    assert rc == 0, out
    assert all(c["changed"] == 0 for c in counts.values()), counts
    with open(report) as handle:
        rows = json.load(handle)["timeouts"]
    found = dict(((r["host"], r["option"]), r) for r in rows)
    assert sorted(found) == sorted((m, o) for m in MOMS for o in ("job_launch_delay", "sister_join_job_alarm")), rows
    # The table prints the same rows.
    for row in rows:
        assert "%-14s %-22s %-8s %s" % (row["host"], "$" + row["option"], row["seconds"], row["why"]) in out, out
    return found


def short(row):
    return row["seconds"], row["source"], [(h["name"], h["alarm"]) for h in row["hooks"]], row["after_sighup"]


def wait_logged(cluster, mom, needle, before):
    pbsjobs.wait_for(lambda: len(pbsjobs.log_lines(cluster, mom, needle)) > before, 30,
                     "%s to log %r" % (mom, needle))


def test_no_hook_then_a_90_s_begin_hook_then_a_config_line(cluster, env, tmp_path):
    """30 s with no hook; then 90 s on mom2 from a 90 s execjob_begin hook (the mom logs it
    took 90; 30 after a reload), and on mom1 its config line's 45 s, which wins."""
    found = timeouts(cluster, env, tmp_path, named=True)
    for mom in MOMS:
        for option in ("sister_join_job_alarm", "job_launch_delay"):
            assert short(found[(mom, option)]) == (30, "default", [], 30), found

    # One read for both: mom2 derives from the hook, mom1's config line wins over it.
    updated = len(pbsjobs.log_lines(cluster, "mom2", "joinjob_alarm_time updated to 90"))
    pbsjobs.install_hook(cluster, HOOK, ["execjob_begin"], BODY, alarm=90)
    pbsjobs.wait_hook_on_moms(cluster, MOMS, HOOK)
    # The mom's own word for the value it now uses (req_copy_hookfile).
    wait_logged(cluster, "mom2", "joinjob_alarm_time updated to 90", updated)
    logged = len(pbsjobs.log_lines(cluster, "mom1", ";sister_join_job_alarm;45"))
    pbsjobs.set_mom_config(cluster, "mom1", {"sister_join_job_alarm": 45})
    wait_logged(cluster, "mom1", ";sister_join_job_alarm;45", logged)
    found = timeouts(cluster, env, tmp_path)
    assert short(found[("mom2", "sister_join_job_alarm")]) == (90, "hooks", [(HOOK, 90)], 30), found
    assert found[("mom2", "sister_join_job_alarm")]["why"] == (
        "no config line; the sum of the alarms of the enabled execjob_begin hooks: %s 90 s" % HOOK)
    assert short(found[("mom1", "sister_join_job_alarm")]) == (45, "mom_config", [(HOOK, 90)], 45), found
    assert found[("mom1", "sister_join_job_alarm")]["line"] == "$sister_join_job_alarm 45"
    for mom in MOMS:
        assert short(found[(mom, "job_launch_delay")]) == (30, "default", [], 30), found


def join_wait(cluster):
    """Seconds the primary mom1 waits for the frozen mom2 to join a job (its log line)."""
    cluster.stop_mom("mom2", freeze=True)
    try:
        jobid = pbsjobs.qsub(cluster, SELECT, "sleep 1\n")

        def waited():
            for line in pbsjobs.job_log_lines(cluster, "mom1", jobid):
                if "sister_join_job_alarm wait time" in line:
                    return int(line.split("sister_join_job_alarm wait time ")[1].split()[0])
            return None
        return pbsjobs.wait_for(waited, 60, "mom1 to give up waiting for mom2 (job %s)" % jobid)
    finally:
        pbsjobs.restore_cluster(cluster, MOMS)
        pbsjobs.wait_nodes_free(cluster, MOMS, 60)


def announced_wait(cluster):
    """Seconds mom1 says, at a job's start, it will wait for its sisters to join (DEBUG3
    ``job waiting up to N secs ($sister_join_job_alarm)``, the value it arms its alarm with);
    mom2 answers, so the job runs and ends at once."""
    jobid = pbsjobs.qsub(cluster, SELECT, "sleep 1\n")
    try:
        def announced():
            for line in pbsjobs.job_log_lines(cluster, "mom1", jobid):
                if "job waiting up to " in line and "($sister_join_job_alarm)" in line:
                    return int(line.split("job waiting up to ")[1].split()[0])
            return None
        return pbsjobs.wait_for(announced, 30, "mom1 to start job %s" % jobid)
    finally:
        pbsjobs.wait_job_gone(cluster, jobid, 30)


def test_the_mom_waits_the_derived_value_and_30_s_after_a_sighup(cluster):
    """Both backends (the mock holds the value as real pbs_mom does): after the server
    copies the .HK of a 5 s hook the mom waits 5 s for a frozen sister; after a SIGHUP
    (config re-read, no line) it arms 30 s, as cluster_info's after_sighup says; after a
    restart 5 s again."""
    debug3 = {"logevent": "0xffffffff"}    # every event class, DEBUG3's job start line among them
    pbsjobs.set_mom_config(cluster, "mom1", debug3)
    before = len(pbsjobs.log_lines(cluster, "mom1", "joinjob_alarm_time updated to %d" % SHORT_ALARM))
    pbsjobs.install_hook(cluster, HOOK, ["execjob_begin"], BODY, alarm=SHORT_ALARM)
    wait_logged(cluster, "mom1", "joinjob_alarm_time updated to %d" % SHORT_ALARM, before)
    assert join_wait(cluster) == SHORT_ALARM        # the wait itself, for a sister that never joins
    assert announced_wait(cluster) == SHORT_ALARM

    # SIGHUP: the hooks are not summed again (cluster_info's after_sighup, checked above).
    pbsjobs.set_mom_config(cluster, "mom1", debug3)
    assert announced_wait(cluster) == 30

    cluster.stop_mom("mom1")
    cluster.start_mom("mom1")                       # at its start the mom sums its hooks
    pbsjobs.wait_nodes_free(cluster, MOMS, 60)
    assert announced_wait(cluster) == SHORT_ALARM
    pbsjobs.set_mom_config(cluster, "mom1", {})


def test_the_cgroup_resize_role_says_how_the_join_wait_changes(cluster, env, tmp_path):
    """Before it installs its hook (execjob_begin, alarm 30) beside an enabled 90 s
    execjob_begin hook, the role says 90 -> 120 s and names the hook, in check mode too;
    a run that changes no hook says nothing."""
    if cluster.backend != "mock":
        pytest.skip("the role's text is made on the controller from the same server read on both "
                    "backends; run on the mock only to keep the real tier short")
    pbsjobs.install_hook(cluster, HOOK, ["execjob_begin"], BODY, alarm=90)
    pbsjobs.delete_hook(cluster, "cgroup_resize")
    expected = ("hook cgroup_resize: on every mom whose mom_priv/config has no $sister_join_job_alarm line, "
                "$sister_join_job_alarm goes from 90 s to 120 s (the sum of the alarms of the enabled "
                "execjob_begin hooks: cgroup_resize 30 s + %s 90 s)" % HOOK)
    try:
        rc, out, dummy = run_playbook(cluster, env, CGROUP_RESIZE, {}, "--check")
        assert rc == 0, out
        assert expected in out, out
        rc, out, dummy = run_playbook(cluster, env, CGROUP_RESIZE, {})
        assert rc == 0, out
        assert expected in out, out
        rc, out, dummy = run_playbook(cluster, env, CGROUP_RESIZE, {})
        assert rc == 0, out
        assert "goes from" not in out, out
    finally:
        pbsjobs.delete_hook(cluster, "cgroup_resize")


def test_the_cray_atom_role_says_how_the_join_wait_changes_in_check_mode(cluster, env, tmp_path):
    """Before it installs the bundled ATOM hook (execjob_begin, alarm 300) beside an enabled
    90 s execjob_begin hook, the role says 90 -> 390 s, in check mode, changing nothing."""
    if cluster.backend != "mock":
        pytest.skip("the role's text is made on the controller from the same server read on both "
                    "backends; run on the mock only to keep the real tier short")
    pbsjobs.install_hook(cluster, HOOK, ["execjob_begin"], BODY, alarm=90)
    pbsjobs.delete_hook(cluster, "cray_atom")
    rc, out, counts = run_playbook(cluster, env, os.path.join(REPO, "playbooks", "cray_atom.yml"),
                                   {"cray_atom_hook_source": "bundled"}, "--check")
    assert rc == 0, out
    assert ("hook cray_atom: on every mom whose mom_priv/config has no $sister_join_job_alarm line, "
            "$sister_join_job_alarm goes from 90 s to 390 s (the sum of the alarms of the enabled "
            "execjob_begin hooks: cray_atom 300 s + %s 90 s)" % HOOK) in out, out
    listed = pbsjobs.qmgr(cluster, "list hook", check=False).stdout
    assert "Hook cray_atom" not in listed, listed
