"""plugins/module_utils/jobs/accounting.py: the accounting record parser and the report's figures.

The record lines are real: ``data/accounting_openpbs_23.06.06`` is the accounting file of
the real OpenPBS 23.06.06 server after tests/integration/test_report.py (a healthy padded
job, a frozen sister, a sister rejecting at execjob_begin, a lost sister, a job the hook
could not prune, a two-subjob array with a frozen sister; jobs of 1 s, so real OpenPBS
wrote no ``s`` record: the mom's pruned update reached it with the obit).
``data/accounting_openpbs_23.06.06_pruned`` is the same server with longer jobs and a hook
that wrote another value to accounting_id (``rjs:failed=``): ``s`` and ``e`` records, the
prune read from the exec_vnodes, failed sisters unknown.
"""
import os
import shutil
import time

import pytest

from ansible_collections.hpc.pbs.plugins.module_utils.jobs import accounting

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
REAL = os.path.join(DATA, "accounting_openpbs_23.06.06")
REAL_PRUNED = os.path.join(DATA, "accounting_openpbs_23.06.06_pruned")
DAY = "20261128"
HOOK_REJECT_RERUN = "a hook rejected the start and asked for a rerun (JOB_EXEC_FAILHOOK_RERUN)"


def lines_of(path):
    with open(path) as handle:
        return [line for line in handle.read().splitlines() if line]


def records_of(path, tmp_path, extra=()):
    """Every record of the real file (plus ``extra`` lines) read as the module reads a day."""
    acct = tmp_path / "accounting"
    acct.mkdir(exist_ok=True)
    shutil.copy(path, str(acct / DAY))
    if extra:
        with open(str(acct / DAY), "a") as handle:
            handle.write("\n".join(extra) + "\n")
    day = time.mktime(time.strptime(DAY, "%Y%m%d"))
    return accounting.read_records(str(acct), day, day + 86400)


def line_of(path, kind, ident):
    return [l for l in lines_of(path) if l.split(";")[1:3] == [kind, ident]][0]


def test_a_real_end_record_parses_with_its_quoted_accounting_id():
    record = accounting.parse_line(line_of(REAL, "E", "1.pbs-server"))
    assert record["type"] == "E" and record["id"] == "1.pbs-server"
    assert record["time"] == time.mktime(time.strptime("11/28/2026 06:44:33", "%m/%d/%Y %H:%M:%S"))
    fields = record["fields"]
    assert fields["accounting_id"] == "rjs_failed=mom2/released=mom2/chunks=1/at=1795848271"
    assert fields["exec_host"] == "mom1/0+mom2/0+mom3/0"
    assert fields["Resource_List.site"] == "1:ncpus=1+1:ncpus=1"
    assert fields["Exit_status"] == "0" and fields["run_count"] == "1"
    assert accounting.hook_record(fields) == {"failed": ["mom2"], "released": ["mom2"], "chunks": 1,
                                              "at": 1795848271}


def test_real_delete_and_array_records_parse():
    assert accounting.parse_line(line_of(REAL, "D", "4.pbs-server"))["fields"] == {"requestor": "root@pbs-server"}
    assert accounting.parse_line(line_of(REAL, "S", "5[].pbs-server"))["fields"]["array_indices"] == "1-2"


def test_quoted_values_keep_their_spaces():
    assert accounting.parse_fields('user=a project="big one" x=') == {"user": "a", "project": "big one", "x": ""}


@pytest.mark.parametrize("line, error", [
    ("garbage", "not 4 fields separated by ';'"),
    ("28/11/2026 06:44:33;E;1.s;user=a", "time '28/11/2026 06:44:33' is not MM/DD/YYYY HH:MM:SS"),
    ("11/28/2026 06:44:33;EE;1.s;user=a", "record type 'EE' is not one letter"),
    ("11/28/2026 06:44:33;E;;user=a", "no id"),
    ("11/28/2026 06:44:33;E;1.s;user=a stray", "unexpected text 'stray'"),
])
def test_a_line_that_is_not_a_record_says_why(line, error):
    with pytest.raises(accounting.AccountingError) as caught:
        accounting.parse_line(line)
    assert str(caught.value) == error


