"""PP-928 interface 8: job.release_nodes(keep_select=...), per
tests/reference/release_nodes_semantics.md (hook build of OpenPBS)."""
from mockpbs import pbs

SEED_EXEC_VNODE = ("(borg:ncpus=3:mem=1048576kb)+(federer:ncpus=2:mem=2097152kb)+(lendl:ncpus=2:mem=2097152kb)"
                   "+(agassi:ncpus=1:mem=3145728kb)+(sampras:ncpus=1:mem=3145728kb)")
SEED_EXEC_HOST = "borg/0*3+federer/0*2+lendl/0*2+agassi/0+sampras/0"
SEED_SITE = "1:ncpus=3:mem=1gb+1:ncpus=2:mem=2gb+1:ncpus=1:mem=3gb"


def start(event, exec_vnode, exec_host, hosts, failed=(), tolerate="job_start", keep=None, **job_extra):
    """Install an event whose vnodes are ``hosts`` ({vnode: host}); ``failed`` hosts go to
    failed_mom_list and their vnodes to vnode_list_fail."""
    job = {"id": "20.borg", "exec_vnode": exec_vnode, "exec_host": exec_host,
           "schedselect": "1:ncpus=1", "Resource_List": {"select": "1:ncpus=1"}}
    if tolerate is not None:
        job["tolerate_node_failures"] = tolerate
    if keep is not None:
        job["Resource_List"]["site"] = keep
    job.update(job_extra)
    all_hosts = sorted(set(hosts.values()))
    vnodes = {name: {"name": name, "host": host, "state": "free", "resources_available": {}}
              for name, host in hosts.items()}
    context = {
        "job": job, "in_ms_mom": True, "hostname": all_hosts[0], "daemon": "mom",
        "vnode_list": vnodes,   # the failed ones too, as the mom writes it
        "vnode_list_fail": {n: v for n, v in vnodes.items() if v["host"] in failed},
        "failed_mom_list": list(failed),
        "succeeded_mom_list": [h for h in all_hosts if h not in failed],
        "env": {"PBS_NODEFILE": "/x"}, "argv": ["/bin/sh"], "progname": "/bin/sh",
    }
    return pbs._start({"name": "launch"}, event, context)


def seed_hosts():
    return {n: n for n in ("borg", "federer", "lendl", "agassi", "sampras")}


def log_messages():
    return [record[3] for record in pbs._current.logs]


def test_pp928_i8_seed_example_prunes_failed_federer_and_sampras():
    e = start("execjob_launch", SEED_EXEC_VNODE, SEED_EXEC_HOST, seed_hosts(), failed=("federer", "sampras"))
    pj = e.job.release_nodes(keep_select=SEED_SITE)
    # The job itself, handed back as a borrowed reference: the emulator's stand-in for it
    # shares its state and compares equal (test_release_nodes_borrowed_job.py).
    assert pj == e.job
    assert pj.exec_vnode == "(borg:ncpus=3:mem=1048576kb)+(lendl:ncpus=2:mem=2097152kb)+(agassi:ncpus=1:mem=3145728kb)"
    assert pj.exec_host == "borg/0*3+lendl/0*2+agassi/0"
    assert pj.exec_host2 == "borg/0*3+lendl/0*2+agassi/0"
    assert pj.schedselect == SEED_SITE
    assert isinstance(pj.schedselect, pbs.select)
    changed = pbs._outcome()["job"]
    assert changed["exec_vnode"] == pj.exec_vnode and changed["schedselect"] == SEED_SITE


def test_pp928_i8_keeps_first_chunk_even_when_a_smaller_fits():
    e = start("execjob_prologue", "(ms:ncpus=4)+(a:ncpus=1)+(b:ncpus=4)", "ms/0*4+a/0+b/0*4",
              {"ms": "ms", "a": "a", "b": "b"})
    pj = e.job.release_nodes(keep_select="ncpus=1+ncpus=1")
    assert pj.exec_vnode == "(ms:ncpus=1)+(a:ncpus=1)"
    assert pj.exec_host == "ms/0*4+a/0"  # exec_host entries copied verbatim
    assert pj.schedselect == "1:ncpus=1+1:ncpus=1"


def test_pp928_i8_smallest_fit_order_by_ncpus_then_mem():
    e = start("execjob_launch", "(ms:ncpus=1)+(big:ncpus=4:mem=1gb)+(mid:ncpus=2:mem=4gb)+(small:ncpus=2:mem=2gb)",
              "ms/0+big/0*4+mid/0*2+small/0*2", {n: n for n in ("ms", "big", "mid", "small")})
    pj = e.job.release_nodes(keep_select="ncpus=1+ncpus=2+ncpus=2")
    assert pj.exec_vnode == "(ms:ncpus=1)+(small:ncpus=2)+(mid:ncpus=2)"
    assert pj.exec_host == "ms/0+small/0*2+mid/0*2"


