"""plugins/module_utils/cluster/health.py: the snapshot readers and the problem kinds are registries.

A problem kind is one :class:`health.ProblemKind` entry: these tests add a kind the
collection does not have (only in the test, through the registry) and see
``hpc.pbs.cluster_info`` read, report and compare it with no other change; they also pin
that the registries are what the module offers (``gather``) and documents (``problems``)."""
import json

import pytest
import yaml
from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpc.pbs.plugins.module_utils.cluster import health
from ansible_collections.hpc.pbs.plugins.modules import cluster_info
from hpc_pbs_module_fakes import run_module

PREFIX = "hpc.pbs rollout "


def pbsnodes_json(nodes):
    return json.dumps({"timestamp": 1795535722, "pbs_version": "23.06.06", "pbs_server": "srv",
                       "nodes": dict((name, {"Mom": name, "Port": 15002, "state": state,
                                             "resources_available": {"ncpus": 1}, "jobs": jobs})
                                     for name, (state, jobs) in nodes.items())})


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    """A server host whose pbsnodes prints ``cluster["nodes"]`` ({name: (state, jobs)}) and
    whose qstat prints no job; every command run in ``cluster["calls"]``."""
    home, exec_dir = tmp_path / "home", tmp_path / "exec"
    for sub in ("server_priv/hooks", "mom_priv/hooks"):
        (home / sub).mkdir(parents=True)
    conf = tmp_path / "pbs.conf"
    conf.write_text("PBS_SERVER=srv\nPBS_START_SERVER=1\nPBS_HOME=%s\nPBS_EXEC=%s\n" % (home, exec_dir))
    for var in ("PBS_HOME", "PBS_EXEC", "PBS_CONF_FILE"):
        monkeypatch.delenv(var, raising=False)
    state = {"conf": str(conf), "calls": [],
             "nodes": {"mom1": ("free", []), "mom2": ("job-busy", ["7.srv"]), "mom3": ("offline", [])}}
    bin_dir = str(exec_dir / "bin")

    def run_command(self, args, **kwargs):  # pylint: disable=unused-argument
        state["calls"].append(list(args))
        if args == [bin_dir + "/pbsnodes", "-a", "-F", "json"]:
            return 0, pbsnodes_json(state["nodes"]), ""
        if args == [bin_dir + "/qstat", "-f", "-t", "-F", "json"]:
            return 0, json.dumps({"Jobs": {}}), ""
        raise AssertionError("unexpected command %r" % args)

    monkeypatch.setattr(AnsibleModule, "run_command", run_command)
    return state


def run(cluster, **args):
    args.update(pbs_conf_file=cluster["conf"], query_server="never")
    code, result = run_module(cluster_info.main, args, check_mode=True)
    assert code == 0, result
    return result


def busy_vnodes(nodes, params):
    """A kind the collection does not have: a vnode running a job (``own_comment_prefix``
    passed through to show the classifier gets the module's parameters)."""
    return [(name, "vnode %s runs %s (%s)" % (name, ",".join(node["jobs"]), params["own_comment_prefix"]))
            for name, node in sorted(nodes.items()) if node["jobs"]]


def test_a_kind_added_to_the_registry_is_reported_and_compared(cluster, monkeypatch):
    monkeypatch.setattr(health, "PROBLEM_KINDS",
                        health.PROBLEM_KINDS + (health.ProblemKind("busy_vnode", "nodes", busy_vnodes),))
    result = run(cluster, gather=["nodes"], own_comment_prefix=PREFIX)
    assert result["problems"] == [
        {"kind": "vnode", "name": "mom3", "detail": "vnode mom3 is offline"},
        {"kind": "busy_vnode", "name": "mom2", "detail": "vnode mom2 runs 7.srv (%s)" % PREFIX}]
    # new_problems compares the new kind by (kind, name) as every other.
    cluster["nodes"]["mom1"] = ("job-busy", ["8.srv"])
    after = run(cluster, gather=["nodes"], own_comment_prefix=PREFIX, baseline_problems=result["problems"])
    assert after["new_problems"] == [{"kind": "busy_vnode", "name": "mom1",
                                      "detail": "vnode mom1 runs 8.srv (%s)" % PREFIX}]


def test_problems_follow_the_registry_order(cluster, monkeypatch):
    monkeypatch.setattr(health, "PROBLEM_KINDS",
                        (health.ProblemKind("busy_vnode", "nodes", busy_vnodes),) + health.PROBLEM_KINDS)
    result = run(cluster, gather=["nodes"])
    assert [(each["kind"], each["name"]) for each in result["problems"]] == [("busy_vnode", "mom2"), ("vnode", "mom3")]


def test_a_kind_whose_part_was_not_gathered_is_not_classified(cluster, monkeypatch):
    def refuse(part, params):
        raise AssertionError("classified %r, which was not gathered" % (part,))
    monkeypatch.setattr(health, "PROBLEM_KINDS",
                        health.PROBLEM_KINDS + (health.ProblemKind("held_twice", "held_jobs", refuse),))
    result = run(cluster, gather=["nodes"])
    assert [each["kind"] for each in result["problems"]] == ["vnode"]
    assert [call[0].rsplit("/", 1)[1] for call in cluster["calls"]] == ["pbsnodes"]


def test_a_registry_without_a_kind_reports_none_of_it(cluster, monkeypatch):
    monkeypatch.setattr(health, "PROBLEM_KINDS", tuple(each for each in health.PROBLEM_KINDS if each.kind != "vnode"))
    assert run(cluster, gather=["nodes", "held_jobs"])["problems"] == []


def test_each_kind_reads_a_part_the_module_gathers():
    parts = [part for part, dummy in health.SNAPSHOT_READERS]
    assert len(set(parts)) == len(parts)
    kinds = [each.kind for each in health.PROBLEM_KINDS]
    assert len(set(kinds)) == len(kinds)
    assert all(each.reads in parts for each in health.PROBLEM_KINDS), health.PROBLEM_KINDS


def test_the_module_offers_and_documents_what_the_registries_hold():
    doc = yaml.safe_load(cluster_info.DOCUMENTATION)
    assert doc["options"]["gather"]["choices"] == list(health.SNAPSHOT_PARTS)
    returned = " ".join(yaml.safe_load(cluster_info.RETURN)["problems"]["description"].split())
    for each in health.PROBLEM_KINDS:
        assert "C(%s) - reads C(%s)," % (each.kind, each.reads) in returned, (each, returned)
