"""hpc.pbs.held_jobs with qstat and qrls faked at the process boundary.

The fake prints ``qstat -f -F json -t`` as OpenPBS 23.06 does (the mock's qstat builds the
document; tests/unit/mockpbs/test_cli_qstat_json.py checks it against libcjson): every job
is the verbatim transcript output of ``qstat -f`` of an array parent and a subjob
(reference h_job_arrays, fixture ``qstat_f_t_array``) with only the attributes a failed
start changes put in (job_state, Hold_Types, comment, run_count...). A fake of a PBS
without ``-F json`` answers with qstat's usage and prints the text listing instead.
``qrls -h s`` releases as the job-array design's interface 3 says; errors are printed as
real qrls does (``qrls: <message> <job id>``, exit code errno % 256).
"""
import json

import pytest
from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpc.pbs.plugins.module_utils.jobs import jobs as jobs_utils
from ansible_collections.hpc.pbs.plugins.modules import held_jobs
from mockpbs.hookrun import run_hook

from held_jobs_fakes import (ARRAY_HELD, FIXTURE, HELD, OPERATOR, OVERWRITTEN, REPO, TMPDIR, FakePbs,
                             run_held_jobs as run, wired)


@pytest.fixture
def pbs(pbs_install, answer_commands, monkeypatch):
    return wired(FakePbs, pbs_install, answer_commands, monkeypatch)


# -- parsing the real format -----------------------------------------------------------
def test_parses_the_transcript_blocks():
    with open(FIXTURE) as handle:
        parsed = jobs_utils.parse_qstat_full(handle.read())
    assert [job_id for job_id, _attrs in parsed] == ["14[].vm", "14[1].vm"]
    parent, subjob = parsed[0][1], parsed[1][1]
    assert jobs_utils.job_kind(parent) == "array" and jobs_utils.job_kind(subjob) == "subjob"
    assert jobs_utils.run_count(subjob) == 1 and jobs_utils.run_count(parent) is None
    assert subjob["array_id"] == "14[].vm" and parent["Hold_Types"] == "n"
    assert parent["comment"] == "Job Array Began at Sat Nov 21 at 19:24"
    # the wrap cuts "/opt" in the middle; the continuation is appended as it is
    assert ":/usr/games:/opt/pbs/bin,PBS_O_MAIL=" in subjob["Variable_List"]
    assert subjob["Variable_List"].endswith("PBS_O_QUEUE=workq,PBS_O_HOST=vm")


def test_unexpected_qstat_line_is_an_error():
    with pytest.raises(jobs_utils.QstatParseError):
        jobs_utils.parse_qstat_full("    job_state = H\n")


# -- listing -----------------------------------------------------------------------------
def test_lists_held_jobs_arrays_and_subjobs_with_run_counts(pbs):
    pbs.held_job("12.vm")
    pbs.held_array(14)
    pbs.add("15.vm", "job", job_state="H", Hold_Types="u", comment="held by the user",
            run_count="0")
    pbs.add("16.vm", "job", job_state="R", run_count="1")
    code, result = run(pbs)
    assert code == 0, result
    assert result["changed"] is False and not pbs.qrls_calls()
    by_id = dict((e["id"], e) for e in result["jobs"])
    assert sorted(by_id) == ["12.vm", "14[1].vm", "14[].vm"]
    assert by_id["12.vm"]["run_count"] == 21 and by_id["12.vm"]["kind"] == "job"
    assert by_id["12.vm"]["comment"] == HELD and by_id["12.vm"]["hold_types"] == "s"
    assert set(e["cause"] for e in result["jobs"]) == {"failed_starts"}
    assert result["per_cause"] == {"failed_starts": 3} and result["kept"] == []
    assert by_id["14[].vm"]["kind"] == "array" and by_id["14[].vm"]["run_count"] is None
    assert by_id["14[].vm"]["comment"] == ARRAY_HELD % "14[1].vm"
    assert by_id["14[1].vm"]["array_id"] == "14[].vm" and by_id["14[1].vm"]["run_count"] == 21
    assert result["count"] == 3
    assert result["per_queue"] == {"workq": {"jobs": 1, "arrays": 1, "subjobs": 1}}
    assert len(pbs.calls) == 1