def test_pp928_i8_keep_select_order_drives_new_exec_vnode():
    e = start("execjob_launch", "(ms:ncpus=1)+(a:ncpus=1)+(b:ncpus=3)", "ms/0+a/0+b/0*3",
              {"ms": "ms", "a": "a", "b": "b"})
    pj = e.job.release_nodes(keep_select="ncpus=1+ncpus=3+ncpus=1")
    assert pj.exec_vnode == "(ms:ncpus=1)+(b:ncpus=3)+(a:ncpus=1)"
    assert pj.exec_host == "ms/0+b/0*3+a/0"


def test_pp928_i8_one_to_one_never_two_chunks_from_one():
    e = start("execjob_launch", "(ms:ncpus=1)+(a:ncpus=4)+(b:ncpus=1)", "ms/0+a/0*4+b/0",
              {"ms": "ms", "a": "a", "b": "b"}, failed=("b",))
    assert e.job.release_nodes(keep_select="ncpus=1+ncpus=2+ncpus=2") is None


def test_pp928_i8_failed_mom_skipped_and_unknown_mom_not_used():
    e = start("execjob_launch", "(ms:ncpus=1)+(a:ncpus=1)+(b:ncpus=1)+(c:ncpus=1)", "ms/0+a/0+b/0+c/0",
              {"ms": "ms", "a": "a", "b": "b", "c": "c"}, failed=("a",))
    pbs._current.event.job.succeeded_mom_list.remove("b")  # b: neither failed nor succeeded
    pj = e.job.release_nodes(keep_select="ncpus=1+ncpus=1")
    assert pj.exec_vnode == "(ms:ncpus=1)+(c:ncpus=1)"


def test_pp928_i8_carves_needed_resources_from_chunk():
    # semantics doc examples (t6/t21, t14, t17)
    ev = ("(hostA:ncpus=1)+(hostD:ncpus=3:mem=2097152kb)"
          "+(hostE:mem=1048576kb:ncpus=1+hostE[0]:mem=1048576kb:ncpus=1)"
          "+(hostB[1]:mem=1048576kb+hostB[2]:mem=1048576kb:ncpus=1+hostB[3]:ncpus=1)")
    hosts = {"hostA": "hostA", "hostD": "hostD", "hostE": "hostE", "hostE[0]": "hostE",
             "hostB[1]": "hostB", "hostB[2]": "hostB", "hostB[3]": "hostB"}
    e = start("execjob_launch", ev, "hostA/0+hostD/0*3+hostE/0*2+hostB/0*2", hosts)
    # sorted usable chunks: A (head), E (2 cpus, 2gb), B (2 cpus, 2gb, later in exec_vnode), D (3 cpus)
    pj = e.job.release_nodes(keep_select="ncpus=1+ncpus=1:mem=1gb+ncpus=1:mem=1gb+ncpus=2:mem=2gb")
    assert pj.exec_vnode == ("(hostA:ncpus=1)+(hostE:mem=1048576kb:ncpus=1)"
                             "+(hostB[1]:mem=1048576kb+hostB[2]:ncpus=1)+(hostD:ncpus=2:mem=2097152kb)")
    assert pj.exec_host == "hostA/0+hostE/0*2+hostB/0*2+hostD/0*3"


def test_pp928_i8_size_need_smaller_than_vnode_written_in_kb():
    e = start("execjob_launch", "(ms:ncpus=2:mem=4gb)+(a:ncpus=2)", "ms/0*2+a/0*2", {"ms": "ms", "a": "a"})
    pj = e.job.release_nodes(keep_select="ncpus=1:mem=1gb")
    assert pj.exec_vnode == "(ms:ncpus=1:mem=1048576kb)"


def test_pp928_i8_ncpus_zero_and_unmentioned_resources_dropped():
    e = start("execjob_launch", "(ms:ncpus=1:mem=1gb)+(a:ncpus=0:mem=1gb)+(b:ncpus=1)", "ms/0+a/0*0+b/0",
              {"ms": "ms", "a": "a", "b": "b"})
    pj = e.job.release_nodes(keep_select="ncpus=1+ncpus=0:mem=1gb")
    assert pj.exec_vnode == "(ms:ncpus=1)+(a:mem=1gb)"


def test_pp928_i8_other_resources_kept_in_schedselect_not_matched():
    e = start("execjob_launch", "(ms:ncpus=1)+(a:ncpus=1)+(b:ncpus=1)", "ms/0+a/0+b/0",
              {"ms": "ms", "a": "a", "b": "b"})
    pj = e.job.release_nodes(keep_select="ncpus=1:mpiprocs=2+ncpus=1:host=b")
    assert pj.exec_vnode == "(ms:ncpus=1)+(a:ncpus=1)"  # host= plays no part in matching
    assert pj.schedselect == "1:ncpus=1:mpiprocs=2+1:ncpus=1:host=b"


