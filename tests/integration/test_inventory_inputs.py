"""Inputs that come from a real inventory (group_vars / host_vars), through ``ansible-playbook``.

Each case is an inventory made from the test cluster's own (``group_vars/all.yml`` and
``host_vars/<host>.yml`` beside a copy of its ``inventory.ini``) and a playbook of
``playbooks/``. Every case must stop the run in its first step, before anything is read
or changed, with a message naming the variable (or inventory host) and what is accepted:

- a value given to one host that the playbook would silently not use (read on the PBS
  server or on the controller only, or once for every mom);
- a variable naming a host that is not in the inventory;
- a boolean given a word that is not a boolean;
- a report path that cannot be written on the controller;
- a mom whose PBS node name qmgr would not accept.

Every case's inventory also asks for mom tunables the cluster does not have
(``$job_launch_delay`` / ``$sister_join_job_alarm`` 41), so a case that was not refused
would change the moms: one snapshot of the server (qmgr state, hooks, nodes) and of every
mom's config file and pid before the cases and one after must be identical. Then a good
inventory is used: audit passes its checks and writes its report, and a rollout takes its
batch sizes from the inventory (Ansible templates ``serial`` without the inventory's
variables; rollout.yml reads them from the PBS server's).

Mock backend only: the checks run on the controller before any PBS command; the PBS side of
each playbook has its own tests on both backends.
"""
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_hostile_inputs import (VOLATILE, failure_messages, mom_snapshot_script,  # noqa: E402
                                 server_snapshot_script, snapshot_diff)
from test_rollout import REPO, SERVER, ansible_env, recap  # noqa: E402

pytestmark = [pytest.mark.integration]

MOMS = ("mom1", "mom2")
PBS_HOME = "/var/spool/pbs"
BASE_VARS = {"reliable_job_startup_job_launch_delay": 41, "reliable_job_startup_sister_join_job_alarm": 41}
NOT_BOOL = "is not a boolean; accepted: true/false, yes/no, on/off, y/n, t/f or 1/0 (any case)"
IGNORED = "would not be used; accepted: the same value for every host (group all, or -e)"

