"""playbooks/audit.yml on the mock cluster: read-only, a drift table, a JSON report,
audit_fail_on_drift.

One 2-mom cluster (module scope): site.yml converges it, the audit finds no drift; then
drift is made by hand (a mom config line, a sched attribute, the hook's order, a mom's
copy of a hook file, the hook's config, tolerate_node_failures, a missing tunable line,
the cgroup hook) and the audit must report exactly those rows, in the table and in the
JSON report, change nothing, and fail only when asked to. The hook-file hash drift runs on
both backends; the other new drift kinds on the mock only (the audit reads them through
the same modules on both).
"""
import json
import os
import re
import types
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_rollout import (PBS_HOME, QMGR, REPO, SERVER, ansible_env, mom_config_lines,  # noqa: E402
                          node_attributes, run_playbook, wait_until)

pytestmark = [pytest.mark.integration, pytest.mark.cluster_moms(2)]

AUDIT = os.path.join(REPO, "playbooks", "audit.yml")
SITE = os.path.join(REPO, "playbooks", "site.yml")
DESIRED = {"reliable_job_startup_job_launch_delay": 16, "reliable_job_startup_sister_join_job_alarm": 16,
           "pbs_sched_attributes": {"job_run_wait": "runjob_hook"}}


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return ansible_env(tmp_path_factory.mktemp("ansible"))


HOOK = "reliable_job_startup"
HOOK_FILE_SUFFIXES = (".HK", ".PY", ".CF")
MOM_HOOKS = PBS_HOME + "/mom_priv/hooks"
SERVER_HOOKS = PBS_HOME + "/server_priv/hooks"


def hook_file_sha256(cluster, node, directory, name):
    """``{"<name>.HK": sha256 hex, ...}`` of the files of hook ``name`` in ``directory`` of
    ``node`` (a missing file is left out)."""
    paths = " ".join("%s/%s%s" % (directory, name, suffix) for suffix in HOOK_FILE_SUFFIXES)
    out = cluster.exec(node, ["sh", "-c", "sha256sum %s 2>/dev/null; true" % paths], check=True).stdout
    return {os.path.basename(path): digest for digest, path in (line.split() for line in out.splitlines())}


def copies_match_server(cluster, name, moms=("mom1", "mom2")):
    """True when every mom's mom_priv/hooks files of ``name`` are the server's."""
    server = hook_file_sha256(cluster, SERVER, SERVER_HOOKS, name)
    return all(hook_file_sha256(cluster, mom, MOM_HOOKS, name) == server for mom in moms)


def require_mock(cluster):
    if cluster.backend != "mock":
        pytest.skip("this drift kind is audited by the same modules on both backends; "
                    "run on the mock only to keep the real tier short")


@pytest.fixture(scope="module")
def converged(pbs_cluster, env):
    rc, out, _unused = run_playbook(pbs_cluster, env, SITE, DESIRED)
    assert rc == 0, out
    # The server copies hook files to the moms on its own time (real PBS: at its next
    # contact with each mom).
    wait_until(lambda: copies_match_server(pbs_cluster, HOOK), "the moms' copies of %s" % HOOK)
    return pbs_cluster


def drift_rows(output):
    """Rows of the printed drift table: ``[(host, item, desired, actual)]`` (the output of its
    task only: the effective timeouts table also starts its lines with a host)."""
    rows = []
    section = output.split("TASK [Print the drift table", 1)[-1].split("TASK [", 1)[0]
    for line in section.splitlines():
        line = line.strip().rstrip(",").strip('"')
        parts = line.split()
        if len(parts) >= 4 and parts[0] in ("pbs-server", "mom1", "mom2") and "ok=" not in line:
            rows.append(line)
    return rows


def put_back(cluster, mom_sed=None, qmgr=()):
    """Undo a test's hand-made drift, so that the next test starts converged: ``mom_sed``
    ``(mom, sed script)`` on its mom_priv/config, ``qmgr`` directives on the server; then wait
    for the moms' copies of the hook."""
    if mom_sed:
        cluster.exec(mom_sed[0], ["sed", "-i", mom_sed[1], PBS_HOME + "/mom_priv/config"], check=True)
    for directive in qmgr:
        cluster.exec(SERVER, [QMGR, "-c", directive], check=True)
    wait_until(lambda: copies_match_server(cluster, HOOK), "the moms' copies of %s" % HOOK)


def read_report(path):
    """The drift rows of the audit's JSON report (its ``run`` is checked by
    test_audit_reports_no_drift_after_site)."""
    with open(path) as handle:
        report = json.load(handle)
    assert sorted(report) == ["drift", "run"], report
    return report["drift"]


