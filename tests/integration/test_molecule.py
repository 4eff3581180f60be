"""The molecule scenarios of extensions/molecule/ (issue 8 point 1), run for real:
``molecule test -s <scenario>`` from the repository root, each scenario starting and
stopping its own mock cluster through tests/integration/cluster (create/destroy inherit
this process's environment, so HPC_PBS_CLUSTER_NET moves the cluster's addresses; the
workdir is a per-test directory passed as HPC_PBS_MOLECULE_CLUSTER_DIR).

Scenarios: ``default`` (site.yml), ``rollout`` (rollout.yml), ``cray_atom`` (cray_atom.yml
with the bundled hook against the mock ATOM service). Each takes one to two minutes, and
runs on both test-cluster backends (``HPC_PBS_BACKEND``, which the launcher reads)."""
import os
import re
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_rollout import REPO, ansible_env  # noqa: E402

pytestmark = pytest.mark.integration

MOLECULE_DIR = os.path.join(REPO, "extensions", "molecule")
SCENARIOS = sorted(name for name in os.listdir(MOLECULE_DIR)
                   if os.path.exists(os.path.join(MOLECULE_DIR, name, "molecule.yml")))
CLUSTER_SCRIPT = os.path.join(REPO, "tests", "integration", "cluster")
VERIFY_SUMMARY_RE = re.compile(r"=+ (?:(\d+) failed, )?(\d+) passed\b")
ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")


def test_scenarios_found():
    assert SCENARIOS == ["cray_atom", "default", "rollout"]


def verify_test_count(scenario):
    """How many tests (parametrized cases counted) the scenario's verify directory defines."""
    tests_dir = os.path.join(MOLECULE_DIR, scenario, "tests")
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           tests_dir], cwd=REPO, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          env=dict(os.environ, MOLECULE_PROJECT_DIRECTORY=REPO), check=False)
    return sum(1 for line in proc.stdout.splitlines() if "::" in line)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_molecule_scenario(scenario, tmp_path, pbs_backend, stop_other_clusters):
    stop_other_clusters()
    env = ansible_env(tmp_path)
    env["HPC_PBS_BACKEND"] = pbs_backend
    env["HPC_PBS_CLUSTER_PYTHON"] = sys.executable
    env["HPC_PBS_MOLECULE_CLUSTER_DIR"] = str(tmp_path / "cluster")
    env["MOLECULE_NO_LOG"] = "false"
    # molecule installs a copy of the collection into its Ansible home (the venv's
    # .ansible when VIRTUAL_ENV is set, else ~/.ansible): here a directory of this test,
    # so no copy outlives the run to shadow the checkout for later tools (ansible-lint).
    env["ANSIBLE_HOME"] = str(tmp_path / "ansible-home")
    env.pop("VIRTUAL_ENV", None)
    try:
        proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "molecule"), "test", "-s", scenario],
                              cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              stdin=subprocess.DEVNULL, timeout=600, check=False)
    finally:
        # molecule's own destroy normally did this already; a no-op then.
        subprocess.run([sys.executable, CLUSTER_SCRIPT, "down", "--workdir", env["HPC_PBS_MOLECULE_CLUSTER_DIR"]],
                       env=env, capture_output=True, stdin=subprocess.DEVNULL, check=False)
    output = ANSI_RE.sub("", proc.stdout)
    assert proc.returncode == 0, output[-20000:]
    # "S ➜ idempotence: ..." with colours, "S > idempotence: ..." without.
    assert re.search(r"^%s (?:➜|>) idempotence: Executed: Successful$" % scenario, output, re.M), output[-5000:]
    # The testinfra verify ran every test it defines, and none failed.
    summaries = VERIFY_SUMMARY_RE.findall(output)
    assert summaries, output[-5000:]
    failed, passed = summaries[-1]
    assert not failed and int(passed) == verify_test_count(scenario) > 0, summaries
