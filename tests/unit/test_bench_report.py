"""The pure parts of tests/benchmark/bench_rollout.py (tests/benchmark/bench_report.py):
growth slope, report formatting, replacement of the report's section in a document."""
import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tests", "benchmark"))
import bench_report  # noqa: E402


def run(seconds, qmgr=0, server=2.0, mom=1.0, changed=0, cpu=None, main_cpu=None):
    return dict(seconds=seconds, qmgr_invocations=qmgr, cpu_seconds=cpu or [],
                main_cpu_seconds=main_cpu or [],
                round_trips=dict(server=server, mom=mom), changed=changed)


def cluster(moms, ping, rerun, changed=0, error=None):
    runs = {"first run": run([3.0 * moms], qmgr=9, changed=12),
            "idempotent re-run": run(rerun, changed=changed),
            "rollout re-run": run([2.0 * moms]), "audit": run([1.5 * moms]),
            "report": run([4.0], server=1.0, mom=0.0),
            "rollout with work": run([5.0 + 0.5 * moms], qmgr=10, mom=2.0, changed=moms),
            "ping": run(ping, server=1.0)}
    return dict(moms=moms, error=error, phases={"cluster up": 12.04}, runs=runs)


def results(*backends):
    return dict(date="2026-11-24 20:30 UTC", command="bench_rollout.py --moms 8,32",
                machine=dict(nproc=2, cpu_model="Test CPU", memory_gib=7.75),
                ansible_core="2.19.14", ansible_cfg=dict(forks="10", pipelining="True"),
                backends=list(backends))


# ------------------------------------------------------------------ slope

def test_slope_of_a_line_is_its_gradient():
    assert bench_report.slope([(8, 5.0), (32, 17.0), (64, 33.0)]) == pytest.approx(0.5)


def test_slope_is_least_squares_over_all_sizes():
    # Not on a line: the end points' slope would be 1.0; least squares gives 13/14.
    assert bench_report.slope([(0, 1.0), (1, 3.0), (3, 4.0)]) == pytest.approx(0.9285714)


@pytest.mark.parametrize("points", [[], [(8, 1.0)], [(8, 1.0), (8, 2.0)], [(8, 1.0), (32, None)]])
def test_slope_needs_two_sizes(points):
    assert bench_report.slope(points) is None


def test_median_and_ratio():
    assert bench_report.median([3.0, 1.0, 2.0]) == 2.0
    assert bench_report.median([]) is None
    assert bench_report.ratio(5.0, 2.5) == 2.0
    assert bench_report.ratio(5.0, 0) is None
    assert bench_report.ratio(None, 2.0) is None


# ------------------------------------------------------------------ report

def test_report_has_machine_and_one_row_per_size_and_run():
    backend = dict(name="mock", skipped=None,
                   clusters=[cluster(8, [2.0, 2.2, 2.4], [5.0, 4.0, 6.0]),
                             cluster(32, [8.0], [20.0])])
    text = bench_report.markdown(results(backend))
    assert "- Machine: 2 cores (nproc), Test CPU, 7.8 GiB memory" in text
    assert "- Date: 2026-11-24 20:30 UTC" in text
    assert "- ansible-core 2.19.14; ansible.cfg: forks 10, pipelining True" in text
    assert "### Backend mock" in text
    assert "| 8 | idempotent re-run | 5.00 | 5.00, 4.00, 6.00 | 2.27 | 0 | 2.0 / 1.0 | 0 |" in text
    assert "| 32 | first run | 96.00 | 96.00 | 12.00 | 9 | 2.0 / 1.0 | 12 |" in text
    assert "| 32 | ping | 8.00 | 8.00 | 1.00 | 0 | 1.0 / 1.0 | 0 |" in text
    rows = [line for line in text.splitlines() if line.startswith(("| 8 ", "| 32 "))]
    assert len(rows) == 2 * len(bench_report.RUNS)


def test_report_states_growth_per_mom():
    backend = dict(name="mock", skipped=None,
                   clusters=[cluster(8, [2.0], [5.0]), cluster(32, [8.0], [17.0])])
    text = bench_report.markdown(results(backend))
    assert "Growth (seconds per extra mom, least squares over 8 -> 32 moms)" in text
    assert "idempotent re-run 0.500 s" in text
    assert "ping 0.250 s" in text


def test_report_flags_changes_and_failures_and_skips():
    mock = dict(name="mock", skipped=None,
                clusters=[cluster(8, [2.0], [5.0], changed=3, error="boom\nrollout.yml failed")])
    real = dict(name="openpbs", skipped="the OpenPBS build is missing", clusters=[])
    text = bench_report.markdown(results(mock, real))
    assert "- 8 moms: **changed** where nothing should change: idempotent re-run: changed=3" in text
    assert "- 8 moms: **failed**: rollout.yml failed" in text
    assert "first run: changed" not in text
    assert "### Backend openpbs\n\nNot measured: the OpenPBS build is missing" in text
    assert "Growth" not in text
    assert "- 8 moms: phases cluster up 12 s." in text
    assert "rollout with work: changed" not in text  # a rollout with work changes