def ids(result):
    return sorted(entry["id"] for entry in result["jobs"])


def test_filters_by_queue_user_and_id(pbs):
    pbs.held_job("12.vm")
    pbs.held_job("13.vm", queue="express", owner="alice@vm")
    pbs.held_array(14)
    assert ids(run(pbs, queues=["express"])[1]) == ["13.vm"]
    assert ids(run(pbs, users=["pbsuser"])[1]) == ["12.vm", "14[1].vm", "14[].vm"]
    assert ids(run(pbs, job_ids=["13"])[1]) == ["13.vm"]
    assert ids(run(pbs, job_ids=["14[].vm"])[1]) == ["14[1].vm", "14[].vm"]
    assert ids(run(pbs, job_ids=["14[1]"])[1]) == ["14[1].vm"]
    assert ids(run(pbs, queues=["nosuchq"])[1]) == []


# -- releasing ---------------------------------------------------------------------------
def test_check_mode_lists_what_it_would_release(pbs):
    pbs.held_job("12.vm")
    pbs.held_array(14)
    code, result = run(pbs, state="released", check_mode=True, diff=True)
    assert code == 0 and result["changed"] is True
    assert result["released"] == ["12.vm", "14[].vm"]
    assert result["commands"] == [[pbs.qrls, "-h", "s", "12.vm", "14[].vm"]]
    assert result["per_queue"] == {"workq": {"jobs": 1, "arrays": 1, "subjobs": 1}}
    assert not pbs.qrls_calls() and pbs.jobs["12.vm"]["job_state"] == "H"
    assert result["diff"]["after"] == ""
    assert "14[1].vm" in result["diff"]["before"]


def test_releases_jobs_and_arrays_through_the_parent_in_one_qrls(pbs):
    pbs.held_job("12.vm")
    pbs.held_array(14)
    code, result = run(pbs, state="released")
    assert code == 0, result
    assert result["changed"] is True and result["released"] == ["12.vm", "14[].vm"]
    assert pbs.qrls_calls() == [[pbs.qrls, "-h", "s", "12.vm", "14[].vm"]]
    assert pbs.jobs["12.vm"]["job_state"] == "Q"
    assert pbs.jobs["14[1].vm"]["job_state"] == "Q" and pbs.jobs["14[].vm"]["job_state"] == "B"
    # only the hold is released: run_count and the comment stay as PBS left them
    assert pbs.jobs["12.vm"]["run_count"] == "21"
    assert result["still_held"] == [] and result["count"] == 2
    assert [c[0] for c in pbs.calls] == [pbs.qstat, pbs.qrls, pbs.qstat]

    pbs.calls = []
    code, result = run(pbs, state="released")
    assert code == 0 and result["changed"] is False and not pbs.qrls_calls()


def test_releases_only_the_system_hold(pbs):
    pbs.add("12.vm", "job", job_state="H", Hold_Types="us", comment=HELD, run_count="21")
    code, result = run(pbs, state="released")
    assert code == 0 and result["released"] == ["12.vm"]
    assert pbs.jobs["12.vm"]["Hold_Types"] == "u" and pbs.jobs["12.vm"]["job_state"] == "H"


def test_subjob_of_a_parent_without_system_hold_is_not_releasable(pbs):
    pbs.add("20[].vm", "array", job_state="B", Hold_Types="n", comment="Job Array Began")
    pbs.add("20[1].vm", "subjob", job_state="H", Hold_Types="s", comment=HELD,
            run_count="21", array_id="20[].vm", array_index="1")
    code, result = run(pbs, state="released")
    assert code == 0 and result["changed"] is False
    assert result["not_releasable"] == ["20[1].vm"] and not pbs.qrls_calls()
    assert any("20[1].vm" in w for w in result["warnings"])


def test_qrls_error_names_what_was_and_was_not_released(pbs):
    pbs.held_job("12.vm")
    pbs.held_job("13.vm")
    pbs.refuse["13.vm"] = "Unauthorized Request"
    code, result = run(pbs, state="released")
    assert code == 1
    assert result["released"] == ["12.vm"] and result["failed_ids"] == ["13.vm"]
    assert "13.vm: Unauthorized Request" in result["msg"]
    assert result["still_held"] == ["13.vm"]


