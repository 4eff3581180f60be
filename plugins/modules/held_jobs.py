#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hpc.pbs developers
# Apache License 2.0 (https://www.apache.org/licenses/LICENSE-2.0), as galaxy.yml says

DOCUMENTATION = r'''
---
module: held_jobs
short_description: List PBS jobs and job arrays under a system hold, by cause, and release them
description:
  - >-
    Finds the jobs, job arrays and subjobs under a system hold (C(job_state) C(H),
    C(Hold_Types) including C(s)) and tells why, by their real signals rather than the
    comment alone (with the scheduler's C(job_run_wait) at C(execjob_hook), OpenPBS
    overwrites the comment of a job held after failed starts with its own
    C(Not Running: PBS Error: ...) text). The cause of each hold is one of
  - >-
    C(failed_starts) - PBS held it after too many failed starts: a job or subjob whose
    C(run_count) is above 20 (it is held after its 21st failed start); an array whose
    held subjobs include such a subjob, or whose comment is the server's
    C(Job Array Held, too many failed attempts to run subjob <id>).
  - >-
    C(reliable_startup_hook) - the bundled reliable_job_startup hook held and requeued it
    after a failed prune at launch (PP-928 C(release_nodes) could not keep the original
    select on healthy nodes); its comment is the hook's own message, which starts
    C(<hook>: could not prune job <id> back to its original select <select>: not enough
    healthy nodes), then names the failed vnodes and says the job was held and requeued.
  - >-
    C(tmpdir_security) - the mom found the job's tmpdir already present and owned by
    another user; the comment is the server's
    C(job held due to possible security breach of job tmpdir, failed to start). Never
    released unless named in O(causes).
  - >-
    C(other) - any other system hold (an operator's C(qhold -h s), a hook's hold for its
    own reasons).
  - >-
    Jobs held only by a user or operator (C(u), C(o)) are never listed.
  - >-
    With O(state=released) it releases the system hold of the jobs whose cause is in
    O(causes), with one C(qrls -h s) call per 500 ids. Subjobs cannot be released on
    their own (C(qrls) takes jobs and arrays); they are released through their parent
    array, which C(qrls) of a system-held array does for every system-held subjob before
    it releases the array itself (the PBS subjob run_count, hold and release design,
    interface 3). So an array is released only when its own cause and the cause of each
    of its system-held subjobs are in O(causes); otherwise it and its subjobs are reported
    in RV(not_releasable), as is a held subjob whose parent array has no system hold.
  - >-
    Only the system hold is released; other holds, C(run_count) and every other attribute
    are left as they are. A released job whose C(run_count) is above 20 is held again
    after its next failed start.
  - >-
    Reads the jobs with one C(qstat -f -F json -t) call (C(qstat -f -t) text from a PBS
    whose qstat has no C(-F json)), and after releasing reads once more to report what is
    still held.
version_added: "0.1.0"
author: hpc.pbs developers (@hpc-pbs)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - hpc.pbs.pbs
options:
  state:
    description:
      - C(listed) only reports the held jobs. C(released) releases the system hold of
        those whose cause is in O(causes), with C(qrls -h s).
      - The hold after failed starts follows the PBS subjob run_count, hold and
        release design ("Changes to run_count attribute, hold and
        release operation of subjob(s) in a Job Array") - the server increments the
        run_count of subjobs as of regular jobs and holds a job or subjob whose
        run_count goes above 20 (interface 1, run_count of subjobs), holding its parent
        array too (interface 2); C(qrls) of the held array releases its held subjobs
        (interface 3).
    type: str
    default: listed
    choices: [listed, released]
  causes:
    description:
      - The causes of a system hold that O(state=released) releases (see the description
        for what each one means). C(tmpdir_security) is released only when named here,
        after the tmpdir was checked.
      - Held jobs of other causes are listed and returned in RV(kept).
    type: list
    elements: str
    choices: [failed_starts, reliable_startup_hook, tmpdir_security, other]
    default: [failed_starts, reliable_startup_hook]
  queues:
    description:
      - Only jobs in these queues (queue names as qstat prints them). Empty means every
        queue.
    type: list
    elements: str
    default: []
  users:
    description:
      - Only jobs of these users (the user part of C(Job_Owner)). Empty means every user.
    type: list
    elements: str
    default: []
  job_ids:
    description:
      - Only these jobs, arrays or subjobs, as PBS job ids - C(N), C(N.server), C(N[]),
        C(N[].server), C(N[i]) or C(N[i].server) (for example C(12), C(14[].vm),
        C(14[3])). Anything else is refused before any command runs.
      - Naming an array selects its held subjobs too; naming a subjob selects its release
        through its parent array (interface 3 of the PBS subjob run_count, hold and release design). Empty means every job.
    type: list
    elements: str
    default: []
notes:
  - Supports check mode (lists what would be released, changes nothing) and diff mode
    (the held ids before and after).
  - Runs C(PBS_EXEC/bin/qstat) and C(PBS_EXEC/bin/qrls) on the host it is run on, which
    must be allowed to release system holds (a PBS manager or operator, such as root on
    the server host).
  - On a real OpenPBS, the reject message of an C(execjob_launch) hook is written to the
    mom's log, not to the job's comment; a job the reliable_job_startup hook held is then
    recognised only where its comment carries the hook's text, else it is listed as
    C(other).
attributes:
  check_mode:
    support: full
    details: Lists what would be released and releases nothing.
  diff_mode:
    support: full
    details: The held job ids before and after.
  platform:
    platforms: posix
seealso:
  - module: hpc.pbs.qmgr
  - module: hpc.pbs.cluster_info
  - name: OpenPBS source and design documents
    description: The PBS code this module drives and the designs it implements (PP-928 reliable job startup).
    link: https://github.com/openpbs/openpbs
'''

