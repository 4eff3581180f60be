"""pbs.conf where the site put it (issue "Works on the clusters sites actually run", point 1).

Every node of this cluster has its pbs.conf at ``/opt/pbs/etc/pbs.conf`` (``cluster up
--pbs-conf``); its daemons were started with ``PBS_CONF_FILE`` naming it, but an SSH session
has no such variable. ``mom1`` has no ``/etc/pbs.conf`` at all; ``pbs-server`` and ``mom2``
keep one left by another installation (``--stale-etc-pbs-conf``): it names a server,
``pbs-retired``, whose name does not resolve, and another PBS_HOME. A PBS command run
without ``PBS_CONF_FILE`` there fails with ``Unknown Host`` (real OpenPBS and, since it
was fixed, the mock alike).

With the one site-wide variable ``hpc_pbs_conf_file`` (and, for the modules, the action
group ``group/hpc.pbs.pbs`` of ``module_defaults``), site, its re-run, audit, a rollout and
its re-run, cluster_info, held_jobs and recover all work against the right server, on both
backends. Without it, site.yml fails before changing anything.
"""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import polling  # noqa: E402
from test_site_sched import ansible_env, run_playbook  # noqa: E402  (shared helpers)

pytestmark = [pytest.mark.integration, pytest.mark.release_smoke]

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONF = "/opt/pbs/etc/pbs.conf"
SERVER = "pbs-server"
MOMS = ("mom1", "mom2")
HOOK = "reliable_job_startup"
MOM_CONFIG = "/var/spool/pbs/mom_priv/config"
TUNABLES = {"reliable_job_startup_job_launch_delay": 14,
            "reliable_job_startup_sister_join_job_alarm": 14}
DESIRED = dict(TUNABLES, hpc_pbs_conf_file=CONF)

MODULE_DEFAULTS_PLAYBOOK = """---
- name: The modules with pbs_conf_file from module_defaults only
  hosts: pbs_server
  gather_facts: false
  module_defaults:
    group/hpc.pbs.pbs:
      pbs_conf_file: %s
  tasks:
    - name: Read the server
      hpc.pbs.cluster_info:
        query_server: always
        gather: [nodes, held_jobs]
      register: info
    - name: List the held jobs
      hpc.pbs.held_jobs:
        causes: [other]
      register: held
    - name: Set the hook's alarm to what it is, through qmgr
      hpc.pbs.qmgr:
        object_type: hook
        name: %s
        attributes:
          alarm: 30
      register: hook
    - name: Read a vnode the server does not know
      hpc.pbs.cluster_info:
        query_server: never
        gather: [nodes]
        vnodes: [mom1, nosuch]
      register: unknown
      ignore_errors: true
    - name: Show what was read
      ansible.builtin.debug:
        msg: "{{ {'info': info, 'held': held, 'hook': hook, 'unknown': unknown} | to_json }}"
""" % (CONF, HOOK)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return ansible_env(tmp_path_factory.mktemp("ansible"))


@pytest.fixture(scope="module")
def cluster(cluster_factory):
    cluster = cluster_factory(moms=len(MOMS), up_args=[
        "--pbs-conf", CONF, "--stale-etc-pbs-conf", "%s,%s" % (SERVER, MOMS[1])])
    yield cluster
    cluster.down()


def shown(output):
    """The JSON the debug task of MODULE_DEFAULTS_PLAYBOOK printed."""
    text = output.rsplit('"msg": ', 1)[1].split("\n}", 1)[0]
    return json.loads(json.loads(text))


def mom_config(cluster, mom):
    return cluster.exec(mom, ["cat", MOM_CONFIG], check=True).stdout


def test_the_layout_is_what_the_test_says(cluster):
    """Without PBS_CONF_FILE, /etc/pbs.conf sends a client nowhere: the defect the modules
    had. Through 'cluster exec' (PBS_CONF_FILE set, as a site's profile does) it works."""
    assert cluster.exec(MOMS[0], ["test", "-e", "/etc/pbs.conf"]).returncode == 1
    assert "pbs-retired" in cluster.exec(SERVER, ["cat", "/etc/pbs.conf"], check=True).stdout
    bare = cluster.exec(SERVER, ["/usr/bin/env", "-u", "PBS_CONF_FILE", "/opt/pbs/bin/qstat", "-B"])
    assert bare.returncode != 0 and "Unknown Host" in bare.stderr, bare
    assert cluster.exec(SERVER, ["/opt/pbs/bin/qstat", "-B"]).returncode == 0


# What each real backend runs: the version qstat reports and the Python of pbs_python (the
# 22.05.11 tag reports 20.0.0: its configure.ac was never bumped).
REAL_RELEASES = {"openpbs": ("23.06.06", "3.11."), "openpbs-22.05.11": ("20.0.0", "3.6.")}


def test_the_backend_runs_the_release_it_names(cluster, pbs_backend):
    if pbs_backend not in REAL_RELEASES:
        pytest.skip("the mock has no release of its own")
    reported, python = REAL_RELEASES[pbs_backend]
    out = cluster.exec(SERVER, ["/opt/pbs/bin/qstat", "--version"], check=True).stdout
    assert out.strip() == "pbs_version = %s" % reported, out
    out = cluster.exec(MOMS[0], ["/opt/pbs/bin/pbs_python", "-c", "import sys; print(sys.version)"],
                       check=True).stdout
    assert out.startswith(python), out


def test_without_the_setting_site_fails_and_changes_nothing(cluster, env):
    rc, out, _recap = run_playbook(cluster, env, os.path.join(REPO, "playbooks", "site.yml"), TUNABLES)
    assert rc != 0, out
    assert "Unknown Host" in out or "cannot connect to server" in out, out[-3000:]
    listed = cluster.exec(SERVER, ["/opt/pbs/bin/qmgr", "-c", "list hook %s" % HOOK])
    assert listed.returncode != 0 and HOOK not in listed.stdout, listed
    for mom in MOMS:
        assert "$sister_join_job_alarm" not in mom_config(cluster, mom)


