"""Cluster-level checks of PP-928 interfaces 1-9 (seed pp-928-reliable-job-startup.txt)
that the unit tests cannot prove: the real commands, daemons and logs of the mock cluster.

Three moms; hooks are installed per test and removed afterwards. Jobs are short.
"""
import os
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pbsjobs  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.cluster_moms(3)]

MOMS = ["mom1", "mom2", "mom3"]
TWO_NODES = ["-l", "select=ncpus=1+ncpus=1", "-l", "place=scatter"]
ACCEPT_HOOK = "import pbs\npbs.event().accept()\n"


@pytest.fixture(scope="module")
def cluster(pbs_cluster):
    for mom in MOMS:
        pbsjobs.set_mom_config(pbs_cluster, mom, {})
    return pbs_cluster


@pytest.fixture
def clean(cluster):
    """After the test: moms running, nodes online, no job, no test hook, moms' config plain."""
    yield cluster
    pbsjobs.restore_cluster(cluster, MOMS)
    for name in ("pp928_begin_a", "pp928_begin_b", "reliable_job_startup", "pp928_resize", "pp928_launch"):
        pbsjobs.delete_hook(cluster, name)
    pbsjobs.qmgr(cluster, "unset server default_qsub_arguments", check=False)
    pbsjobs.wait_for(lambda: not pbsjobs.job_ids(cluster), 30, "every job gone")
    pbsjobs.wait_nodes_free(cluster, MOMS, 60)


# ------------------------------------------------------------------ interface 1

@pytest.mark.parametrize("value", ["all", "job_start", "none"])
def test_pp928_i1_qsub_W_tolerate_node_failures_value_kept(clean, value):
    jobid = pbsjobs.qsub(clean, ["-h", "-W", "tolerate_node_failures=%s" % value, "--", "/bin/true"])
    assert pbsjobs.qstat_f(clean, jobid)["tolerate_node_failures"] == value


def test_pp928_i1_qsub_W_bad_value_refused_with_usage(clean):
    proc = pbsjobs.qsub(clean, ["-W", "tolerate_node_failures=bogus", "--", "/bin/true"], check=False)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("qsub: illegal -W value\nusage: qsub [-a date_time]")


def test_pp928_i1_qalter_bad_value_refused(clean):
    jobid = pbsjobs.qsub(clean, ["-h", "--", "/bin/true"])
    proc = pbsjobs.run(clean, pbsjobs.SERVER, ["qalter", "-W", "tolerate_node_failures=bogus", jobid],
                       user=pbsjobs.JOB_USER, check=False)
    assert proc.returncode == 166
    assert proc.stderr.strip() == "qalter: Illegal attribute or resource value %s" % jobid
    assert "tolerate_node_failures" not in pbsjobs.qstat_f(clean, jobid)


def test_pp928_i1_default_qsub_arguments_give_jobs_the_value(clean):
    pbsjobs.qmgr(clean, "set server default_qsub_arguments = '-W tolerate_node_failures=job_start'")
    plain = pbsjobs.qsub(clean, ["-h", "--", "/bin/true"])
    explicit = pbsjobs.qsub(clean, ["-h", "-W", "tolerate_node_failures=none", "--", "/bin/true"])
    assert pbsjobs.qstat_f(clean, plain)["tolerate_node_failures"] == "job_start"
    assert pbsjobs.qstat_f(clean, explicit)["tolerate_node_failures"] == "none"


def test_pp928_i1_invalid_default_qsub_arguments_make_plain_qsub_fail(clean):
    # The server stores the value unchecked (transcript d); qsub then refuses every job.
    pbsjobs.qmgr(clean, "set server default_qsub_arguments = '-W tolerate_node_failures=bogus'")
    proc = pbsjobs.qsub(clean, ["--", "/bin/true"], check=False)
    assert proc.returncode == 2 and proc.stderr.startswith("qsub: illegal -W value")


