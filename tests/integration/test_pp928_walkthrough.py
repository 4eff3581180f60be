"""PP-928 "Case of Reliable Job Startup" (seed pp-928-reliable-job-startup.txt, last
section) on the mock cluster, piece by piece.

Five moms play the seed's hosts (mom1=borg, mom2=federer, mom3=lendl, mom4=agassi,
mom5=sampras), each with ``ncpus=4`` and ``mem=8gb`` (a vnode definition file). The bundled
reliable_job_startup hook pads the seed's job ``ncpus=3:mem=1gb+ncpus=2:mem=2gb+
ncpus=1:mem=3gb`` (``place=scatter:excl``) from 3 to 5 chunks. mom2 is frozen before the
job is submitted (it never answers its JOIN_JOB); mom5 is stopped while the primary mom
waits for the joins ($sister_join_job_alarm 5 s), so it fails at JOIN_JOB or, if it
answered that first, at IM_EXEC_PROLOGUE. The execjob_launch hook prunes the job back to
the seed's select on mom1, mom3, mom4, and the job's output shows the pruned nodes.
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pbsjobs  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.cluster_moms(5)]

MOMS = ["mom1", "mom2", "mom3", "mom4", "mom5"]
FROZEN, STOPPED = "mom2", "mom5"
KEPT = ["mom1", "mom3", "mom4"]
JOIN_ALARM = 5
SEED_SCRIPT = """#PBS -l select="ncpus=3:mem=1gb+ncpus=2:mem=2gb+ncpus=1:mem=3gb"
#PBS -l place=scatter:excl

