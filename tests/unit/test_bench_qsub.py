"""The pure parts of tests/benchmark/bench_qsub.py (the queuejob hook's cost inside
pbs_server): the rotation of the settings, the paired figures, the check that the hook did
its work, the qstat reading and the report."""
import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tests", "benchmark"))
import bench_qsub  # noqa: E402


def test_setting_order_rotates_so_each_setting_runs_first_once_in_three_rounds():
    orders = [bench_qsub.setting_order(n) for n in range(3)]
    assert orders[0] == ("no hook", "empty hook", "bundled hook")
    assert [order[0] for order in orders] == ["no hook", "empty hook", "bundled hook"]
    assert all(sorted(order) == sorted(bench_qsub.SETTINGS) for order in orders)
    assert bench_qsub.setting_order(3) == orders[0]
    four = bench_qsub.SETTINGS + (bench_qsub.CANDIDATE,)
    assert bench_qsub.setting_order(1, four) == four[1:] + four[:1]


def test_qsub_argv_is_a_held_job_with_the_padded_select_and_an_array_when_asked():
    assert bench_qsub.qsub_argv() == ["/opt/pbs/bin/qsub", "-h", "-l", "select=ncpus=1+ncpus=1",
                                      "--", "/bin/true"]
    assert bench_qsub.qsub_argv(1000)[4:] == ["-J", "1-1000", "--", "/bin/true"]


def rounds():
    # ms per qsub and per array qsub, three rounds (the second one slower throughout); the
    # server's CPU per qsub a tenth of the wall time
    def one(none, empty, bundled, candidate=None):
        values = {"no hook": none, "empty hook": empty, "bundled hook": bundled}
        if candidate is not None:
            values[bench_qsub.CANDIDATE] = candidate
        return dict((k, {"job_ms": v, "array_ms": 2 * v, "server_cpu_ms": v / 10}) for k, v in values.items())
    return [one(5.0, 8.0, 10.0, 8.2), one(10.0, 16.0, 16.8, 16.4), one(4.0, 8.0, 9.0, 8.0)]


def test_summarize_gives_paired_differences_and_throughput_over_rounds():
    summary = bench_qsub.summarize(rounds())
    assert summary["any_hook_ms"] == {"median": 4.0, "min": 3.0, "max": 6.0}
    assert summary["bundled_adds_ms"] == pytest.approx({"median": 1.0, "min": 0.8, "max": 2.0})
    assert summary["array_bundled_adds_ms"]["median"] == pytest.approx(2.0)
    assert summary["throughput_vs_empty"]["median"] == pytest.approx(8.0 / 9.0)
    assert summary["throughput_vs_empty"]["max"] == pytest.approx(16.0 / 16.8)
    assert summary["throughput_vs_none"]["min"] == pytest.approx(4.0 / 9.0)
    assert summary["settings"]["empty hook"]["job_ms"] == {"median": 8.0, "min": 8.0, "max": 16.0}
    assert summary["met"] is False  # 0.889 < 0.95
    assert summary["server_cpu_any_hook_ms"] == pytest.approx({"median": 0.4, "min": 0.3, "max": 0.6})
    assert summary["server_cpu_bundled_adds_ms"] == pytest.approx({"median": 0.1, "min": 0.08, "max": 0.2})
    assert summary["settings"]["bundled hook"]["server_cpu_ms"] == pytest.approx({"median": 1.0, "min": 0.9, "max": 1.68})
    assert summary["candidate_adds_ms"] == pytest.approx({"median": 0.2, "min": 0.0, "max": 0.4})
    assert summary["server_cpu_candidate_adds_ms"] == pytest.approx({"median": 0.02, "min": 0.0, "max": 0.04})
    assert summary["candidate_met"] is True  # median 8/8.2 = 0.976
    assert bench_qsub.CANDIDATE in summary["settings"]


def test_summarize_without_candidate_and_the_target_met():
    plain = [dict((k, v) for k, v in r.items() if k != bench_qsub.CANDIDATE) for r in rounds()]
    for r in plain:
        r["bundled hook"] = dict(r["empty hook"])
    summary = bench_qsub.summarize(plain)
    assert summary["met"] is True
    assert "candidate_met" not in summary and bench_qsub.CANDIDATE not in summary["settings"]


def test_markdown_states_the_target_and_the_candidate():
    results = {"summary": bench_qsub.summarize(rounds()), "machine": "2 cores", "date": "today",
               "command": "bench_qsub.py", "args": {"pbs_version": "23.06.06", "rounds": 3, "jobs": 2000,
                                                    "arrays": 3, "array_size": 1000, "candidate": "/tmp/x.py"}}
    text = bench_qsub.markdown(results)
    assert "Target bundled ÷ empty >= 0.95: NOT met." in text
    assert "Candidate (`/tmp/x.py`) ÷ empty >= 0.95: met." in text
    assert "| the bundled hook's own cost (bundled - empty), ms per qsub | 1.00 (0.80-2.00) |" in text
    assert "| candidate hook |" in text
    assert "| bundled hook | 10.00 (9.00-16.80) | 20.00 (18.00-33.60) | 1.000 (0.900-1.680) |" in text
    assert "| the bundled hook's own cost, pbs_server CPU ms per qsub | 0.100 (0.080-0.200) |" in text
    assert "| the candidate hook's own cost, pbs_server CPU ms per qsub | 0.020 (0.000-0.040) |" in text


QSTAT = """Job Id: 12.pbs-server
    Job_Name = STDIN
    Resource_List.select = 1:ncpus=1+2:ncpus=1
    Resource_List.site = 1:ncpus=1+1:ncpus=1
    tolerate_node_failures = job_start
    Variable_List = PBS_O_HOME=/home/pbsuser,PBS_O_LANG=C,
\tPBS_O_LOGNAME=pbsuser

Job Id: 13.pbs-server
    Resource_List.select = other
"""


def test_parse_qstat_f_reads_the_first_job_and_joins_continuations():
    attributes = bench_qsub.parse_qstat_f(QSTAT)
    assert attributes["Resource_List.select"] == "1:ncpus=1+2:ncpus=1"
    assert attributes["Variable_List"].endswith("PBS_O_LANG=C,PBS_O_LOGNAME=pbsuser")


def test_check_job_wants_the_bundled_hooks_work_and_none_otherwise():
    padded = bench_qsub.parse_qstat_f(QSTAT)
    bench_qsub.check_job("bundled hook", padded)
    bench_qsub.check_job(bench_qsub.CANDIDATE, padded)
    with pytest.raises(bench_qsub.BenchError, match="empty hook"):
        bench_qsub.check_job("empty hook", padded)
    untouched = {"Resource_List.select": "ncpus=1+ncpus=1"}
    bench_qsub.check_job("no hook", untouched)
    with pytest.raises(bench_qsub.BenchError, match="tolerate_node_failures"):
        bench_qsub.check_job("bundled hook", dict(padded, tolerate_node_failures="all"))


@pytest.mark.parametrize("argv", [["--jobs", "0"], ["--arrays", "-1"], ["--rounds", "0"],
                                  ["--pbs-version", "21.0"]])
def test_parse_args_refuses_bad_values(argv):
    with pytest.raises(SystemExit):
        bench_qsub.parse_args(argv)
