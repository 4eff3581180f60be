"""cgroup_layout: v1, hybrid, v2-only and no-cgroup hosts told apart from /proc/self/mountinfo.

The texts are mountinfo as the kernel prints it on each kind of host (CentOS 7 / RHEL 8:
v1; Debian 10 / Ubuntu 20.04 / this test machine: hybrid; RHEL 9 / SLES 15 SP6: v2)."""
import pytest

from ansible_collections.hpc.pbs.plugins.module_utils.moms.cgroup_layout import (
    classify, parse_mountinfo, read_layout, unescape)

V1 = """\
18 41 0:17 / /sys rw,nosuid,nodev,noexec,relatime shared:6 - sysfs sysfs rw
24 18 0:20 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:7 - tmpfs tmpfs ro,mode=755
25 24 0:21 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:8 - cgroup cgroup \
rw,xattr,release_agent=/usr/lib/systemd/systemd-cgroups-agent,name=systemd
28 24 0:24 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct
29 24 0:25 / /sys/fs/cgroup/cpuset rw,nosuid,nodev,noexec,relatime shared:10 - cgroup cgroup rw,cpuset
30 24 0:26 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:11 - cgroup cgroup rw,memory
41 1 253:0 / / rw,relatime shared:1 - xfs /dev/mapper/rhel-root rw,attr2,inode64,noquota
"""

# This machine's own (Debian, systemd hybrid), as the launcher's nodes saw it.
HYBRID = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""

V2 = """\
22 63 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:2 - sysfs sysfs rw,seclabel
26 22 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,seclabel,nsdelegate,memory_recursiveprot
63 1 253:0 / / rw,relatime shared:1 - xfs /dev/mapper/rhel-root rw,seclabel,attr2,inode64
"""

# systemd's named v1 hierarchy kept beside a unified /sys/fs/cgroup: no v1 controller.
V2_WITH_NAMED_V1 = V2 + (
    "70 26 0:40 / /sys/fs/cgroup/systemd-legacy rw,relatime - cgroup cgroup rw,name=systemd\n")

NONE = """\
22 63 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:2 - sysfs sysfs rw
63 1 253:0 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
"""


@pytest.mark.parametrize("text, layout, controllers, cgroup2", [
    (V1, "v1", ["cpu", "cpuacct", "cpuset", "memory"], None),
    (HYBRID, "hybrid", ["cpu", "cpuacct", "cpuset", "memory"], "/sys/fs/cgroup/unified"),
    (V2, "v2", [], "/sys/fs/cgroup"),
    (V2_WITH_NAMED_V1, "v2", [], "/sys/fs/cgroup"),
    (NONE, "none", [], None),
    ("", "none", [], None),
], ids=["v1", "hybrid", "v2", "v2-named-v1", "none", "empty"])
def test_each_layout_is_told_apart(text, layout, controllers, cgroup2):
    found = classify(text)
    assert found["layout"] == layout
    assert found["v1_controllers"] == controllers
    assert found["cgroup2_mount"] == cgroup2


def test_a_v1_mount_holding_two_controllers_serves_both():
    assert classify(V1)["v1_mounts"] == {
        "cpu": "/sys/fs/cgroup/cpu,cpuacct", "cpuacct": "/sys/fs/cgroup/cpu,cpuacct",
        "cpuset": "/sys/fs/cgroup/cpuset", "memory": "/sys/fs/cgroup/memory"}


def test_the_shortest_mount_of_a_controller_and_of_cgroup2_is_kept():
    text = HYBRID + (
        "50 31 0:31 / /sys/fs/cgroup/cpuset/inner/again rw - cgroup cgroup rw,cpuset\n"
        "51 31 0:38 / /sys/fs/cgroup/unified/deeper rw - cgroup2 cgroup2 rw\n"
        "52 31 0:38 / /cg2 rw - cgroup2 cgroup2 rw\n")
    found = classify(text)
    assert found["v1_mounts"]["cpuset"] == "/sys/fs/cgroup/cpuset"
    assert found["cgroup2_mount"] == "/cg2"


def test_optional_fields_and_escaped_mount_points():
    text = ("90 31 0:31 / /mnt/my\\040cgroups rw,relatime shared:3 master:1 - cgroup cgroup rw,memory\n"
            "91 31 0:38 / /mnt/uni\\134fied rw,relatime - cgroup2 none rw\n")
    found = classify(text)
    assert found["layout"] == "hybrid"
    assert found["v1_mounts"] == {"memory": "/mnt/my cgroups"}
    assert found["cgroup2_mount"] == "/mnt/uni\\fied"
    assert unescape("a\\011b\\012c") == "a\tb\nc"


def test_lines_that_are_not_mountinfo_are_skipped():
    text = ("garbage\n"
            "1 2 0:1 / /x rw - cgroup2\n"          # no source: not a whole line
            "1 2 0:1 / - cgroup2 cgroup2 rw\n"     # the separator where the mount point is
            "34 31 0:31 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n")
    mounts = parse_mountinfo(text)
    assert mounts == [dict(mount_point="/sys/fs/cgroup/cpuset", fstype="cgroup",
                           super_options=["rw", "cpuset"])]
    assert classify(text)["layout"] == "v1"


def test_mounts_of_other_types_naming_a_controller_are_not_cgroups():
    text = V2 + "80 22 0:50 / /srv/memory rw - tmpfs memory rw,memory,cpuset\n"
    assert classify(text)["layout"] == "v2"


def test_read_layout_reads_the_file(tmp_path):
    path = tmp_path / "mountinfo"
    path.write_text(V2)
    found = read_layout(str(path))
    assert found["layout"] == "v2" and found["source"] == str(path) and found["error"] is None


def test_read_layout_of_an_unreadable_file_is_unknown_with_the_reason(tmp_path):
    path = str(tmp_path / "missing")
    found = read_layout(path)
    assert found["layout"] == "unknown"
    assert found["error"].startswith("cannot read %s: " % path)
    assert found["v1_controllers"] == [] and found["cgroup2_mount"] is None


def test_read_layout_default_is_this_process_view():
    found = read_layout()
    assert found["source"] == "/proc/self/mountinfo"
    assert found["layout"] in ("v1", "hybrid", "v2", "none")