EXAMPLES = r'''
- name: List jobs under a system hold in workq, with their causes
  hpc.pbs.held_jobs:
    queues: [workq]
  register: held

- name: Release every job and array held after failed starts or by the reliable startup hook
  hpc.pbs.held_jobs:
    state: released
  register: released

- name: Release only the holds after failed starts of two jobs
  hpc.pbs.held_jobs:
    state: released
    causes: [failed_starts]
    job_ids: ["12", "14[].pbs-server"]

- name: Say how many were released, per queue, and what was left held
  ansible.builtin.debug:
    msg: "{{ released.per_queue }}; left held: {{ released.kept | map(attribute='id') | list }}"
'''

RETURN = r'''
jobs:
  description: The jobs, arrays and subjobs under a system hold that match the filters, as
    found before any release, each with the cause of its hold.
  returned: always
  type: list
  elements: dict
  contains:
    id:
      description: Job id as qstat prints it.
      type: str
      sample: "14[].vm"
    kind:
      description: C(job), C(array) or C(subjob).
      type: str
      sample: job
    cause:
      description: C(failed_starts), C(reliable_startup_hook), C(tmpdir_security) or
        C(other) (see the module description).
      type: str
      sample: failed_starts
    queue:
      description: Queue name.
      type: str
      sample: workq
    user:
      description: User part of C(Job_Owner).
      type: str
      sample: pbsuser
    comment:
      description: The job's comment.
      type: str
      sample: "job held, too many failed attempts to run"
    run_count:
      description: The job's C(run_count), or null when qstat does not show one (array
        parents).
      type: int
      sample: 21
    hold_types:
      description: C(Hold_Types) as qstat prints it.
      type: str
      sample: s
    array_id:
      description: For a subjob, its parent array's id; else null.
      type: str
      sample: "14[].vm"
  sample: [{"id": "12.vm", "kind": "job", "cause": "failed_starts", "queue": "workq",
            "user": "pbsuser", "comment": "Not Running: PBS Error: Execution server rejected request",
            "run_count": 21, "hold_types": "s", "array_id": null}]
released:
  description: Ids given to C(qrls -h s) (jobs and array parents), or that would be in check
    mode. Empty when O(state=listed).
  returned: always
  type: list
  elements: str
  sample: ["12.vm", "14[].vm"]
kept:
  description: The entries of RV(jobs) whose cause is not in O(causes), which a release
    leaves held (with O(state=listed), which it would leave).
  returned: always
  type: list
  elements: dict
  sample: [{"id": "15.vm", "kind": "job", "cause": "tmpdir_security", "queue": "workq",
            "user": "pbsuser", "comment": "job held due to possible security breach of job tmpdir, failed to start",
            "run_count": 1, "hold_types": "s", "array_id": null}]
per_queue:
  description: Per queue, how many plain jobs, arrays and held subjobs were released (or
    would be in check mode; with O(state=listed), are held).
  returned: always
  type: dict
  sample: {"workq": {"jobs": 1, "arrays": 1, "subjobs": 1}}
per_cause:
  description: How many entries of RV(jobs) have each cause (causes with none left out).
  returned: always
  type: dict
  sample: {"failed_starts": 3, "tmpdir_security": 1}
count:
  description: Number of ids in RV(released) (O(state=released)) or of entries in RV(jobs)
    (O(state=listed)).
  returned: always
  type: int
  sample: 2
not_releasable:
  description: Held entries whose cause is in O(causes) but that C(qrls) cannot release
    alone - a subjob whose parent array has no system hold, or an array (and its subjobs)
    whose release would also release a hold of a cause not in O(causes). A warning says
    why for each.
  returned: always
  type: list
  elements: str
  sample: ["16[3].vm"]
still_held:
  description: Ids that were to be released and are still under a system hold when the
    module listed again after releasing (empty in check mode and with O(state=listed)).
  returned: always
  type: list
  elements: str
  sample: ["12.vm"]
commands:
  description: The C(qrls) commands run (in check mode, that would run).
  returned: always
  type: list
  elements: list
  sample: [["/opt/pbs/bin/qrls", "-h", "s", "12.vm", "14[].vm"]]
'''

