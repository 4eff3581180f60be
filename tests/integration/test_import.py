"""playbooks/import.yml: adopt a cluster configured by hand.

One 2-mom cluster per backend (module scope) is configured with qmgr and mom_priv/config
only, as a site would have done it: a reliable_job_startup body of the site's own (the
bundled one with a line added) imported by hand with its own order, alarm and a config
whose increment and queues differ from the bundled default; the bundled cgroup_resize hook
with its own order, alarm and kill_timeout; the scheduler's job_run_wait; a default_qsub_arguments holding
-W tolerate_node_failures= among other arguments; $sister_join_job_alarm differing on one
mom; a site hook of the site's own that the collection does not manage. The import then
writes group_vars / host_vars beside a copy of the inventory, and with them site.yml
--check changes nothing, audit.yml reports no drift and site.yml changes nothing. The
cluster (qmgr's lists, the server's hook files, the moms' config files) is compared before
and after. The refusals of import_dir and of a missing reliable_job_startup_hook_body_src,
a cgroup_resize body that is not the bundled one (kept through cgroup_resize_hook_body_src:
site.yml --check changes nothing, audit.yml reports no drift) and the removal of an earlier
import's stale file run on the mock only (the playbook reads them
through the same modules on both backends).
"""
import json
import os
import shutil
import subprocess
import sys

import pytest
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pbsjobs  # noqa: E402
from test_audit import copies_match_server  # noqa: E402
from test_rollout import PBS_HOME, QMGR, REPO, SERVER, wait_until  # noqa: E402
from test_site_sched import RECAP_RE, ansible_env  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.cluster_moms(2)]

IMPORT = os.path.join(REPO, "playbooks", "import.yml")
SITE = os.path.join(REPO, "playbooks", "site.yml")
AUDIT = os.path.join(REPO, "playbooks", "audit.yml")
HOOK = "reliable_job_startup"
OTHER_HOOK = "site_accounting"
OTHER_BODY = "import pbs\npbs.event().accept()\n"
BUNDLED_BODY = os.path.join(REPO, "files", "hooks", "reliable_job_startup.py")
BUNDLED_CONFIG = os.path.join(REPO, "files", "hooks", "reliable_job_startup.json")
OWN_LINE = "\n# the site's own change\n"
CGROUP_HOOK = "cgroup_resize"
CGROUP_BODY = os.path.join(REPO, "files", "hooks", "cgroup_resize.py")
CGROUP_CONFIG = os.path.join(REPO, "files", "hooks", "cgroup_resize.json")
CGROUP_EVENTS = "execjob_begin,execjob_launch,execjob_resize,execjob_end"
MOM_VALUES = {"mom1": {"sister_join_job_alarm": 45, "job_launch_delay": 50},
              "mom2": {"sister_join_job_alarm": 60, "job_launch_delay": 50}}


def role_config_text(config):
    """What the role imports: to_nice_json(indent=2) of the merged config."""
    return json.dumps(config, indent=2, sort_keys=True, separators=(",", ": "))


def site_config():
    with open(BUNDLED_CONFIG) as handle:
        config = json.load(handle)
    config.update(increment=2, queues=["workq"])
    return config


def read_text(path):
    with open(path) as handle:
        return handle.read()


def cgroup_config():
    with open(CGROUP_CONFIG) as handle:
        config = json.load(handle)
    config.update(kill_timeout=3)
    return config


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return ansible_env(tmp_path_factory.mktemp("ansible"))


def qmgr(cluster, *directives):
    """The directives in one qmgr call (commands on stdin; real qmgr stops at the first
    that fails and exits non-zero)."""
    cluster.exec(SERVER, [QMGR], input="".join(d + "\n" for d in directives), check=True)


def stage(cluster, hook, content_type, text):
    """Write ``text`` on the server for ``import hook``; the qmgr directive importing it."""
    path = "/tmp/import-test-%s.%s" % (hook, "py" if content_type == "application/x-python" else "json")
    pbsjobs.write_node_file(cluster, SERVER, path, text)
    return "import hook %s %s default %s" % (hook, content_type, path)


