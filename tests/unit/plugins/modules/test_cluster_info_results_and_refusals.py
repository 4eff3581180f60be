"""hpc.pbs.cluster_info results and refusals the other tests leave unchecked.

The tests cover edges of ``plugins/modules/cluster_info.py`` that the other unit tests leave
unchecked: the keys of a host without PBS, where ``pbs_version`` comes from, a daemon whose
lock file names a live pid, a repeated mom option (pbs_mom's last line wins), what the server
holds in ``default_qsub_arguments`` (OpenPBS 23.06 accepts ``-W tolerate_node_failures=bogus``
and lists it, transcript d_), the failure texts naming the PBS command, the held-job entry, the
hook-file comparison (the server's ``set_hook_name()`` takes a name with a dot) and the
argument spec's choices and element types. qmgr, pbsnodes and qstat are faked at the process
boundary.
"""
import hashlib
import json
import os

import pytest

from ansible_collections.hpc.pbs.plugins.modules import cluster_info
from hpc_pbs_module_fakes import run_module

PBS_CONF = "PBS_SERVER=vm\nPBS_START_SERVER=1\nPBS_START_MOM=1\nPBS_START_SCHED=1\n"
# What `qsub` runs into when default_qsub_arguments is not qsub options (transcript d_).
WARNING_END = "; every qsub may fail"


def sha(data):
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def pbs(pbs_install, fake_qmgr):
    """A server host (PBS_START_SERVER=1, mom_priv) answering qmgr like OpenPBS 23.06."""
    pbs_install.write_conf(PBS_CONF)
    (pbs_install.home / "mom_priv" / "hooks").mkdir(parents=True)
    fake = fake_qmgr()
    fake.add("server", "vm", {"pbs_version": "23.06.06",
                              "default_qsub_arguments": "-W tolerate_node_failures=job_start"})
    fake.add("sched", "default", {"job_run_wait": "runjob_hook"})
    fake.home, fake.install = pbs_install.home, pbs_install
    return fake


def run(pbs, **args):
    args.setdefault("pbs_conf_file", pbs.conf)
    return run_module(cluster_info.main, args, check_mode=True)


# -- a host without PBS, versions, daemons -------------------------------------------------

def test_a_host_without_pbs_reports_every_key_empty(tmp_path, monkeypatch):
    monkeypatch.setenv("PBS_CONF_FILE", str(tmp_path / "none"))
    code, result = run_module(cluster_info.main, {})
    assert code == 0, result
    assert (result["pbs_version"], result["daemons"], result["mom"], result["server"]) == (None, {}, None, None)
    assert result["pbs_conf"]["path"] == str(tmp_path / "none")


def test_the_pbs_conf_path_read_is_reported(pbs):
    code, result = run(pbs, query_server="never")
    assert code == 0 and result["pbs_conf"]["path"] == pbs.conf, result


def test_the_version_file_gives_pbs_version_without_the_server(pbs):
    (pbs.home / "pbs_version").write_text("23.06.06\n")
    code, result = run(pbs, query_server="never")
    assert code == 0 and result["pbs_version"] == "23.06.06" and not pbs.calls, result


def test_the_servers_pbs_version_is_used_when_the_version_file_is_missing(pbs):
    code, result = run(pbs)
    assert code == 0, result
    assert result["pbs_version"] == "23.06.06"
    assert result["server"]["pbs_version"] == "23.06.06"


def test_a_daemon_whose_lock_file_names_a_live_pid_runs(pbs):
    """The server writes its pid in server_priv/server.lock."""
    (pbs.home / "server_priv" / "server.lock").write_text("%d\n" % os.getpid())
    code, result = run(pbs, query_server="never")
    assert code == 0, result
    assert result["daemons"]["server"] == dict(configured=True, running=True, pid=os.getpid())
    assert result["daemons"]["mom"] == dict(configured=True, running=False, pid=None)


def test_the_server_is_queried_when_server_priv_exists_though_not_started_here(pbs):
    pbs.install.write_conf("PBS_SERVER=vm\nPBS_START_SERVER=0\nPBS_START_MOM=1\n")
    code, result = run(pbs)
    assert code == 0 and result["daemons"]["server"]["configured"] is False, result
    assert result["server"] is not None and len(pbs.calls) == 1