import re

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpc.pbs.plugins.module_utils.jobs.jobs import (
    ARRAY_HELD_COMMENT_PREFIX, KIND_ARRAY, KIND_JOB, KIND_SUBJOB, QstatParseError,
    id_matches, job_kind, job_owner_user, parse_qstat_full, run_count, system_held)
from ansible_collections.hpc.pbs.plugins.module_utils.common.module_error import ModuleError
from ansible_collections.hpc.pbs.plugins.module_utils.pbs.pbs_conf import (
    pbs_conf_argument_spec, task_pbs_paths)
from ansible_collections.hpc.pbs.plugins.module_utils.pbs.pbs_command import PbsRunner
from ansible_collections.hpc.pbs.plugins.module_utils.pbs.json_output import json_jobs, parse_json_output, text_value

# Ids per qrls invocation, well below any argument list limit.
QRLS_BATCH = 500
KIND_COUNTER = {KIND_JOB: "jobs", KIND_ARRAY: "arrays", KIND_SUBJOB: "subjobs"}

# A PBS job id: sequence number, optional array brackets with an optional index, optional
# ".server" (host name labels).
JOB_ID = re.compile(r"[0-9]+(?:\[[0-9]*\])?(?:\.[A-Za-z0-9_-]+)*")
JOB_ID_FORMS = ("N, N.server, N[], N[].server, N[i] or N[i].server "
                "(for example 12, 12.pbs-server, 14[], 14[3].pbs-server)")

CAUSE_FAILED_STARTS = "failed_starts"
CAUSE_RELIABLE_STARTUP_HOOK = "reliable_startup_hook"
CAUSE_TMPDIR_SECURITY = "tmpdir_security"
CAUSE_OTHER = "other"
CAUSES = (CAUSE_FAILED_STARTS, CAUSE_RELIABLE_STARTUP_HOOK, CAUSE_TMPDIR_SECURITY, CAUSE_OTHER)
DEFAULT_RELEASE_CAUSES = [CAUSE_FAILED_STARTS, CAUSE_RELIABLE_STARTUP_HOOK]
# PBS holds a job whose run_count goes above this (OpenPBS check_failed_attempts).
MAX_FAILED_STARTS = 20
# The server's comment on a job whose mom found its tmpdir owned by someone else
# (OpenPBS req_jobobit.c, JOB_EXEC_FAIL_SECURITY); the full text ends ", failed to start".
TMPDIR_SECURITY_COMMENT = "job held due to possible security breach of job tmpdir"
# The message of files/hooks/reliable_job_startup.py when release_nodes() cannot keep the
# original select (hold_and_requeue after a failed prune), as a job comment.
RELIABLE_STARTUP_HOLD = re.compile(
    r"\S+: could not prune job \S+ back to its original select \S+: not enough healthy "
    r"nodes \(failed vnodes: .*\); job held \(s\) and requeued\s*$")


def bad_job_ids(job_ids):
    """The entries of ``job_ids`` that are not PBS job ids (see :data:`JOB_ID`)."""
    return [job_id for job_id in job_ids if not JOB_ID.fullmatch(job_id)]