def test_the_real_file_gives_the_counts_of_what_the_jobs_did(tmp_path):
    records, problems, files = records_of(REAL, tmp_path)
    assert problems == [] and files == [str(tmp_path / "accounting" / DAY)]
    report = accounting.build_report(records, current_increment=1)
    totals = report["totals"]
    expected = {
        "jobs": 7, "padded_jobs": 7, "tolerate_node_failures_jobs": 7, "pruned_jobs": 6,
        "pruned_runs": 6, "saved_jobs": 5, "saved_runs": 5, "pruned_runs_failed_unknown": 0,
        "chunks_released": 6, "nodes_released": 6, "healthy_nodes_released": 1, "failed_sisters": 5,
        "failed_start_jobs": 1, "failed_starts": 1, "requeued_jobs": 1, "held_after_failed_starts": 0,
        # (at - start) per released host: 2 + 7 + 3 + 7 + 7 + 7
        "padding_node_seconds": 33, "failed_start_causes": {HOOK_REJECT_RERUN: 1},
    }
    assert totals == expected
    assert report["queues"] == {"workq": expected}
    jobs = {row["job"]: row for row in report["jobs"]}
    assert jobs["0.pbs-server"]["healthy_released"] == ["mom3"] and jobs["0.pbs-server"]["failed_sisters"] == []
    assert jobs["1.pbs-server"]["failed_sisters"] == ["mom2"] and jobs["1.pbs-server"]["healthy_released"] == []
    assert jobs["2.pbs-server"]["failed_sisters"] == ["mom3"]
    assert jobs["4.pbs-server"]["failed_start_causes"] == [HOOK_REJECT_RERUN]
    assert jobs["4.pbs-server"]["requeued"] and jobs["4.pbs-server"]["run_count"] == 1
    assert sorted(jobs) == ["0.pbs-server", "1.pbs-server", "2.pbs-server", "3.pbs-server", "4.pbs-server",
                            "5[1].pbs-server", "5[2].pbs-server"]
    assert report["nodes"] == [
        {"node": "mom2", "sister_starts": 6, "failed_starts": 4, "failure_rate": round(4 / 6.0, 6)},
        {"node": "mom3", "sister_starts": 6, "failed_starts": 1, "failure_rate": round(1 / 6.0, 6)}]
    assert report["worst_nodes"] == ["mom2", "mom3"]


def test_worst_nodes_is_limited_and_leaves_out_nodes_that_never_failed(tmp_path):
    records, _problems, _files = records_of(REAL, tmp_path)
    assert accounting.build_report(records, worst=1)["worst_nodes"] == ["mom2"]
    healthy = [r for r in records if r["id"] == "0.pbs-server"]
    report = accounting.build_report(healthy)
    assert report["worst_nodes"] == [] and report["nodes"][0]["failed_starts"] == 0


def test_s_records_give_the_prune_when_the_hook_recorded_nothing(tmp_path):
    records, problems, _files = records_of(REAL_PRUNED, tmp_path)
    assert problems == []
    report = accounting.build_report(records, current_increment=1)
    totals = report["totals"]
    # Jobs 0-2 and subjobs 3[1], 3[2]: pruned (s records), one chunk each; job 4 failed.
    assert (totals["jobs"], totals["pruned_jobs"], totals["chunks_released"], totals["nodes_released"]) == (6, 5, 5, 5)
    assert totals["pruned_runs_failed_unknown"] == 5 and totals["saved_jobs"] == 0
    assert totals["failed_sisters"] == 0 and totals["healthy_nodes_released"] == 0
    assert totals["failed_start_causes"] == {HOOK_REJECT_RERUN: 1}
    jobs = {row["job"]: row for row in report["jobs"]}
    # job 1: S at 06:21:03 (start=1795846863), s at 06:21:11: 8 s, one host released
    assert jobs["1.pbs-server"]["padding_node_seconds"] == 8
    assert report["nodes"] == [] and report["recommendation"]["sister_failure_rate"] is None