def running_two_node_job(cluster, tolerate, seconds=40):
    # A script, not "-- /bin/sleep N": the mock mom runs only job scripts (see the report).
    jobid = pbsjobs.qsub(cluster, TWO_NODES + ["-W", "tolerate_node_failures=%s" % tolerate],
                         "sleep %d\n" % seconds)
    attrs = pbsjobs.wait_job(cluster, jobid, lambda a: a.get("substate") == "42", 60, "running")
    assert pbsjobs.hosts_of(attrs["exec_host"]) == ["mom1", "mom2"]
    return jobid


def test_pp928_i1_all_job_survives_a_sister_lost_while_running(clean):
    jobid = running_two_node_job(clean, "all", seconds=20)
    clean.stop_mom("mom2")
    # The job runs to its end: one E record, exit status 0, never requeued.
    pbsjobs.wait_for(lambda: "E" in pbsjobs.record_types(clean, jobid), 60, "the E record")
    records = pbsjobs.accounting(clean, jobid)
    assert "R" not in [t for t, _unused in records]
    assert pbsjobs.record_fields([l for t, l in records if t == "E"][0])["Exit_status"] == "0"
    assert not any("killing job now" in l for l in pbsjobs.job_log_lines(clean, "mom1", jobid))


def test_pp928_i1_qalter_on_running_job_applies_from_next_run(clean):
    jobid = running_two_node_job(clean, "all", seconds=20)
    pbsjobs.run(clean, pbsjobs.SERVER, ["qalter", "-W", "tolerate_node_failures=job_start", jobid],
                user=pbsjobs.JOB_USER)
    assert pbsjobs.qstat_f(clean, jobid)["tolerate_node_failures"] == "job_start"
    clean.stop_mom("mom2")
    # This run still tolerates everything ("all"): the loss does not kill it.
    pbsjobs.wait_for(lambda: "E" in pbsjobs.record_types(clean, jobid), 60, "the E record")
    assert "R" not in pbsjobs.record_types(clean, jobid)


# ------------------------------------------------------------------ interfaces 3 and 4

def test_pp928_i3_i4_explicit_values_logged_at_hup(clean):
    pbsjobs.set_mom_config(clean, "mom1", {"sister_join_job_alarm": 7, "job_launch_delay": 9})
    try:
        lines = pbsjobs.log_lines(clean, "mom1")
        assert any(l.endswith(";0002;pbs_mom;Svr;sister_join_job_alarm;7") for l in lines), lines[-20:]
        assert any(l.endswith(";0002;pbs_mom;Svr;job_launch_delay;9") for l in lines), lines[-20:]
    finally:
        pbsjobs.set_mom_config(clean, "mom1", {})


def test_pp928_i3_default_join_alarm_is_sum_of_enabled_begin_hook_alarms(clean):
    pbsjobs.install_hook(clean, "pp928_begin_a", ["execjob_begin"], ACCEPT_HOOK, alarm=2)
    pbsjobs.install_hook(clean, "pp928_begin_b", ["execjob_begin"], ACCEPT_HOOK, alarm=3)
    pbsjobs.wait_hook_on_moms(clean, MOMS, "pp928_begin_b")
    clean.stop_mom("mom2", freeze=True)
    jobid = pbsjobs.qsub(clean, TWO_NODES + ["-W", "tolerate_node_failures=job_start", "--", "/bin/true"])
    pbsjobs.wait_for(lambda: any("sister_join_job_alarm wait time" in l
                                 for l in pbsjobs.job_log_lines(clean, "mom1", jobid)), 60, "the join alarm")
    lines = pbsjobs.job_log_lines(clean, "mom1", jobid)
    assert any(l.endswith(";sister_join_job_alarm wait time 5 secs exceeded") for l in lines), lines


def test_pp928_i3_explicit_join_alarm_wins_over_hook_alarms(clean):
    pbsjobs.install_hook(clean, "pp928_begin_a", ["execjob_begin"], ACCEPT_HOOK, alarm=9)
    pbsjobs.wait_hook_on_moms(clean, MOMS, "pp928_begin_a")
    pbsjobs.set_mom_config(clean, "mom1", {"sister_join_job_alarm": 2})
    try:
        clean.stop_mom("mom2", freeze=True)
        jobid = pbsjobs.qsub(clean, TWO_NODES + ["-W", "tolerate_node_failures=job_start", "--", "/bin/true"])
        pbsjobs.wait_for(lambda: any("sister_join_job_alarm wait time" in l
                                     for l in pbsjobs.job_log_lines(clean, "mom1", jobid)), 60, "the join alarm")
        lines = pbsjobs.job_log_lines(clean, "mom1", jobid)
        assert any(l.endswith(";sister_join_job_alarm wait time 2 secs exceeded") for l in lines), lines
    finally:
        pbsjobs.set_mom_config(clean, "mom1", {})


