#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hpc.pbs developers
# Apache License 2.0 (https://www.apache.org/licenses/LICENSE-2.0), as galaxy.yml says

DOCUMENTATION = r'''
---
module: held_jobs
short_description: List and release PBS jobs and job arrays held after too many failed starts
description:
  - Finds the jobs, job arrays and subjobs that the PBS server put under a system hold
    because they could not be started (for example a mom hook rejected every start),
    C(job_state) C(H), C(Hold_Types) including C(s) and the server's comment
    C(job held, too many failed attempts to run) (jobs, subjobs) or
    C(Job Array Held, too many failed attempts to run subjob <id>) (arrays). Jobs held by
    a user or operator, or by the system for other reasons, are never selected.
  - With O(state=released) it releases their system hold with one C(qrls -h s) call (per
    500 ids). Subjobs cannot be released on their own (C(qrls) takes jobs and arrays);
    they are released through their parent array, which C(qrls) of a system-held array
    does before it releases the array itself (seed job-array-subjob-run-count-hold-release,
    interface 3). A held subjob whose parent array is not under a system hold cannot be
    released by PBS and is reported in RV(not_releasable).
  - Only the system hold is released; other holds, C(run_count) and every other attribute
    are left as they are. A released job whose C(run_count) is above 20 is held again
    after its next failed start.
  - Reads with one C(qstat -f -t) call, and after releasing lists again once to report
    what is still held.
version_added: "0.1.0"
author: hpc.pbs developers (@hpc-pbs)
extends_documentation_fragment:
  - hpc.pbs.pbs
options:
  state:
    description:
      - C(listed) only reports the held jobs. C(released) releases their system hold
        with C(qrls -h s).
      - Which jobs are held comes from the job-array seed
        job-array-subjob-run-count-hold-release - the server increments the
        run_count of subjobs as of regular jobs and holds a job or subjob whose
        run_count goes above 20 (interface 1), holding its parent array too
        (interface 2); C(qrls) of the held array releases its held subjobs
        (interface 3).
    type: str
    default: listed
    choices: [listed, released]
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
      - Only these jobs, arrays or subjobs, given as full ids (C(14[].vm)) or without the
        server suffix (C(14), C(14[]), C(14[3])). Naming a subjob selects its release
        through its parent array (interface 3 of seed
        job-array-subjob-run-count-hold-release). Empty means every job.
    type: list
    elements: str
    default: []
notes:
  - Supports check mode (lists what would be released, changes nothing) and diff mode
    (the held ids before and after).
  - Runs C(PBS_EXEC/bin/qstat) and C(PBS_EXEC/bin/qrls) on the host it is run on, which
    must be allowed to release system holds (a PBS manager or operator, such as root on
    the server host).
'''

EXAMPLES = r'''
- name: List jobs held after failed starts in workq
  hpc.pbs.held_jobs:
    queues: [workq]
  register: held

- name: Release every job and array held after failed starts
  hpc.pbs.held_jobs:
    state: released
  register: released

- name: Say how many were released, per queue
  ansible.builtin.debug:
    msg: "{{ released.per_queue }}"
'''