def check_inputs(params):
    """Raise ModuleError, before anything runs, on a job id that is not a PBS job id or a
    queue or user name that is empty or holds white space (``params``: module.params)."""
    wrong = bad_job_ids(params["job_ids"])
    if wrong:
        raise ModuleError("job_ids: %s %s; give job ids as %s. Nothing was run."
                          % (", ".join(repr(j) for j in wrong),
                             "is not a PBS job id" if len(wrong) == 1
                             else "are not PBS job ids", JOB_ID_FORMS))
    for option in ("queues", "users"):
        for value in params[option]:
            if not value or any(c.isspace() for c in value):
                raise ModuleError("%s: %r is not a PBS name; give names without white "
                                  "space. Nothing was run." % (option, value))


# -- reading the jobs ---------------------------------------------------------------------
def jobs_from_json(text):
    """``[(job id, {attribute: text})]`` from ``qstat -f -F json [-t]``: the members of its
    ``Jobs`` object (absent when there is no job). Raises ValueError on other shapes."""
    return [(job_id, dict((name, text_value(value)) for name, value in attrs.items()))
            for job_id, attrs in json_jobs(parse_json_output(text))]


def qstat_lacks_json(rc, err):
    """Whether qstat refused ``-F json`` with its usage text (a PBS older than -F)."""
    return rc == 2 and "usage" in err


def read_jobs(runner, qstat):
    """``[(id, attributes)]`` of every job, array and subjob: ``qstat -f -F json -t``, or
    ``qstat -f -t`` text where qstat has no ``-F json``, run by ``runner`` (a
    ``PbsRunner``). Raises ModuleError on errors."""
    cmd = [qstat, "-f", "-F", "json", "-t"]
    rc, out, err = runner.run_command(cmd)
    if rc == 0:
        try:
            return jobs_from_json(out)
        except ValueError as exc:
            raise ModuleError("cannot read the JSON of qstat -f -F json -t: %s" % exc,
                              cmd=cmd, stdout=out)
    if not qstat_lacks_json(rc, err):
        raise qstat_error(cmd, rc, out, err)
    cmd = [qstat, "-f", "-t"]
    rc, out, err = runner.run_command(cmd)
    if rc != 0:
        raise qstat_error(cmd, rc, out, err)
    try:
        return parse_qstat_full(out)
    except QstatParseError as exc:
        raise ModuleError("cannot parse the output of qstat -f -t: %s" % exc, cmd=cmd,
                          stdout=out)


def qstat_error(cmd, rc, out, err):
    """The ModuleError of a qstat that could not list the jobs."""
    return ModuleError("qstat could not list the jobs (rc %s): %s. Check that pbs_server "
                       "is running." % (rc, err.strip()), cmd=cmd, rc=rc, stdout=out,
                       stderr=err)


# -- why a job is held --------------------------------------------------------------------
def job_hold_cause(attrs):
    """Cause of the system hold of a plain job or subjob (see DOCUMENTATION)."""
    comment = attrs.get("comment", "")
    if comment.startswith(TMPDIR_SECURITY_COMMENT):
        return CAUSE_TMPDIR_SECURITY
    runs = run_count(attrs)
    if runs is not None and runs > MAX_FAILED_STARTS:
        return CAUSE_FAILED_STARTS
    if RELIABLE_STARTUP_HOLD.search(comment):
        return CAUSE_RELIABLE_STARTUP_HOOK
    return CAUSE_OTHER


def array_hold_cause(attrs, subjob_causes):
    """Cause of an array's system hold: ``failed_starts`` when one of its held subjobs was
    held after failed starts or the server's comment says so, else ``other``."""
    if CAUSE_FAILED_STARTS in subjob_causes \
            or attrs.get("comment", "").startswith(ARRAY_HELD_COMMENT_PREFIX):
        return CAUSE_FAILED_STARTS
    return CAUSE_OTHER


def hold_causes(jobs):
    """``{id: cause}`` of every system-held job, subjob and array of ``jobs``."""
    causes = {}
    for job_id, attrs in jobs:
        if system_held(attrs) and job_kind(attrs) != KIND_ARRAY:
            causes[job_id] = job_hold_cause(attrs)
    for job_id, attrs in jobs:
        if system_held(attrs) and job_kind(attrs) == KIND_ARRAY:
            subjob_causes = set(causes[sub_id] for sub_id in held_subjobs(jobs, job_id, causes))
            causes[job_id] = array_hold_cause(attrs, subjob_causes)
    return causes


def held_subjobs(jobs, array_id, causes):
    """Ids of the system-held subjobs of ``array_id``."""
    return [job_id for job_id, attrs in jobs
            if attrs.get("array_id") == array_id and job_id in causes]


