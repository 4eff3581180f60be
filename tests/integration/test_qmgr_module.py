"""hpc.pbs.qmgr and hpc.pbs.hook on the test cluster, on both backends (the mock and a real
OpenPBS): hostile and mistaken input is refused with a message saying what is wrong and
what is accepted and changes nothing (a before/after snapshot of server, scheduler, hooks
and nodes, and qsub still works); unsetting an attribute OpenPBS keeps listing at its
default is idempotent; the values the collection counts as "unset" are the ones each
backend lists after an unset.
"""
import json
import os
import re
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_rollout import QMGR, REPO, SERVER, ansible_env, run_playbook  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.cluster_moms(2)]

MOMS = ("mom1", "mom2")
# Lines of a listing that change on their own (job counts, times, the license pool).
VOLATILE = re.compile(r"^\s*(state_count|total_jobs|last_state_change_time|last_used_time|"
                      r"resources_assigned\.|license_count|jobs) ")
SNAPSHOT_COMMANDS = ("print server", "list server", "list sched default", "list hook",
                     "list pbshook", "list node mom1", "list node mom2")

# Each case: (task name, module, arguments, text the refusal must hold).
HOSTILE = [
    ("attribute name with commands after newlines", "hpc.pbs.qmgr",
     {"object_type": "server",
      "attributes": {"comment = x\ndelete hook pbs_cgroups\nset server comment": "y"}},
     "newline"),
    ("attribute name with a second assignment", "hpc.pbs.qmgr",
     {"object_type": "server", "attributes": {"scheduling = False, comment": "x"}},
     "attribute name"),
    ("two nodes in one name", "hpc.pbs.qmgr",
     {"object_type": "node", "name": "mom1,mom2", "list_mode": "append",
      "attributes": {"state": "offline"}}, "option names"),
    ("hook name with a trailing newline", "hpc.pbs.hook",
     {"name": "pbs_cgroups\n", "state": "absent"}, "newline"),
    ("pbshook name with a second command", "hpc.pbs.hook",
     {"name": "PBS_cray_atom\ndelete hook pbs_cgroups", "type": "pbs", "enabled": True},
     "newline"),
    ("tolerate_node_failures qsub refuses", "hpc.pbs.qmgr",
     {"object_type": "server",
      "attributes": {"default_qsub_arguments": "-W tolerate_node_failures=bogus"}},
     "tolerate_node_failures must be one of"),
    ("a -W item qsub refuses", "hpc.pbs.qmgr",
     {"object_type": "server", "attributes": {"default_qsub_arguments": "-W foo"}},
     "name=value"),
    ("default_queue holding an assignment", "hpc.pbs.qmgr",
     {"object_type": "server", "attributes": {"default_queue": "workq, scheduling = False"}},
     "queue name"),
    ("default_queue of no queue", "hpc.pbs.qmgr",
     {"object_type": "server", "attributes": {"default_queue": "nosuchq"}},
     "does not exist"),
    ("negative scheduler_iteration", "hpc.pbs.qmgr",
     {"object_type": "server", "attributes": {"scheduler_iteration": -5}}, "out of range"),
    ("ncpus that is no number", "hpc.pbs.qmgr",
     {"object_type": "node", "name": "mom1", "attributes": {"resources_available.ncpus": "abc"}},
     "not a whole number"),
    ("job_run_wait PBS does not have", "hpc.pbs.qmgr",
     {"object_type": "sched", "attributes": {"job_run_wait": "sometimes"}}, "execjob_hook"),
    ("node state PBS does not have", "hpc.pbs.qmgr",
     {"object_type": "node", "name": "mom1", "list_mode": "append",
      "attributes": {"state": "bogus"}}, "'bogus'"),
]


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return ansible_env(tmp_path_factory.mktemp("ansible"))


@pytest.fixture(scope="module")
def listed_defaults(env):
    """``qmgr_attributes.LISTED_DEFAULTS`` of this checkout."""
    root = env.get("ANSIBLE_COLLECTIONS_PATH") or os.path.join(REPO, "build", "collections")
    if root not in sys.path:
        sys.path.insert(0, root)
    from ansible_collections.hpc.pbs.plugins.module_utils.server import qmgr_attributes
    return qmgr_attributes.LISTED_DEFAULTS


def qmgr(cluster, command):
    return cluster.exec(SERVER, [QMGR, "-c", command])


def snapshot(cluster):
    """Server, scheduler, hooks, nodes as qmgr shows them, volatile lines left out."""
    text = []
    for command in SNAPSHOT_COMMANDS:
        proc = qmgr(cluster, command)
        text.append("$ %s (rc %d)\n" % (command, proc.returncode))
        text.extend(line for line in proc.stdout.replace(",\n\t", ",").splitlines(True)
                    if not VOLATILE.match(line))
    return "".join(text)