# id, playbook, group all vars (over BASE_VARS), {host: host vars}, extra vars, texts the message holds.
CASES = [
    ("site-server-only-variable-set-on-a-mom", "site.yml", {}, {"mom2": {"reliable_job_startup_hook_order": 5}}, {},
     ["reliable_job_startup_hook_order is 5 for mom2", "on the PBS server pbs-server", "not set", IGNORED]),
    ("site-switch-set-on-the-server-only", "site.yml", {}, {SERVER: {"site_cgroup_resize": True}}, {},
     ["site_cgroup_resize is not set for mom1", "as one value for every host", "where it is true",
      "the value (not set) for mom1 would not be used", "(group all, or -e)"]),
    ("site-bool-two-words", "site.yml", {"site_cgroup_resize": "yes please"}, {}, {},
     ["site_cgroup_resize (for pbs-server): 'yes please' " + NOT_BOOL]),
    ("site-bool-enabled", "site.yml", {"site_cray_atom": "enabled"}, {}, {},
     ["site_cray_atom (for pbs-server): 'enabled' " + NOT_BOOL]),
    # Every playbook's plays take ansible_pipelining from it (playbooks/vars/connection.yml).
    ("rollout-pipelining-word", "rollout.yml", {}, {"mom2": {"hpc_pbs_pipelining": "sometimes"}}, {},
     ["hpc_pbs_pipelining (for mom2): 'sometimes' " + NOT_BOOL]),
    # Checked by the role's argument spec (Ansible's strict boolean()).
    ("site-bool-two", "site.yml", {"reliable_job_startup_hook_enabled": "2"}, {}, {},
     ["argument 'reliable_job_startup_hook_enabled'", "The value '2' is not a valid boolean. Valid booleans include"]),
    ("rollout-tunable-set-on-one-mom", "rollout.yml", {}, {"mom1": {"reliable_job_startup_job_launch_delay": 77}}, {},
     ["reliable_job_startup_job_launch_delay is 77 for mom1", "once for every mom", "where it is 41", IGNORED]),
    ("rollout-option-set-on-one-mom", "rollout.yml", {}, {"mom2": {"rollout_drain_timeout": 0}}, {},
     ["rollout_drain_timeout is 0 for mom2", IGNORED]),
    ("rollout-server-host-not-in-inventory", "rollout.yml", {"mom_tunables_server_host": "pbs-head01"}, {}, {},
     ["mom_tunables_server_host (for pbs-server) names \"pbs-head01\", which is not a host of the inventory",
      "accepted: null or one of pbs-server, mom1, mom2"]),
    # Checked by the role's argument spec (Ansible's strict boolean()), right after the inventory's checks.
    ("rollout-bool-word", "rollout.yml", {"rollout_drain": "enabled"}, {}, {},
     ["argument 'rollout_drain'", "The value 'enabled' is not a valid boolean. Valid booleans include"]),
    ("rollout-node-name-with-a-comma", "rollout.yml", {}, {"mom2": {"pbs_node_name": "mom2,mom1"}}, {},
     ["the PBS node name of the inventory host mom2 (pbs_node_name)", "node name 'mom2,mom1' is not accepted",
      "accepted: a letter or digit"]),
    ("rollout-node-name-starting-with-a-dash", "rollout.yml", {}, {"mom1": {"pbs_node_name": "-mom1"}}, {},
     ["node name '-mom1' is not accepted", "accepted: a letter or digit"]),
    ("recover-variable-set-on-a-mom", "recover.yml", {}, {"mom1": {"recover_queues": ["workq"]}}, {},
     ["recover_queues is [\"workq\"] for mom1", "on the PBS server pbs-server only", IGNORED]),
    # recover.yml's play vars used to outrank the inventory: its value was never checked nor used.
    ("recover-inventory-value-is-used", "recover.yml", {"recover_causes": ["bogus"]}, {}, {},
     ["bogus", "failed_starts"]),
    ("audit-report-directory-missing", "audit.yml", {"audit_report_path": "/nonexistent/pbs/audit.json"}, {}, {},
     ["audit_report_path cannot be written on the controller: the directory /nonexistent/pbs does not exist",
      "accepted: a file path whose directory exists and is writable on the controller"]),
    ("audit-report-directory-not-writable", "audit.yml", {"audit_report_path": "/proc/pbs-audit.json"}, {}, {},
     ["audit_report_path cannot be written on the controller: the directory /proc cannot be written ("]),
    ("audit-report-path-is-a-directory", "audit.yml", {}, {}, {"audit_report_path": "/tmp"},
     ["audit_report_path cannot be written on the controller: /tmp is a directory"]),
    ("audit-report-path-set-on-the-server", "audit.yml", {}, {SERVER: {"audit_report_path": "/tmp/pbs-audit.json"}}, {},
     ["audit_report_path is \"/tmp/pbs-audit.json\" for pbs-server", "on the controller (localhost) only", IGNORED]),
    ("audit-bool-word", "audit.yml", {"audit_fail_on_drift": "sometimes"}, {}, {},
     ["audit_fail_on_drift (for localhost): 'sometimes' " + NOT_BOOL]),
]
# Cases refused by a check after the inventory's: the roles' argument specs, hpc.pbs.held_jobs.
REFUSED_LATER = ("site-bool-two", "rollout-bool-word", "recover-inventory-value-is-used")


@pytest.fixture(scope="module")
def cluster(cluster_factory, pbs_backend):
    if pbs_backend != "mock":
        pytest.skip("the inventory checks run on the controller before any PBS command; "
                    "each playbook's PBS side is tested on both backends elsewhere")
    cluster = cluster_factory(moms=len(MOMS))
    yield cluster
    cluster.down()


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return ansible_env(tmp_path_factory.mktemp("ansible"))


def make_inventory(cluster, directory, group_vars, host_vars):
    """The cluster's inventory.ini in ``directory`` with group_vars/all.yml and host_vars."""
    os.makedirs(os.path.join(directory, "group_vars"))
    os.makedirs(os.path.join(directory, "host_vars"))
    shutil.copy(cluster.inventory, os.path.join(directory, "inventory.ini"))
    with open(os.path.join(directory, "group_vars", "all.yml"), "w") as handle:
        yaml.safe_dump(dict(BASE_VARS, **group_vars), handle)
    for host, variables in host_vars.items():
        with open(os.path.join(directory, "host_vars", "%s.yml" % host), "w") as handle:
            yaml.safe_dump(variables, handle)
    return os.path.join(directory, "inventory.ini")


def run(env, inventory, playbook, extra_vars, cwd):
    """``ansible-playbook`` from ``cwd``: ``(rc, output, recap counts)``."""
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", inventory,
            os.path.join(REPO, "playbooks", playbook)]
    if extra_vars:
        argv += ["-e", yaml.safe_dump(extra_vars, default_flow_style=True).strip()]
    proc = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          stdin=subprocess.DEVNULL, timeout=600, check=False)
    return proc.returncode, proc.stdout, recap(proc.stdout)