def test_no_drift_after_site_yml(converged, env, tmp_path):
    """Run as the README shows it: the collection's playbook by its name, in check mode."""
    report = str(tmp_path / "audit.json")
    rc, out, counts = run_playbook(converged, env, "hpc.pbs.audit", dict(DESIRED, audit_fail_on_drift=True,
                                                                         audit_report_path=report), "--check")
    assert rc == 0, out
    assert "0 drift(s) on 0 host(s)" in out
    assert read_report(report) == []
    assert all(c["changed"] == 0 for c in counts.values()), counts
    with open(report) as handle:
        run = json.load(handle)["run"]
    assert sorted(run) == ["ansible_core_version", "check_mode", "collection_version", "controller_host", "ended",
                           "inventory", "started", "user"], run
    assert run["check_mode"] is True and run["collection_version"] and run["ansible_core_version"], run
    assert run["started"] and run["started"] <= run["ended"], run
    assert [os.path.realpath(p) for p in run["inventory"]] == [os.path.realpath(converged.inventory)], run


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

    rc, out, _unused = run_playbook(cluster, env, AUDIT, dict(DESIRED, audit_fail_on_drift=True, audit_report_path=report))
    assert rc != 0, out
    assert "3 drift(s) found (audit_fail_on_drift is set)" in out
    assert len(read_report(report)) == 3  # written before the play fails

    # A part's tag plans that part alone in the server's read.
    for tag, objects in (("scheduler", {"sched"}), ("server_hook", {"hook reliable_job_startup"})):
        rows = audit_report(cluster, env, tmp_path, None, "--tags", tag)
        assert {r["object"] for r in rows} == objects, (tag, rows)
    assert node_attributes(cluster, "mom2")["state"] == "free"
    put_back(cluster, mom_sed=("mom2", "s/^\\$job_launch_delay 7$/$job_launch_delay 16/"),
             qmgr=["set sched default job_run_wait = runjob_hook", "set hook reliable_job_startup order = 1"])


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
    put_back(cluster, qmgr=["set sched default job_run_wait = runjob_hook"])


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

    rc, out, _unused = run_playbook(cluster, env, os.path.join(REPO, "playbooks", "cgroup_resize.yml"), {})
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
    put_back(cluster, qmgr=["set hook reliable_job_startup alarm = 30"])


def audit_report(cluster, env, tmp_path, extra=None, *more):
    """Run the audit (read-only: no host changed) and return its JSON report."""
    report = str(tmp_path / "audit.json")
    rc, out, counts = run_playbook(cluster, env, AUDIT, dict(DESIRED, audit_report_path=report, **(extra or {})),
                                   *more)
    assert rc == 0, out
    assert all(c["changed"] == 0 for c in counts.values()), counts
    return read_report(report)


def test_hook_file_copy_drift_on_a_mom_found_by_hash(converged, env, tmp_path):
    """A mom whose mom_priv/hooks .PY and .HK differ from server_priv/hooks: one row each,
    desired the server's sha256, actual the mom's; a mom missing the .CF: actual (missing)."""
    cluster = converged
    wait_until(lambda: copies_match_server(cluster, HOOK), "the moms' copies of %s" % HOOK)
    saved = {suffix: cluster.exec("mom1", ["cat", "%s/%s%s" % (MOM_HOOKS, HOOK, suffix)], check=True).stdout
             for suffix in HOOK_FILE_SUFFIXES}
    try:
        cluster.exec("mom1", ["sh", "-c", "echo '# edited by hand' >> {d}/{h}.PY; echo 'alarm=99' >> {d}/{h}.HK"
                              .format(d=MOM_HOOKS, h=HOOK)], check=True)
        if cluster.backend == "mock":
            cluster.exec("mom2", ["rm", "%s/%s.CF" % (MOM_HOOKS, HOOK)], check=True)
        server = hook_file_sha256(cluster, SERVER, SERVER_HOOKS, HOOK)
        edited = hook_file_sha256(cluster, "mom1", MOM_HOOKS, HOOK)
        rows = [r for r in audit_report(cluster, env, tmp_path) if r["object"] == "hook " + HOOK]
        expected = [{"host": "mom1", "object": "hook " + HOOK, "item": "copy " + suffix,
                     "desired": "sha256 " + server[HOOK + suffix], "actual": "sha256 " + edited[HOOK + suffix]}
                    for suffix in (".HK", ".PY")]
        if cluster.backend == "mock":
            expected.append({"host": "mom2", "object": "hook " + HOOK, "item": "copy .CF",
                             "desired": "sha256 " + server[HOOK + ".CF"], "actual": "(missing)"})
        assert sorted(rows, key=lambda r: (r["host"], r["item"])) == expected
    finally:
        for mom in ("mom1", "mom2") if cluster.backend == "mock" else ("mom1",):
            for suffix, text in saved.items():
                cluster.exec(mom, ["sh", "-c", "cat > %s/%s%s" % (MOM_HOOKS, HOOK, suffix)], input=text, check=True)
    assert copies_match_server(cluster, HOOK)


