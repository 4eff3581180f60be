"""The cgroup_resize role on moms of different cgroup layouts, on every backend.

mom2 is a cgroup v2 only node (``up --cgroup-v2-only mom2``: its /sys/fs/cgroup is one
cgroup2 mount and nothing else, as on RHEL 9 or SLES 15 SP6); mom1 sees the test machine's
own layout (hybrid here: v1 controllers and cgroup2 at /sys/fs/cgroup/unified). The
``pbs_cgroups`` hook of OpenPBS up to 23.06.06 (and the mock's, which has its events)
finds only cgroup v1 mounts: the role must refuse that path for mom2 and use the bundled
hook where it can. The v1 and hybrid classification of other mount tables is unit tested
over captured mountinfo (tests/unit/plugins/module_utils/test_cgroup_layout.py): a v1 host
cannot be made here from mounts that only look like one.
"""

import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rjs_demo  # noqa: E402

# The checkout as ansible_collections.hpc.pbs (``make collection``, which the playbooks here
# need too): the collection's cgroup_layout module, from this checkout.
sys.path.insert(0, os.path.join(rjs_demo.REPO, "build", "collections"))
from ansible_collections.hpc.pbs.plugins.module_utils.moms.cgroup_layout import read_layout  # noqa: E402


def cgroup2_supported():
    try:
        with open("/proc/filesystems") as handle:
            return any(line.split()[-1] == "cgroup2" for line in handle if line.strip())
    except OSError:
        return False


pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not cgroup2_supported(), reason="the kernel has no cgroup2 file system")]

SERVER = "pbs-server"
# The test machine's own layout, which mom1 sees (the launcher gives it no mount of its own: --cgroups off).
HOST_LAYOUT = read_layout()["layout"]
# A site cgroup hook that is enabled and harmless on every backend (OpenPBS's own pbs_cgroups,
# once enabled, would manage the test machine's real cgroups from mom1).
SITE_HOOK = "site_cgroups"
SITE_BODY = "import pbs\npbs.event().accept()\n"

ROLE_PLAYBOOK = """---
- name: cgroup_resize
  hosts: pbs_server
  gather_facts: false
  roles:
    - role: hpc.pbs.cgroup_resize
"""


@pytest.fixture(scope="module")
def cluster(cluster_factory):
    cluster = cluster_factory(moms=2, up_args=["--cgroups", "off", "--cgroup-v2-only", "mom2", "--no-atom"])
    path = os.path.join(cluster.workdir, "cgroup_resize_role.yml")
    with open(path, "w") as handle:
        handle.write(ROLE_PLAYBOOK)
    cluster.role_playbook = path
    yield cluster
    cluster.down()


def ansible(cluster, playbook, *extra, inventory=None):
    """ansible-playbook ``playbook`` with ``-e`` arguments ``extra``; (rc, output)."""
    args = []
    for item in extra:
        args += ["-e", item]
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(rjs_demo.REPO, "ansible.cfg"), ANSIBLE_FORCE_COLOR="0")
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
                           "-i", inventory or cluster.inventory, playbook] + args,
                          cwd=rjs_demo.REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, check=False)
    return proc.returncode, proc.stdout


def run_role(cluster, *extra, inventory=None):
    return ansible(cluster, cluster.role_playbook, *extra, inventory=inventory)


def hooks_listing(cluster):
    return cluster.exec(SERVER, ["qmgr", "-c", "list hook"], check=True).stdout


def v2_moms():
    """The moms the role must find cgroup v2 only: mom2, and mom1 when this machine is."""
    return ["mom1", "mom2"] if HOST_LAYOUT == "v2" else ["mom2"]


def test_the_v2_only_mom_sees_one_cgroup2_mount_and_no_v1(cluster):
    mom_pid = cluster.exec("mom2", ["cat", "/var/spool/pbs/mom_priv/mom.lock"], check=True).stdout.split()[0]
    for path in ("/proc/self/mountinfo", "/proc/%s/mountinfo" % mom_pid):
        lines = [l.split(" - ")[1].split()[0] + " " + l.split()[4]
                 for l in cluster.exec("mom2", ["cat", path], check=True).stdout.splitlines()
                 if " - cgroup" in l]
        assert lines == ["cgroup2 /sys/fs/cgroup"], (path, lines)
    assert cluster.exec("mom2", ["stat", "-fc", "%T", "/sys/fs/cgroup"], check=True).stdout.strip() == "cgroup2fs"


def test_pbs_cgroups_given_explicitly_is_refused_naming_the_v2_moms_and_nothing_changes(cluster):
    before = hooks_listing(cluster)
    assert "Hook pbs_cgroups" in before  # OpenPBS creates it (disabled); the mock too
    rc, output = run_role(cluster, "cgroup_resize_hook_source=pbs_cgroups")
    assert rc != 0, output[-3000:]
    named = ", ".join("%s (layout v2, cgroup2 at /sys/fs/cgroup)" % m for m in v2_moms())
    assert ("cgroup_resize_hook_source=pbs_cgroups: the hook pbs_cgroups of this PBS (") in output, output[-3000:]
    assert ("its body on the server does not mention cgroup2) finds only cgroup v1 controllers, and these "
            "moms have only a cgroup v2 hierarchy: %s. Use auto or bundled" % named) in output, output[-3000:]
    assert "Nothing was changed." in output
    assert hooks_listing(cluster) == before


