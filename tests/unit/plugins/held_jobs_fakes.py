"""The fake PBS of the ``hpc.pbs.held_jobs`` unit tests: qstat and qrls faked at the process
boundary (see ``modules/test_held_jobs_module.py``, which describes what the fake prints).
Shared by the module's tests and its failure-path tests (``modules/test_failure_paths_held_jobs.py``)."""
import os
import re
from pathlib import Path

from ansible_collections.hpc.pbs.plugins.module_utils.jobs import jobs as jobs_utils
from ansible_collections.hpc.pbs.plugins.modules import held_jobs
from hpc_pbs_module_fakes import run_module
from mockpbs.cli import qstat as mock_qstat

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures",
                       "qstat_f_t_array")
HELD = "job held, too many failed attempts to run"
ARRAY_HELD = "Job Array Held, too many failed attempts to run subjob %s"
# What the scheduler leaves in the comment with job_run_wait = execjob_hook.
OVERWRITTEN = "Not Running: PBS Error: Execution server rejected request"
TMPDIR = "job held due to possible security breach of job tmpdir, failed to start"
OPERATOR = "Job held by root on Sat Nov 21 19:30:00 2026"
REPO = Path(__file__).resolve().parents[3]
RESOURCE_ATTRS = ("Resource_List", "resources_used")


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
        self.has_json = True

    def add(self, job_id, kind, **attrs):
        self.jobs[job_id] = dict(kind=kind, **attrs)

    def held_job(self, job_id, queue="workq", owner="pbsuser@vm", runs=21, comment=HELD):
        self.add(job_id, "job", job_state="H", Hold_Types="s", comment=comment,
                 run_count=str(runs), queue=queue, Job_Owner=owner)

    def held_array(self, number, held_index=1, other_indices=(2,), queue="workq",
                   comment=None, subjob_comment=HELD):
        array_id = "%d[].vm" % number
        sub_id = "%d[%d].vm" % (number, held_index)
        self.add(array_id, "array", job_state="H", Hold_Types="s",
                 comment=comment or ARRAY_HELD % sub_id, queue=queue)
        self.add(sub_id, "subjob", job_state="H", Hold_Types="s", comment=subjob_comment,
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

    def text_listing(self):
        return "".join(self.render(i, j) for i, j in self.jobs.items())

    def json_listing(self):
        """The listing as ``qstat -f -F json -t`` prints it."""
        objects = []
        for job_id, attrs in jobs_utils.parse_qstat_full(self.text_listing()):
            triples = []
            for name, value in attrs.items():
                attribute, dummy, resource = name.partition(".")
                if attribute in RESOURCE_ATTRS:
                    triples.append((attribute, resource, value))
                else:
                    triples.append((name, None, value))
            objects.append((job_id, triples))
        return mock_qstat.json_document("Jobs", objects)

    # -- AnsibleModule.run_command replacement -----------------------------------------
    def run_command(self, args, **kwargs):
        assert isinstance(args, list), "commands must be argument lists, never a shell string"
        self.calls.append(list(args))
        if args[0] == self.qstat:
            if args[1:] == ["-f", "-F", "json", "-t"]:
                if not self.has_json:
                    return 2, "", "qstat: invalid option -- 'F'\nusage: \nqstat [-f] ...\n"
                return 0, self.json_listing(), ""
            assert args[1:] == ["-f", "-t"] and not self.has_json, args
            return 0, self.text_listing(), ""
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


def wired(fake_class, pbs_install, answer_commands, monkeypatch):
    """A ``fake_class`` (FakePbs or a subclass) for the PBS install ``pbs_install``, wired as
    ``AnsibleModule.run_command``, on a server named ``vm`` (the transcript's)."""
    monkeypatch.setattr(mock_qstat.common, "server_name", lambda: "vm")
    return answer_commands(fake_class(str(pbs_install.exec_dir)), passes_module=False)


def run_held_jobs(pbs, check_mode=False, diff=False, **args):
    """``hpc.pbs.held_jobs`` with ``args`` against the fake ``pbs``: (exit code, result)."""
    args.setdefault("pbs_conf_file", pbs.conf)
    return run_module(held_jobs.main, args, check_mode=check_mode, diff=diff)