def test_pp928_i8_unsatisfiable_returns_none_with_need_have_logs():
    e = start("execjob_launch", "(ms:ncpus=3)+(a:ncpus=3)", "ms/0*3+a/0*3", {"ms": "ms", "a": "a"})
    assert e.job.release_nodes(keep_select="ncpus=3+ncpus=5") is None
    records = pbs._current.logs
    assert [r[3] for r in records] == [
        "could not satisfy select chunk (ncpus=5 ssi=0 mem=0 vmem=0 naccels=0 accel_mem=0)",
        "NEED chunks for keep_select (ncpus=3+ncpus=5)",
        "HAVE chunks from job's exec_vnode: ",
    ]
    assert all(r[:3] == [0x0100, "Job", "20.borg"] for r in records)
    assert pbs._outcome()["job"] == {}


def test_pp928_i8_all_sisters_failed_like_transcript_18():
    # g_reliable_job_startup_2nodes.txt: both vnodes on the failed host
    e = start("execjob_launch", "(vm:ncpus=1)+(vm:ncpus=1)+(vm-m2:ncpus=1)", "vm/0+vm/1+vm/2",
              {"vm": "vm", "vm-m2": "vm"}, failed=("vm",))
    assert e.job.release_nodes(keep_select="1:ncpus=1+1:ncpus=1") is None
    assert log_messages() == [
        "could not satisfy select chunk (ncpus=1 ssi=0 mem=0 vmem=0 naccels=0 accel_mem=0)",
        "NEED chunks for keep_select (1:ncpus=1+1:ncpus=1)",
        "HAVE chunks from job's exec_vnode: ",
    ]


def test_pp928_i8_first_chunk_must_land_on_primary_mom_chunk():
    e = start("execjob_launch", "(ms:ncpus=1)+(a:ncpus=4)", "ms/0+a/0*4", {"ms": "ms", "a": "a"})
    assert e.job.release_nodes(keep_select="ncpus=4") is None
    assert log_messages()[0] == ("could not satisfy 1st select chunk (ncpus=4 ssi=0 mem=0 vmem=0 naccels=0 "
                                 "accel_mem=0)  with first available chunk")
    assert log_messages()[1] == "NEED chunks for keep_select (ncpus=4)"


def test_pp928_i8_not_tolerant_returns_job_unchanged():
    e = start("execjob_launch", SEED_EXEC_VNODE, SEED_EXEC_HOST, seed_hosts(), failed=("federer",), tolerate="none")
    pj = e.job.release_nodes(keep_select=SEED_SITE)
    assert pj is e.job
    assert pj.exec_vnode == SEED_EXEC_VNODE
    assert pbs._current.logs == [[0x0006, "Hook", "pbs_python",
                                  "20.borg: no nodes released as job does not tolerate node failures"]]
    assert pbs._outcome()["job"] == {}


def test_pp928_i8_unset_tolerate_is_not_tolerant():
    e = start("execjob_prologue", SEED_EXEC_VNODE, SEED_EXEC_HOST, seed_hosts(), tolerate=None)
    assert e.job.release_nodes(keep_select=SEED_SITE) is e.job
    assert "does not tolerate node failures" in log_messages()[0]


def test_pp928_i8_wrong_event_returns_none():
    for event in ("execjob_begin", "execjob_epilogue", "execjob_end", "execjob_resize"):
        e = start(event, SEED_EXEC_VNODE, SEED_EXEC_HOST, seed_hosts(), failed=("federer",))
        assert e.job.release_nodes(keep_select=SEED_SITE) is None
        assert pbs._current.logs == []


def test_pp928_i8_nothing_changed_returns_job_without_changes():
    e = start("execjob_launch", "(vm:ncpus=1)", "vm/0", {"vm": "vm"})
    assert e.job.release_nodes(keep_select="1:ncpus=1") == e.job
    assert pbs._outcome()["job"] == {}


def test_pp928_i8_empty_keep_select_returns_none():
    e = start("execjob_launch", SEED_EXEC_VNODE, SEED_EXEC_HOST, seed_hosts())
    assert e.job.release_nodes(keep_select="") is None
    assert log_messages() == ["empty keep_select value"]


def test_pp928_i8_unknown_resource_in_keep_select_fails_schedselect():
    e = start("execjob_launch", "(ms:ncpus=1)+(a:ncpus=1)", "ms/0+a/0", {"ms": "ms", "a": "a"})
    assert e.job.release_nodes(keep_select="ncpus=1:nosuchres=1") is None


def test_pp928_i8_exec_host2_stands_in_when_exec_host_missing():
    e = start("execjob_launch", "(ms:ncpus=1)+(a:ncpus=1)", None, {"ms": "ms", "a": "a"},
              exec_host2="ms:15002/0+a:15002/0")
    pj = e.job.release_nodes(keep_select="ncpus=1")
    assert pj.exec_host == "ms:15002/0" and pj.exec_host2 == "ms:15002/0"
