"""hpc.pbs.cluster_info ``gather``: the rollout's health snapshot from PBS's own JSON.

``pbsnodes -a -F json`` and ``qstat -f -t -F json`` are faked at the process boundary with
documents shaped as a real OpenPBS 23.06.06 prints them (a mom stopped: ``down,job-busy``
with the server's ``node down: communication closed`` comment)."""
import hashlib
import json

import pytest
from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpc.pbs.plugins.modules import cluster_info
from hpc_pbs_module_fakes import run_module

PREFIX = "hpc.pbs rollout "


def node(state, comment=None, jobs=None):
    attrs = {"Mom": "x", "Port": 15002, "state": state, "resources_available": {"ncpus": 1},
             "resources_assigned": {}}
    if jobs:
        attrs["jobs"] = jobs
    if comment is not None:
        attrs["comment"] = comment
    return attrs


def document(section, objects):
    return json.dumps({"timestamp": 1795535722, "pbs_version": "23.06.06", "pbs_server": "srv", section: objects})


class FakePbs(object):
    """pbsnodes / qstat printing ``nodes`` / ``jobs``; every call recorded in ``calls``."""

    def __init__(self, exec_dir):
        self.bin = str(exec_dir / "bin")
        self.nodes = {"mom1": node("free"), "mom2": node("free")}
        self.jobs = {}
        self.calls = []
        self.fail = None

    def run_command(self, module, args, **kwargs):
        assert isinstance(args, list)
        self.calls.append(list(args))
        if self.fail:
            return self.fail
        if args == [self.bin + "/pbsnodes", "-a", "-F", "json"]:
            return 0, document("nodes", self.nodes), ""
        if args[:4] == [self.bin + "/pbsnodes", "-v", "-F", "json"] and args[4:]:
            return 0, document("nodes", self.named_nodes(args[4:])), ""
        if args == [self.bin + "/qstat", "-f", "-t", "-F", "json"]:
            return 0, document("Jobs", self.jobs), ""
        raise AssertionError("unexpected command %r" % args)

    # The key real pbsnodes puts the refusal under: the vnode's name (23.06.06), or "Error"
    # (22.05.11, seen on the openpbs-22.05.11 backend).
    refusal_key = None

    def named_nodes(self, names):
        """What real pbsnodes -v -F json prints for ``names``: each vnode, an unknown one as
        ``{NAME: "Unknown node "}`` (and exit 0; src/cmds/pbsnodes.c, LISTSP)."""
        return dict((name, self.nodes.get(name, {self.refusal_key or name: "Unknown node "}))
                    for name in names)


@pytest.fixture
def pbs(tmp_path, monkeypatch):
    home, exec_dir = tmp_path / "home", tmp_path / "exec"
    for sub in ("server_priv/hooks", "mom_priv/hooks"):
        (home / sub).mkdir(parents=True)
    conf = tmp_path / "pbs.conf"
    conf.write_text("PBS_SERVER=srv\nPBS_START_SERVER=1\nPBS_HOME=%s\nPBS_EXEC=%s\n" % (home, exec_dir))
    for var in ("PBS_HOME", "PBS_EXEC", "PBS_CONF_FILE"):
        monkeypatch.delenv(var, raising=False)
    fake = FakePbs(exec_dir)
    monkeypatch.setattr(AnsibleModule, "run_command",
                        lambda self, args, **kw: fake.run_command(self, args, **kw))  # pylint: disable=unnecessary-lambda
    fake.conf, fake.home = str(conf), home
    return fake


def run(pbs, **args):
    args.setdefault("pbs_conf_file", pbs.conf)
    args.setdefault("query_server", "never")
    return run_module(cluster_info.main, args, check_mode=True)


def sha(data):
    return hashlib.sha256(data).hexdigest()


def test_without_gather_nothing_is_run(pbs):
    code, result = run(pbs)
    assert code == 0 and pbs.calls == []
    assert (result["health"], result["problems"], result["new_problems"]) == ({}, [], [])