echo $PBS_NODEFILE
cat $PBS_NODEFILE
echo END
echo "HOSTNAME tests"
echo "pbsdsh -n 0 hostname"
pbsdsh -n 0 hostname
echo "pbsdsh -n 1 hostname"
pbsdsh -n 1 hostname
echo "pbsdsh -n 2 hostname"
pbsdsh -n 2 hostname
"""
# Not in the seed: pbsdsh by its full path, so that the task placement is checked even
# where the job's PATH lacks PBS_EXEC/bin, and a pause to see the job running pruned.
EXTRA_SCRIPT = """echo "ABSOLUTE pbsdsh tests"
for i in 0 1 2; do echo "pbsdsh -n $i"; /opt/pbs/bin/pbsdsh -n $i hostname; done
sleep 4
echo WALKTHROUGH-DONE
"""
SEED_PRUNED_VNODE = ("(mom1:ncpus=3:mem=1048576kb)+(mom3:ncpus=2:mem=2097152kb)"
                     "+(mom4:ncpus=1:mem=3145728kb)")
SEED_FULL_VNODE = ("(mom1:ncpus=3:mem=1048576kb)+(mom2:ncpus=2:mem=2097152kb)+(mom3:ncpus=2:mem=2097152kb)"
                   "+(mom4:ncpus=1:mem=3145728kb)+(mom5:ncpus=1:mem=3145728kb)")
SITE = "1:ncpus=3:mem=1gb+1:ncpus=2:mem=2gb+1:ncpus=1:mem=3gb"


@pytest.fixture(scope="module")
def walkthrough(pbs_cluster):
    cluster = pbs_cluster
    for mom in MOMS:
        pbsjobs.set_mom_config(cluster, mom, {"sister_join_job_alarm": JOIN_ALARM, "job_launch_delay": JOIN_ALARM},
                               vnodes={mom: {"ncpus": "4", "mem": "8gb"}})
    pbsjobs.install_bundled_hook(cluster)
    pbsjobs.wait_hook_on_moms(cluster, MOMS, "reliable_job_startup")
    evidence = {}
    cluster.stop_mom(FROZEN, freeze=True)
    try:
        jobid = pbsjobs.qsub(cluster, [], SEED_SCRIPT + EXTRA_SCRIPT)
        evidence["jobid"] = jobid
        pbsjobs.wait_for(lambda: "S" in pbsjobs.record_types(cluster, jobid), 30, "the S record of %s" % jobid,
                         interval=0.1)
        evidence["before"] = pbsjobs.qstat_f(cluster, jobid)
        cluster.stop_mom(STOPPED)
        evidence["after"] = pbsjobs.wait_running_pruned(cluster, jobid, timeout=60, substate="42")
        evidence["pbsnodes"] = {n: pbsjobs.pbsnodes(cluster, n) for n in (FROZEN, STOPPED)}
        evidence["output"] = pbsjobs.wait_output(cluster, jobid, "WALKTHROUGH-DONE", 60)
        pbsjobs.wait_for(lambda: "E" in pbsjobs.record_types(cluster, jobid), 30, "the E record of %s" % jobid)
        evidence["accounting"] = pbsjobs.accounting(cluster, jobid)
        evidence["logs"] = {m: pbsjobs.job_log_lines(cluster, m, jobid) for m in KEPT}
    finally:
        cluster.start_mom(FROZEN)
        cluster.start_mom(STOPPED)
        pbsjobs.clear_offline(cluster, [FROZEN, STOPPED])
    return evidence


def output_section(text, start, end):
    lines = text.splitlines()
    begin = lines.index(start) + 1
    stop = lines.index(end, begin) if end in lines[begin:] else len(lines)
    return lines[begin:stop]


def test_pp928_walkthrough_job_first_assigned_five_nodes(walkthrough):
    before = walkthrough["before"]
    assert before["job_state"] == "R" and before["substate"] == "41", before
    assert before["exec_host"] == "mom1/0*3+mom2/0*2+mom3/0*2+mom4/0+mom5/0"
    assert before["exec_vnode"] == SEED_FULL_VNODE
    assert before["Resource_List.ncpus"] == "9"
    assert before["Resource_List.nodect"] == "5"
    assert before["Resource_List.place"] == "scatter:excl"
    assert before["Resource_List.select"] == "1:ncpus=3:mem=1gb+2:ncpus=2:mem=2gb+2:ncpus=1:mem=3gb"
    assert before["Resource_List.site"] == SITE
    assert before["tolerate_node_failures"] == "job_start"


def test_pp928_walkthrough_padded_mem_total_shown_as_in_seed(walkthrough):
    # Seed: "Resource_List.mem = 11gb" (1gb + 2*2gb + 2*3gb, kept in gb by PBS's size sum).
    assert walkthrough["before"]["Resource_List.mem"] == "11gb"


def test_pp928_walkthrough_job_runs_pruned_on_the_three_healthy_hosts(walkthrough):
    after = walkthrough["after"]
    assert after["job_state"] == "R"
    # The server regenerates exec_host from the new exec_vnode (release_nodes_semantics.md §4).
    assert after["exec_host"] == "mom1/0*3+mom3/0*2+mom4/0"
    assert after["exec_vnode"] == SEED_PRUNED_VNODE
    assert after["Resource_List.ncpus"] == "6"
    assert after["Resource_List.nodect"] == "3"
    assert after["Resource_List.place"] == "scatter:excl"
    assert after["Resource_List.select"] == SITE
    assert after["Resource_List.site"] == SITE
    assert after["schedselect"] == SITE


def test_pp928_walkthrough_pruned_mem_total_shown_as_in_seed(walkthrough):
    # Seed and release_nodes_semantics.md §4: "Resource_List.mem = 6gb".
    assert walkthrough["after"]["Resource_List.mem"] == "6gb"


def test_pp928_walkthrough_nodefile_lists_kept_hosts_in_order(walkthrough):
    output = walkthrough["output"]
    lines = output.splitlines()
    assert "/var/spool/pbs/aux/%s" % walkthrough["jobid"] in lines
    assert output_section(output, "/var/spool/pbs/aux/%s" % walkthrough["jobid"], "END") == KEPT


def split_commands_and_hosts(section, command_prefix):
    """The script's own echo lines and the tasks' output lines of an output section, each in
    the order they appear. On real OpenPBS a task's output reaches the job's output file
    through its mom, not through the job shell's descriptor, so it may land after the
    shell's next echo (seen in CI: "pbsdsh -n 1" before "mom1"); the order within each kind
    is what pbsdsh guarantees, since it waits for each task's obit."""
    commands = [line for line in section if line.startswith(command_prefix)]
    hosts = [line for line in section if not line.startswith(command_prefix)]
    return commands, hosts