@pytest.fixture(scope="module")
def handmade(pbs_cluster):
    """The cluster as a site configured it by hand (see the module docstring)."""
    cluster = pbs_cluster
    body = read_text(BUNDLED_BODY) + OWN_LINE
    qmgr(cluster, "create hook %s" % HOOK, "set hook %s event = 'queuejob,execjob_launch'" % HOOK,
         "set hook %s order = 5" % HOOK, "set hook %s alarm = 40" % HOOK,
         stage(cluster, HOOK, "application/x-python", body),
         stage(cluster, HOOK, "application/x-config", role_config_text(site_config())),
         "set hook %s enabled = true" % HOOK,
         "create hook %s" % OTHER_HOOK, "set hook %s event = queuejob" % OTHER_HOOK,
         stage(cluster, OTHER_HOOK, "application/x-python", OTHER_BODY),
         "set hook %s enabled = true" % OTHER_HOOK,
         "create hook %s" % CGROUP_HOOK, "set hook %s event = '%s'" % (CGROUP_HOOK, CGROUP_EVENTS),
         "set hook %s order = 70" % CGROUP_HOOK, "set hook %s alarm = 25" % CGROUP_HOOK,
         stage(cluster, CGROUP_HOOK, "application/x-python", read_text(CGROUP_BODY)),
         stage(cluster, CGROUP_HOOK, "application/x-config", role_config_text(cgroup_config())),
         "set hook %s enabled = true" % CGROUP_HOOK,
         "set sched default job_run_wait = execjob_hook",
         "set server default_qsub_arguments = '-r n -W tolerate_node_failures=job_start'")
    for mom, options in MOM_VALUES.items():
        pbsjobs.set_mom_config(cluster, mom, options)
    # The server copies the hook files to the moms on its own time.
    for name in (HOOK, CGROUP_HOOK):
        wait_until(lambda: copies_match_server(cluster, name), "the moms' copies of %s" % name)
    cluster.import_test_body = body
    return cluster


def snapshot(cluster):
    """What the import must not change: qmgr's lists, the server's hook files, the moms'
    config files and their hook copies (one call per node)."""
    lists = cluster.exec(SERVER, ["sh", "-c", "for o in server sched hook pbshook; do %s -c \"list $o\"; done; "
                                  "cd %s && sha256sum server_priv/hooks/*.*" % (QMGR, PBS_HOME)], check=True).stdout
    moms = [cluster.exec(mom, ["sh", "-c", "cd %s && sha256sum mom_priv/hooks/*.* mom_priv/config" % PBS_HOME],
                         check=True).stdout for mom in ("mom1", "mom2")]
    return lists, moms


def run(inventory, env, playbook, extra_vars=None, *more):
    """``ansible-playbook``: ``(rc, output, {host: recap counts})``."""
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", inventory,
            playbook, "-e", json.dumps(extra_vars or {})] + list(more)
    proc = subprocess.run(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          stdin=subprocess.DEVNULL, text=True, timeout=600, check=False)
    recap = dict((m.group(1), dict(changed=int(m.group(3)), failed=int(m.group(5))))
                 for m in RECAP_RE.finditer(proc.stdout))
    return proc.returncode, proc.stdout, recap


def import_into(cluster, env, import_dir):
    """Run the import into ``import_dir`` with a copy of the cluster's inventory there."""
    os.makedirs(str(import_dir), exist_ok=True)
    inventory = os.path.join(str(import_dir), "hosts.ini")
    shutil.copy(cluster.inventory, inventory)
    rc, out, recap = run(inventory, env, IMPORT, {"import_dir": str(import_dir)})
    assert rc == 0, out
    return inventory, out


def read_yaml(path):
    with open(path) as handle:
        return yaml.safe_load(handle)


