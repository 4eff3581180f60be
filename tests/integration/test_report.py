"""playbooks/report.yml (hpc.pbs.accounting_report) on real jobs, on every backend.

Three moms, ``$sister_join_job_alarm`` and ``$job_launch_delay`` 3 s, the bundled
reliable_job_startup hook (``increment: 1``): ``-l select=ncpus=1+ncpus=1 -l place=scatter``
is padded to ``1:ncpus=1+2:ncpus=1`` on mom1, mom2 and mom3 and pruned back to two chunks at
execjob_launch. One module-scoped cluster runs, in order:

1. a healthy padded job: pruned, one healthy chunk released, no sister failed;
2. a frozen sister (mom2 never joins): started pruned without it, saved;
3. a sister whose execjob_begin hook rejects the job (mom3): saved;
4. a lost sister (mom2 frozen, then killed while the primary waits for it): saved;
5. a job that still fails: both sisters reject it at execjob_begin, the hook cannot prune
   it, holds (s) and requeues it (an ``R`` record, Exit_status -16);
6. a job array of two subjobs while mom2 is frozen: both saved.

Then the playbook reads the window once (a line that is no accounting record appended to
today's file for the run) and the JSON's counts are asserted exactly; the Prometheus text,
the schema and the table are checked, and the broken line is reported with its file and
line.
"""
import json
import os
import stat
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pbsjobs  # noqa: E402
from test_site_sched import ansible_env, run_playbook  # noqa: E402  (shared helpers)

pytestmark = [pytest.mark.integration, pytest.mark.cluster_moms(3)]

REPO = pbsjobs.REPO
PLAYBOOK = os.path.join(REPO, "playbooks", "report.yml")
MOMS = ["mom1", "mom2", "mom3"]
ALARM = 3
SELECT = ["-l", "select=ncpus=1+ncpus=1", "-l", "place=scatter"]
SCRIPT = "sleep 1\n"
REJECT_BEGIN = """import pbs, socket
if socket.gethostname().split(".")[0] in %r:
    pbs.event().reject("this sister refuses the job (test_report)")
"""
ACCT_DIR = "%s/server_priv/accounting" % pbsjobs.PBS_HOME


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return ansible_env(tmp_path_factory.mktemp("ansible"))


def wait_record(cluster, jobid, kind, timeout=90):
    pbsjobs.wait_for(lambda: kind in pbsjobs.record_types(cluster, jobid), timeout,
                     "the %s record of %s" % (kind, jobid))


def primary_saw(cluster, jobid, needle, timeout=60):
    pbsjobs.wait_for(lambda: any(needle in l for l in pbsjobs.job_log_lines(cluster, "mom1", jobid)),
                     timeout, "mom1 to log %r for %s" % (needle, jobid))


def recover(cluster):
    for mom in MOMS:
        cluster.start_mom(mom)
    pbsjobs.clear_offline(cluster, MOMS)
    pbsjobs.wait_nodes_free(cluster, MOMS, 90)