def test_the_playbook_reads_each_mom_in_its_own_task_not_one_after_another_from_the_server(cluster):
    """playbooks/cgroup_resize.yml has the moms in its play: each reads its own layout, all at
    once, and the server's per-mom read (a loop delegated to each mom in turn) reads none."""
    before = hooks_listing(cluster)
    rc, output = ansible(cluster, "playbooks/cgroup_resize.yml", "cgroup_resize_hook_source=pbs_cgroups")
    assert rc != 0 and "Nothing was changed." in output, output[-3000:]
    read = output.split("TASK [hpc.pbs.cgroup_resize : Read this mom's cgroup layout]")[1].split("TASK [")[0]
    assert "ok: [mom1]" in read and "ok: [mom2]" in read, output[-3000:]
    assert "(item=mom" not in output, output[-3000:]
    assert hooks_listing(cluster) == before


def test_audit_prints_the_layout_of_each_mom(cluster):
    report = os.path.join(cluster.workdir, "audit.json")
    rc, output = ansible(cluster, "playbooks/audit.yml", "site_cgroup_resize=true", "audit_report_path=" + report)
    assert rc == 0, output[-3000:]
    assert '"mom2: cgroup v2 (cgroup2 at /sys/fs/cgroup); pbs_cgroups cannot manage it"' in output, output[-3000:]
    mom1 = [line.strip().strip('",') for line in output.splitlines() if line.strip().startswith('"mom1: cgroup ')]
    assert len(mom1) == 1 and mom1[0].startswith("mom1: cgroup %s" % HOST_LAYOUT), mom1
    assert mom1[0].endswith("pbs_cgroups %s manage it" % ("cannot" if HOST_LAYOUT in ("v2", "none") else "can"))


def test_auto_with_an_enabled_cgroup_hook_uses_the_bundled_hook_only_where_no_mom_is_left_to_it(cluster):
    script = ("printf '%s' > /tmp/site_cgroups.py && qmgr -c 'create hook {0}' "
              "&& qmgr -c 'import hook {0} application/x-python default /tmp/site_cgroups.py' "
              "&& qmgr -c 'set hook {0} event = execjob_begin' && qmgr -c 'set hook {0} enabled = true'"
              ).format(SITE_HOOK)
    cluster.exec(SERVER, ["sh", "-c", script % SITE_BODY.replace("\n", "\\n")], check=True)
    hook_vars = "cgroup_resize_pbs_cgroups_hook_name=" + SITE_HOOK
    if HOST_LAYOUT in ("v1", "hybrid"):
        # mom1 is left to the enabled hook, mom2 cannot be: the bundled hook would manage mom1 too.
        before = hooks_listing(cluster)
        rc, output = run_role(cluster, hook_vars)
        assert rc != 0, output[-3000:]
        assert ("the bundled hook would manage the same cgroups as the enabled %s on mom1 (%s). Disable %s"
                % (SITE_HOOK, HOST_LAYOUT, SITE_HOOK)) in output, output[-3000:]
        assert hooks_listing(cluster) == before
    # Only v2 moms (mom1 out of the inventory's pbs_mom): the bundled hook, the site hook untouched.
    inventory = os.path.join(cluster.workdir, "inventory-v2-moms.ini")
    with open(cluster.inventory) as handle:
        lines = [l for l in handle if not l.startswith("mom1 ")]
    with open(inventory, "w") as handle:
        handle.writelines(lines)
    rc, output = run_role(cluster, hook_vars, inventory=inventory)
    assert rc == 0, output[-3000:]
    assert ("%s is enabled but cannot manage the cgroups of mom2 (only a cgroup v2 hierarchy there): "
            "the bundled hook cgroup_resize is used instead." % SITE_HOOK) in output, output[-3000:]
    listing = hooks_listing(cluster)
    bundled = listing.split("Hook cgroup_resize\n")[1].split("\nHook ")[0]
    assert "execjob_resize" in bundled and "enabled = true" in bundled, listing
    site = listing.split("Hook %s\n" % SITE_HOOK)[1].split("\nHook ")[0]
    assert "event = execjob_begin\n" in site and "execjob_resize" not in site, listing


def test_a_cgroup_hook_whose_body_knows_cgroup2_is_used_on_v2_moms(cluster):
    """The probe wins over the version table: a body mentioning cgroup2 manages v2 moms."""
    body = "import pbs\\n# handles cgroup2 (unified) mounts too\\npbs.event().accept()\\n"
    cluster.exec(SERVER, ["sh", "-c", "printf '%s' > /tmp/v2.py && qmgr -c 'import hook %s application/x-python "
                          "default /tmp/v2.py'" % (body, SITE_HOOK)], check=True)
    rc, output = run_role(cluster, "cgroup_resize_hook_source=pbs_cgroups",
                          "cgroup_resize_pbs_cgroups_hook_name=" + SITE_HOOK)
    assert rc == 0, output[-3000:]
    listing = hooks_listing(cluster)
    site = listing.split("Hook %s\n" % SITE_HOOK)[1].split("\nHook ")[0]
    assert "execjob_resize" in site, listing
    assert "Hook cgroup_resize\n" not in listing  # the bundled hook left from the previous test is removed