# -- the mom ----------------------------------------------------------------------------------

def test_the_last_of_repeated_mom_options_is_the_value(pbs):
    """pbs_mom reads its config line by line: a repeated $option ends with the last value."""
    (pbs.home / "mom_priv" / "config").write_text(
        "$job_launch_delay 45\n$job_launch_delay 50\n$job_launch_delay 55\n")
    code, result = run(pbs, query_server="never")
    assert code == 0, result
    assert result["mom"]["job_launch_delay"] == dict(value=55, source="mom_config", default=30, hooks=[],
                                                     line="$job_launch_delay 55", after_sighup=55,
                                                     why="mom_priv/config line $job_launch_delay 55")


# -- the server -------------------------------------------------------------------------------

def test_the_server_reports_its_default_qsub_arguments_and_version(pbs):
    code, result = run(pbs)
    assert code == 0, result
    server = result["server"]
    assert server["default_qsub_arguments"] == "-W tolerate_node_failures=job_start"
    assert (server["tolerate_node_failures"], server["pbs_version"]) == ("job_start", "23.06.06")


def test_a_tolerate_value_qsub_refuses_is_reported_as_the_server_holds_it(pbs):
    """OpenPBS 23.06 takes and lists ``-W tolerate_node_failures=bogus`` (every qsub then
    fails with ``illegal -W value``): the report shows what the server holds."""
    pbs.objects[("server", "vm")]["default_qsub_arguments"] = "-W tolerate_node_failures=bogus"
    code, result = run(pbs)
    assert code == 0, result
    assert result["server"]["tolerate_node_failures"] == "bogus"


def test_default_qsub_arguments_that_are_not_qsub_options_warn(pbs):
    pbs.objects[("server", "vm")]["default_qsub_arguments"] = "-r n /bin/sleep"
    code, result = run(pbs)
    assert code == 0, result
    assert result["server"]["tolerate_node_failures"] is None
    assert result["server"]["default_qsub_arguments"] == "-r n /bin/sleep"
    warning, = [w for w in result["warnings"] if "default_qsub_arguments" in w]
    assert warning.startswith("the server's default_qsub_arguments cannot be parsed as qsub options (")
    assert warning.endswith(WARNING_END), warning


class GarbledQmgr(object):
    """qmgr exiting 0 with a listing whose attribute line has no object header."""

    def __init__(self):
        self.calls = []

    def run_command(self, module, args, **kwargs):
        self.calls.append(list(args))
        return 0, "Max open servers: 49\n    scheduling = True\n", ""


def test_a_listing_that_cannot_be_parsed_fails_the_module(pbs, answer_commands):
    answer_commands(GarbledQmgr())
    code, result = run(pbs)
    assert code == 1 and result["msg"].startswith("cannot parse qmgr's listing: "), result


# -- health snapshot ----------------------------------------------------------------------------

class FakeJsonCommands(object):
    """pbsnodes / qstat ``-F json`` answering ``answers[name]`` = (rc, stdout, stderr)."""

    def __init__(self, bin_dir):
        self.bin = bin_dir
        self.answers = {}
        self.calls = []

    def run_command(self, module, args, **kwargs):
        self.calls.append(list(args))
        return self.answers[os.path.basename(args[0])]


@pytest.fixture
def json_pbs(pbs, answer_commands):
    fake = answer_commands(FakeJsonCommands(str(pbs.install.exec_dir / "bin")))
    fake.home = pbs.home
    return fake


def pbs_json(section, objects):
    return json.dumps({"timestamp": 1795535722, "pbs_version": "23.06.06", "pbs_server": "vm",
                       section: objects})


def test_a_failing_pbsnodes_is_named_by_its_path(json_pbs):
    json_pbs.answers["pbsnodes"] = (1, "", "pbsnodes: cannot connect to server vm, error=15010\n")
    code, result = run(json_pbs, query_server="never", gather=["nodes"])
    assert code == 1
    assert result["msg"] == ("cannot read the vnodes: %s/pbsnodes exited 1; check that the PBS server runs "
                             "and this host may query it" % json_pbs.bin)