def test_nodes_and_held_jobs_in_one_call_each(pbs):
    pbs.nodes["mom2"] = node("down,job-busy", "node down: communication closed", ["7.srv"])
    pbs.jobs = {"7.srv": {"Hold_Types": "n", "job_state": "R"},
                "8.srv": {"Hold_Types": "s", "job_state": "H", "run_count": 21,
                          "comment": "job held, too many failed attempts to run"},
                "9[1].srv": {"Hold_Types": "s", "job_state": "H", "run_count": 21}}
    code, result = run(pbs, gather=["nodes", "held_jobs"])
    assert code == 0, result
    assert len(pbs.calls) == 2
    assert result["changed"] is False
    assert result["health"]["nodes"]["mom2"] == {"state": ["down", "job-busy"],
                                                 "comment": "node down: communication closed", "jobs": ["7.srv"]}
    assert result["health"]["nodes"]["mom1"] == {"state": ["free"], "comment": None, "jobs": []}
    assert sorted(result["health"]["held_jobs"]) == ["8.srv", "9[1].srv"]
    assert result["problems"] == [
        {"kind": "vnode", "name": "mom2",
         "detail": "vnode mom2 is down,job-busy (comment: node down: communication closed)"},
        {"kind": "held_job", "name": "8.srv",
         "detail": "job 8.srv has a system hold (Hold_Types s, run_count 21) "
                   "(comment: job held, too many failed attempts to run)"},
        {"kind": "held_job", "name": "9[1].srv", "detail": "job 9[1].srv has a system hold (Hold_Types s, run_count 21)"},
    ]
    assert result["new_problems"] == []  # no baseline given


def test_own_offline_marks_are_no_problem(pbs):
    pbs.nodes["mom1"] = node("offline", PREFIX + "rjs-1: in progress (batch 1)")
    pbs.nodes["mom2"] = node("offline", "disk failure")
    code, result = run(pbs, gather=["nodes"], own_comment_prefix=PREFIX)
    assert [p["name"] for p in result["problems"]] == ["mom2"]
    code, result = run(pbs, gather=["nodes"])
    assert [p["name"] for p in result["problems"]] == ["mom1", "mom2"]


def test_new_problems_are_those_not_in_the_baseline(pbs):
    pbs.nodes["mom1"] = node("offline", "disk failure")
    code, before = run(pbs, gather=["nodes", "held_jobs"])
    pbs.nodes["mom2"] = node("down", "node down: communication closed")
    pbs.nodes["mom1"] = node("down,offline", "disk failure")  # worse, but known before
    code, after = run(pbs, gather=["nodes", "held_jobs"], baseline_problems=before["problems"])
    assert code == 0, after
    assert [p["name"] for p in after["problems"]] == ["mom1", "mom2"]
    assert after["new_problems"] == [p for p in after["problems"] if p["name"] == "mom2"]
    code, same = run(pbs, gather=["nodes"], baseline_problems=after["problems"])
    assert same["new_problems"] == []


def test_hook_files_hashed_on_both_sides(pbs):
    (pbs.home / "server_priv" / "hooks" / "rjs.PY").write_bytes(b"body")
    (pbs.home / "server_priv" / "hooks" / "rjs.HK").write_bytes(b"hk")
    (pbs.home / "server_priv" / "hooks" / "notes.txt").write_bytes(b"x")
    (pbs.home / "mom_priv" / "hooks" / "rjs.PY").write_bytes(b"old")
    code, result = run(pbs, gather=["hook_files"])
    assert code == 0 and pbs.calls == []
    assert result["health"]["hook_files"] == {"server": {"rjs.HK": sha(b"hk"), "rjs.PY": sha(b"body")},
                                              "mom": {"rjs.PY": sha(b"old")}}


def test_moms_whose_hook_files_differ_from_the_servers(pbs):
    hooks = pbs.home / "server_priv" / "hooks"
    for name, data in (("rjs.HK", b"hk"), ("rjs.PY", b"body"), ("rjs.CF", b"{}"), ("qjob.PY", b"q")):
        (hooks / name).write_bytes(data)
    good = {"rjs.HK": sha(b"hk"), "rjs.PY": sha(b"body"), "rjs.CF": sha(b"{}")}
    moms = {"mom1": good, "mom2": dict(good, **{"rjs.CF": sha(b"old")}), "mom3": {}, "mom4": None}
    code, result = run(pbs, gather=["hook_files"], mom_hook_files=moms, required_hooks=["rjs"])
    assert code == 0, result
    assert result["problems"] == [
        {"kind": "hook_files", "name": "mom2", "detail": "mom mom2: hook files differ from the server's: rjs.CF"},
        {"kind": "hook_files", "name": "mom3",
         "detail": "mom mom3: hook files differ from the server's: rjs.CF, rjs.HK, rjs.PY"},
    ]  # mom4 (null: its own call failed) is not compared
    # A server-only hook (qjob: a queuejob hook no mom receives) is no difference.
    code, result = run(pbs, gather=["hook_files"], mom_hook_files={"mom3": {}})
    assert result["problems"] == []