def test_import_then_site_check_audit_and_site_change_nothing(handmade, env, tmp_path):
    cluster = handmade
    if cluster.backend == "mock":
        # Without the import, site.yml would change the hand-made cluster (the test of the
        # import is not empty): on the mock only, to keep the real tier short.
        rc, out, recap = run(cluster.inventory, env, SITE, {}, "--check")
        assert rc == 0, out
        assert sum(r["changed"] for r in recap.values()) > 0, out
    before = snapshot(cluster)
    import_dir = tmp_path / "imported"
    inventory, out = import_into(cluster, env, import_dir)
    assert snapshot(cluster) == before, "the import changed the cluster"

    common = read_yaml(str(import_dir / "group_vars" / "all.yml"))
    assert common == {
        "reliable_job_startup_hook_name": HOOK, "reliable_job_startup_hook_enabled": True,
        "reliable_job_startup_hook_order": 5, "reliable_job_startup_hook_alarm": 40,
        "reliable_job_startup_config": {"increment": 2, "queues": ["workq"]},
        "reliable_job_startup_hook_body_src": str(import_dir / "hook_bodies" / (HOOK + ".py")),
        "site_cgroup_resize": True, "cgroup_resize_hook_source": "bundled",
        "cgroup_resize_hook_name": CGROUP_HOOK, "cgroup_resize_hook_enabled": True,
        "cgroup_resize_hook_order": 70, "cgroup_resize_hook_alarm": 25,
        "cgroup_resize_config": {"kill_timeout": 3},
        "sched_tuning_job_run_wait": "execjob_hook", "site_tolerate_node_failures": "job_start"}
    assert read_yaml(str(import_dir / "group_vars" / "pbs_mom.yml")) == {
        "reliable_job_startup_job_launch_delay": 50, "reliable_job_startup_sister_join_job_alarm": 45}
    assert sorted(os.listdir(str(import_dir / "host_vars"))) == ["mom2.yml"]
    assert read_yaml(str(import_dir / "host_vars" / "mom2.yml")) == {
        "reliable_job_startup_sister_join_job_alarm": 60}
    assert "hook not managed by the collection (left as it is): %s (site)" % OTHER_HOOK in out
    assert "site.yml --check should change nothing" in out
    assert os.listdir(str(import_dir / "hook_bodies")) == [HOOK + ".py"]
    assert read_text(str(import_dir / "hook_bodies" / (HOOK + ".py"))) == cluster.import_test_body

    rc, out, recap = run(inventory, env, SITE, {}, "--check")
    assert rc == 0, out
    assert set(recap) == {SERVER, "mom1", "mom2"} and all(r["changed"] == 0 for r in recap.values()), out

    report = str(tmp_path / "audit.json")
    rc, out, recap = run(inventory, env, AUDIT, {"audit_report_path": report,
                                                 "audit_timeouts_report_path": str(tmp_path / "timeouts.json")})
    assert rc == 0, out
    with open(report) as handle:
        assert json.load(handle)["drift"] == [], out

    rc, out, recap = run(inventory, env, SITE)
    assert rc == 0, out
    assert set(recap) == {SERVER, "mom1", "mom2"} and all(r["changed"] == 0 for r in recap.values()), out
    assert snapshot(cluster) == before, "site.yml changed the imported cluster"


def require_mock(cluster):
    if cluster.backend != "mock":
        pytest.skip("read through the same modules on both backends; mock only to keep the real tier short")


@pytest.mark.parametrize("import_dir, message", [
    (None, "import_dir is not set"),
    ("/proc/import-here", "cannot be written"),
    ("MISSING/a/b", "does not exist"),
])
def test_bad_import_dir_is_refused_before_anything_is_read(handmade, env, tmp_path, import_dir, message):
    require_mock(handmade)
    if import_dir is not None:
        import_dir = import_dir.replace("MISSING", str(tmp_path / "missing"))
    extra = {} if import_dir is None else {"import_dir": import_dir}
    rc, out, recap = run(handmade.inventory, env, IMPORT, extra)
    assert rc != 0, out
    assert message in out and "accepted:" in out, out
    assert "TASK [Read pbs.conf" not in out, out
    assert SERVER not in recap, out
    if import_dir is not None and import_dir.startswith(str(tmp_path)):
        assert not os.path.exists(str(tmp_path / "missing"))


