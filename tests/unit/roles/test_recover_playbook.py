"""playbooks/recover.yml through a real ansible-playbook, against a fake PBS on this host.

The inventory's pbs_server is this machine (``ansible_connection=local``); PBS_EXEC/bin
holds a ``qstat`` that prints ``jobs.json`` as ``qstat -f -F json -t`` would (the keys the
module reads) and a ``qrls`` that logs its arguments and releases as the job-array
design's interface 3 says (an array's system-held subjobs, then the array). The cluster
test tests/integration/test_held_jobs.py runs the same playbook against the mock PBS.
"""
import json
import re
import sys
from pathlib import Path

import pytest

from local_playbook import ansible_playbook_local

REPO = Path(__file__).resolve().parents[3]
PLAYBOOK = REPO / "playbooks" / "recover.yml"
MSG_RE = re.compile(r'^ok: \[srv\] => \{\n    "msg": (".*")\n\}$', re.M)
RECAP_RE = re.compile(r"^srv\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=\d+\s+failed=(\d+)", re.M)
OVERWRITTEN = "Not Running: PBS Error: Execution server rejected request"
HOOK_HOLD = ("reliable_job_startup: could not prune job 13.srv back to its original select "
             "1:ncpus=1+1:ncpus=1: not enough healthy nodes (failed vnodes: mom2, mom3); job held "
             "(s) and requeued")
TMPDIR = "job held due to possible security breach of job tmpdir, failed to start"

QSTAT = """#!%(python)s
import json, sys
assert sys.argv[1:] == ["-f", "-F", "json", "-t"], sys.argv
jobs = json.load(open(%(state)r))
document = {"timestamp": 1, "pbs_version": "23.06.06", "pbs_server": "srv"}
if jobs:
    document["Jobs"] = jobs
print(json.dumps(document, indent="\\t"))
"""
QRLS = """#!%(python)s
import json, sys
with open(%(calls)r, "a") as log:
    log.write(" ".join(["qrls"] + sys.argv[1:]) + "\\n")
jobs = json.load(open(%(state)r))
def release(job, state):
    job["Hold_Types"] = job["Hold_Types"].replace("s", "") or "n"
    if job["Hold_Types"] == "n":
        job["job_state"] = state
for job_id in sys.argv[3:]:
    for sub in jobs.values():
        if sub.get("array_id") == job_id and "s" in sub["Hold_Types"]:
            release(sub, "Q")
    release(jobs[job_id], "B" if job_id.endswith("[].srv") else "Q")
json.dump(jobs, open(%(state)r, "w"))
"""


def job(job_state="H", hold="s", comment=OVERWRITTEN, runs=21, **extra):
    attrs = {"Job_Owner": "pbsuser@srv", "job_state": job_state, "queue": "workq",
             "Hold_Types": hold, "comment": comment}
    if runs is not None:
        attrs["run_count"] = runs
    attrs.update(extra)
    return attrs


@pytest.fixture
def fake_pbs(tmp_path):
    bin_dir = tmp_path / "exec" / "bin"
    bin_dir.mkdir(parents=True)
    paths = {"python": sys.executable, "state": str(tmp_path / "jobs.json"),
             "calls": str(tmp_path / "calls.log")}
    for name, source in (("qstat", QSTAT), ("qrls", QRLS)):
        (bin_dir / name).write_text(source % paths)
        (bin_dir / name).chmod(0o755)
    conf = tmp_path / "pbs.conf"
    conf.write_text("PBS_EXEC=%s\nPBS_HOME=%s\nPBS_SERVER=srv\n" % (tmp_path / "exec", tmp_path))
    jobs = {
        "12.srv": job(),                                          # failed starts, comment gone
        "13.srv": job(comment=HOOK_HOLD, runs=1),                  # the bundled hook's hold
        "14[].srv": job(comment=OVERWRITTEN, runs=None, array="True"),
        "14[1].srv": job(array_id="14[].srv", array_index=1),
        "14[2].srv": job(job_state="Q", hold="n", runs=0, array_id="14[].srv", array_index=2),
        "15.srv": job(comment=TMPDIR, runs=1),                     # never released by default
        "16.srv": job(comment="Job held by root on Sat Nov 21 19:30:00 2026", runs=0),
        "17.srv": job(hold="u", comment="held by its owner", runs=0),
    }
    Path(paths["state"]).write_text(json.dumps(jobs))
    return {"dir": tmp_path, "conf": conf, "state": Path(paths["state"]), "calls": Path(paths["calls"])}