def test_pp928_walkthrough_pbsdsh_n_runs_on_kept_hosts_in_order(walkthrough):
    section = output_section(walkthrough["output"], "ABSOLUTE pbsdsh tests", "WALKTHROUGH-DONE")
    assert split_commands_and_hosts(section, "pbsdsh") == (
        ["pbsdsh -n 0", "pbsdsh -n 1", "pbsdsh -n 2"], KEPT), section


def test_pp928_walkthrough_seed_script_pbsdsh_found_on_job_path(walkthrough):
    # The seed's script calls plain "pbsdsh": PBS starts the job's shell as a login shell,
    # so /etc/profile.d/pbs.sh puts PBS_EXEC/bin on its PATH.
    section = output_section(walkthrough["output"], "HOSTNAME tests", "ABSOLUTE pbsdsh tests")
    assert split_commands_and_hosts(section, "pbsdsh") == (
        ["pbsdsh -n 0 hostname", "pbsdsh -n 1 hostname", "pbsdsh -n 2 hostname"], KEPT), section
    assert "command not found" not in walkthrough["output"]


def test_pp928_walkthrough_primary_mom_tolerates_both_failures(walkthrough):
    lines = walkthrough["logs"]["mom1"]
    jobid = walkthrough["jobid"]
    assert any(";Job;%s;sister_join_job_alarm wait time %d secs exceeded" % (jobid, JOIN_ALARM) in l
               for l in lines), lines
    # As real OpenPBS: the frozen sister never answers, so there is no error from it to log
    # or ignore; the stopped one had joined before it stopped, and with no execjob_prologue
    # hook the primary does not contact it again before the launch. Neither is kept.
    for host in (FROZEN, STOPPED):
        assert not [l for l in lines if "from node %s could not" % host in l
                    or "ignoring error from %s " % host in l], (host, lines)
    assert any(l.endswith(";pruned from exec_vnode=" + SEED_FULL_VNODE) for l in lines), lines
    assert any(l.endswith(";pruned to exec_vnode=" + SEED_PRUNED_VNODE) for l in lines), lines


def test_pp928_walkthrough_kept_sisters_update_their_nodes_info(walkthrough):
    for mom in ("mom3", "mom4"):
        lines = walkthrough["logs"][mom]
        assert any(l.endswith(";Job;%s;updated nodes info" % walkthrough["jobid"]) for l in lines), (mom, lines)


def test_pp928_walkthrough_s_record_has_pruned_values_and_S_the_padded_ones(walkthrough):
    records = walkthrough["accounting"]
    types = [t for t, _unused in records]
    assert types.count("S") == 1 and types.count("s") == 1 and types.index("S") < types.index("s")
    start = pbsjobs.record_fields([l for t, l in records if t == "S"][0])
    prune = pbsjobs.record_fields([l for t, l in records if t == "s"][0])
    assert start["exec_vnode"] == SEED_FULL_VNODE and start["Resource_List.nodect"] == "5"
    assert prune["exec_host"] == walkthrough["after"]["exec_host"]
    assert prune["exec_vnode"] == SEED_PRUNED_VNODE
    assert prune["Resource_List.select"] == SITE and prune["Resource_List.ncpus"] == "6"
    assert prune["Resource_List.nodect"] == "3" and prune["Resource_List.place"] == "scatter:excl"
    for key in ("user", "group", "project", "jobname", "queue", "ctime", "qtime", "etime", "start",
                "Resource_List.mem", "Resource_List.site", "resource_assigned.ncpus"):
        assert key in prune, key


def test_pp928_walkthrough_hook_offlines_only_what_pbs_reports_failed(walkthrough):
    """The hook offlines the vnodes of vnode_list_fail; PBS reported neither sister there
    (no error came from either), so both are only pruned away, none offlined."""
    assert any(";reliable_job_startup: pruned to select " in l and l.endswith("(failed vnodes: none)")
               for l in walkthrough["logs"]["mom1"]), walkthrough["logs"]["mom1"]
    for node in (FROZEN, STOPPED):
        attrs = walkthrough["pbsnodes"][node]
        assert "offline" not in attrs["state"].split(","), (node, attrs)
