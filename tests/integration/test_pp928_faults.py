"""PP-928 "Bad input and faults" (issue 3) on the mock cluster: each fault either lets the
job start pruned or gets it held and requeued, never hung, lost or half-pruned.

Four moms, ``$sister_join_job_alarm`` and ``$job_launch_delay`` 3 s, the bundled
reliable_job_startup hook (``increment: 1``), so ``-l select=ncpus=1+ncpus=1 -l
place=scatter`` becomes ``1:ncpus=1+2:ncpus=1`` on mom1, mom2, mom3 and is pruned back to
two chunks at execjob_launch. A second queuejob hook, ``pp928_keep`` (after the bundled
one), replaces the saved select (``Resource_List.site``) with the job's ``PP928_KEEP``
variable, which is how the tests hand ``release_nodes()`` a bad ``keep_select``.
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pbsjobs  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.cluster_moms(4)]

MOMS = ["mom1", "mom2", "mom3", "mom4"]
ALARM = 3
SELECT = ["-l", "select=ncpus=1+ncpus=1", "-l", "place=scatter"]
PADDED = "1:ncpus=1+2:ncpus=1"
# Long enough for qstat to see it running pruned: real PBS keeps no history of finished jobs.
SCRIPT = "cat $PBS_NODEFILE\nsleep 8\necho END\n"
KEEP_HOOK = """import pbs
e = pbs.event()
keep = e.job.Variable_List["PP928_KEEP"] if "PP928_KEEP" in e.job.Variable_List else None
if keep:
    e.job.Resource_List["site"] = keep
"""
SLOW_BEGIN_HOOK = """import pbs, socket, time
if socket.gethostname().split(".")[0] == "mom2":
    time.sleep(%d)