def test_a_failing_pbs_command_fails_the_module_with_its_stderr(pbs):
    pbs.fail = (1, "", "pbsnodes: cannot connect to server srv, error=15010\n")
    code, result = run(pbs, gather=["nodes"])
    assert code == 1 and result["failed"]
    assert result["msg"].startswith("cannot read the vnodes: ") and "exited 1" in result["msg"]
    assert result["stderr"].startswith("pbsnodes: cannot connect") and result["cmd"][-2:] == ["-F", "json"]


def test_output_that_is_not_json_fails_the_module(pbs):
    pbs.fail = (0, "mom1\n     state = free\n", "")
    code, result = run(pbs, gather=["held_jobs"])
    assert code == 1 and "cannot read the jobs: " in result["msg"] and "printed no JSON" in result["msg"]


def test_vnodes_reads_only_the_named_vnodes_in_one_call(pbs):
    pbs.nodes["mom2"] = node("offline,job-busy", PREFIX + "rjs-1: in progress (batch 1)", ["7.srv", "8.srv"])
    code, result = run(pbs, gather=["nodes"], vnodes=["mom2", "mom2"])
    assert code == 0, result
    assert pbs.calls == [[pbs.bin + "/pbsnodes", "-v", "-F", "json", "mom2"]]
    assert result["health"]["nodes"] == {"mom2": {"state": ["offline", "job-busy"], "jobs": ["7.srv", "8.srv"],
                                                  "comment": PREFIX + "rjs-1: in progress (batch 1)"}}
    assert [p["name"] for p in result["problems"]] == ["mom2"]


@pytest.mark.parametrize("refusal_key", [None, "Error"], ids=["openpbs-23.06", "openpbs-22.05"])
def test_an_unknown_vnode_fails_the_module_naming_it(pbs, refusal_key):
    pbs.refusal_key = refusal_key
    code, result = run(pbs, gather=["nodes"], vnodes=["mom1", "nosuch", "gone"])
    assert code == 1 and result["failed"]
    assert result["msg"] == "vnodes: the PBS server does not know nosuch (Unknown node), gone (Unknown node)"
    assert result["unknown_vnodes"] == ["nosuch", "gone"]


def test_a_vnode_pbsnodes_leaves_out_fails_the_module_naming_it(pbs):
    pbs.named_nodes = lambda names: {}
    code, result = run(pbs, gather=["nodes"], vnodes=["mom1"])
    assert code == 1 and result["msg"] == "vnodes: the PBS server does not know mom1 (not listed by pbsnodes)"


@pytest.mark.parametrize("name, why", [
    ("", "an empty name"),
    (" ", "an empty name"),
    ("-a", "-a starts with '-' (pbsnodes would take it for an option)"),
])
def test_an_unusable_vnode_name_fails_before_anything_runs(pbs, name, why):
    code, result = run(pbs, gather=["nodes"], vnodes=["mom1", name])
    assert code == 1 and pbs.calls == []
    assert result["msg"] == "vnodes: %s is not a vnode name" % why


@pytest.mark.parametrize("gather", [["held_jobs"], None])
def test_vnodes_without_gathering_nodes_fails(pbs, gather):
    args = {"gather": gather} if gather is not None else {}   # None: gather left out
    code, result = run(pbs, vnodes=["mom1"], **args)
    assert code == 1 and pbs.calls == []
    assert result["msg"] == "vnodes limits gather=[nodes]: add nodes to gather"


def test_a_vnode_name_written_as_a_number_is_a_name(pbs):
    # YAML gives `vnodes: [101]` as an integer; PBS vnode names are strings.
    pbs.nodes["101"] = node("free")
    code, result = run(pbs, gather=["nodes"], vnodes=[101])
    assert code == 0, result
    assert pbs.calls == [[pbs.bin + "/pbsnodes", "-v", "-F", "json", "101"]]
    assert list(result["health"]["nodes"]) == ["101"]


def test_a_comment_pbsnodes_prints_as_a_number_is_text(pbs):
    pbs.nodes["mom1"] = node("offline", 42)
    code, result = run(pbs, gather=["nodes"], vnodes=["mom1"], own_comment_prefix=PREFIX)
    assert code == 0, result
    assert result["health"]["nodes"]["mom1"]["comment"] == "42"
    assert result["problems"][0]["detail"] == "vnode mom1 is offline (comment: 42)"