def test_site_rerun_audit_and_rollout_with_the_site_wide_setting(cluster, env, tmp_path):
    site = os.path.join(REPO, "playbooks", "site.yml")
    rc, out, recap = run_playbook(cluster, env, site, DESIRED)
    assert rc == 0, out[-3000:]
    assert recap[SERVER]["changed"] >= 1 and all(recap[m]["changed"] >= 1 for m in MOMS), recap
    for mom in MOMS:
        assert "$sister_join_job_alarm 14" in mom_config(cluster, mom)
    rc, out, recap = run_playbook(cluster, env, site, DESIRED)
    assert rc == 0 and all(c["changed"] == 0 for c in recap.values()), out[-3000:]

    # The server copies the hook to the moms on its own time (real PBS: at its next contact).
    def copies_arrived():
        return all(cluster.exec(m, ["test", "-e", "/var/spool/pbs/mom_priv/hooks/%s.PY" % HOOK]).returncode == 0
                   for m in MOMS)
    polling.wait_for(copies_arrived, 60, "the moms' copies of %s" % HOOK, interval=1)
    report = str(tmp_path / "audit.json")
    rc, out, recap = run_playbook(cluster, env, os.path.join(REPO, "playbooks", "audit.yml"),
                                  dict(DESIRED, audit_fail_on_drift=True, audit_report_path=report),
                                  "--check")
    assert rc == 0 and "0 drift(s) on 0 host(s)" in out, out[-3000:]

    rollout = os.path.join(REPO, "playbooks", "rollout.yml")
    wanted = dict(DESIRED, reliable_job_startup_sister_join_job_alarm=18)
    rc, out, recap = run_playbook(cluster, env, rollout, wanted)
    assert rc == 0, out[-3000:]
    for mom in MOMS:
        assert "$sister_join_job_alarm 18" in mom_config(cluster, mom), mom
    rc, out, recap = run_playbook(cluster, env, rollout, wanted)
    assert rc == 0 and all(c["changed"] == 0 for c in recap.values()), out[-3000:]
    states = cluster.exec(SERVER, ["/opt/pbs/bin/pbsnodes", "-a", "-F", "json"], check=True).stdout
    assert all(json.loads(states)["nodes"][m]["state"] == "free" for m in MOMS), states


def test_modules_by_module_defaults_then_recover_release_on_the_right_server(cluster, env, tmp_path):
    job = cluster.exec(SERVER, ["/opt/pbs/bin/qsub", "-h", "--", "/bin/sleep", "2"], user="pbsuser",
                       check=True).stdout.strip()
    try:
        cluster.exec(SERVER, ["/opt/pbs/bin/qhold", "-h", "s", job], check=True)
        playbook = tmp_path / "module_defaults.yml"
        playbook.write_text(MODULE_DEFAULTS_PLAYBOOK)
        rc, out, _recap = run_playbook(cluster, env, str(playbook), {})
        assert rc == 0, out[-3000:]
        read = shown(out)
        info = read["info"]
        assert info["pbs_conf"]["path"] == CONF and info["server"]["pbs_version"], info
        assert HOOK in info["server"]["hooks"] and sorted(info["health"]["nodes"]) == list(MOMS)
        # The version table agrees with what this server offers.
        listed = cluster.exec(SERVER, ["/opt/pbs/bin/qmgr", "-c", "list server"], check=True).stdout
        assert info["pbs_features"]["clear_topjob_estimates_enable"] is (
            "clear_topjob_estimates_enable" in listed), (info["pbs_version"], info["pbs_features"])
        assert info["pbs_features"]["pbs_cgroups_cgroup_v2"] is False, info["pbs_features"]
        assert job in info["health"]["held_jobs"]
        assert [(j["id"], j["cause"]) for j in read["held"]["jobs"]] == [(job, "other")]
        assert read["hook"]["changed"] is False and read["hook"]["attributes"]["alarm"] == "30", read["hook"]
        # pbsnodes -F json names the refusal differently in 22.05.11 ({"Error": ...})
        assert read["unknown"]["failed"] and read["unknown"]["unknown_vnodes"] == ["nosuch"], read["unknown"]

        rc, out, recap = run_playbook(cluster, env, os.path.join(REPO, "playbooks", "recover.yml"),
                                      {"hpc_pbs_conf_file": CONF, "recover_causes": ["other"],
                                       "recover_job_ids": [job]})
        assert rc == 0 and recap[SERVER]["changed"] == 1, out[-3000:]
        holds = cluster.exec(SERVER, ["/opt/pbs/bin/qstat", "-f", job], check=True).stdout
        assert "Hold_Types = u" in holds, holds
    finally:
        cluster.exec(SERVER, ["/opt/pbs/bin/qdel", job])


def test_a_rollout_given_only_its_own_pbs_conf_reads_the_hooks_alarms_with_it(cluster, env):
    """rollout_pbs_conf_file (and the hook's own variable), without hpc_pbs_conf_file: the
    first look's comparison with the hooks' alarms reads the server with it too."""
    wanted = dict(TUNABLES, reliable_job_startup_sister_join_job_alarm=21, rollout_pbs_conf_file=CONF,
                  reliable_job_startup_pbs_conf_file=CONF)
    rc, out, _recap = run_playbook(cluster, env, os.path.join(REPO, "playbooks", "rollout.yml"), wanted)
    assert rc == 0, out[-3000:]
    for mom in MOMS:
        assert "$sister_join_job_alarm 21" in mom_config(cluster, mom), mom