"""


@pytest.fixture(scope="module")
def cluster(pbs_cluster):
    for mom in MOMS:
        pbsjobs.set_mom_config(pbs_cluster, mom, {"sister_join_job_alarm": ALARM, "job_launch_delay": ALARM})
    pbsjobs.install_bundled_hook(pbs_cluster)
    pbsjobs.install_hook(pbs_cluster, "pp928_keep", ["queuejob"], KEEP_HOOK, order=2)
    pbsjobs.wait_hook_on_moms(pbs_cluster, MOMS, "reliable_job_startup")
    return pbs_cluster


@pytest.fixture
def restore(cluster):
    """After the test: every mom running, no vnode offline, no job left."""
    yield cluster
    pbsjobs.restore_cluster(cluster, MOMS)
    pbsjobs.wait_nodes_free(cluster, MOMS, 60)


def wait_started(cluster, jobid):
    """Wait until the job was sent to its moms (S record); returns nothing."""
    pbsjobs.wait_for(lambda: "S" in pbsjobs.record_types(cluster, jobid), 30, "the S record of %s" % jobid,
                     interval=0.1)


def wait_running_pruned(cluster, jobid):
    return pbsjobs.wait_running_pruned(cluster, jobid, timeout=60, substate="42")


def assert_finishes(cluster, jobid):
    pbsjobs.wait_for(lambda: "E" in pbsjobs.record_types(cluster, jobid), 60, "the E record of %s" % jobid)


def primary_log(cluster, jobid):
    return pbsjobs.job_log_lines(cluster, "mom1", jobid)


# ------------------------------------------------------------------ sisters failing to join

def test_pp928_fault_sister_never_answers_job_starts_pruned(restore):
    cluster = restore
    cluster.stop_mom("mom2", freeze=True)
    jobid = pbsjobs.qsub(cluster, SELECT, SCRIPT)
    attrs = wait_running_pruned(cluster, jobid)
    assert pbsjobs.hosts_of(attrs["exec_host"]) == ["mom1", "mom3"]
    assert attrs["exec_vnode"] == "(mom1:ncpus=1)+(mom3:ncpus=1)"
    lines = primary_log(cluster, jobid)
    assert any("sister_join_job_alarm wait time %d secs exceeded" % ALARM in l for l in lines), lines
    # A sister that never answers sends no error: nothing to log or ignore (real OpenPBS).
    assert not silent_sister_errors(lines, "mom2"), lines
    assert_finishes(cluster, jobid)


def silent_sister_errors(lines, host):
    """Lines of an error from ``host``, which a sister that never answered cannot cause."""
    return [l for l in lines if "from node %s could not JOIN_JOB" % host in l
            or "ignoring error from %s " % host in l]


def test_pp928_fault_mom_killed_while_primary_waits_for_joins(restore):
    cluster = restore
    # mom3 never answers, so the primary waits the whole alarm; mom2 is killed meanwhile
    # (frozen first so that it cannot have answered before). Only mom1 stays healthy: the
    # job keeps one chunk (PP928_KEEP) and starts pruned there.
    cluster.stop_mom("mom3", freeze=True)
    cluster.stop_mom("mom2", freeze=True)
    jobid = pbsjobs.qsub(cluster, SELECT + ["-v", "PP928_KEEP=1:ncpus=1"], SCRIPT)
    wait_started(cluster, jobid)
    cluster.stop_mom("mom2")                # SIGTERM (+SIGCONT) while the primary waits
    attrs = wait_running_pruned(cluster, jobid)
    assert attrs["exec_host"] == "mom1/0" and attrs["exec_vnode"] == "(mom1:ncpus=1)"
    lines = primary_log(cluster, jobid)
    assert not silent_sister_errors(lines, "mom3"), lines   # frozen throughout: silent
    assert_finishes(cluster, jobid)


def test_pp928_fault_sister_answering_after_the_alarm_is_left_out(restore):
    cluster = restore
    pbsjobs.install_hook(cluster, "pp928_slow_begin", ["execjob_begin"], SLOW_BEGIN_HOOK % (ALARM + 4), alarm=30)
    try:
        pbsjobs.wait_hook_on_moms(cluster, MOMS, "pp928_slow_begin")
        jobid = pbsjobs.qsub(cluster, SELECT, SCRIPT)
        attrs = wait_running_pruned(cluster, jobid)
        assert pbsjobs.hosts_of(attrs["exec_host"]) == ["mom1", "mom3"]
        lines = primary_log(cluster, jobid)
        # The explicit $sister_join_job_alarm wins over the begin hooks' alarm sum (30).
        assert any("sister_join_job_alarm wait time %d secs exceeded" % ALARM in l for l in lines), lines
        assert not silent_sister_errors(lines, "mom2"), lines   # late, not failed
        assert_finishes(cluster, jobid)
        # mom2 did run the join, late: it answered after the primary had gone on.
        pbsjobs.wait_for(lambda: pbsjobs.job_log_lines(cluster, "mom2", jobid), 20, "mom2 to log the late join")
    finally:
        pbsjobs.delete_hook(cluster, "pp928_slow_begin")


def test_pp928_fault_sister_hook_exceeding_its_alarm_fails_that_sister_only(restore):
    cluster = restore
    pbsjobs.install_hook(cluster, "pp928_stuck_begin", ["execjob_begin"], SLOW_BEGIN_HOOK % 60, alarm=1)
    try:
        pbsjobs.wait_hook_on_moms(cluster, MOMS, "pp928_stuck_begin")
        jobid = pbsjobs.qsub(cluster, SELECT, SCRIPT)
        attrs = wait_running_pruned(cluster, jobid)
        assert pbsjobs.hosts_of(attrs["exec_host"]) == ["mom1", "mom3"]
        sister = pbsjobs.log_lines(cluster, "mom2", "pp928_stuck_begin")
        assert any("alarm call while running execjob_begin hook 'pp928_stuck_begin', request rejected" in l
                   for l in sister), sister
        lines = primary_log(cluster, jobid)
        assert any("from node mom2 could not JOIN_JOB successfully" in l for l in lines), lines
        assert_finishes(cluster, jobid)
    finally:
        pbsjobs.delete_hook(cluster, "pp928_stuck_begin")


# ------------------------------------------------------------------ release_nodes() failing

def assert_held_not_pruned(cluster, jobid):
    """The bundled hook's answer to release_nodes() -> None: job held (s) and requeued,
    with its padded request intact and no trace of a prune."""
    attrs = pbsjobs.wait_job(cluster, jobid, lambda a: a.get("job_state") == "H", 60, "held")
    assert attrs["Hold_Types"] == "s"
    assert "exec_vnode" not in attrs and "exec_host" not in attrs
    assert attrs["Resource_List.select"] == PADDED and attrs["schedselect"] == PADDED
    assert attrs["Resource_List.nodect"] == "3" and attrs["Resource_List.ncpus"] == "3"
    types = pbsjobs.record_types(cluster, jobid)
    assert "s" not in types and "R" in types, types
    lines = primary_log(cluster, jobid)
    assert not any("pruned from exec_vnode" in l or "pruned to exec_vnode" in l for l in lines), lines
    for mom in ("mom2", "mom3"):
        assert not any("updated nodes info" in l for l in pbsjobs.job_log_lines(cluster, mom, jobid)), mom
    return lines


def test_pp928_fault_keep_select_not_a_subset_holds_and_requeues(restore):
    cluster = restore
    keep = "1:ncpus=1+1:ncpus=2"
    jobid = pbsjobs.qsub(cluster, SELECT + ["-v", "PP928_KEEP=%s" % keep], SCRIPT)
    lines = assert_held_not_pruned(cluster, jobid)
    assert any(";could not satisfy select chunk (ncpus=2 ssi=0 mem=0 vmem=0 naccels=0 accel_mem=0)" in l
               for l in lines), lines
    assert any(";NEED chunks for keep_select (%s)" % keep in l for l in lines), lines
    # What real OpenPBS prints after the colon is empty (transcript g_..._2nodes, mockpbs.release_nodes).
    assert any(";HAVE chunks from job's exec_vnode:" in l for l in lines), lines


def test_pp928_fault_malformed_keep_select_holds_and_requeues(restore):
    cluster = restore
    jobid = pbsjobs.qsub(cluster, SELECT + ["-v", "PP928_KEEP=ncpus=1++ncpus=1"], SCRIPT)
    lines = assert_held_not_pruned(cluster, jobid)
    assert any("could not prune job %s back to its original select ncpus=1++ncpus=1" % jobid in l
               for l in lines), lines


def test_pp928_fault_keep_select_needing_more_healthy_vnodes_holds_and_requeues(restore):
    cluster = restore
    cluster.stop_mom("mom2", freeze=True)
    keep = "1:ncpus=1+1:ncpus=1+1:ncpus=1"
    jobid = pbsjobs.qsub(cluster, SELECT + ["-v", "PP928_KEEP=%s" % keep], SCRIPT)
    # A real server requeues the rejected job only once every sister acknowledged its
    # delete: thawed after the hook gave up, the frozen sister does.
    pbsjobs.wait_for(lambda: any("could not prune job %s" % jobid in l for l in primary_log(cluster, jobid)),
                     60, "the hook to give up on pruning %s" % jobid)
    cluster.start_mom("mom2")
    lines = assert_held_not_pruned(cluster, jobid)
    assert any(";could not satisfy select chunk (ncpus=1 ssi=0 mem=0 vmem=0 naccels=0 accel_mem=0)" in l
               for l in lines), lines
    assert any(";NEED chunks for keep_select (%s)" % keep in l for l in lines), lines
    assert any(";HAVE chunks from job's exec_vnode:" in l for l in lines), lines
    assert not silent_sister_errors(lines, "mom2"), lines


# ------------------------------------------------------------------ server restart

def restart_server(cluster):
    lock = "%s/server_priv/server.lock" % pbsjobs.PBS_HOME
    pbsjobs.sh(cluster, pbsjobs.SERVER, "kill $(cat %s)" % lock)
    pbsjobs.wait_for(lambda: pbsjobs.run(cluster, pbsjobs.SERVER, ["test", "-e", lock], check=False).returncode != 0,
                     30, "pbs_server to stop")
    pbsjobs.run(cluster, pbsjobs.SERVER, ["pbs_server"])


def test_pp928_fault_server_restart_keeps_pruned_attributes(restore):
    cluster = restore
    cluster.stop_mom("mom2", freeze=True)
    jobid = pbsjobs.qsub(cluster, SELECT, "cat $PBS_NODEFILE\nsleep 10\necho END\n")
    before = wait_running_pruned(cluster, jobid)
    restart_server(cluster)
    after = pbsjobs.qstat_f(cluster, jobid)
    for key in ("job_state", "exec_host", "exec_vnode", "schedselect", "Resource_List.select",
                "Resource_List.ncpus", "Resource_List.nodect", "Resource_List.site", "Resource_List.place",
                "tolerate_node_failures", "run_count"):
        assert after.get(key) == before.get(key), (key, before.get(key), after.get(key))
    assert pbsjobs.hosts_of(after["exec_host"]) == ["mom1", "mom3"]
    assert_finishes(cluster, jobid)
    end = pbsjobs.record_fields([l for t, l in pbsjobs.accounting(cluster, jobid) if t == "E"][-1])
    assert end["exec_host"] == before["exec_host"] and end["Exit_status"] == "0"
