"""Testinfra helpers of the hpc.pbs molecule scenarios: the mock cluster's nodes as
testinfra hosts on the paramiko backend (SSH with the cluster's key, as Ansible reached
them), and the launcher for fault injection (freezing a mom)."""
import json
import os
import subprocess
import sys
import time

import testinfra

PBS_HOME = "/var/spool/pbs"
PBS_EXEC = "/opt/pbs"


def workdir():
    """The cluster's workdir, as shared/create.yml chose it."""
    return (os.environ.get("HPC_PBS_MOLECULE_CLUSTER_DIR")
            or "/tmp/hpc-pbs-molecule-%s" % os.environ["MOLECULE_SCENARIO_NAME"])


def nodes():
    """``{name: address}`` of the running cluster (its ``state.json``)."""
    with open(os.path.join(workdir(), "state.json")) as handle:
        return {n["name"]: n["address"] for n in json.load(handle)["nodes"]}


def host(name, user="root"):
    """A testinfra host on the paramiko backend for node ``name``."""
    key = os.path.join(workdir(), "id_ed25519")
    return testinfra.get_host("paramiko://%s@%s:22" % (user, nodes()[name]), ssh_identity_file=key)


def launcher(*args):
    """Run ``tests/integration/cluster ARGS --workdir W`` (e.g. ``stop-mom mom2 --freeze``)."""
    script = os.path.join(os.environ["MOLECULE_PROJECT_DIRECTORY"], "tests", "integration", "cluster")
    python = os.environ.get("HPC_PBS_CLUSTER_PYTHON") or sys.executable
    return subprocess.run([python, script] + list(args) + ["--workdir", workdir()], check=True,
                          capture_output=True, text=True)


def qmgr_attributes(server, command):
    """``qmgr -c COMMAND`` on the server as a dict (continuation lines joined)."""
    out = server.check_output("%s/bin/qmgr -c '%s'" % (PBS_EXEC, command)).replace("\n\t", "")
    return dict(line.strip().split(" = ", 1) for line in out.splitlines()[1:] if " = " in line)


def wait_for(predicate, what, limit=90):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError("gave up after %ss waiting for %s" % (limit, what))


def accounting(server, jobid):
    """``[(record type, {key: value})]`` of ``jobid`` in the server's accounting logs."""
    out = server.check_output("cat %s/server_priv/accounting/*" % PBS_HOME)
    records = []
    for line in out.splitlines():
        fields = line.split(";", 3)
        if len(fields) == 4 and fields[2] == jobid:
            records.append((fields[1], dict(i.split("=", 1) for i in fields[3].split() if "=" in i)))
    return records