# ------------------------------------------------------------------ interfaces 5, 6, 8

LAUNCH_HOOK = """import pbs
e = pbs.event()
if e.job.in_ms_mom() and "PBS_NODEFILE" in e.env:
    for name in e.vnode_list_fail.keys():
        e.vnode_list_fail[name].state = pbs.ND_OFFLINE
        e.vnode_list_fail[name].comment = "pp928 launch: failed " + name
    if str(e.job.Job_Name) == "i6hold":
        e.vnode_list["mom2"].state = pbs.ND_OFFLINE
        e.vnode_list["mom2"].comment = "pp928 launch: offlined through vnode_list"
        e.job.Hold_Types = pbs.hold_types("s")
        e.job.rerun()
        e.reject("pp928 launch: held")
    if str(e.job.Job_Name) == "i6server":
        pbs.server().scheduling = False
"""


def test_pp928_i5_silent_sister_is_not_in_vnode_list_fail(clean):
    """A sister that never answers the join sends no error: real OpenPBS leaves it out of
    vnode_list_fail (the job still starts without it), so a launch hook offlining that
    list's vnodes leaves it alone. Reported failures: the unit tests of interface 5."""
    pbsjobs.install_hook(clean, "pp928_launch", ["execjob_launch"], LAUNCH_HOOK)
    pbsjobs.wait_hook_on_moms(clean, MOMS, "pp928_launch")
    pbsjobs.set_mom_config(clean, "mom1", {"sister_join_job_alarm": 2})
    try:
        clean.stop_mom("mom2", freeze=True)
        jobid = pbsjobs.qsub(clean, TWO_NODES + ["-W", "tolerate_node_failures=job_start", "--", "/bin/true"])
        # Started: the launch hooks have run (a real server then waits for the frozen
        # sister's acknowledgement before it ends the job, so no E record is awaited).
        pbsjobs.wait_for(lambda: any(";Started, pid = " in l for l in pbsjobs.job_log_lines(clean, "mom1", jobid)),
                         60, "%s started on mom1" % jobid)
        primary = pbsjobs.job_log_lines(clean, "mom1", jobid)
        assert any("sister_join_job_alarm wait time 2 secs exceeded" in l for l in primary), primary
        for mom in ("mom1", "mom2"):
            attrs = pbsjobs.pbsnodes(clean, mom)
            assert "offline" not in attrs["state"].split(",") and "pp928 launch" not in attrs.get("comment", ""), attrs
    finally:
        pbsjobs.set_mom_config(clean, "mom1", {})


def test_pp928_i6_launch_hook_holds_job_but_cannot_offline_a_sisters_vnode(clean):
    """The hook's hold and rerun apply; its change of mom2's vnode through vnode_list does
    not: the server takes vnode_list changes only for vnodes of the mom that sends them
    (vnode_list_fail changes for any vnode)."""
    pbsjobs.install_hook(clean, "pp928_launch", ["execjob_launch"], LAUNCH_HOOK)
    pbsjobs.wait_hook_on_moms(clean, MOMS, "pp928_launch")
    jobid = pbsjobs.qsub(clean, TWO_NODES + ["-N", "i6hold", "--", "/bin/true"])
    attrs = pbsjobs.wait_job(clean, jobid, lambda a: a.get("job_state") == "H", 60, "held by the launch hook")
    assert attrs["Hold_Types"] == "s"
    refusal = ";Node;mom1;Not allowed to update vnode 'mom2', as it is owned by a different mom"
    lines = pbsjobs.wait_for(lambda: [l for l in pbsjobs.log_lines(clean, pbsjobs.SERVER, kind="server_logs")
                                      if l.endswith(refusal)], 30, "the server to refuse the vnode change")
    assert ";0100;" in lines[0], lines
    node = pbsjobs.pbsnodes(clean, "mom2")
    assert node["state"] == "free" and "pp928 launch" not in node.get("comment", ""), node
    primary = pbsjobs.job_log_lines(clean, "mom1", jobid)
    assert any(l.endswith(";0001;pbs_mom;Job;%s;job not started, Failure -16" % jobid) for l in primary), primary