def run_recover(fake, extra_vars=None, check=False):
    """(rc, output, debug messages, (ok, changed, failed) of srv)."""
    inventory = "[pbs_server]\nsrv ansible_connection=local ansible_python_interpreter=%s\n" % sys.executable
    rc, output = ansible_playbook_local(fake, PLAYBOOK, inventory, extra_vars or {}, *(["--check"] if check else []))
    recap = RECAP_RE.search(output)
    return (rc, output, [json.loads(m) for m in MSG_RE.findall(output)],
            tuple(int(g) for g in recap.groups()) if recap else None)


def held(fake):
    return sorted(i for i, a in json.loads(fake["state"].read_text()).items() if "s" in a["Hold_Types"])


LEFT_HELD = ("Left held (2, causes not in recover_causes): 15.srv (tmpdir_security: %s); "
             "16.srv (other: Job held by root on Sat Nov 21 19:30:00 2026)." % TMPDIR)


def test_default_releases_failed_starts_and_the_hooks_holds_and_prints_the_rest(fake_pbs):
    rc, output, messages, recap = run_recover(fake_pbs)
    assert rc == 0, output
    assert messages == [
        "Released 3 job(s) and array(s) held for failed_starts, reliable_startup_hook: workq: "
        "2 job(s), 1 array(s) with 1 held subjob(s).", LEFT_HELD]
    assert fake_pbs["calls"].read_text() == "qrls -h s 12.srv 13.srv 14[].srv\n"
    assert held(fake_pbs) == ["15.srv", "16.srv"] and recap[1:] == (1, 0)

    rc, output, messages, recap = run_recover(fake_pbs)
    assert rc == 0 and recap[1:] == (0, 0), output
    assert messages[0].startswith("Released 0 job(s) and array(s)") and messages[1] == LEFT_HELD


def test_check_mode_changes_nothing(fake_pbs):
    rc, output, messages, recap = run_recover(fake_pbs, check=True)
    assert rc == 0, output
    assert messages[0].startswith("Would release 3 job(s) and array(s)") and messages[1] == LEFT_HELD
    assert not fake_pbs["calls"].exists()


def test_only_the_causes_asked_for(fake_pbs):
    rc, output, messages, _unused = run_recover(fake_pbs, {"recover_causes": ["tmpdir_security"]})
    assert rc == 0, output
    assert messages[0] == ("Released 1 job(s) and array(s) held for tmpdir_security: workq: 1 job(s), "
                           "0 array(s) with 0 held subjob(s).")
    assert messages[1].startswith("Left held (5, causes not in recover_causes): 12.srv (failed_starts: ")
    assert fake_pbs["calls"].read_text() == "qrls -h s 15.srv\n"


@pytest.mark.parametrize("extra_vars,text", [
    ({"recover_job_ids": ["12;qdel"]}, "job_ids: '12;qdel' is not a PBS job id"),
    ({"recover_job_ids": ["-h"]}, "job_ids: '-h' is not a PBS job id"),
    ({"recover_causes": ["all"]}, "value of causes must be one or more of"),
])
def test_bad_input_runs_nothing(fake_pbs, extra_vars, text):
    rc, output, _unused, recap = run_recover(fake_pbs, extra_vars)
    assert rc != 0 and text in output and recap[2] == 1, output
    assert not fake_pbs["calls"].exists()