# -- selecting and releasing --------------------------------------------------------------
def job_entry(job_id, attrs, cause):
    return dict(id=job_id, kind=job_kind(attrs), cause=cause, queue=attrs.get("queue", ""),
                user=job_owner_user(attrs), comment=attrs.get("comment", ""),
                run_count=run_count(attrs), hold_types=attrs.get("Hold_Types", ""),
                array_id=attrs.get("array_id") or None)


def select_held(jobs, causes, queues, users, job_ids):
    """Entries (see RETURN ``jobs``) of the system-held jobs that pass the filters; an array
    named in ``job_ids`` brings its held subjobs along."""
    selected = []
    for job_id, attrs in jobs:
        if job_id not in causes:
            continue
        if queues and attrs.get("queue") not in queues:
            continue
        if users and job_owner_user(attrs) not in users:
            continue
        if job_ids and not (id_matches(job_id, job_ids)
                            or id_matches(attrs.get("array_id", ""), job_ids)):
            continue
        selected.append(job_entry(job_id, attrs, causes[job_id]))
    return selected


class ReleasePlan:
    """What ``qrls -h s`` is given for the selected entries whose cause is to be released.

    ``release``: ids for qrls (plain jobs and arrays; a subjob through its parent array);
    ``planned``: the entries that release frees; ``kept``: entries of other causes;
    ``not_releasable``: ``{id: why}``; ``per_queue``: counts of ``planned``.
    """

    def __init__(self, selected, jobs, causes, release_causes):
        self.by_id = dict(jobs)
        self.jobs = jobs
        self.causes = causes
        self.release_causes = release_causes
        self.release, self.planned, self.kept = [], [], []
        self.not_releasable, self.per_queue = {}, {}
        for entry in selected:
            self.add(entry)

    def add(self, entry):
        if entry["cause"] not in self.release_causes:
            self.kept.append(entry)
            return
        target = entry["array_id"] if entry["kind"] == KIND_SUBJOB else entry["id"]
        why = self.why_not_releasable(entry, target)
        if why:
            self.not_releasable[entry["id"]] = why
            return
        self.planned.append(entry)
        if entry["kind"] == KIND_SUBJOB:
            count_in(self.per_queue, entry["queue"], KIND_SUBJOB)
        if target not in self.release:
            self.release.append(target)
            parent = self.by_id[target]
            count_in(self.per_queue, parent.get("queue", ""), job_kind(parent))

    def why_not_releasable(self, entry, target):
        """Why qrls of ``target`` cannot free ``entry`` alone, or None."""
        if entry["kind"] == KIND_SUBJOB and target not in self.causes:
            return ("its array %s has no system hold, and qrls releases a subjob only "
                    "through its array" % target)
        if job_kind(self.by_id[target]) != KIND_ARRAY:
            return None
        others = [job_id for job_id in [target] + held_subjobs(self.jobs, target, self.causes)
                  if self.causes[job_id] not in self.release_causes]
        if others:
            return ("qrls of its array %s would also release %s" % (target, ", ".join(
                "%s (held for %s)" % (job_id, self.causes[job_id]) for job_id in others)))
        return None


def count_in(per_queue, queue, kind):
    counts = per_queue.setdefault(queue, dict(jobs=0, arrays=0, subjobs=0))
    counts[KIND_COUNTER[kind]] += 1


def listed_counts(selected):
    per_queue = {}
    for entry in selected:
        count_in(per_queue, entry["queue"], entry["kind"])
    return per_queue


def cause_counts(selected):
    counts = {}
    for entry in selected:
        counts[entry["cause"]] = counts.get(entry["cause"], 0) + 1
    return counts


def parse_qrls_errors(stderr, ids):
    """``{job id: message}`` from qrls's ``qrls: <message> <job id>`` lines."""
    errors = {}
    for line in stderr.splitlines():
        line = line.strip()
        if not line.startswith("qrls: "):
            continue
        for job_id in ids:
            if line.endswith(" " + job_id):
                errors[job_id] = line[len("qrls: "):-len(job_id) - 1].strip()
    return errors


def unattributed_qrls_errors(stderr, ids):
    """The lines of qrls's ``stderr`` that name none of ``ids`` (such as ``qrls: cannot
    connect to server <server> (errno=<n>)``, printed for a job without its id)."""
    return [line.strip() for line in stderr.splitlines()
            if line.strip() and not any(line.strip().endswith(" " + job_id) for job_id in ids)]


