"""hpc.pbs.cluster_info: the mom facts' cgroup layout (what the mom's host mounts)."""
import pytest

from ansible_collections.hpc.pbs.plugins.module_utils.moms import cgroup_layout
from ansible_collections.hpc.pbs.plugins.modules import cluster_info
from hpc_pbs_module_fakes import run_module

V2 = "26 22 0:23 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
HYBRID = ("34 31 0:31 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n"
          "41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n")


@pytest.fixture
def mom_home(pbs_install):
    pbs_install.write_conf("PBS_SERVER=vm\nPBS_START_MOM=1\n")
    (pbs_install.home / "mom_priv" / "hooks").mkdir(parents=True)
    return pbs_install


def run(install):
    return run_module(cluster_info.main, {"pbs_conf_file": install.conf, "query_server": "never"},
                      check_mode=True)


@pytest.mark.parametrize("text, layout, cgroup2", [
    (V2, "v2", "/sys/fs/cgroup"),
    (HYBRID, "hybrid", "/sys/fs/cgroup/unified"),
])
def test_mom_facts_carry_the_layout_of_the_mountinfo_read(mom_home, tmp_path, monkeypatch, text, layout, cgroup2):
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text(text)
    monkeypatch.setattr(cgroup_layout, "MOUNTINFO", str(mountinfo))
    code, result = run(mom_home)
    assert code == 0, result
    cgroup = result["mom"]["cgroup"]
    assert cgroup["layout"] == layout and cgroup["cgroup2_mount"] == cgroup2
    assert cgroup["source"] == str(mountinfo) and cgroup["error"] is None


def test_an_unreadable_mountinfo_is_an_unknown_layout_not_a_failure(mom_home, tmp_path, monkeypatch):
    monkeypatch.setattr(cgroup_layout, "MOUNTINFO", str(tmp_path / "absent"))
    code, result = run(mom_home)
    assert code == 0, result
    assert result["mom"]["cgroup"]["layout"] == "unknown"
    assert "absent" in result["mom"]["cgroup"]["error"]


def test_the_default_is_this_process_own_mountinfo(mom_home):
    code, result = run(mom_home)
    assert code == 0 and result["mom"]["cgroup"]["source"] == "/proc/self/mountinfo"


def test_a_host_without_mom_priv_has_no_mom_facts(pbs_install):
    pbs_install.write_conf("PBS_SERVER=vm\n")
    code, result = run(pbs_install)
    assert code == 0 and result["mom"] is None
