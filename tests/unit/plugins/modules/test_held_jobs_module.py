"""hpc.pbs.held_jobs with qstat and qrls faked at the process boundary.

The fake prints ``qstat -f -t`` in OpenPBS 23.06's format: every block is the verbatim
transcript output of ``qstat -f`` of an array parent and a subjob (reference
h_job_arrays, fixture ``qstat_f_t_array``) with only the attributes a failed start
changes put in (job_state, Hold_Types, comment, run_count...). ``qrls -h s`` releases as
the seed job-array-subjob-run-count-hold-release interface 3 says; errors are printed as
real qrls does (``qrls: <message> <job id>``, exit code errno % 256).
"""
import os
import re

import pytest
from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpc.pbs.plugins.module_utils import jobs as jobs_utils
from ansible_collections.hpc.pbs.plugins.modules import held_jobs
from hpc_pbs_module_fakes import run_module

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures",
                       "qstat_f_t_array")
HELD = "job held, too many failed attempts to run"
ARRAY_HELD = "Job Array Held, too many failed attempts to run subjob %s"


def transcript_blocks():
    with open(FIXTURE) as handle:
        text = handle.read()
    parent, subjob = [b + "\n\n" for b in text.strip("\n").split("\n\n")]
    plain = "".join(line + "\n" for line in subjob.splitlines()
                    if not line.startswith(("    array_id", "    array_index",
                                            "    hashname")))
    return {"array": parent, "subjob": subjob, "job": plain}


TEMPLATES = transcript_blocks()
TEMPLATE_IDS = {"array": "14[].vm", "subjob": "14[1].vm", "job": "14[1].vm"}


class FakePbs(object):
    """qstat / qrls of a PBS server holding ``self.jobs`` (id -> dict with ``kind`` and
    the attributes that differ from the transcript block)."""

    def __init__(self, exec_dir):
        self.qstat = os.path.join(exec_dir, "bin", "qstat")
        self.qrls = os.path.join(exec_dir, "bin", "qrls")
        self.jobs = {}
        self.calls = []
        self.refuse = {}

    def add(self, job_id, kind, **attrs):
        self.jobs[job_id] = dict(kind=kind, **attrs)

    def held_job(self, job_id, queue="workq", owner="pbsuser@vm", runs=21):
        self.add(job_id, "job", job_state="H", Hold_Types="s", comment=HELD,
                 run_count=str(runs), queue=queue, Job_Owner=owner)

    def held_array(self, number, held_index=1, other_indices=(2,), queue="workq"):
        array_id = "%d[].vm" % number
        sub_id = "%d[%d].vm" % (number, held_index)
        self.add(array_id, "array", job_state="H", Hold_Types="s",
                 comment=ARRAY_HELD % sub_id, queue=queue)
        self.add(sub_id, "subjob", job_state="H", Hold_Types="s", comment=HELD,
                 run_count="21", array_id=array_id, array_index=str(held_index),
                 queue=queue)
        for index in other_indices:
            self.add("%d[%d].vm" % (number, index), "subjob", job_state="Q",
                     comment="Not Running: Job array is held", run_count="0",
                     array_id=array_id, array_index=str(index), queue=queue)

    # -- output ------------------------------------------------------------------------
    def render(self, job_id, job):
        kind = job["kind"]
        text = TEMPLATES[kind].replace(TEMPLATE_IDS[kind], job_id, 1)
        lines = text.splitlines()
        wanted = dict((k, v) for k, v in job.items() if k != "kind")
        out = []
        for line in lines:
            match = re.match(r"^    (\S+) = ", line)
            if match and match.group(1) in wanted:
                out.append("    %s = %s" % (match.group(1), wanted.pop(match.group(1))))
                continue
            if line.startswith("    Join_Path") and "Hold_Types" in wanted:
                out.append("    Hold_Types = %s" % wanted.pop("Hold_Types"))
            if match and match.group(1) in ("exec_host", "exec_vnode", "session_id") \
                    and job.get("job_state") != "R":
                continue
            out.append(line)
        return "\n".join(out) + "\n\n"

    # -- AnsibleModule.run_command replacement -----------------------------------------
    def run_command(self, args, **kwargs):
        assert isinstance(args, list), "commands must be argument lists, never a shell string"
        self.calls.append(list(args))
        if args[0] == self.qstat:
            assert args[1:] == ["-f", "-t"], args
            return 0, "".join(self.render(i, j) for i, j in self.jobs.items()), ""
        assert args[0] == self.qrls and args[1:3] == ["-h", "s"], args
        rc, err = 0, []
        for job_id in args[3:]:
            if job_id not in self.jobs:
                err.append("qrls: Unknown Job Id %s\n" % job_id)
                rc = 153
                continue
            if job_id in self.refuse:
                err.append("qrls: %s %s\n" % (self.refuse[job_id], job_id))
                rc = 159
                continue
            job = self.jobs[job_id]
            if job["kind"] == "array":
                for sub in self.jobs.values():
                    if sub.get("array_id") == job_id and "s" in sub.get("Hold_Types", ""):
                        self.release(sub, "Q")
                self.release(job, "B")
            else:
                self.release(job, "Q")
        return rc, "", "".join(err)

    @staticmethod
    def release(job, state):
        job["Hold_Types"] = job.get("Hold_Types", "n").replace("s", "") or "n"
        if job["Hold_Types"] == "n":
            job["job_state"] = state

    def qrls_calls(self):
        return [c for c in self.calls if c[0] == self.qrls]


@pytest.fixture
def pbs(tmp_path, monkeypatch):
    exec_dir = tmp_path / "exec"
    conf = tmp_path / "pbs.conf"
    conf.write_text("PBS_HOME=%s\nPBS_EXEC=%s\n" % (tmp_path / "home", exec_dir))
    for var in ("PBS_HOME", "PBS_EXEC", "PBS_CONF_FILE"):
        monkeypatch.delenv(var, raising=False)
    fake = FakePbs(str(exec_dir))
    monkeypatch.setattr(AnsibleModule, "run_command",
                        lambda self, args, **kw: fake.run_command(args, **kw))
    fake.conf = str(conf)
    return fake


def run(pbs, check_mode=False, diff=False, **args):
    args.setdefault("pbs_conf_file", pbs.conf)
    return run_module(held_jobs.main, args, check_mode=check_mode, diff=diff)


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
    assert not jobs_utils.held_by_failed_runs(parent)


def test_unexpected_qstat_line_is_an_error():
    with pytest.raises(jobs_utils.QstatParseError):
        jobs_utils.parse_qstat_full("    job_state = H\n")


def test_hold_type_and_comment_must_both_match():
    base = {"job_state": "H", "Hold_Types": "s", "comment": HELD}
    assert jobs_utils.held_by_failed_runs(base)
    assert not jobs_utils.held_by_failed_runs(dict(base, Hold_Types="u"))
    assert not jobs_utils.held_by_failed_runs(dict(base, comment="held by admin"))
    assert not jobs_utils.held_by_failed_runs(dict(base, job_state="Q"))
    array = {"job_state": "H", "Hold_Types": "s", "array": "True",
             "comment": ARRAY_HELD % "14[1].vm"}
    assert jobs_utils.held_by_failed_runs(array)
    assert not jobs_utils.held_by_failed_runs(dict(array, comment=HELD))


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
    (dict(job_ids=["12.vm\n13.vm"]), "is not a PBS name"),
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
    assert code == 1 and "errno=15010" in result["msg"] and result["cmd"][1:] == ["-f", "-t"]