def test_server_hook_config_drift_and_tagged_repair(converged, env, tmp_path):
    """The hook's config changed by hand on the server: a "config" row with both texts;
    site.yml --tags server_hook puts it back and touches only the server."""
    cluster = converged
    require_mock(cluster)
    converged_sha256 = hook_file_sha256(cluster, SERVER, SERVER_HOOKS, HOOK)
    cluster.exec(SERVER, ["sh", "-c", "echo '{\"increment\": 3}' > /tmp/by-hand.json"], check=True)
    cluster.exec(SERVER, [QMGR, "-c", "import hook %s application/x-config default /tmp/by-hand.json" % HOOK],
                 check=True)
    rows = [r for r in audit_report(cluster, env, tmp_path) if r["host"] == SERVER]
    assert [(r["object"], r["item"], r["actual"]) for r in rows] == [
        ("hook " + HOOK, "config", '{"increment": 3}')], rows
    assert json.loads(rows[0]["desired"])["increment"] != 3, rows

    rc, out, counts = run_playbook(cluster, env, SITE, DESIRED, "--tags", "server_hook")
    assert rc == 0, out
    # A mom runs no task of the server's part (it may not even be in the recap): nothing changed there.
    assert counts[SERVER]["changed"] == 1, counts
    assert all(counts.get(mom, {"changed": 0})["changed"] == 0 for mom in ("mom1", "mom2")), counts
    assert hook_file_sha256(cluster, SERVER, SERVER_HOOKS, HOOK) == converged_sha256
    wait_until(lambda: copies_match_server(cluster, HOOK), "the moms' copies of %s" % HOOK)


def effective_join_alarm_default(cluster, mom):
    """PP-928 interface 3 computed from the mom's .HK files: the sum of the alarms of its
    enabled execjob_begin hooks (a .HK without alarm: 30), 30 when there is none."""
    out = cluster.exec(mom, ["sh", "-c", "for f in %s/*.HK; do cat \"$f\"; echo; done" % MOM_HOOKS],
                       check=True).stdout
    total = 0
    for block in out.split("hook_name=")[1:]:
        attrs = dict(line.split("=", 1) for line in block.splitlines()[1:] if "=" in line)
        if "execjob_begin" in attrs.get("event", "").split(",") and attrs.get("enabled", "true") != "false":
            total += int(attrs.get("alarm", "30"))
    return total or 30


def test_tolerate_node_failures_and_missing_tunable_line(converged, env, tmp_path):
    """site_tolerate_node_failures against the tolerate part of default_qsub_arguments
    (the site's other arguments kept); a mom without its $sister_join_job_alarm line shows
    the value it derives from its hooks' alarms."""
    cluster = converged
    require_mock(cluster)
    cluster.exec(SERVER, [QMGR, "-c", 'set server default_qsub_arguments = "-r n -W tolerate_node_failures=none"'],
                 check=True)
    cluster.exec("mom1", ["sed", "-i", "/^\\$sister_join_job_alarm/d", PBS_HOME + "/mom_priv/config"], check=True)
    try:
        rows = audit_report(cluster, env, tmp_path, {"site_tolerate_node_failures": "job_start"})
        assert sorted(rows, key=lambda r: r["host"]) == [
            {"host": "mom1", "object": "mom_priv/config", "item": "$sister_join_job_alarm", "desired": "16",
             "actual": "(no line: default %d)" % effective_join_alarm_default(cluster, "mom1")},
            {"host": SERVER, "object": "server", "item": "default_qsub_arguments",
             "desired": "-r n -W tolerate_node_failures=job_start", "actual": "-r n -W tolerate_node_failures=none"},
        ], rows
    finally:
        cluster.exec(SERVER, [QMGR, "-c", "unset server default_qsub_arguments"], check=True)
        cluster.exec("mom1", ["sh", "-c", "echo '$sister_join_job_alarm 16' >> %s/mom_priv/config" % PBS_HOME],
                     check=True)


def test_cgroup_hook_drift_audited_alone_with_its_tag(converged, env, tmp_path):
    """With site_cgroup_resize, a hand-made change of the cgroup hook is a row; --tags
    cgroup_resize audits that part alone (a drifted mom tunable is not looked at)."""
    cluster = converged
    require_mock(cluster)
    rc, out, _unused = run_playbook(cluster, env, os.path.join(REPO, "playbooks", "cgroup_resize.yml"), {})
    assert rc == 0, out
    cluster.exec(SERVER, [QMGR, "-c", "set hook cgroup_resize alarm = 77"], check=True)
    cluster.exec("mom1", ["sed", "-i", "s/^\\$job_launch_delay 16$/$job_launch_delay 9/",
                          PBS_HOME + "/mom_priv/config"], check=True)
    try:
        wait_until(lambda: copies_match_server(cluster, "cgroup_resize"), "the moms' copies of cgroup_resize")
        rows = audit_report(cluster, env, tmp_path, {"site_cgroup_resize": True}, "--tags", "cgroup_resize")
        assert rows == [{"host": SERVER, "object": "hook cgroup_resize", "item": "alarm",
                         "desired": "30", "actual": "77"}], rows
    finally:
        cluster.exec("mom1", ["sed", "-i", "s/^\\$job_launch_delay 9$/$job_launch_delay 16/",
                              PBS_HOME + "/mom_priv/config"], check=True)
        cluster.exec(SERVER, [QMGR, "-c", "set hook cgroup_resize alarm = 30"], check=True)
