"""mockpbs.harness: the hook test front door over mockpbs.hookrun, exercised with the
PP-928 seed's walkthrough (borg, federer, lendl, agassi, sampras)."""
import json
import re

import pytest

from mockpbs import harness, hookrun

SEED_HOSTS = ("borg", "federer", "lendl", "agassi", "sampras")
SEED_EXEC_VNODE = ("(borg:ncpus=3:mem=1048576kb)+(federer:ncpus=2:mem=2097152kb)+(lendl:ncpus=2:mem=2097152kb)"
                   "+(agassi:ncpus=1:mem=3145728kb)+(sampras:ncpus=1:mem=3145728kb)")
SEED_EXEC_HOST = "borg/0*3+federer/0*2+lendl/0*2+agassi/0+sampras/0"
SEED_SELECT = "1:ncpus=3:mem=1gb+2:ncpus=2:mem=2gb+2:ncpus=1:mem=3gb"
SEED_SITE = "1:ncpus=3:mem=1gb+1:ncpus=2:mem=2gb+1:ncpus=1:mem=3gb"
# The seed's launch.py; the page indents `e.reject(...)` by 3 spaces (an IndentationError).
SEED_LAUNCH_HOOK = """\
import pbs
e=pbs.event()

if 'PBS_NODEFILE' not in e.env:

    e.accept()

j = e.job
pj = j.release_nodes(keep_select=e.job.Resource_List["site"])

if pj is None:          # was not successful pruning the nodes

    j.rerun()        # rerun (requeue) the job

    e.reject("something went wrong pruning the job back to its original select request")
"""
SEED_QUEUEJOB_HOOK = """\
import pbs
e=pbs.event()
j = e.job
j.tolerate_node_failures = "job_start"
e.job.Resource_List["site"] = str(e.job.Resource_List["select"])
new_select = e.job.Resource_List["select"].increment_chunks(1)
e.job.Resource_List["select"] = new_select
"""
LOG_LINE = re.compile(r"^\d\d/\d\d/\d{4} \d\d:\d\d:\d\d;[0-9a-f]{4};[^;]+;[^;]+;[^;]+;.*$")


def seed_job(**extra):
    job = {"id": "20.borg", "exec_vnode": SEED_EXEC_VNODE, "exec_host": SEED_EXEC_HOST,
           "schedselect": SEED_SELECT, "tolerate_node_failures": "job_start",
           "Resource_List": {"select": SEED_SELECT, "site": SEED_SITE, "place": "scatter:excl"}}
    job.update(extra)
    return job


def seed_vnodes():
    return {host: {"host": host, "ncpus": 4, "mem": "16gb"} for host in SEED_HOSTS}


def test_harness_seed_walkthrough_prunes_federer_and_sampras():
    result = harness.run_hook(SEED_LAUNCH_HOOK, event="execjob_launch", job=seed_job(),
                              vnodes=seed_vnodes(), failed_hosts=["federer", "sampras"], local_host="borg")
    assert result.accepted is True, result.exception
    assert result.job["exec_vnode"] == (
        "(borg:ncpus=3:mem=1048576kb)+(lendl:ncpus=2:mem=2097152kb)+(agassi:ncpus=1:mem=3145728kb)")
    # The seed page prints agassi/0*2, a typo: exec_host entries are copied verbatim.
    assert result.job["exec_host"] == "borg/0*3+lendl/0*2+agassi/0"
    assert result.job["schedselect"] == SEED_SITE
    assert result.job["Resource_List"] == {"select": SEED_SELECT, "site": SEED_SITE, "place": "scatter:excl"}
    assert result.job["tolerate_node_failures"] == "job_start" and result.job["id"] == "20.borg"
    assert result.rerun is False and result.reject_message is None


def test_harness_seed_walkthrough_rejects_and_reruns_when_too_many_hosts_failed():
    result = harness.run_hook(SEED_LAUNCH_HOOK, job=seed_job(), vnodes=seed_vnodes(),
                              failed_hosts=["federer", "lendl", "sampras"], local_host="borg")
    assert result.accepted is False and result.rerun is True
    assert result.reject_message == "something went wrong pruning the job back to its original select request"
    assert result.job["exec_vnode"] == SEED_EXEC_VNODE
    assert "0100;pbs_python;Job;20.borg;NEED chunks for keep_select (%s)" % SEED_SITE in [
        line[20:] for line in result.log]


def test_harness_seed_queuejob_hook_runs_as_server_hook():
    result = harness.run_hook(SEED_QUEUEJOB_HOOK, event="queuejob",
                              job={"id": "20.borg", "Resource_List": {
                                  "select": "ncpus=3:mem=1gb+ncpus=2:mem=2gb+ncpus=1:mem=3gb"}})
    assert result.accepted is True, result.exception
    assert result.job["tolerate_node_failures"] == "job_start"
    assert result.job["Resource_List"] == {"select": SEED_SELECT,
                                           "site": "ncpus=3:mem=1gb+ncpus=2:mem=2gb+ncpus=1:mem=3gb"}


def test_harness_task_launch_without_nodefile_is_accepted_unchanged():
    result = harness.run_hook(SEED_LAUNCH_HOOK, job=seed_job(), vnodes=seed_vnodes(),
                              failed_hosts=["federer"], env={"HOME": "/home/u"})
    assert result.accepted is True and result.changes == {} and result.job == seed_job()