def test_a_run_requeued_after_too_many_starts_is_held(tmp_path):
    # The real R record of job 4, its run_count raised to 21 (the server holds the job).
    line = line_of(REAL, "R", "4.pbs-server").replace("run_count=1", "run_count=21")
    records = [accounting.parse_line(line_of(REAL, "S", "4.pbs-server")), accounting.parse_line(line)]
    report = accounting.build_report(records)
    assert report["totals"]["held_after_failed_starts"] == 1
    assert report["jobs"][0]["run_count"] == 21
    line = line.replace("run_count=21", "run_count=20")
    assert accounting.build_report([records[0], accounting.parse_line(line)])["totals"]["held_after_failed_starts"] == 0


def test_an_earlier_runs_record_carried_into_a_later_run_is_not_counted_again():
    # Job 1 pruned (E with the hook's record), then a second start requeued (R) that carries
    # the same accounting_id: written before that run started, it is not that run's.
    start = line_of(REAL, "S", "1.pbs-server")
    end = line_of(REAL, "E", "1.pbs-server")
    second = start.replace("06:44:24;S", "06:50:00;S").replace("start=1795848264", "start=1795848600")
    requeue = end.replace("06:44:33;E", "06:50:09;R").replace("Exit_status=0", "Exit_status=-16")
    records = [accounting.parse_line(l) for l in (start, end, second, requeue)]
    report = accounting.build_report(records)
    assert report["totals"]["saved_runs"] == 1 and report["totals"]["pruned_runs"] == 1
    assert report["totals"]["failed_starts"] == 1


def test_array_parents_are_not_jobs(tmp_path):
    records, _problems, _files = records_of(REAL, tmp_path)
    assert "5[].pbs-server" not in accounting.job_runs(records)


def test_a_line_that_does_not_parse_is_reported_with_file_and_line(tmp_path):
    records, problems, _files = records_of(REAL, tmp_path, extra=["garbage"])
    path = str(tmp_path / "accounting" / DAY)
    assert problems == [{"file": path, "line": len(lines_of(REAL)) + 1, "error": "not 4 fields separated by ';'"}]
    assert len(records) == len(lines_of(REAL))


def test_a_file_that_is_not_utf8_is_reported_and_its_other_lines_read(tmp_path):
    acct = tmp_path / "accounting"
    acct.mkdir()
    good = line_of(REAL, "E", "1.pbs-server")
    (acct / DAY).write_bytes(b"\xff\xfe;E;x;y\n" + good.encode() + b"\n")
    day = time.mktime(time.strptime(DAY, "%Y%m%d"))
    records, problems, _files = accounting.read_records(str(acct), day, day + 86400)
    assert problems == [{"file": str(acct / DAY), "line": 1, "error": "not UTF-8"}]
    assert [r["id"] for r in records] == ["1.pbs-server"]


def test_records_outside_the_window_and_missing_days_are_left_out(tmp_path):
    acct = tmp_path / "accounting"
    acct.mkdir()
    shutil.copy(REAL, str(acct / DAY))
    start = time.mktime(time.strptime("11/28/2026 06:44:24", "%m/%d/%Y %H:%M:%S"))
    end = time.mktime(time.strptime("11/28/2026 06:44:38", "%m/%d/%Y %H:%M:%S"))
    records, problems, files = accounting.read_records(str(acct), start - 2 * 86400, end)
    assert problems == [] and files == [str(acct / DAY)]
    records, _problems, _files = accounting.read_records(str(acct), start, end)
    assert sorted(set(r["id"] for r in records)) == ["1.pbs-server"]


def test_day_names_cover_both_ends():
    start = time.mktime(time.strptime("2026-11-27 23:00", "%Y-%m-%d %H:%M"))
    assert accounting.day_names(start, start + 3600 * 26) == ["20261127", "20261128", "20261129"]


@pytest.mark.parametrize("sisters, increment, rate, chance", [
    (1, 1, 0.5, 0.25), (1, 0, 0.1, 0.1), (2, 0, 0.5, 0.75), (3, 2, 0.0, 0.0)])
def test_the_binomial_chance_of_a_failed_start(sisters, increment, rate, chance):
    assert accounting.failure_probability(sisters, increment, rate) == pytest.approx(chance)