# ------------------------------------------------------------------ throughput and projection

def costed_cluster(moms):
    """A cluster whose idempotent re-run costs 2 s + 0.25 s per mom of wall time, 1 s + 0.5 s
    per mom of controller CPU, 0.5 s + 0.05 s per mom in the main process, one round trip per
    mom."""
    runs = {"idempotent re-run": run([2.0 + 0.25 * moms], cpu=[1.0 + 0.5 * moms],
                                     main_cpu=[0.5 + 0.05 * moms]),
            "ping": run([1.0 + 0.2 * moms])}
    return dict(moms=moms, error=None, phases={}, runs=runs)


def test_run_costs_fit_fixed_part_and_per_mom_slopes():
    backend = dict(name="mock", clusters=[costed_cluster(8), costed_cluster(32), costed_cluster(64)])
    costs = bench_report.run_costs(backend, "idempotent re-run")
    assert costs["fixed"] == pytest.approx(2.0)
    assert costs["wall"] == pytest.approx(0.25)
    assert costs["cpu"] == pytest.approx(0.5)
    assert costs["main"] == pytest.approx(0.05)
    assert costs["trips"] == 1.0
    assert bench_report.run_costs(dict(clusters=[costed_cluster(8)]), "idempotent re-run")["wall"] is None


def test_throughput_gives_moms_per_minute_marginal_rate_and_cpu_per_mom():
    backend = dict(name="mock", skipped=None, clusters=[costed_cluster(8), costed_cluster(32)])
    text = "\n".join(bench_report.throughput_lines(backend, "10"))
    assert "Moms per minute (forks 10;" in text
    # 8 moms in 4 s: 120/min; 32 in 10 s: 192/min; marginal 60 / 0.25 = 240/min.
    assert "| idempotent re-run | 120 | 192 | 240 | 0.500 | 0.050 |" in text, text
    assert "| ping | 185 | 259 | 300 | - | - |" in text, text  # 8 in 2.6 s, 32 in 7.4 s


@pytest.mark.parametrize("cores, forks, per_mom", [
    (8, 25, 0.0625),    # CPU: 0.5 s over 8 cores
    (32, 100, 0.05),    # the main process: 0.05 s per mom, whatever the cores
    (32, 25, 0.05),     # CPU 0.5 / 25 = 0.02, round trips 1 x 1.0 / 25 = 0.04: the main process still
    (32, 10, 0.1),      # round trips: 1 x 1.0 s / 10 forks
])
def test_projection_takes_the_largest_of_three_bounds(cores, forks, per_mom):
    costs = dict(fixed=2.0, wall=0.25, cpu=0.5, main=0.05, trips=1.0)
    assert bench_report.projected_seconds(costs, 1000, cores, forks) == pytest.approx(2.0 + 1000 * per_mom)
    assert bench_report.projected_seconds(dict(costs, main=None), 1000, cores, forks) is None


def test_projection_table_in_the_report():
    backend = dict(name="mock", skipped=None, clusters=[costed_cluster(8), costed_cluster(32)])
    text = bench_report.markdown(results(backend))
    assert "| run | moms | 8 cores, forks 25 | 8 cores, forks 50 | 8 cores, forks 100 | 32 cores, forks 25 |" in text
    # 2 s + 2500 x 0.0625 s = 158 s ~ 3 min; 10,000 moms on 32 cores at forks 100: 2 + 500 s ~ 8 min.
    assert "| idempotent re-run | 2500 | 3 min |" in text, text
    row = [line for line in text.splitlines() if line.startswith("| idempotent re-run | 10000 |")]
    # ... and 4 slices of 8 cores at forks 50: 2 s + 2500 x 0.0625 s ~ 3 min.
    assert row and row[0].endswith("| 8 min | 3 min |"), text


# ------------------------------------------------------------------ document section

def test_replace_doc_section_appends_markers_when_absent():
    text = bench_report.replace_doc_section("# Performance\n\nintro\n", "## Report\nrow")
    assert text == ("# Performance\n\nintro\n\n<!-- bench:start -->\n## Report\nrow\n"
                    "<!-- bench:end -->\n")


def test_replace_doc_section_replaces_only_between_markers():
    doc = "head\n<!-- bench:start -->\nold 1\nold 2\n<!-- bench:end -->\ntail\n"
    text = bench_report.replace_doc_section(doc, "new\n")
    assert text == "head\n<!-- bench:start -->\nnew\n<!-- bench:end -->\ntail\n"
    assert bench_report.replace_doc_section(text, "new\n") == text


@pytest.mark.parametrize("doc", [
    "<!-- bench:start -->\nx\n",
    "<!-- bench:end -->\nx\n<!-- bench:start -->\n",
    "<!-- bench:start -->\n<!-- bench:start -->\n<!-- bench:end -->\n"])