def test_harness_log_lines_use_pbs_format_for_mom_and_server_hooks():
    body = "import pbs\npbs.logmsg(pbs.LOG_DEBUG, 'hello')\npbs.logjobmsg(pbs.event().job.id, 'job line')\n"
    mom = harness.run_hook(body, event="execjob_begin", job=seed_job())
    assert [line[20:] for line in mom.log] == ["0006;pbs_python;Hook;pbs_python;hello",
                                               "0008;pbs_python;Job;20.borg;job line"]
    assert all(LOG_LINE.match(line) for line in mom.log)
    server = harness.run_hook(body, event="queuejob", job={"id": "7.srv"})
    assert [line[20:] for line in server.log] == ["0006;Server@srv;Hook;Server@srv;hello",
                                                  "0008;Server@srv;Job;7.srv;job line"]


def test_harness_primary_mom_and_mom_lists():
    body = """
import pbs
e = pbs.event()
j = e.job
pbs.event().reject("%s|%s|%s|%s|%s" % (j.in_ms_mom(), ",".join(j.failed_mom_list),
    ",".join(j.succeeded_mom_list), ",".join(sorted(e.vnode_list)), ",".join(sorted(e.vnode_list_fail))))
"""
    on_primary = harness.run_hook(body, job=seed_job(), vnodes=seed_vnodes(), failed_hosts=["sampras"])
    # vnode_list keeps the failed vnodes (they are in vnode_list_fail too), as the mom writes it.
    assert on_primary.reject_message == ("True|sampras|borg,federer,lendl,agassi|"
                                         "agassi,borg,federer,lendl,sampras|sampras")
    on_sister = harness.run_hook(body, job=seed_job(), vnodes=seed_vnodes(), local_host="lendl")
    assert on_sister.reject_message.startswith("False||borg,federer,lendl,agassi,sampras|")


def test_harness_vnodes_default_from_exec_vnode_with_assigned_resources():
    body = """
import pbs
v = pbs.event().vnode_list_fail["federer"]
pbs.event().reject("%s %s %s %s" % (v.host, v.resources_assigned["ncpus"], v.resources_assigned["mem"],
                                    v.resources_available["ncpus"]))
"""
    result = harness.run_hook(body, job=seed_job(), failed_hosts=["federer"])
    assert result.reject_message == "federer 2 2097152kb 2"


def test_harness_hook_config_dict_is_json_at_hook_config_filename():
    body = """
import os, pbs
with open(pbs.hook_config_filename) as f:
    text = f.read()
pbs.event().reject(text if os.environ["PBS_HOOK_CONFIG_FILE"] == pbs.hook_config_filename else "mismatch")
"""
    result = harness.run_hook(body, job=seed_job(), hook_config={"increment": 2, "queues": ["workq"]})
    assert json.loads(result.reject_message) == {"increment": 2, "queues": ["workq"]}
    raw = harness.run_hook(body, job=seed_job(), hook_config="increment: 2\n")
    assert raw.reject_message == "increment: 2\n"


def test_harness_no_hook_config_means_none():
    result = harness.run_hook("import pbs\npbs.event().reject(repr(pbs.hook_config_filename))\n", job=seed_job())
    assert result.reject_message == "None"


def test_harness_alarm_kills_the_hook():
    result = harness.run_hook("import time\ntime.sleep(30)\n", event="execjob_begin", job=seed_job(), alarm=1)
    assert result.alarm is True and result.accepted is False


def test_harness_exception_rejects_with_traceback():
    result = harness.run_hook("raise KeyError('nope')\n", job=seed_job())
    assert result.accepted is False and "KeyError: 'nope'" in result.exception


def test_harness_unset_attribute_is_gone_from_job():
    result = harness.run_hook("import pbs\npbs.event().job.tolerate_node_failures = None\n",
                              event="queuejob", job=seed_job())
    assert "tolerate_node_failures" not in result.job and result.changes == {"tolerate_node_failures": None}


def test_harness_launch_parameters_reported():
    body = "import pbs\ne = pbs.event()\ne.env['EXTRA'] = '1'\ne.argv = ['/bin/sh', '-c', 'true']\n"
    result = harness.run_hook(body, job=seed_job())
    assert result.env["EXTRA"] == "1" and result.env["PBS_JOBID"] == "20.borg"
    assert result.env["PBS_NODEFILE"] == "/var/spool/pbs/aux/20.borg"
    assert result.argv == ["/bin/sh", "-c", "true"] and result.progname == "/bin/bash"


def test_harness_uses_hookrun_underneath(monkeypatch):
    calls = []
    real = hookrun.run_hook

    def spy(hook, event, context, pbs_home, log=None):
        calls.append((event, context["hostname"], context["in_ms_mom"]))
        return real(hook, event, context, pbs_home, log)

    monkeypatch.setattr(hookrun, "run_hook", spy)
    harness.run_hook("x = 1\n", job=seed_job(), local_host="agassi")
    assert calls == [("execjob_launch", "agassi", False)]


def test_harness_rejects_unknown_failed_host_and_event():
    with pytest.raises(ValueError, match="failed host 'nadal' is not a host of the job"):
        harness.run_hook("x = 1\n", job=seed_job(), failed_hosts=["nadal"])
    with pytest.raises(ValueError, match="unknown hook event"):
        harness.run_hook("x = 1\n", event="execjob_bogus", job=seed_job())