@pytest.fixture(scope="module")
def scenario(pbs_cluster):
    """Runs the jobs of the module docstring once; returns ``{name: job id}``."""
    cluster = pbs_cluster
    for mom in MOMS:
        pbsjobs.set_mom_config(cluster, mom, {"sister_join_job_alarm": ALARM, "job_launch_delay": ALARM})
    pbsjobs.install_bundled_hook(cluster)
    pbsjobs.install_hook(cluster, "report_reject_begin", ["execjob_begin"], REJECT_BEGIN % (("mom3",),), enabled=False)
    pbsjobs.install_hook(cluster, "report_reject_both", ["execjob_begin"], REJECT_BEGIN % (("mom2", "mom3"),),
                         enabled=False)
    pbsjobs.wait_hook_on_moms(cluster, MOMS, "reliable_job_startup")
    jobs = {}
    jobs["healthy"] = pbsjobs.qsub(cluster, SELECT, SCRIPT)
    wait_record(cluster, jobs["healthy"], "E")

    cluster.stop_mom("mom2", freeze=True)
    jobs["frozen"] = pbsjobs.qsub(cluster, SELECT, SCRIPT)
    wait_record(cluster, jobs["frozen"], "E")
    recover(cluster)

    pbsjobs.qmgr(cluster, "set hook report_reject_begin enabled = true")
    pbsjobs.wait_hook_on_moms(cluster, MOMS, "report_reject_begin")
    jobs["rejected"] = pbsjobs.qsub(cluster, SELECT, SCRIPT)
    wait_record(cluster, jobs["rejected"], "E")
    pbsjobs.qmgr(cluster, "set hook report_reject_begin enabled = false")
    recover(cluster)            # the hook offlined mom3's vnode (vnode_list_fail)

    cluster.stop_mom("mom2", freeze=True)
    jobs["lost"] = pbsjobs.qsub(cluster, SELECT, SCRIPT)
    wait_record(cluster, jobs["lost"], "S")
    cluster.stop_mom("mom2")    # killed while the primary waits for its join
    wait_record(cluster, jobs["lost"], "E")
    recover(cluster)

    # Both sisters reject at execjob_begin: their answers reach the primary before the
    # launch hook runs, whatever the machine's load (two frozen sisters made the R record
    # depend on when a thawed sister's late JOIN_JOB answer met the primary's delete).
    pbsjobs.qmgr(cluster, "set hook report_reject_both enabled = true")
    pbsjobs.wait_hook_on_moms(cluster, MOMS, "report_reject_both")
    jobs["fails"] = pbsjobs.qsub(cluster, SELECT, SCRIPT)
    primary_saw(cluster, jobs["fails"], "could not prune job")
    wait_record(cluster, jobs["fails"], "R")
    pbsjobs.qmgr(cluster, "set hook report_reject_both enabled = false")
    pbsjobs.qdel(cluster, jobs["fails"])
    pbsjobs.wait_job_gone(cluster, jobs["fails"], 60)
    recover(cluster)            # the hook offlined mom2's and mom3's vnodes

    cluster.stop_mom("mom2", freeze=True)
    jobs["array"] = pbsjobs.qsub(cluster, SELECT + ["-J", "1-2"], SCRIPT)
    for index in (1, 2):
        wait_record(cluster, jobs["array"].replace("[]", "[%d]" % index), "E")
    recover(cluster)
    return jobs


@pytest.fixture(scope="module")
def report(scenario, pbs_cluster, env, tmp_path_factory):
    """The playbook's one run over the last hour, with a line that is no accounting record
    appended to today's file (removed after the run): ``(rc, output, JSON, Prometheus text,
    paths, {"file", "line"} of the bad line)``."""
    out = tmp_path_factory.mktemp("report")
    paths = {"json": str(out / "rjs.json"), "prom": str(out / "pbs_rjs.prom")}
    day_file = "%s/%s" % (ACCT_DIR, time.strftime("%Y%m%d"))
    lines = int(pbsjobs.sh(pbs_cluster, pbsjobs.SERVER, "wc -l < %s" % day_file).stdout.strip())
    pbsjobs.sh(pbs_cluster, pbsjobs.SERVER, "printf 'garbage without fields\\n' >> %s" % day_file)
    try:
        rc, output, _recap = run_playbook(pbs_cluster, env, PLAYBOOK, {
            "report_json_path": paths["json"], "report_prometheus_path": paths["prom"],
            "report_window_days": 1.0 / 24})
    finally:
        pbsjobs.sh(pbs_cluster, pbsjobs.SERVER, "sed -i '/^garbage without fields$/d' %s" % day_file)
    assert rc == 0, output
    with open(paths["json"]) as handle:
        document = json.load(handle)
    with open(paths["prom"]) as handle:
        prom = handle.read()
    return rc, output, document, prom, paths, {"file": day_file, "line": lines + 1}


def subjob(array_id, index):
    return array_id.replace("[]", "[%d]" % index)