def test_replace_doc_section_refuses_broken_markers(doc):
    with pytest.raises(ValueError):
        bench_report.replace_doc_section(doc, "new")


def test_machine_info_and_ansible_cfg(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nmodel name\t: Test CPU @ 2GHz\n")
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:        8126464 kB\nMemFree: 1 kB\n")
    info = bench_report.machine_info(str(cpuinfo), str(meminfo))
    assert info["cpu_model"] == "Test CPU @ 2GHz"
    assert info["memory_gib"] == 7.8
    cfg = tmp_path / "ansible.cfg"
    cfg.write_text("[defaults]\nforks = 10\n[ssh_connection]\npipelining = True\n")
    assert bench_report.ansible_cfg_settings(str(cfg)) == dict(forks="10", pipelining="True")
    assert bench_report.ansible_cfg_settings(str(tmp_path / "none")) == dict(
        forks="5", pipelining="False")


def test_change_flags_name_each_run_that_must_not_change_and_did():
    flagged = cluster(8, [2.0], [5.0])
    flagged["runs"]["audit"]["changed"] = 2
    flagged["runs"]["rollout re-run"]["changed"] = 1
    assert bench_report.change_flags(flagged) == ["rollout re-run: changed=1", "audit: changed=2"]
    assert bench_report.change_flags(cluster(8, [2.0], [5.0])) == []


def test_round_trips_per_host_from_vvv_exec_lines():
    import bench_rollout
    roles = {"127.0.22.10": "server", "127.0.22.11": "mom", "127.0.22.12": "mom"}
    output = ("<127.0.22.10> SSH: EXEC ssh -C ...\n<127.0.22.10> SSH: EXEC ssh -C ...\n"
              "<127.0.22.11> SSH: EXEC ssh -C ...\n<127.0.22.12> SSH: EXEC ssh -C ...\n"
              "<127.0.22.12> SSH: EXEC ssh -C ...\n<127.0.22.12> ESTABLISH SSH CONNECTION\n"
              "ok: [mom1] <127.0.22.11> SSH: EXEC in a message is not a command\n")
    assert bench_rollout.round_trips_per_host(output, roles) == dict(server=2.0, mom=1.5)


def test_the_mock_only_sizes_take_mock_repeat_timed_runs_and_the_others_repeat():
    import bench_rollout
    args = bench_rollout.parse_args(["--moms", "8,32", "--mock-moms", "128,256", "--repeat", "3", "--mock-repeat", "1"])
    assert [bench_rollout.repeat_for(args, moms) for moms in (8, 32, 128, 256)] == [3, 3, 1, 1]
    args = bench_rollout.parse_args(["--moms", "8", "--mock-moms", "128", "--repeat", "2"])
    assert [bench_rollout.repeat_for(args, moms) for moms in (8, 128)] == [2, 2]


# ------------------------------------------------------------------ --scenario rollout

def rollout_cluster(moms, batches, server_trips, qmgr, work_seconds, ping_seconds):
    runs = {"ping": dict(seconds=[ping_seconds], round_trips=dict(server=1, mom=1.0), batches=0, qmgr_invocations=0,
                         cpu_seconds=1.0),
            "rollout with work": dict(seconds=[work_seconds], round_trips=dict(server=server_trips, mom=2.0),
                                      batches=batches, qmgr_invocations=qmgr, cpu_seconds=20.0),
            "rollout re-run": dict(seconds=[], counted_seconds=9.0, round_trips=dict(server=3, mom=1.0),
                                   batches=0, qmgr_invocations=0, cpu_seconds=5.0)}
    return dict(moms=moms, error=None, phases={}, runs=runs)


def test_rollout_markdown_per_batch_columns_and_target():
    backend = dict(name="mock", skipped=None, tree="/tmp/head",
                   clusters=[rollout_cluster(8, 5, 40, 10, 30.0, 4.0), rollout_cluster(32, 5, 42, 10, 50.0, 4.0)])
    text = bench_report.rollout_markdown(results(backend))
    assert "### mock (tree /tmp/head)" in text
    # moms, run, wall, x ping, batches, qmgr, qmgr/batch, server trips, per batch, per mom, CPU
    assert "| 8 | rollout with work | 30.0 | 7.5 | 5 | 10 | 2.0 | 40 | 8.0 | 2.0 | 20.0 |" in text, text
    assert "| 32 | rollout re-run | 9.0 | 2.2 | 0 | 0 | - | 3 | - | 1.0 | 5.0 |" in text, text
    assert "8 moms: rollout with work 30.0 s, target 2 x ping x batches = 40.0 s (met)" in text, text
    assert "32 moms: rollout with work 50.0 s, target 2 x ping x batches = 40.0 s (not met)" in text, text


def test_rollout_markdown_skipped_backend():
    text = bench_report.rollout_markdown(results(dict(name="openpbs", skipped="no build", clusters=[])))
    assert "Skipped: no build" in text and "| moms |" not in text