def run_release(runner, bin_dir, plan, commands, result):
    """Run the qrls commands, list again, and fill ``still_held``; raise ModuleError naming
    what qrls refused (the others were released).

    A job qrls names in an error line failed. A job of a failed call that qrls did not
    name failed too when it is still held afterwards (qrls printed an error without its
    id, such as a lost connection); its failure text is those unattributed lines."""
    failures = {}
    unnamed = {}
    for cmd in commands:
        rc, out, err = runner.run_command(cmd)
        if rc != 0:
            errors = parse_qrls_errors(err, cmd[3:])
            failures.update(errors)
            text = "; ".join(unattributed_qrls_errors(err, cmd[3:])) or "qrls exited %d" % rc
            unnamed.update((job_id, text) for job_id in cmd[3:] if job_id not in errors)
    after = read_jobs(runner, bin_dir + "qstat")
    held_after = set(job_id for job_id, attrs in after if system_held(attrs))
    result["still_held"] = [entry["id"] for entry in plan.planned if entry["id"] in held_after]
    failures.update((job_id, text) for job_id, text in unnamed.items() if job_id in held_after)
    if failures:
        result["released"] = [job_id for job_id in plan.release if job_id not in failures]
        raise ModuleError("qrls refused to release %d of %d jobs: %s. The others were "
                          "released." % (len(failures), len(plan.release), "; ".join(
                              "%s: %s" % item for item in sorted(failures.items()))),
                          failed_ids=sorted(failures), **result)


def diff_of(module, selected, result, planned):
    if module.params["state"] == "listed":
        held_after = [entry["id"] for entry in selected]
    elif module.check_mode:
        freed = set(entry["id"] for entry in planned) | set(result["released"])
        held_after = [entry["id"] for entry in selected if entry["id"] not in freed]
    else:
        planned_ids = set(entry["id"] for entry in planned)
        held_after = [entry["id"] for entry in selected if entry["id"] not in planned_ids]
        held_after += result["still_held"]
    return dict(before="".join("%s (%s)\n" % (e["id"], e["cause"]) for e in selected),
                after="".join("%s\n" % i for i in held_after),
                before_header="under a system hold (before)",
                after_header="under a system hold (after)")


def run(module):
    """The task: the result (dict); raises ModuleError where it fails."""
    check_inputs(module.params)

    paths = task_pbs_paths(module.params)
    bin_dir = paths.exec_dir.rstrip("/") + "/bin/"
    runner = PbsRunner.for_module(module, paths)
    jobs = read_jobs(runner, bin_dir + "qstat")
    causes = hold_causes(jobs)
    selected = select_held(jobs, causes, module.params["queues"], module.params["users"],
                           module.params["job_ids"])
    plan = ReleasePlan(selected, jobs, causes, module.params["causes"])
    result = dict(changed=False, jobs=selected, released=[], kept=plan.kept,
                  not_releasable=sorted(plan.not_releasable), still_held=[], commands=[],
                  per_queue=listed_counts(selected), per_cause=cause_counts(selected),
                  count=len(selected))
    for job_id, why in sorted(plan.not_releasable.items()):
        module.warn("%s cannot be released: %s" % (job_id, why))
    planned = []
    if module.params["state"] == "released":
        planned = plan.planned
        commands = [[bin_dir + "qrls", "-h", "s"] + plan.release[i:i + QRLS_BATCH]
                    for i in range(0, len(plan.release), QRLS_BATCH)]
        result.update(released=list(plan.release), per_queue=plan.per_queue,
                      count=len(plan.release), commands=commands, changed=bool(plan.release))
        if plan.release and not module.check_mode:
            run_release(runner, bin_dir, plan, commands, result)
    if module._diff:
        result["diff"] = diff_of(module, selected, result, planned)
    return result


def main():
    argument_spec = dict(
        state=dict(type="str", default="listed", choices=["listed", "released"]),
        causes=dict(type="list", elements="str", choices=list(CAUSES),
                    default=list(DEFAULT_RELEASE_CAUSES)),
        queues=dict(type="list", elements="str", default=[]),
        users=dict(type="list", elements="str", default=[]),
        job_ids=dict(type="list", elements="str", default=[]),
    )
    argument_spec.update(pbs_conf_argument_spec())
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    try:
        result = run(module)
    except ModuleError as exc:
        module.fail_json(**exc.fail_kwargs())
    module.exit_json(**result)


if __name__ == "__main__":
    main()