def test_own_cgroup_body_kept_in_a_file_and_an_earlier_imports_stale_files_handled(handmade, env, tmp_path):
    """A cgroup_resize body that is not the bundled one is written out and
    cgroup_resize_hook_body_src points to it: site.yml --check then changes nothing (the
    body is kept) and audit.yml reports no drift; a host_vars file an earlier import wrote
    (its marker) that this one does not write again is removed (a mom that no longer
    differs, or left the inventory), a file of the site's own is kept, and a hook body that
    no variable points to is named and kept."""
    cluster = handmade
    require_mock(cluster)
    import_dir = tmp_path / "imported"
    (import_dir / "host_vars").mkdir(parents=True)
    stale = "---\n# Written by hpc.pbs playbooks/import.yml: an earlier import.\nreliable_job_startup_job_launch_delay: 9\n"
    (import_dir / "host_vars" / "mom3.yml").write_text(stale)
    (import_dir / "host_vars" / "mom1.yml").write_text("---\nsite_own_variable: 1\n")
    (import_dir / "hook_bodies").mkdir()
    (import_dir / "hook_bodies" / "retired_hook.py").write_text("import pbs\n")
    own_body = read_text(CGROUP_BODY) + OWN_LINE
    qmgr(cluster, stage(cluster, CGROUP_HOOK, "application/x-python", own_body))
    try:
        before = snapshot(cluster)
        inventory, out = import_into(cluster, env, import_dir)
        assert snapshot(cluster) == before, "the import changed the cluster"
        body_file = import_dir / "hook_bodies" / (CGROUP_HOOK + ".py")
        assert read_text(str(body_file)) == own_body
        assert read_yaml(str(import_dir / "group_vars" / "all.yml"))["cgroup_resize_hook_body_src"] == str(body_file)
        assert "runs a body that is not the bundled one" not in out, out
        assert "site.yml --check should change nothing" in out, out
        assert sorted(os.listdir(str(import_dir / "host_vars"))) == ["mom1.yml", "mom2.yml"]
        assert read_yaml(str(import_dir / "host_vars" / "mom1.yml")) == {"site_own_variable": 1}
        # A body no variable points to any more is named, not removed (it carries no marker).
        retired = os.path.realpath(str(import_dir / "hook_bodies" / "retired_hook.py"))
        assert ("not used by these variables (an earlier import's body or a file of your own; kept, "
                "remove it if unused): %s" % retired) in out, out
        assert os.path.exists(retired) and "hook_bodies/%s.py" % CGROUP_HOOK not in out.split("not used by")[1], out
        # The own body is kept: site.yml --check plans no change, the audit sees no drift.
        rc, out, recap = run(inventory, env, SITE, {}, "--check")
        assert rc == 0, out
        assert set(recap) == {SERVER, "mom1", "mom2"} and all(r["changed"] == 0 for r in recap.values()), out
        report = str(tmp_path / "audit.json")
        rc, out, recap = run(inventory, env, AUDIT, {"audit_report_path": report,
                                                     "audit_timeouts_report_path": str(tmp_path / "timeouts.json")})
        assert rc == 0, out
        with open(report) as handle:
            assert json.load(handle)["drift"] == [], out
        assert snapshot(cluster) == before, "site.yml --check or audit.yml changed the cluster"
    finally:
        qmgr(cluster, stage(cluster, CGROUP_HOOK, "application/x-python", read_text(CGROUP_BODY)))


