"""PP-928 interface 5: pbs.event().vnode_list_fail, the vnodes of unhealthy moms with their
assigned resources, in execjob_prologue and execjob_launch only; offlining them is reported."""
import pytest

from mockpbs import harness

HOSTS = ("borg", "federer", "lendl", "agassi", "sampras")
JOB = {"id": "20.borg",
       "exec_vnode": ("(borg:ncpus=3:mem=1048576kb)+(federer:ncpus=2:mem=2097152kb)+(lendl:ncpus=2:mem=2097152kb)"
                      "+(agassi:ncpus=1:mem=3145728kb)+(sampras:ncpus=1:mem=3145728kb)"),
       "exec_host": "borg/0*3+federer/0*2+lendl/0*2+agassi/0+sampras/0",
       "schedselect": "1:ncpus=3:mem=1gb+2:ncpus=2:mem=2gb+2:ncpus=1:mem=3gb",
       "tolerate_node_failures": "job_start"}
VNODES = {h: {"host": h, "ncpus": 4, "mem": "16gb"} for h in HOSTS}
# The seed's loop, logging through logjobmsg so the lines can be checked.
OFFLINE_LOOP = """\
import pbs
e = pbs.event()
for vn in e.vnode_list_fail:
    v = e.vnode_list_fail[vn]
    pbs.logmsg(pbs.LOG_DEBUG, "offlining %s" % (vn,))
    v.state = pbs.ND_OFFLINE
"""
LIST_FAIL = """\
import pbs
e = pbs.event()
try:
    names = sorted(e.vnode_list_fail)
    e.reject("present:" + ",".join(names))
except pbs.EventIncompatibleError:
    e.reject("absent")
"""


@pytest.mark.parametrize("event", ["execjob_prologue", "execjob_launch"])
def test_pp928_i5_vnode_list_fail_present_in_prologue_and_launch(event):
    result = harness.run_hook(LIST_FAIL, event=event, job=JOB, vnodes=VNODES, failed_hosts=["federer", "sampras"])
    assert result.reject_message == "present:federer,sampras"


@pytest.mark.parametrize("event", ["execjob_begin", "execjob_epilogue", "execjob_end", "execjob_preterm",
                                   "execjob_resize", "queuejob"])
def test_pp928_i5_vnode_list_fail_absent_in_other_events(event):
    result = harness.run_hook(LIST_FAIL, event=event, job=JOB, vnodes=VNODES, failed_hosts=["federer"])
    assert result.reject_message == "absent"


@pytest.mark.parametrize("event", ["execjob_prologue", "execjob_launch"])
def test_pp928_i5_failed_vnodes_stay_in_vnode_list(event):
    # OpenPBS's mom writes every vnode of the job to vnode_list (run_hook in
    # src/resmom/mom_hook_func.c), the failed ones as well as in vnode_list_fail.
    body = "import pbs\npbs.event().reject(','.join(sorted(pbs.event().vnode_list)))\n"
    result = harness.run_hook(body, event=event, job=JOB, vnodes=VNODES, failed_hosts=["federer", "sampras"])
    assert result.reject_message == "agassi,borg,federer,lendl,sampras"


def test_pp928_i5_vnode_list_fail_holds_assigned_resources():
    body = ("import pbs\nv = pbs.event().vnode_list_fail['federer']\n"
            "pbs.event().reject('%s %s %s %s' % (v.name, v.resources_assigned['ncpus'], "
            "v.resources_assigned['mem'], v.resources_available['mem']))\n")
    result = harness.run_hook(body, job=JOB, vnodes=VNODES, failed_hosts=["federer"])
    assert result.reject_message == "federer 2 2097152kb 16gb"


@pytest.mark.parametrize("event", ["execjob_prologue", "execjob_launch"])
def test_pp928_i5_offlining_failed_vnodes_reported(event):
    result = harness.run_hook(OFFLINE_LOOP, event=event, job=JOB, vnodes=VNODES, failed_hosts=["federer", "sampras"])
    assert result.accepted is True, result.exception
    assert result.vnodes == {"federer": {"state": "offline"}, "sampras": {"state": "offline"}}
    assert [line[20:] for line in result.log] == ["0006;pbs_python;Hook;pbs_python;offlining federer",
                                                  "0006;pbs_python;Hook;pbs_python;offlining sampras"]


def test_pp928_i5_no_failed_hosts_means_empty_vnode_list_fail():
    result = harness.run_hook(LIST_FAIL, job=JOB, vnodes=VNODES)
    assert result.reject_message == "present:"


def test_pp928_i5_partly_failed_multi_vnode_host():
    job = {"id": "3.a", "exec_vnode": "(a[0]:ncpus=1+a[1]:ncpus=1)+(b[0]:ncpus=2)", "exec_host": "a/0*2+b/0*2",
           "schedselect": "1:ncpus=2+1:ncpus=2"}
    vnodes = {"a[0]": {"host": "a", "ncpus": 1}, "a[1]": {"host": "a", "ncpus": 1}, "b[0]": {"host": "b", "ncpus": 2}}
    result = harness.run_hook(LIST_FAIL, job=job, vnodes=vnodes, failed_hosts=["a"], local_host="b")
    assert result.reject_message == "present:a[0],a[1]"
