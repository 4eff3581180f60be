"""The demo of `make demo`, asserted piece by piece (issue 2, point 10)."""
import io
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rjs_demo  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.release_smoke]


@pytest.fixture(scope="module")
def demo(tmp_path_factory, pbs_backend, stop_other_clusters):
    stop_other_clusters()
    workdir = str(tmp_path_factory.mktemp("demo-cluster"))
    out = io.StringIO()
    evidence, problems, recaps = rjs_demo.run_demo(workdir, moms=5, out=out, pbs=pbs_backend)
    return {"evidence": evidence, "problems": problems, "recaps": recaps, "out": out.getvalue()}


def test_site_yml_applies_then_is_idempotent(demo):
    first, second = demo["recaps"]
    assert set(first) == {"pbs-server", "mom1", "mom2", "mom3", "mom4", "mom5"}
    assert all(r["failed"] == 0 and r["unreachable"] == 0 for r in first.values())
    assert sum(r["changed"] for r in first.values()) > 0
    assert all(r["changed"] == 0 for r in second.values()), second


def test_job_select_padded_to_five_chunks_and_site_saved(demo):
    start = rjs_demo.record_fields(demo["evidence"]["S"])
    assert start["Resource_List.select"] == "1:ncpus=1+2:ncpus=1+2:ncpus=1"
    assert start["Resource_List.site"] == "1:ncpus=1+1:ncpus=1+1:ncpus=1"
    assert start["Resource_List.nodect"] == "5"
    assert [h.split("/")[0] for h in start["exec_host"].split("+")] == ["mom1", "mom2", "mom3", "mom4", "mom5"]


def test_primary_mom_logs_the_frozen_sister(demo):
    lines = demo["evidence"]["primary_mom_log"]
    assert any("sister_join_job_alarm wait time 10 secs exceeded" in l for l in lines), lines
    # a frozen sister answers nothing: no error to log or ignore (as real OpenPBS logs it)
    assert not [l for l in lines if "job_start_error" in l or "ignoring error" in l], lines
    assert any("pruned from exec_vnode=" in l for l in lines)


def test_job_runs_pruned_on_three_hosts(demo):
    qstat = demo["evidence"]["qstat_f"]
    assert [h.split("/")[0] for h in qstat["exec_host"].split("+")] == ["mom1", "mom3", "mom4"]
    assert qstat["exec_vnode"] == "(mom1:ncpus=1)+(mom3:ncpus=1)+(mom4:ncpus=1)"
    assert qstat["Resource_List.nodect"] == "3"
    assert qstat["tolerate_node_failures"] == "job_start"


def test_pbs_nodefile_lists_kept_hosts(demo):
    assert [h.split(".")[0] for h in demo["evidence"]["nodefile"]] == ["mom1", "mom3", "mom4"]


def test_s_record_has_pruned_values(demo):
    prune = rjs_demo.record_fields(demo["evidence"]["s"])
    for key in ("user", "group", "project", "jobname", "queue", "ctime", "qtime", "etime", "start",
                "exec_host", "exec_vnode", "Resource_List.ncpus", "Resource_List.nodect",
                "Resource_List.place", "Resource_List.select", "Resource_List.site", "resource_assigned.ncpus"):
        assert key in prune, key
    assert prune["user"] == "pbsuser"
    assert prune["Resource_List.select"] == "1:ncpus=1+1:ncpus=1+1:ncpus=1"
    assert prune["Resource_List.ncpus"] == "3"


def test_silent_sister_not_in_vnode_list_fail_so_not_offlined(demo):
    """The hook offlines only what PBS reports in vnode_list_fail; a sister that never
    answered the join is not reported there (real OpenPBS), only pruned away."""
    assert "state = offline" not in demo["evidence"]["pbsnodes_frozen"]
    assert any("(failed vnodes: none)" in l for l in demo["evidence"]["primary_mom_log"])


def test_demo_finds_no_problem(demo):
    assert demo["problems"] == []