def test_a_cray_atom_hook_with_its_own_fail_action_is_imported_and_kept(handmade, env, tmp_path):
    """The bundled Cray ATOM hook set up by hand with a fail_action of the site's choice: the
    import writes cray_atom_hook_fail_action (no note), and site.yml --check then plans no
    change to it."""
    cluster = handmade
    require_mock(cluster)
    with open(os.path.join(REPO, "files", "hooks", "cray_atom.json")) as handle:
        config = json.load(handle)
    qmgr(cluster, "create hook cray_atom", "set hook cray_atom event = 'execjob_begin,execjob_end'",
         "set hook cray_atom order = 100", "set hook cray_atom alarm = 300",
         "set hook cray_atom fail_action = 'offline_vnodes,scheduler_restart_cycle'",
         stage(cluster, "cray_atom", "application/x-python",
               read_text(os.path.join(REPO, "files", "hooks", "cray_atom.py"))),
         stage(cluster, "cray_atom", "application/x-config",
               json.dumps(config, indent=4, sort_keys=True, separators=(",", ": "))),
         "set hook cray_atom enabled = true")
    try:
        before = snapshot(cluster)
        inventory, out = import_into(cluster, env, tmp_path / "imported")
        common = read_yaml(str(tmp_path / "imported" / "group_vars" / "all.yml"))
        assert common["site_cray_atom"] is True and common["cray_atom_hook_source"] == "bundled", common
        assert common["cray_atom_hook_fail_action"] == ["offline_vnodes", "scheduler_restart_cycle"], common
        assert "has fail_action" not in out, out
        rc, out, recap = run(inventory, env, SITE, {}, "--check", "--diff")
        assert rc == 0, out
        assert recap[SERVER]["changed"] == 0 and "fail_action" not in out, out
        assert snapshot(cluster) == before, "the import or site.yml --check changed the cluster"
    finally:
        qmgr(cluster, "delete hook cray_atom")


ROLE_PLAYBOOK = """---
- name: The reliable_job_startup role alone
  hosts: pbs_server:pbs_mom
  gather_facts: false
  roles:
    - role: hpc.pbs.reliable_job_startup
"""


def test_a_missing_hook_body_file_is_refused_naming_the_variable(handmade, env, tmp_path):
    """reliable_job_startup_hook_body_src that is no file on the controller: the role stops
    every host before the server or a mom changes (a mom tunable to change is given), and
    audit.yml names the variable too."""
    cluster = handmade
    require_mock(cluster)
    playbook = tmp_path / "role.yml"
    playbook.write_text(ROLE_PLAYBOOK)
    missing = str(tmp_path / "no-such-body.py")
    before = snapshot(cluster)
    rc, out, recap = run(cluster.inventory, env, str(playbook),
                         {"reliable_job_startup_hook_body_src": missing, "reliable_job_startup_job_launch_delay": 77})
    assert rc != 0, out
    assert "reliable_job_startup_hook_body_src %s: no such file on the controller" % json.dumps(missing) in out, out
    assert "accepted:" in out, out
    assert set(recap) == {SERVER, "mom1", "mom2"} and all(r["failed"] == 1 and r["changed"] == 0
                                                          for r in recap.values()), out
    assert snapshot(cluster) == before, "a refused run changed the cluster"
    # site.yml runs the role's validate step, not main.yml: it stops there, before any change.
    rc, out, recap = run(cluster.inventory, env, SITE, {"reliable_job_startup_hook_body_src": missing,
                                                        "reliable_job_startup_job_launch_delay": 77})
    assert rc != 0, out
    assert "reliable_job_startup_hook_body_src %s: no such file on the controller" % json.dumps(missing) in out, out
    assert all(r["changed"] == 0 for r in recap.values()), out
    assert snapshot(cluster) == before, "a refused site.yml changed the cluster"
    rc, out, recap = run(cluster.inventory, env, AUDIT, {"reliable_job_startup_hook_body_src": missing,
                                                         "audit_report_path": str(tmp_path / "audit.json")})
    assert rc != 0 and "reliable_job_startup_hook_body_src %s: no such file" % json.dumps(missing) in out, out


def test_check_mode_writes_nothing_on_the_controller(handmade, env, tmp_path):
    require_mock(handmade)
    import_dir = tmp_path / "imported"
    rc, out, recap = run(handmade.inventory, env, IMPORT, {"import_dir": str(import_dir)}, "--check")
    assert rc == 0, out
    assert "(check mode: nothing written)" in out and "would write: group_vars/all.yml" in out, out
    assert not import_dir.exists()