def test_a_qstat_printing_no_json_is_named_by_its_path(json_pbs):
    json_pbs.answers["qstat"] = (0, "Job id  Name  User\n", "")
    code, result = run(json_pbs, query_server="never", gather=["held_jobs"])
    assert code == 1
    assert result["msg"].startswith("cannot read the jobs: %s/qstat printed no JSON (" % json_pbs.bin), result


def test_a_held_job_entry_holds_its_state_comment_and_run_count(json_pbs):
    """A job held by the server after too many failed starts (Hold_Types s, job_state H)."""
    json_pbs.answers["qstat"] = (0, pbs_json("Jobs", {"8.vm": {
        "Hold_Types": "s", "job_state": "H", "run_count": 21,
        "comment": "job held, too many failed attempts to run"}}), "")
    code, result = run(json_pbs, query_server="never", gather=["held_jobs"])
    assert code == 0, result
    assert result["health"]["held_jobs"] == {"8.vm": dict(
        hold_types="s", job_state="H", comment="job held, too many failed attempts to run", run_count=21)}


def server_hook_files(home, files):
    for name, data in files.items():
        (home / "server_priv" / "hooks" / name).write_bytes(data)


def test_a_mom_with_another_copy_of_a_hook_not_required_differs(json_pbs):
    """A hook named with a dot (the server's set_hook_name() takes it) is one hook."""
    server_hook_files(json_pbs.home, {"site.audit.HK": b"hk", "site.audit.PY": b"new"})
    moms = {"mom1": {"site.audit.HK": sha(b"hk"), "site.audit.PY": sha(b"old")},
            "mom2": {"site.audit.HK": sha(b"hk"), "site.audit.PY": sha(b"new")}}
    code, result = run(json_pbs, query_server="never", gather=["hook_files"], mom_hook_files=moms)
    assert code == 0, result
    assert result["problems"] == [{"kind": "hook_files", "name": "mom1",
                                   "detail": "mom mom1: hook files differ from the server's: site.audit.PY"}]


def test_a_mom_not_read_does_not_stop_the_comparison_of_the_next(json_pbs):
    server_hook_files(json_pbs.home, {"rjs.PY": b"new"})
    moms = {"mom1": None, "mom2": {"rjs.PY": sha(b"old")}}
    code, result = run(json_pbs, query_server="never", gather=["hook_files"], mom_hook_files=moms,
                       required_hooks=["rjs"])
    assert code == 0, result
    assert [p["name"] for p in result["problems"]] == ["mom2"]


def test_hook_file_problems_come_after_the_vnode_problems(json_pbs):
    json_pbs.answers["pbsnodes"] = (0, pbs_json("nodes", {"mom2": {
        "Mom": "mom2", "state": "down", "comment": "node down: communication closed"}}), "")
    server_hook_files(json_pbs.home, {"rjs.PY": b"new"})
    code, result = run(json_pbs, query_server="never", gather=["nodes", "hook_files"],
                       mom_hook_files={"mom2": {"rjs.PY": sha(b"old")}})
    assert code == 0, result
    assert [(p["kind"], p["name"]) for p in result["problems"]] == [("vnode", "mom2"), ("hook_files", "mom2")]


# -- argument spec ------------------------------------------------------------------------------

def test_an_unknown_gather_part_is_refused(json_pbs):
    code, result = run(json_pbs, query_server="never", gather=["nodes", "queues"])
    assert code == 1 and "gather" in result["msg"] and "queues" in result["msg"], result
    assert json_pbs.calls == []


def test_a_baseline_problem_that_is_not_a_dict_is_refused(json_pbs):
    json_pbs.answers["pbsnodes"] = (0, pbs_json("nodes", {}), "")
    code, result = run(json_pbs, query_server="never", gather=["nodes"], baseline_problems=[5])
    assert code == 1 and "baseline_problems" in result["msg"] and "dict" in result["msg"], result
    assert json_pbs.calls == []