def test_report_counts_what_the_jobs_did(scenario, report):
    _rc, _output, document, _prom, _paths, _bad = report
    totals = document["totals"]
    assert document["queues"]["workq"] == totals
    expected = {
        "jobs": 7, "padded_jobs": 7, "tolerate_node_failures_jobs": 7,
        "pruned_jobs": 6, "pruned_runs": 6, "saved_jobs": 5, "saved_runs": 5,
        "pruned_runs_failed_unknown": 0, "chunks_released": 6, "nodes_released": 6,
        "healthy_nodes_released": 1, "failed_sisters": 5,
        "failed_start_jobs": 1, "failed_starts": 1, "requeued_jobs": 1,
        "held_after_failed_starts": 0,
    }
    assert {k: totals[k] for k in expected} == expected, (totals, document["jobs"], scenario)
    assert totals["failed_start_causes"] == {
        "a hook rejected the start and asked for a rerun (JOB_EXEC_FAILHOOK_RERUN)": 1}
    jobs = {row["job"]: row for row in document["jobs"]}
    # A healthy padded chunk merely released is not a failed sister ...
    assert jobs[scenario["healthy"]]["failed_sisters"] == []
    assert len(jobs[scenario["healthy"]]["healthy_released"]) == 1
    assert jobs[scenario["healthy"]]["saved_runs"] == 0
    # ... and each failed sister is named, with nothing healthy released beside it.
    failed = {name: jobs[scenario[name]]["failed_sisters"] for name in ("frozen", "rejected", "lost")}
    failed.update({"array[%d]" % i: jobs[subjob(scenario["array"], i)]["failed_sisters"] for i in (1, 2)})
    assert failed == {"frozen": ["mom2"], "rejected": ["mom3"], "lost": ["mom2"],
                      "array[1]": ["mom2"], "array[2]": ["mom2"]}
    assert all(jobs[scenario[n]]["healthy_released"] == [] for n in ("frozen", "rejected", "lost"))
    assert jobs[scenario["fails"]]["failed_starts"] == 1 and jobs[scenario["fails"]]["requeued"]
    assert jobs[scenario["fails"]]["pruned_runs"] == 0
    # The frozen sister held its chunk for at least the join alarm before the prune.
    assert jobs[scenario["frozen"]]["padding_node_seconds"] >= ALARM
    assert totals["padding_node_seconds"] == sum(row["padding_node_seconds"] for row in document["jobs"])
    nodes = {row["node"]: (row["failed_starts"], row["sister_starts"]) for row in document["nodes"]}
    assert nodes == {"mom2": (4, 6), "mom3": (1, 6)}
    assert document["worst_nodes"] == ["mom2", "mom3"]


def test_report_document_and_metrics(pbs_cluster, report):
    _rc, output, document, prom, paths, _bad = report
    for path in paths.values():
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    assert document["server"] == "pbs-server"
    expected_version = pbsjobs.run(pbs_cluster, pbsjobs.SERVER, ["qstat", "--version"]).stdout.split("=")[-1].strip()
    assert document["pbs_version"] == expected_version
    assert document["window"]["end_epoch"] - document["window"]["start_epoch"] == 3600
    assert abs(document["generated_epoch"] - time.time()) < 600
    assert document["hook_config"]["increment"] == 1
    rec = document["recommendation"]
    assert (rec["sister_starts"], rec["failed_sister_starts"]) == (12, 5)
    band = rec["bands"][0]
    assert (band["band"], band["jobs"], band["sisters"], band["current_increment"]) == ("1", 7, 1, 1)
    assert band["recommended_increment"] is not None and band["recommended_failure_chance"] <= 0.01
    assert 'pbs_rjs_saved_jobs{queue="_all"} 5' in prom.splitlines()
    assert 'pbs_rjs_node_failed_starts{node="mom2"} 4' in prom.splitlines()
    assert "# TYPE pbs_rjs_failed_sisters gauge" in prom.splitlines()
    assert "saved" in output and "worst nodes: mom2 (failed 4 of 6 starts), mom3 (failed 1 of 6 starts)" in output


def test_report_names_an_accounting_line_that_does_not_parse(report):
    _rc, output, document, prom, _paths, bad = report
    assert document["problems"] == [dict(bad, error="not 4 fields separated by ';'")]
    assert "unreadable accounting: %s line %d: not 4 fields separated by ';'" % (bad["file"], bad["line"]) in output
    assert "pbs_rjs_accounting_problems 1" in prom.splitlines()


def test_report_refuses_bad_input_before_reading(pbs_cluster, env, tmp_path):
    if pbs_cluster.backend != "mock":
        pytest.skip("the inputs are refused before any PBS command runs: the mock run is enough (CI time)")
    rc, output, _recap = run_playbook(pbs_cluster, env, PLAYBOOK, {
        "report_json_path": "relative.json"})
    assert rc != 0 and "report_json_path must be an absolute file path on the controller" in output
    rc, output, _recap = run_playbook(pbs_cluster, env, PLAYBOOK, {"report_failure_target": 2})
    assert rc != 0 and "failure_target must be a fraction above 0 and below 1" in output
    rc, output, _recap = run_playbook(pbs_cluster, env, PLAYBOOK, {"report_window_start": "yesterday"})
    assert rc != 0 and "window_start 'yesterday' is not YYYY-MM-DD" in output