def write_playbook(tmp_path, name, tasks):
    path = tmp_path / name
    path.write_text(json.dumps([{"hosts": SERVER, "gather_facts": False, "tasks": tasks}],
                               indent=1))
    return str(path)


def test_hostile_input_is_refused_saying_why_and_changes_nothing(pbs_cluster, env, tmp_path):
    tasks = []
    for index, (name, module, args, _text) in enumerate(HOSTILE):
        tasks.append({"name": name, module: args, "register": "case%d" % index,
                      "ignore_errors": True})
    for index, (name, _module, _args, text) in enumerate(HOSTILE):
        tasks.append({"name": "Check: %s" % name, "ansible.builtin.assert": {
            "that": ["case%d is failed" % index, "case%d is not changed" % index,
                     "%r in case%d.msg" % (text, index), "'accepted' in case%d.msg" % index],
            "fail_msg": "{{ case%d | to_json }}" % index}})
    playbook = write_playbook(tmp_path, "hostile.yml", tasks)
    before = snapshot(pbs_cluster)
    rc, out, counts = run_playbook(pbs_cluster, env, playbook, {})
    assert rc == 0, out
    assert counts[SERVER]["failed"] == 0, out
    assert snapshot(pbs_cluster) == before
    job = pbs_cluster.exec(SERVER, ["qsub", "--", "/bin/true"], user="pbsuser")
    assert job.returncode == 0, job.stderr
    pbs_cluster.exec(SERVER, ["qdel", "-W", "force", job.stdout.strip()])


def test_several_nodes_only_through_names(pbs_cluster, env, tmp_path):
    tasks = [
        {"name": "Comment both moms", "hpc.pbs.qmgr": {
            "object_type": "node", "names": list(MOMS), "attributes": {"comment": "qmgr test"}},
         "register": "first"},
        {"name": "Again", "hpc.pbs.qmgr": {
            "object_type": "node", "names": list(MOMS), "attributes": {"comment": "qmgr test"}},
         "register": "second"},
        {"name": "Clear", "hpc.pbs.qmgr": {
            "object_type": "node", "names": list(MOMS), "attributes": {"comment": None}},
         "register": "cleared"},
        {"ansible.builtin.assert": {"that": [
            "first is changed", "second is not changed", "cleared is changed",
            "first.objects.mom1.comment == 'qmgr test'",
            "first.objects.mom2.comment == 'qmgr test'",
            "'comment' not in cleared.objects.mom1"]}},
    ]
    rc, out, _unused = run_playbook(pbs_cluster, env, write_playbook(tmp_path, "names.yml", tasks), {})
    assert rc == 0, out


def test_unset_of_an_attribute_listed_at_its_default_is_idempotent(pbs_cluster, env, tmp_path):
    tasks = [
        {"name": "Set", "hpc.pbs.qmgr": {"object_type": "server",
                                         "attributes": {"scheduler_iteration": 300}}},
        {"name": "Unset", "hpc.pbs.qmgr": {"object_type": "server", "state": "absent",
                                           "attributes": {"scheduler_iteration": None}},
         "register": "unset"},
        {"name": "Unset again", "hpc.pbs.qmgr": {"object_type": "server", "state": "absent",
                                                 "attributes": {"scheduler_iteration": None}},
         "register": "again"},
        {"ansible.builtin.assert": {"that": [
            "unset is changed", "again is not changed",
            "unset.attributes.scheduler_iteration == '600'"]}},
    ]
    rc, out, _unused = run_playbook(pbs_cluster, env, write_playbook(tmp_path, "unset.yml", tasks), {})
    assert rc == 0, out
    assert "scheduler_iteration = 600" in qmgr(pbs_cluster, "list server scheduler_iteration").stdout


@pytest.mark.parametrize("object_type,listing", [("server", "list server"),
                                                 ("sched", "list sched default")])
def test_each_listed_default_is_what_the_backend_lists_after_unset(pbs_cluster, listed_defaults,
                                                                   object_type, listing):
    wrong = {}
    try:
        for attribute, value in sorted(listed_defaults[object_type].items()):
            if (object_type, attribute) == ("sched", "state"):
                continue  # read-only: qmgr refuses to unset it
            proc = qmgr(pbs_cluster, "unset %s %s" % (listing.split(" ", 1)[1], attribute))
            assert proc.returncode == 0, (attribute, proc.stderr)
            shown = qmgr(pbs_cluster, "%s %s" % (listing, attribute)).stdout
            if "    %s = %s\n" % (attribute, value) not in shown:
                wrong[attribute] = (value, shown)
    finally:
        # unset server scheduling turns the scheduler's scheduling off on OpenPBS
        qmgr(pbs_cluster, "set server scheduling = True")
        qmgr(pbs_cluster, "set sched default scheduling = True")
    assert not wrong
