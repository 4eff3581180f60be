"""The molecule scenarios of extensions/molecule/ (issue 8 point 1), run for real:
``molecule test -s <scenario>`` from the repository root, each scenario starting and
stopping its own mock cluster through tests/integration/cluster."""
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_rollout import REPO, ansible_env  # noqa: E402

pytestmark = pytest.mark.integration

SCENARIOS = sorted(name for name in os.listdir(os.path.join(REPO, "extensions", "molecule"))
                   if os.path.exists(os.path.join(REPO, "extensions", "molecule", name, "molecule.yml")))


def test_scenarios_found():
    assert SCENARIOS == ["default", "rollout"]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_molecule_scenario(scenario, tmp_path):
    env = ansible_env(tmp_path)
    env["HPC_PBS_CLUSTER_PYTHON"] = sys.executable
    env["MOLECULE_NO_LOG"] = "false"
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "molecule"), "test", "-s", scenario],
                          cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          stdin=subprocess.DEVNULL, timeout=900)
    assert proc.returncode == 0, proc.stdout[-20000:]
    assert "idempotence" in proc.stdout.lower()
    assert " passed" in proc.stdout  # the testinfra verify ran its tests