RETURN = r'''
jobs:
  description: The jobs, arrays and subjobs held after failed starts that match the
    filters, as found before any release.
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
    queue:
      description: Queue name.
      type: str
    user:
      description: User part of C(Job_Owner).
      type: str
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
  sample: [{"id": "12.vm", "kind": "job", "queue": "workq", "user": "pbsuser",
            "comment": "job held, too many failed attempts to run", "run_count": 21,
            "hold_types": "s", "array_id": null}]
released:
  description: Ids given to C(qrls -h s) (jobs and array parents), or that would be in check
    mode. Empty when O(state=listed).
  returned: always
  type: list
  elements: str
  sample: ["12.vm", "14[].vm"]
per_queue:
  description: Per queue, how many plain jobs, arrays and held subjobs were released (or
    would be in check mode; with O(state=listed), are held).
  returned: always
  type: dict
  sample: {"workq": {"jobs": 1, "arrays": 1, "subjobs": 1}}
count:
  description: Number of ids in RV(released) (O(state=released)) or of entries in RV(jobs)
    (O(state=listed)).
  returned: always
  type: int
not_releasable:
  description: Held subjobs that PBS cannot release because their parent array is not
    under a system hold.
  returned: always
  type: list
  elements: str
still_held:
  description: Ids still held after failed starts when the module listed again after
    releasing (empty in check mode and with O(state=listed)).
  returned: always
  type: list
  elements: str
commands:
  description: The C(qrls) commands run (in check mode, that would run).
  returned: always
  type: list
  elements: list
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpc.pbs.plugins.module_utils.jobs import (
    KIND_ARRAY, KIND_JOB, KIND_SUBJOB, QstatParseError, has_system_hold,
    held_by_failed_runs, id_matches, job_kind, job_owner_user, parse_qstat_full,
    run_count)
from ansible_collections.hpc.pbs.plugins.module_utils.pbs_conf import (
    module_pbs_paths, pbs_conf_argument_spec)

# Ids per qrls invocation, well below any argument list limit.
QRLS_BATCH = 500
KIND_COUNTER = {KIND_JOB: "jobs", KIND_ARRAY: "arrays", KIND_SUBJOB: "subjobs"}


def read_jobs(module, qstat):
    """``[(id, attributes)]`` of every job, array and subjob from one ``qstat -f -t``."""
    cmd = [qstat, "-f", "-t"]
    rc, out, err = module.run_command(cmd)
    if rc != 0:
        module.fail_json(msg="qstat could not list the jobs (rc %s): %s. Check that "
                             "pbs_server is running." % (rc, err.strip()),
                         cmd=cmd, rc=rc, stdout=out, stderr=err)
    try:
        return parse_qstat_full(out)
    except QstatParseError as exc:
        module.fail_json(msg="cannot parse the output of qstat -f -t: %s" % exc, cmd=cmd,
                         stdout=out)
    return []


def job_entry(job_id, attrs):
    return dict(id=job_id, kind=job_kind(attrs), queue=attrs.get("queue", ""),
                user=job_owner_user(attrs), comment=attrs.get("comment", ""),
                run_count=run_count(attrs), hold_types=attrs.get("Hold_Types", ""),
                array_id=attrs.get("array_id") or None)


def select_held(jobs, queues, users, job_ids):
    """Entries (see RETURN ``jobs``) of the jobs held after failed runs that pass the
    filters; an array parent named in ``job_ids`` brings its held subjobs along."""
    selected = []
    for job_id, attrs in jobs:
        if not held_by_failed_runs(attrs):
            continue
        if queues and attrs.get("queue") not in queues:
            continue
        if users and job_owner_user(attrs) not in users:
            continue
        if job_ids and not (id_matches(job_id, job_ids)
                            or id_matches(attrs.get("array_id", ""), job_ids)):
            continue
        selected.append(job_entry(job_id, attrs))
    return selected


def plan_release(selected, jobs):
    """``(ids to qrls, not_releasable subjob ids, per_queue counts)``.

    Plain jobs and arrays are released by their own id; a subjob through its parent array
    when that array is under a system hold (qrls releases the subjobs first), else not at
    all.
    """
    by_id = dict(jobs)
    release = []
    not_releasable = []
    per_queue = {}
    for entry in selected:
        target = entry["id"]
        if entry["kind"] == KIND_SUBJOB:
            parent = by_id.get(entry["array_id"])
            if parent is None or not has_system_hold(parent):
                not_releasable.append(entry["id"])
                continue
            target = entry["array_id"]
            count_in(per_queue, entry["queue"], KIND_SUBJOB)
        if target not in release:
            release.append(target)
            count_in(per_queue, by_id[target].get("queue", ""), job_kind(by_id[target]))
    return release, not_releasable, per_queue


def count_in(per_queue, queue, kind):
    counts = per_queue.setdefault(queue, dict(jobs=0, arrays=0, subjobs=0))
    counts[KIND_COUNTER[kind]] += 1


def listed_counts(selected):
    per_queue = {}
    for entry in selected:
        count_in(per_queue, entry["queue"], entry["kind"])
    return per_queue


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


def main():
    argument_spec = dict(
        state=dict(type="str", default="listed", choices=["listed", "released"]),
        queues=dict(type="list", elements="str", default=[]),
        users=dict(type="list", elements="str", default=[]),
        job_ids=dict(type="list", elements="str", default=[]),
    )
    argument_spec.update(pbs_conf_argument_spec())
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    for option in ("queues", "users", "job_ids"):
        for value in module.params[option]:
            if not value or any(c.isspace() for c in value):
                module.fail_json(msg="%s: %r is not a PBS name; give names without white "
                                     "space. Nothing was changed." % (option, value))

    paths = module_pbs_paths(module)
    bin_dir = paths.exec_dir.rstrip("/") + "/bin/"
    jobs = read_jobs(module, bin_dir + "qstat")
    selected = select_held(jobs, module.params["queues"], module.params["users"],
                           module.params["job_ids"])
    result = dict(changed=False, jobs=selected, released=[], not_releasable=[],
                  still_held=[], commands=[], per_queue=listed_counts(selected),
                  count=len(selected))
    if module.params["state"] == "released":
        release, not_releasable, per_queue = plan_release(selected, jobs)
        commands = [[bin_dir + "qrls", "-h", "s"] + release[i:i + QRLS_BATCH]
                    for i in range(0, len(release), QRLS_BATCH)]
        result.update(released=release, not_releasable=not_releasable, per_queue=per_queue,
                      count=len(release), commands=commands, changed=bool(release))
        if not_releasable:
            module.warn("held subjobs whose parent array has no system hold cannot be "
                        "released by qrls: %s" % ", ".join(not_releasable))
        if release and not module.check_mode:
            failures = {}
            for cmd in commands:
                rc, out, err = module.run_command(cmd)
                if rc != 0:
                    errors = parse_qrls_errors(err, cmd[3:])
                    failures.update(errors or dict((job_id, err.strip()) for job_id in cmd[3:]))
            after = select_held(read_jobs(module, bin_dir + "qstat"), [], [],
                                [entry["id"] for entry in selected])
            result["still_held"] = [entry["id"] for entry in after]
            if failures:
                result["released"] = [job_id for job_id in release if job_id not in failures]
                module.fail_json(msg="qrls refused to release %d of %d jobs: %s. The others "
                                     "were released." % (len(failures), len(release),
                                                         "; ".join("%s: %s" % item for item in
                                                                   sorted(failures.items()))),
                                 failed_ids=sorted(failures), **result)
    if module._diff:
        if module.params["state"] == "listed":
            held_after = [entry["id"] for entry in selected]
        elif module.check_mode:
            held_after = [entry["id"] for entry in selected
                          if entry["id"] not in result["released"]
                          and entry["array_id"] not in result["released"]]
        else:
            held_after = result["still_held"]
        result["diff"] = dict(before="".join("%s\n" % e["id"] for e in selected),
                              after="".join("%s\n" % i for i in held_after),
                              before_header="held after failed starts (before)",
                              after_header="held after failed starts (after)")
    module.exit_json(**result)


if __name__ == "__main__":
    main()