# -- bad input -----------------------------------------------------------------------------
@pytest.mark.parametrize("args,text", [
    (dict(state="gone"), "value of state must be one of"),
    (dict(queues="workq; rm -rf /"), "is not a PBS name"),
    (dict(job_ids=["12.vm\n13.vm"]), "'12.vm\\n13.vm' is not a PBS job id; give job ids as N, N.server"),
    (dict(users=[""]), "is not a PBS name"),
    (dict(queues={"a": 1}), "queues"),
])
def test_bad_input_is_refused_before_anything_runs(pbs, args, text):
    pbs.held_job("12.vm")
    code, result = run(pbs, **args)
    assert code == 1 and text in result["msg"], result
    assert pbs.jobs["12.vm"]["job_state"] == "H" and not pbs.qrls_calls()


def test_missing_pbs_installation(pbs, tmp_path):
    code, result = run(pbs, pbs_conf_file=str(tmp_path / "nope.conf"), state="released")
    assert code == 1 and "cannot read pbs.conf" in result["msg"] and not pbs.calls


def test_server_down_fails_with_qstat_message(pbs, monkeypatch):
    def down(args, **kwargs):
        pbs.calls.append(args)
        return 1, "", ("Connection refused\nqstat: cannot connect to server vm "
                       "(errno=15010)\n")
    monkeypatch.setattr(AnsibleModule, "run_command", lambda self, args, **kw: down(args))
    code, result = run(pbs, state="released")
    assert code == 1 and "errno=15010" in result["msg"]
    assert result["cmd"][1:] == ["-f", "-F", "json", "-t"]


# -- reading: JSON, and text where qstat has no -F json --------------------------------------
def test_reads_qstat_json_and_falls_back_to_text_without_it(pbs):
    pbs.held_job("12.vm")
    pbs.held_array(14)
    code, from_json = run(pbs)
    assert code == 0 and pbs.calls == [[pbs.qstat, "-f", "-F", "json", "-t"]]
    pbs.has_json, pbs.calls = False, []
    code, from_text = run(pbs)
    assert code == 0
    assert pbs.calls == [[pbs.qstat, "-f", "-F", "json", "-t"], [pbs.qstat, "-f", "-t"]]
    assert from_text["jobs"] == from_json["jobs"] and len(from_json["jobs"]) == 3


def test_json_values_become_the_text_qstat_prints():
    listing = {"Jobs": {"12.vm": {"run_count": 21, "comment": 7, "Hold_Types": "s",
                                  "Resource_List": {"ncpus": 2}, "x": True, "y": None,
                                  "z": 1.5}}}
    [(job_id, attrs)] = held_jobs.jobs_from_json(json.dumps(listing))
    assert job_id == "12.vm"
    assert attrs == {"run_count": "21", "comment": "7", "Hold_Types": "s",
                     "Resource_List": {"ncpus": 2}, "x": "true", "y": "null", "z": "1.5"}
    assert held_jobs.jobs_from_json('{"timestamp": 1, "pbs_server": "vm"}') == []
    with pytest.raises(ValueError):
        held_jobs.jobs_from_json('{"Jobs": [1]}')


def test_unreadable_json_fails_naming_the_command(pbs, monkeypatch):
    monkeypatch.setattr(pbs, "json_listing", lambda: "{not json")
    code, result = run(pbs)
    assert code == 1 and "cannot read the JSON of qstat -f -F json -t" in result["msg"]