def snapshot(cluster):
    """``{part: text}``: the server's qmgr state, hooks and nodes, every mom's config and pid."""
    reads = {SERVER: (SERVER, server_snapshot_script())}
    reads.update({mom: (mom, mom_snapshot_script()) for mom in MOMS})
    with concurrent.futures.ThreadPoolExecutor(len(reads)) as pool:
        futures = {part: pool.submit(cluster.exec, node, ["sh", "-c", script])
                   for part, (node, script) in reads.items()}
        parts = {part: future.result().stdout for part, future in futures.items()}
    return {part: "".join(line for line in text.replace(",\n\t", ",").splitlines(True) if not VOLATILE.match(line))
            for part, text in parts.items()}


@pytest.fixture(scope="module")
def refused(cluster, env, tmp_path_factory):
    """Every case run, three at a time, between two snapshots: ``{"runs": {id: (rc, output,
    counts, cwd)}, "diff", "before"}``."""
    work = tmp_path_factory.mktemp("inventory-inputs")
    before = snapshot(cluster)

    def one(case):
        case_id, playbook, group_vars, host_vars, extra_vars, _expect = case
        directory = str(work / case_id)
        inventory = make_inventory(cluster, directory, group_vars, host_vars)
        return run(env, inventory, playbook, extra_vars, directory) + (directory,)
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        runs = dict(zip([case[0] for case in CASES], pool.map(one, CASES)))
    return {"runs": runs, "diff": snapshot_diff(before, snapshot(cluster)), "before": before}


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_inventory_input_is_refused_before_anything_changes(refused, case):
    case_id, playbook, _group_vars, _host_vars, _extra_vars, expect = case
    rc, output, counts, cwd = refused["runs"][case_id]
    assert rc != 0, "case %s was not refused:\n%s" % (case_id, output[-4000:])
    messages = failure_messages(output)
    assert any(all(text in message for text in expect) for message in messages), (
        "case %s: no failure message holds all of %s:\n%s" % (case_id, expect, "\n".join(messages)))
    assert all(c["changed"] == 0 for c in counts.values()), "case %s changed: %s" % (case_id, counts)
    # Stopped in the playbook's first play (its checks), before any read of a node.
    before_failure = output.split("\nfatal: ")[0]
    assert before_failure.count("\nPLAY [") == 1, "case %s went past the first play:\n%s" % (case_id, output[-4000:])
    if case_id not in REFUSED_LATER:
        assert "TASK [Release jobs" not in output, output[-4000:]
    assert not os.path.exists(os.path.join(cwd, "audit-report.json")), "case %s wrote a report" % case_id
    assert "$job_launch_delay 41" not in refused["before"]["mom1"], "the cases must ask for a change"
    assert not refused["diff"], "the cluster changed during the cases:\n%s" % refused["diff"]


def test_values_for_every_host_pass_the_checks(cluster, env, tmp_path, refused):
    """The same variables given for every host (group all), and a server-only one for the
    server alone, are accepted: audit reads them all and writes its report where
    audit_report_path says."""
    report = str(tmp_path / "reports" / "audit.json")
    os.makedirs(os.path.dirname(report))
    inventory = make_inventory(cluster, str(tmp_path / "inventory"), {
        "reliable_job_startup_hook_order": 5, "site_cray_atom": "no", "site_cgroup_resize": "False",
        "reliable_job_startup_hook_enabled": "yes", "audit_fail_on_drift": "off", "audit_report_path": report,
        "rollout_drain": "n", "recover_queues": ["workq"], "hpc_pbs_pipelining": "off"},
        {SERVER: {"site_tolerate_node_failures": "job_start"}})
    rc, output, _counts = run(env, inventory, "audit.yml", {}, str(tmp_path))
    assert rc == 0, output[-4000:]
    assert os.path.exists(report), output[-4000:]


def test_rollout_batches_come_from_the_inventory(cluster, env, tmp_path, refused):
    """rollout_canary_hosts 0 and rollout_batch_size 2 in group all: one batch of both moms
    (Ansible's serial would otherwise have ignored them: a canary of 1, then 25%)."""
    inventory = make_inventory(cluster, str(tmp_path / "inventory"),
                               {"rollout_canary_hosts": 0, "rollout_batch_size": 2,  # values no case left behind
                                "reliable_job_startup_job_launch_delay": 43,
                                "reliable_job_startup_sister_join_job_alarm": 43}, {})
    rc, output, counts = run(env, inventory, "rollout.yml", {}, str(tmp_path))
    assert rc == 0, output[-4000:]
    batches = re.findall(r"^PLAY \[Roll out to the moms batch by batch\]", output, re.M)
    assert len(batches) == 1, output[-6000:]
    assert all(counts[mom]["changed"] >= 1 for mom in MOMS), counts