def test_pp928_i6_launch_hook_setting_server_attribute_is_an_exception(clean):
    """Setting a server attribute at execjob_launch raises in the hook, which fails like
    any hook exception: pbs_python's error lines, then the rejection."""
    pbsjobs.install_hook(clean, "pp928_launch", ["execjob_launch"], LAUNCH_HOOK)
    pbsjobs.wait_hook_on_moms(clean, MOMS, "pp928_launch")
    jobid = pbsjobs.qsub(clean, TWO_NODES + ["-N", "i6server", "--", "/bin/true"])
    rejected = "execjob_launch hook 'pp928_launch' encountered an exception, request rejected"
    pbsjobs.wait_for(lambda: any(l.endswith(";" + rejected) for l in pbsjobs.job_log_lines(clean, "mom1", jobid)),
                     60, "the rejection in mom1's log")
    error = ";0001;pbs_python;Svr;pbs_python;PBS server internal error (15011) in Error evaluating Python script, "
    expected = [error + "<class 'AssertionError'>",
                error + "Can only set progname, argv, env event parameters as well as job, resource, vnode "
                        "under execjob_launch hook.",
                ";0100;pbs_python;Hook;pp928_launch;" + rejected,
                ";0001;pbs_mom;Svr;pbs_mom;run_hook, execv of /opt/pbs/bin/pbs_python resulted in nonzero "
                "exit status=254",
                ";0008;pbs_mom;Job;%s;%s" % (jobid, rejected),
                ";0001;pbs_mom;Job;%s;job not started, Failure -17" % jobid]
    lines = pbsjobs.log_lines(clean, "mom1")
    first = next(i for i, l in enumerate(lines) if l.endswith(expected[0]))
    assert [l[19:] for l in lines[first:first + len(expected)]] == expected, lines[first:first + 10]
    assert pbsjobs.qmgr(clean, "list server scheduling").stdout.split("=")[-1].strip() == "True"


# ------------------------------------------------------------------ interface 9

RESIZE_HOOK = """import pbs, socket
if socket.gethostname().split(".")[0] == "mom3":
    pbs.event().reject("pp928 resize: refused on mom3")
"""


def test_pp928_i9_execjob_resize_reject_on_sister_requeues_job(clean):
    pbsjobs.install_bundled_hook(clean)
    pbsjobs.install_hook(clean, "pp928_resize", ["execjob_resize"], RESIZE_HOOK)
    pbsjobs.wait_hook_on_moms(clean, MOMS, "pp928_resize")
    pbsjobs.set_mom_config(clean, "mom1", {"sister_join_job_alarm": 2, "job_launch_delay": 2})
    try:
        clean.stop_mom("mom2", freeze=True)
        jobid = pbsjobs.qsub(clean, TWO_NODES, "sleep 5\n")
        pbsjobs.wait_for(lambda: "R" in pbsjobs.record_types(clean, jobid), 60, "the job requeued (R record)")
        sister = pbsjobs.log_lines(clean, "mom3")
        assert any("execjob_resize request rejected by 'pp928_resize'" in l and ";0100;" in l
                   for l in sister), sister[-20:]
        assert any(l.endswith(";Job;%s;pp928 resize: refused on mom3" % jobid) for l in sister), sister[-20:]
        primary = pbsjobs.job_log_lines(clean, "mom1", jobid)
        assert any("pruned to exec_vnode=(mom1:ncpus=1)+(mom3:ncpus=1)" in l for l in primary), primary
        # The pruned run was requeued (R), not ended (no E before the R).
        types = pbsjobs.record_types(clean, jobid)
        assert "E" not in types[:types.index("R")], types
    finally:
        pbsjobs.set_mom_config(clean, "mom1", {})


