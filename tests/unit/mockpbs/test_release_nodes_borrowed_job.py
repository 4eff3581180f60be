"""``job.release_nodes()`` returns a borrowed reference, as OpenPBS 23.06's pbs_python does.

Its C function hands the job back without taking a reference to it: a hook that drops the
result while nothing else of it holds the job (the call made inside a function whose result
is dropped) frees the job under ``pbs.event()``, and pbs_python segfaults (exit 139) as the
hook ends. The mom logs ``Internal server error encountered. Skipping hook <name>``
(``src/resmom/mom_hook_func.c``) and discards everything the hook did: no pruning, no
``pruned from``/``pruned to`` lines, no update to the server.

The hook shapes (pbs_python_inputs/release_nodes_shapes/, first line ``# pbs_python:
crashes`` or ``# pbs_python: exits 0``) and the launch input are the ones
tests/unit/hooks/test_real_pbs_python.py runs under the real pbs_python.
"""
from pathlib import Path

import pytest

from mockpbs import harness, pbs

REPO = Path(__file__).resolve().parents[3]
INPUTS = REPO / "tests" / "unit" / "hooks" / "pbs_python_inputs"
SHAPES = sorted((INPUTS / "release_nodes_shapes").glob("*.py"))
LAUNCH_INPUT = (INPUTS / "execjob_launch.in").read_text()
BUNDLED_HOOK = (REPO / "files" / "hooks" / "reliable_job_startup.py").read_text()
SITE = "1:ncpus=1+1:ncpus=1"
# The old shape, in a hook of its own: release_nodes() in a function, its result dropped.
DROPPED_IN_FUNCTION = '''import pbs


def prune():
    job = pbs.event().job
    pruned = job.release_nodes(keep_select=job.Resource_List["site"])
    pbs.logjobmsg(job.id, "pruned to %s" % pruned.exec_vnode)


if "PBS_NODEFILE" in pbs.event().env and pbs.event().job.in_ms_mom():
    prune()
'''


def expected_to_crash(path):
    """The verdict the shape's first line records: True for ``crashes``."""
    header = path.read_text().splitlines()[0]
    assert header in ("# pbs_python: crashes", "# pbs_python: exits 0"), header
    return header == "# pbs_python: crashes"


@pytest.mark.parametrize("path", SHAPES, ids=[p.stem for p in SHAPES])
def test_the_emulator_crashes_where_pbs_python_does(path):
    result = harness.run_pbs_python_input(path.read_text(), LAUNCH_INPUT)
    assert result.crashed is expected_to_crash(path), result.raw


def test_a_crashed_run_keeps_its_log_lines_and_nothing_else():
    result = harness.run_pbs_python_input((INPUTS / "release_nodes_shapes" / "result_dropped_in_function.py")
                                          .read_text(), LAUNCH_INPUT)
    assert result.crashed and not result.accepted
    assert "the job object returned by release_nodes() was freed before the hook ended" in result.exception
    assert result.changes == {} and result.vnodes == {} and not result.rerun and not result.delete
    assert result.env is None or result.env == harness.read_pbs_python_input(LAUNCH_INPUT)[2]["env"]
    assert [line[20:] for line in result.log] == [
        "0008;pbs_python;Job;20.pbs-server;pruned to (hostA:ncpus=1)+(hostC:ncpus=1)"]


def test_the_bundled_hook_keeps_its_result_and_prunes():
    result = harness.run_pbs_python_input(BUNDLED_HOOK, LAUNCH_INPUT, hook_config={})
    assert not result.crashed and result.accepted, result.exception
    assert result.changes["exec_vnode"] == "(hostA:ncpus=1)+(hostC:ncpus=1)"
    assert result.changes["schedselect"] == SITE
    assert result.vnodes["hostB"]["state"] == "offline"


def test_the_bundled_hook_with_its_fix_undone_crashes():
    fixed_call = "    pruned = release_nodes_kept(job, keep_select)\n"
    assert BUNDLED_HOOK.count(fixed_call) == 1
    unfixed = BUNDLED_HOOK.replace(fixed_call, "    pruned = job.release_nodes(keep_select=keep_select)\n")
    result = harness.run_pbs_python_input(unfixed, LAUNCH_INPUT, hook_config={})
    assert result.crashed and result.changes == {} and result.vnodes == {}
    assert any("pruned to select %s" % SITE in line for line in result.log)


def test_a_job_that_does_not_tolerate_failures_is_returned_with_a_reference_of_its_own():
    # OpenPBS's Python wrapper returns pbs.event().job itself there, a normal reference.
    body = ("import pbs\n\ndef f():\n    j = pbs.event().job\n"
            "    return j.release_nodes(keep_select='%s') is j\n\n"
            "if not f():\n    pbs.event().reject('not the job itself')\n" % SITE)
    launch = LAUNCH_INPUT.replace("tolerate_node_failures=job_start", "tolerate_node_failures=none")
    result = harness.run_pbs_python_input(body, launch)
    assert result.accepted and not result.crashed, result.raw


def test_what_release_nodes_returns_is_the_job():
    e = pbs._start({"name": "h"}, "execjob_launch", harness.read_pbs_python_input(LAUNCH_INPUT)[2])
    pruned = e.job.release_nodes(keep_select=SITE)
    assert pruned == e.job and hash(pruned) == hash(e.job) and pruned != None  # noqa: E711 (the seed's test)
    pruned.comment = "set through the result"
    assert e.job.comment == "set through the result"
    assert pbs._outcome()["job"]["comment"] == "set through the result"
    assert not pbs._job_freed()
    del pruned
    assert pbs._job_freed()   # only this test's ``e`` still held the job: one reference short


# ---------------------------------------------------------------- the mom skips the hook
def test_mom_skips_a_crashed_launch_hook_and_starts_the_job_unpruned(mom_cluster):
    c = mom_cluster()
    c.hook("launch", "execjob_launch", DROPPED_IN_FUNCTION)
    c.start()
    c.run_job(c.job())
    c.server.wait_for("mom_job_obit")
    assert "mom_job_update" not in c.server.ops()
    log = c.log("moma")
    hook_line = log.index("0008;pbs_python;Job;17.srv;pruned to (moma:ncpus=1)+(momb:ncpus=1)")
    skipped = log.index("0008;pbs_mom;Job;17.srv;Internal server error encountered. Skipping hook launch")
    by_default = log.index("0100;pbs_mom;Hook;;execjob_launch hook event: accept req by default")
    assert hook_line < skipped < by_default
    assert not any("pruned from exec_vnode" in line or "pruned to exec_vnode" in line for line in log)
    assert c.nodefile() == ["moma", "momb", "momc"]


def test_mom_prunes_with_the_bundled_hook(mom_cluster):
    c = mom_cluster()
    c.hook("reliable_job_startup", "execjob_launch", BUNDLED_HOOK)
    c.start()
    c.run_job(c.job())
    update = c.server.wait_for("mom_job_update")
    assert update["exec_vnode"] == "(moma:ncpus=1)+(momb:ncpus=1)"
    c.server.wait_for("mom_job_obit")
    log = c.log("moma")
    assert "0008;pbs_mom;Job;17.srv;pruned to exec_vnode=(moma:ncpus=1)+(momb:ncpus=1)" in log
    assert not any("Internal server error" in line for line in log)
    assert c.nodefile() == ["moma", "momb"]