# -- causes ------------------------------------------------------------------------------------
def reliable_startup_comment(tmp_path):
    """The reject message of the bundled reliable_job_startup hook when release_nodes()
    cannot keep the original select (both sisters failed), run under the pbs emulator; the
    mock mom makes it the job's comment."""
    vnodes = dict((name, {"name": name, "host": name, "state": "free",
                          "resources_available": {"ncpus": "1"}}) for name in ("ms", "s1", "s2"))
    job = {"id": "13.vm", "queue": "workq", "Hold_Types": "n", "run_count": "1",
           "tolerate_node_failures": "job_start", "schedselect": "1:ncpus=1+2:ncpus=1",
           "exec_vnode": "(ms:ncpus=1)+(s1:ncpus=1)+(s2:ncpus=1)", "exec_host": "ms/0+s1/0+s2/0",
           "Resource_List": {"select": "1:ncpus=1+2:ncpus=1", "ncpus": "3", "nodect": "3",
                             "place": "scatter", "site": "1:ncpus=1+1:ncpus=1"}}
    context = {"job": job, "vnode_list": {"ms": vnodes["ms"]},
               "vnode_list_fail": {"s1": vnodes["s1"], "s2": vnodes["s2"]},
               "env": {"PBS_JOBID": "13.vm", "PBS_NODEFILE": "/var/spool/pbs/aux/13.vm"},
               "argv": ["/bin/true"], "progname": "/bin/true", "in_ms_mom": True,
               "hostname": "ms", "server": "vm", "failed_mom_list": ["s1", "s2"],
               "succeeded_mom_list": ["ms"], "daemon": "mom"}
    config = tmp_path / "reliable_job_startup.CF"
    config.write_text((REPO / "files" / "hooks" / "reliable_job_startup.json").read_text())
    hook = {"name": "reliable_job_startup", "alarm": 30, "user": "pbsadmin", "debug": False,
            "body": str(REPO / "files" / "hooks" / "reliable_job_startup.py"),
            "config": str(config)}
    result = run_hook(hook, "execjob_launch", context, str(tmp_path))
    assert not result["accepted"] and result["job"]["Hold_Types"] == "s", result
    return result["reject_msg"]


def causes_of(result):
    return dict((entry["id"], entry["cause"]) for entry in result["jobs"])


def test_causes_by_real_signals_whatever_the_comment(pbs, tmp_path):
    pbs.held_job("12.vm", comment=OVERWRITTEN)                        # execjob_hook overwrote it
    pbs.held_array(14, comment=OVERWRITTEN, subjob_comment=OVERWRITTEN)
    pbs.held_job("13.vm", runs=1, comment=reliable_startup_comment(tmp_path))
    pbs.held_job("15.vm", runs=1, comment=TMPDIR)
    pbs.held_job("16.vm", runs=21, comment=TMPDIR)                    # never released by default
    pbs.held_job("17.vm", runs=0, comment=OPERATOR)
    pbs.held_job("18.vm", runs=20, comment=OVERWRITTEN)               # 20 failed starts: not yet
    pbs.add("19.vm", "job", job_state="H", Hold_Types="u", comment=HELD, run_count="21")
    code, result = run(pbs)
    assert code == 0, result
    assert causes_of(result) == {
        "12.vm": "failed_starts", "14[].vm": "failed_starts", "14[1].vm": "failed_starts",
        "13.vm": "reliable_startup_hook", "15.vm": "tmpdir_security", "16.vm": "tmpdir_security",
        "17.vm": "other", "18.vm": "other"}
    assert result["per_cause"] == {"failed_starts": 3, "reliable_startup_hook": 1,
                                   "tmpdir_security": 2, "other": 2}
    assert sorted(e["id"] for e in result["kept"]) == ["15.vm", "16.vm", "17.vm", "18.vm"]


def test_array_recognised_through_its_subjobs_or_its_comment(pbs):
    pbs.held_array(14, comment=OPERATOR)                  # comment changed, subjob at 21 runs
    pbs.held_array(15, subjob_comment=OVERWRITTEN)
    pbs.jobs["15[1].vm"]["run_count"] = "3"               # subjob gone back below: the comment
    pbs.add("16[].vm", "array", job_state="H", Hold_Types="s", comment=OPERATOR)
    assert causes_of(run(pbs)[1]) == {
        "14[].vm": "failed_starts", "14[1].vm": "failed_starts",
        "15[].vm": "failed_starts", "15[1].vm": "other", "16[].vm": "other"}