def test_pp928_i9_bad_event_message_lists_execjob_resize(clean):
    pbsjobs.install_hook(clean, "pp928_launch", ["execjob_launch"], ACCEPT_HOOK)
    proc = pbsjobs.qmgr(clean, "set hook pp928_launch event = yaya", check=False)
    assert proc.returncode == 32
    assert proc.stderr == (
        "qmgr obj=pp928_launch svr=default: invalid argument (yaya) to event. Should be one or more of: "
        "queuejob,postqueuejob,modifyjob,modifyvnode,management,resvsub,modifyresv,movejob,jobobit,runjob,"
        "provision,periodic,resv_confirm,resv_begin,resv_end,execjob_begin,execjob_prologue,execjob_epilogue,"
        "execjob_preterm,execjob_end,exechost_periodic,execjob_launch,exechost_startup,execjob_attach,"
        "execjob_resize,execjob_abort,execjob_postsuspend,execjob_preresume or \"\" for no event\n"
        "qmgr: hook error returned from server\n")


# ------------------------------------------------------------------ interface 1, last (see its docstring)

MAX_POLL_DOWNTIME = 4   # seconds: $max_poll_downtime of mom1 in the lost-sister test
NOT_KILLING_YET = "im_eof, lost communication with mom2, not killing job yet"


def log_time(line):
    """Seconds since the epoch of a PBS log line (``MM/DD/YYYY HH:MM:SS;...``)."""
    return time.mktime(time.strptime(line.split(";", 1)[0], "%m/%d/%Y %H:%M:%S"))


def test_pp928_i1_job_start_job_outlives_a_lost_sister_for_max_poll_downtime(clean):
    """OpenPBS's im_eof(): a running job_start job whose sister is lost keeps running
    ('not killing job yet', at every poll) until the sister has been lost for more than
    $max_poll_downtime seconds (300 by default; 4 here, and polls every 1-2 s through
    $min_check_poll/$max_check_poll), then it is killed and requeued. A mom whose
    connection is younger than 60 s says 'pbs_comm down/recently established' instead
    of killing, so the kill may come a little later: the test runs last in the module,
    when the moms have been up long enough for that not to cost a minute."""
    pbsjobs.set_mom_config(clean, "mom1", {"max_poll_downtime": MAX_POLL_DOWNTIME,
                                           "min_check_poll": 1, "max_check_poll": 2})
    try:
        jobid = running_two_node_job(clean, "job_start", seconds=300)
        clean.stop_mom("mom2")
        pbsjobs.wait_for(lambda: any(l.endswith(";" + NOT_KILLING_YET) for l in pbsjobs.job_log_lines(
            clean, "mom1", jobid)), 30, "the primary to notice the lost sister")
        assert pbsjobs.qstat_f(clean, jobid).get("substate") == "42"
        killed = "im_eof, lost communication with mom2 for > %d secs, killing job now" % MAX_POLL_DOWNTIME
        pbsjobs.wait_for(lambda: any(l.endswith(";" + killed) for l in pbsjobs.job_log_lines(clean, "mom1", jobid)),
                         120, "the primary to kill the job")
        lines = pbsjobs.job_log_lines(clean, "mom1", jobid)
        first_notice = next(l for l in lines if l.endswith(";" + NOT_KILLING_YET))
        kill = next(l for l in lines if l.endswith(";" + killed))
        assert lines.index(first_notice) < lines.index(kill)
        assert log_time(kill) - log_time(first_notice) >= MAX_POLL_DOWNTIME, (first_notice, kill)
        assert ";0001;pbs_mom;Job;%s;%s" % (jobid, NOT_KILLING_YET) in first_notice
        pbsjobs.wait_for(lambda: "R" in pbsjobs.record_types(clean, jobid), 60, "the job requeued (R record)")
        types = pbsjobs.record_types(clean, jobid)
        assert "E" not in types[:types.index("R")], types
    finally:
        # A reload never resets $max_poll_downtime: put the default back explicitly.
        pbsjobs.set_mom_config(clean, "mom1", {"max_poll_downtime": 300})
