"""Moms with several vnodes (mom_priv/config.d vnode definition files): what they report
in mom_hello, and pruning across several vnodes per host (release_nodes semantics 2-4)."""
import pytest

from mockpbs.mom import vnodedefs

MOMA_DEFS = """$configversion 2
moma: resources_available.ncpus = 0
moma[0]: resources_available.ncpus = 1
moma[0]: resources_available.mem = 1gb
moma[1]: resources_available.ncpus = 1
moma[1]: sharing = "default_excl"
"""
MOMB_DEFS = """$configversion 2
momb: resources_available.ncpus = 0
momb[0]: resources_available.ncpus = 1
momb[1]: resources_available.ncpus = 1
"""
LAUNCH_HOOK = '''import pbs
e = pbs.event()
j = e.job
for vn in sorted(e.vnode_list_fail):
    pbs.logjobmsg(j.id, "launch: found vnode_list_fail[%s]" % vn)
if "PBS_NODEFILE" in e.env and j.in_ms_mom():
    if j.release_nodes(keep_select=j.Resource_List["site"]) is None:
        e.reject("unsuccessful at LAUNCH")
e.accept()
'''
FAIL_BEGIN_ON_MOMB = '''import pbs
if pbs.get_local_nodename() == "momb":
    pbs.event().reject("simulated execjob_begin failure on momb")
pbs.event().accept()
'''


def test_vnode_definition_files_parse_like_pbs_mom_s_insert():
    assert vnodedefs.is_vnode_definition("# site file\n\n$configversion 2\nmoma[0]: resources_available.ncpus = 1\n")
    assert not vnodedefs.is_vnode_definition("$clienthost srv\n")
    assert vnodedefs.parse_vnode_text(MOMA_DEFS) == {
        "moma": {"resources_available": {"ncpus": "0"}},
        "moma[0]": {"resources_available": {"ncpus": "1", "mem": "1gb"}},
        "moma[1]": {"resources_available": {"ncpus": "1"}, "sharing": "default_excl"},
    }


def test_mom_hello_reports_config_d_vnodes_and_keeps_single_vnode_fields(mom_cluster):
    c = mom_cluster(names=("moma",))
    c.write("moma", "mom_priv/config.d/vnodes", MOMA_DEFS)
    c.write("moma", "mom_priv/config.d/zz_plain", "$clienthost srv\n")
    c.start()
    hello = c.server.wait_for("mom_hello")
    assert hello["node"] == "moma" and hello["host"] == "moma"
    assert hello["resources_available"] == {"ncpus": "0", "mem": hello["resources_available"]["mem"],
                                            "host": "moma", "vnode": "moma"}
    assert hello["vnodes"] == {
        "moma": hello["vnodes"]["moma"],
        "moma[0]": {"resources_available": {"ncpus": "1", "mem": "1gb", "host": "moma", "vnode": "moma[0]"}},
        "moma[1]": {"resources_available": {"ncpus": "1", "host": "moma", "vnode": "moma[1]"}, "sharing": "default_excl"},
    }
    assert hello["vnodes"]["moma"]["resources_available"]["ncpus"] == "0"


VNODES = {
    "moma[0]": {"host": "moma", "resources_available": {"ncpus": "1", "host": "moma", "vnode": "moma[0]"}},
    "moma[1]": {"host": "moma", "resources_available": {"ncpus": "1", "host": "moma", "vnode": "moma[1]"}},
    "momb[0]": {"host": "momb", "resources_available": {"ncpus": "1", "host": "momb", "vnode": "momb[0]"}},
    "momb[1]": {"host": "momb", "resources_available": {"ncpus": "1", "host": "momb", "vnode": "momb[1]"}},
    "momc": {"host": "momc", "resources_available": {"ncpus": "1", "host": "momc", "vnode": "momc"}},
}


def multi_vnode_job(c):
    """Chunk 1 spans both vnodes of moma, chunks 2 and 3 one vnode of momb each (padded from
    ``Resource_List["site"]``), chunk 4 on momc."""
    return c.job(Resource_List={"select": "1:ncpus=2+3:ncpus=1", "ncpus": "5", "nodect": "4",
                                "place": "free", "site": "1:ncpus=2+1:ncpus=1"},
                 schedselect="1:ncpus=2+3:ncpus=1",
                 exec_vnode="(moma[0]:ncpus=1+moma[1]:ncpus=1)+(momb[0]:ncpus=1)+(momb[1]:ncpus=1)+(momc:ncpus=1)",
                 exec_host="moma/0*2+momb/0+momb/1+momc/0")


@pytest.fixture
def cluster(mom_cluster):
    c = mom_cluster()
    c.write("moma", "mom_priv/config.d/vnodes", MOMA_DEFS)
    c.write("momb", "mom_priv/config.d/vnodes", MOMB_DEFS)
    c.hook("launch", "execjob_launch", LAUNCH_HOOK)
    return c


def run(c):
    c.start()
    c.run_job(multi_vnode_job(c), vnodes=VNODES)


def test_prune_keeping_one_of_two_vnodes_of_a_host_updates_that_sister(cluster):
    run(cluster)
    update = cluster.server.wait_for("mom_job_update")
    assert update["exec_vnode"] == "(moma[0]:ncpus=1+moma[1]:ncpus=1)+(momb[0]:ncpus=1)"
    assert update["exec_host"] == "moma/0*2+momb/0"
    cluster.server.wait_for("mom_job_obit")
    cluster.wait_log("momb", "0008;pbs_mom;Job;17.srv;updated nodes info")
    assert "0008;pbs_mom;Job;17.srv;DELETE_JOB2 received" not in cluster.log("momb")
    cluster.wait_log("momc", "0008;pbs_mom;Job;17.srv;DELETE_JOB2 received")
    assert cluster.nodefile() == ["moma", "momb"]


def test_failed_multi_vnode_sister_puts_all_its_vnodes_in_vnode_list_fail(cluster):
    cluster.hook("failbegin", "execjob_begin", FAIL_BEGIN_ON_MOMB)
    run(cluster)
    update = cluster.server.wait_for("mom_job_update")
    assert update["exec_vnode"] == "(moma[0]:ncpus=1+moma[1]:ncpus=1)+(momc:ncpus=1)"
    assert update["exec_host"] == "moma/0*2+momc/0"
    cluster.server.wait_for("mom_job_obit")
    log = cluster.log("moma")
    assert "0008;pbs_python;Job;17.srv;launch: found vnode_list_fail[momb[0]]" in log
    assert "0008;pbs_python;Job;17.srv;launch: found vnode_list_fail[momb[1]]" in log
    assert not any("vnode_list_fail[moma" in line or "vnode_list_fail[momc" in line for line in log)
    cluster.wait_log("momc", "0008;pbs_mom;Job;17.srv;updated nodes info")