def test_release_frees_only_the_causes_asked_for(pbs, tmp_path):
    pbs.held_job("12.vm", comment=OVERWRITTEN)
    pbs.held_job("13.vm", runs=1, comment=reliable_startup_comment(tmp_path))
    pbs.held_job("15.vm", runs=1, comment=TMPDIR)
    pbs.held_job("17.vm", runs=0, comment=OPERATOR)
    code, result = run(pbs, state="released", diff=True)
    assert code == 0, result
    assert result["released"] == ["12.vm", "13.vm"] and result["still_held"] == []
    assert [e["id"] for e in result["kept"]] == ["15.vm", "17.vm"]
    assert pbs.qrls_calls() == [[pbs.qrls, "-h", "s", "12.vm", "13.vm"]]
    assert pbs.jobs["15.vm"]["job_state"] == "H" and pbs.jobs["17.vm"]["job_state"] == "H"
    assert result["diff"]["after"] == "15.vm\n17.vm\n"
    assert "15.vm (tmpdir_security)\n" in result["diff"]["before"]

    code, result = run(pbs, state="released", causes=["tmpdir_security"])
    assert code == 0 and result["released"] == ["15.vm"]
    assert [e["id"] for e in result["kept"]] == ["17.vm"]
    code, result = run(pbs, state="released", causes=[])
    assert code == 0 and result["changed"] is False and len(result["kept"]) == 1


def test_array_whose_release_would_free_another_cause_is_not_released(pbs):
    pbs.held_array(14, other_indices=())
    pbs.add("14[2].vm", "subjob", job_state="H", Hold_Types="s", comment=TMPDIR, run_count="1",
            array_id="14[].vm", array_index="2")
    code, result = run(pbs, state="released")
    assert code == 0 and result["changed"] is False and not pbs.qrls_calls()
    assert result["not_releasable"] == ["14[1].vm", "14[].vm"]
    assert [e["id"] for e in result["kept"]] == ["14[2].vm"]
    assert any("qrls of its array 14[].vm would also release 14[2].vm (held for tmpdir_security)"
               in w for w in result["warnings"])
    code, result = run(pbs, state="released", causes=["failed_starts", "tmpdir_security"])
    assert result["released"] == ["14[].vm"] and pbs.jobs["14[2].vm"]["job_state"] == "Q"


def test_causes_outside_the_choices_are_refused(pbs):
    pbs.held_job("12.vm")
    code, result = run(pbs, state="released", causes=["everything"])
    assert code == 1 and "value of causes must be one or more of" in result["msg"]
    assert not pbs.calls


# -- job ids ------------------------------------------------------------------------------------
@pytest.mark.parametrize("job_id", ["abc;qdel", "-h", "12.vm\n", "12 ", "1[2", "12.", "",
                                    "[1]", "12[1-3]", "12.vm;rm", "12[]x", "12..vm"])
def test_job_ids_that_are_not_pbs_job_ids_are_refused_before_anything_runs(pbs, job_id):
    pbs.held_job("12.vm")
    code, result = run(pbs, state="released", job_ids=["12", job_id])
    assert code == 1, result
    assert result["msg"] == ("job_ids: %r is not a PBS job id; give job ids as N, N.server, N[], "
                             "N[].server, N[i] or N[i].server (for example 12, 12.pbs-server, "
                             "14[], 14[3].pbs-server). Nothing was run." % job_id)
    assert not pbs.calls and pbs.jobs["12.vm"]["job_state"] == "H"


def test_every_bad_job_id_is_named_at_once(pbs):
    code, result = run(pbs, job_ids=["abc;qdel", "12", "-h"])
    assert code == 1 and result["msg"].startswith("job_ids: 'abc;qdel', '-h' are not PBS job ids;")


@pytest.mark.parametrize("job_id,selected", [
    ("12", ["12.vm"]), ("12.vm", ["12.vm"]), ("14[]", ["14[1].vm", "14[].vm"]),
    ("14[].vm", ["14[1].vm", "14[].vm"]), ("14[1]", ["14[1].vm"]), ("14[1].vm", ["14[1].vm"]),
    ("12.pbs-server.example.org", []),
])
def test_every_pbs_job_id_form_is_accepted(pbs, job_id, selected):
    pbs.held_job("12.vm")
    pbs.held_array(14)
    code, result = run(pbs, job_ids=[job_id])
    assert code == 0 and ids(result) == selected