def test_the_recommendation_keeps_the_chance_under_the_target(tmp_path):
    summaries = [{"size": 1}, {"size": 3}, {"size": 4}, {"size": 20}]
    nodes = [{"sister_starts": 100, "failed_starts": 5}]     # p = 0.05
    rec = accounting.recommendation(summaries, nodes, 0.01, "50%")
    assert rec["sister_failure_rate"] == 0.05
    bands = {b["band"]: b for b in rec["bands"]}
    assert sorted(bands) == ["1", "17-64", "2-4"]
    # one sister: k=0 fails 5%, k=1 fails 1-(0.95^2+2*0.05*0.95) = 0.25%
    assert bands["1"]["recommended_increment"] == 1
    assert bands["1"]["recommended_failure_chance"] == pytest.approx(0.0025)
    assert bands["2-4"]["sisters"] == 4 and bands["2-4"]["jobs"] == 2
    assert bands["2-4"]["current_increment"] == 2                  # 50% of 4
    assert bands["2-4"]["recommended_increment"] == 2
    assert bands["17-64"]["current_increment"] == 10               # 50% of 20, rounded up
    for band in rec["bands"]:
        chance = band["recommended_failure_chance"]
        assert chance <= 0.01
        k = band["recommended_increment"]
        assert k == 0 or accounting.failure_probability(band["sisters"], k - 1, 0.05) > 0.01


def test_increments_of_the_hook_config():
    assert accounting.increment_for(10, 2) == 2
    assert accounting.increment_for(10, "3") == 3
    assert accounting.increment_for(10, "25%") == 3
    assert accounting.increment_for(10, {"1": 2}) is None
    assert accounting.increment_for(10, True) is None


def test_prometheus_text(tmp_path):
    records, problems, _files = records_of(REAL, tmp_path, extra=["garbage"])
    report = accounting.build_report(records, current_increment=1)
    report.update(problems=problems, generated_epoch=1795848400)
    text = accounting.metric_lines(report)
    lines = text.splitlines()
    assert text.endswith("\n")
    assert "# TYPE pbs_rjs_saved_jobs gauge" in lines
    assert 'pbs_rjs_saved_jobs{queue="_all"} 5' in lines and 'pbs_rjs_saved_jobs{queue="workq"} 5' in lines
    assert 'pbs_rjs_padding_node_seconds{queue="_all"} 33' in lines
    assert 'pbs_rjs_node_failed_starts{node="mom2"} 4' in lines
    assert 'pbs_rjs_node_sister_starts{node="mom3"} 6' in lines
    assert "pbs_rjs_accounting_problems 1" in lines
    assert "pbs_rjs_report_time_seconds 1795848400" in lines
    for line in lines:
        assert line.startswith("#") or len(line.rsplit(" ", 1)) == 2


def test_prometheus_labels_are_escaped():
    report = accounting.build_report([])
    report["queues"]['q"1'] = accounting.empty_figures()
    assert 'pbs_rjs_jobs{queue="q\\"1"} 0' in accounting.metric_lines(report).splitlines()


def test_padding_counts_every_released_host():
    # Job 1's real records, its hook value edited to two released hosts (mom2 failed,
    # mom3 healthy) and two chunks: 2 hosts x 7 s.
    start = line_of(REAL, "S", "1.pbs-server")
    end = line_of(REAL, "E", "1.pbs-server").replace("released=mom2/chunks=1", "released=mom2,mom3/chunks=2")
    report = accounting.build_report([accounting.parse_line(start), accounting.parse_line(end)])
    row = report["jobs"][0]
    assert (row["padding_node_seconds"], row["nodes_released"], row["chunks_released"]) == (14, 2, 2)
    assert row["failed_sisters"] == ["mom2"] and row["healthy_released"] == ["mom3"]


def test_the_servers_license_record_is_no_problem():
    # Written by the real 23.06.06 server (accounting.c, PBS_ACCT_LIC) when it starts: the
    # demo's report on the openpbs backend listed it as unreadable before.
    record = accounting.parse_line("11/28/2026 06:59:30;L;license;floating license hour:0 day:0 month:0 max:0")
    assert (record["type"], record["id"], record["fields"]) == ("L", "license", {})
