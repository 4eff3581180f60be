"""The launcher's cgroup v2 only moms (``up --cgroup-v2-only``): which nodes, and the mount
their init makes (run for real in a private mount namespace of this test)."""
import os
import shutil
import subprocess
import sys

import pytest

INTEGRATION = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                           "integration")
sys.path.insert(0, INTEGRATION)
from launcher.common import ClusterError  # noqa: E402  pylint: disable=wrong-import-position
from launcher.up import cgroup_v2_only_moms  # noqa: E402  pylint: disable=wrong-import-position


def test_the_moms_named_are_taken_spaces_and_empty_items_ignored():
    assert cgroup_v2_only_moms(" mom2, ,mom3", ["mom1", "mom2", "mom3"]) == {"mom2", "mom3"}
    assert cgroup_v2_only_moms("", ["mom1"]) == set()


def test_a_name_that_is_not_a_mom_is_refused():
    with pytest.raises(ClusterError, match=r"--cgroup-v2-only: mom9, pbs-server not among the moms \(mom1, mom2\)"):
        cgroup_v2_only_moms("pbs-server,mom9,mom1", ["mom1", "mom2"])


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="needs root and unshare")
def test_the_cgroup2_mount_replaces_every_cgroup_mount_in_the_namespace():
    code = ("import sys; sys.path.insert(0, %r)\n"
            "from launcher.nodeinit import mount\n"
            "mount('cgroup2', 'cgroup2', '/sys/fs/cgroup')\n"
            "print(open('/proc/self/mountinfo').read())\n" % INTEGRATION)
    proc = subprocess.run(["unshare", "--mount", "--propagation", "private", sys.executable, "-c", code],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    cgroup = [(line.split(" - ")[1].split()[0], line.split()[4])
              for line in proc.stdout.splitlines() if " - cgroup" in line]
    assert cgroup == [("cgroup2", "/sys/fs/cgroup")], proc.stdout
