"""The support matrix's controller and node-Python cells (issue "Works on the clusters sites
actually run", point 6): the integration smoke on the oldest ansible-core the collection
claims and on the pinned one, with the modules running on the nodes' Python 3.6 (RHEL 8,
SLES 15 and PBS Professional's own pbs_python in several releases; only ansible-core 2.16
still manages it), 3.8 and the system Python.

Each cell runs, against a mock cluster (PBS versions have their own tier, the backend
``openpbs-22.05.11``): site.yml, audit.yml (no drift) and report.yml (no output path) with
the role defaults (before 2.19 a template that is a single null renders as an empty string:
every mom failed, then every audited mom, and report.yml refused its unset paths),
site.yml with values and its re-run (0 changed), audit.yml (no drift), a rollout given only
``$sister_join_job_alarm`` (the other tunable null) and its re-run (0 changed), and
hpc.pbs.held_jobs through recover.yml in check mode.

ansible-core 2.16 comes from ``tests/support_matrix/requirements-ansible-core-2.16.txt``,
installed once into ``build/ansible-core-2.16`` (a venv of the controller's Python). A cell
whose interpreter this machine lacks is skipped, saying which.
"""
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_site_sched import ansible_env, run_playbook  # noqa: E402  (shared helpers)

pytestmark = [pytest.mark.integration]

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYENV = "/root/.pyenv/versions"
OLD_CORE = "2.16"
OLD_CORE_VENV = os.path.join(REPO, "build", "ansible-core-%s" % OLD_CORE)
OLD_CORE_REQUIREMENTS = os.path.join(REPO, "tests", "support_matrix",
                                     "requirements-ansible-core-%s.txt" % OLD_CORE)
# (ansible-core, node interpreter): the cells, with the pinned ansible-core as "pinned".
CELLS = [(OLD_CORE, os.path.join(PYENV, "3.6.15", "bin", "python3.6")),
         ("pinned", os.path.join(PYENV, "3.8.18", "bin", "python3.8")),
         ("pinned", "/usr/bin/python3")]
TUNABLES = {"reliable_job_startup_job_launch_delay": 13,
            "reliable_job_startup_sister_join_job_alarm": 13}
MOMS = ("mom1", "mom2")


def ansible_bin(core):
    """The directory of the ansible-playbook of ``core``, installing 2.16 when missing."""
    if core == "pinned":
        return os.path.dirname(sys.executable)
    bindir = os.path.join(OLD_CORE_VENV, "bin")
    if not os.path.exists(os.path.join(bindir, "ansible-playbook")):
        subprocess.run([sys.executable, "-m", "venv", OLD_CORE_VENV], check=True)
        proc = subprocess.run([os.path.join(bindir, "pip"), "install", "-q", "--disable-pip-version-check",
                               "-r", OLD_CORE_REQUIREMENTS], capture_output=True, text=True, check=False)
        assert proc.returncode == 0, "cannot install ansible-core %s: %s" % (OLD_CORE, proc.stderr[-2000:])
    return bindir


@pytest.fixture(scope="module")
def cluster(cluster_factory, pbs_backend):
    if pbs_backend != "mock":
        pytest.skip("the controller/node-Python matrix runs on the mock; the PBS releases "
                    "have their own tier (backend openpbs-22.05.11)")
    cluster = cluster_factory(moms=len(MOMS))
    yield cluster
    cluster.down()


def mom_alarm_lines(cluster):
    return [line for mom in MOMS
            for line in cluster.exec(mom, ["cat", "/var/spool/pbs/mom_priv/config"], check=True).stdout.splitlines()
            if line.startswith("$sister_join_job_alarm")]


CELL_IDS = ["core-%s-py%s" % (c, os.path.basename(p)) for c, p in CELLS]


@pytest.mark.parametrize("core, python", CELLS, ids=CELL_IDS)
def test_smoke(cluster, tmp_path, core, python):
    if not os.access(python, os.X_OK):
        pytest.skip("no %s on this machine" % python)
    env = ansible_env(tmp_path)
    bindir = ansible_bin(core)
    node = {"ansible_python_interpreter": python}
    # Every cell starts from moms without the tunables, so that each run has work to do.
    for mom in MOMS:
        cluster.exec(mom, ["sed", "-i", "/^\\$sister_join_job_alarm\\|^\\$job_launch_delay/d",
                           "/var/spool/pbs/mom_priv/config"], check=True)

    def playbook(name, extra, *more):
        return run_playbook(cluster, env, os.path.join(REPO, "playbooks", name), dict(node, **extra), *more,
                            bindir=bindir)

    version = subprocess.run([os.path.join(bindir, "ansible-playbook"), "--version"],
                             capture_output=True, text=True, env=env, check=True).stdout
    assert "core %s." % (OLD_CORE if core != "pinned" else "2.19") in version, version

    rc, out, _recap = playbook("site.yml", {})
    assert rc == 0, "site.yml with the role defaults:\n" + out[-3000:]
    # Before ansible-core 2.19 a template that is a single null renders as '': the null
    # tunables of the defaults, and report.yml's unset output paths, must not become ''.
    rc, out, _recap = playbook("audit.yml", {"audit_fail_on_drift": True,
                                             "audit_report_path": str(tmp_path / "audit-defaults.json")}, "--check")
    assert rc == 0 and "0 drift(s) on 0 host(s)" in out, "audit.yml with the role defaults:\n" + out[-3000:]
    rc, out, _recap = playbook("report.yml", {})
    assert rc == 0, "report.yml without output paths:\n" + out[-3000:]
    rc, out, recap = playbook("site.yml", TUNABLES)
    assert rc == 0 and all(recap[m]["changed"] >= 1 for m in MOMS), out[-3000:]
    assert mom_alarm_lines(cluster) == ["$sister_join_job_alarm 13"] * len(MOMS)
    rc, out, recap = playbook("site.yml", TUNABLES)
    assert rc == 0 and all(c["changed"] == 0 for c in recap.values()), out[-3000:]
    rc, out, _recap = playbook("audit.yml", dict(TUNABLES, audit_fail_on_drift=True,
                                                 audit_report_path=str(tmp_path / "audit.json")), "--check")
    assert rc == 0 and "0 drift(s) on 0 host(s)" in out, out[-3000:]
    # One tunable given: the other is null (its line removed).
    wanted = {"reliable_job_startup_sister_join_job_alarm": 17}
    rc, out, _recap = playbook("rollout.yml", wanted)
    assert rc == 0 and mom_alarm_lines(cluster) == ["$sister_join_job_alarm 17"] * len(MOMS), out[-3000:]
    rc, out, recap = playbook("rollout.yml", wanted)
    assert rc == 0 and all(c["changed"] == 0 for c in recap.values()), out[-3000:]
    rc, out, _recap = playbook("recover.yml", {}, "--check")
    assert rc == 0 and "Would release 0 job(s)" in out, out[-3000:]
