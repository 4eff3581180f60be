"""The files the modules read on a node (pbs.conf, hook ``.HK`` files, the mount table) read
the same under every locale: as UTF-8 (common/text_files.read_utf8).

Python 3.6 (RHEL 8, SLES 15) opens a text file in the locale's encoding, ASCII under the C
locale of an SSH session that sets no ``LANG``: ``open(path).read()`` raised
UnicodeDecodeError at a comment such as ``# géré par Ansible`` in pbs.conf, and every module
failed. Each case runs in a child Python under that locale: Python 3.6 when this machine has
it, and the controller's Python with the C locale's coercion to UTF-8 turned off
(``PYTHONCOERCECLOCALE=0``, ``PYTHONUTF8=0``), which opens text files as ASCII as 3.6 does.
"""
import json
import os
import subprocess
import sys

import pytest

from ansible_collections.hpc.pbs.plugins.module_utils.common import text_files

PYTHON36 = "/root/.pyenv/versions/3.6.15/bin/python3.6"
C_LOCALE = {"LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}
INTERPRETERS = [
    pytest.param(sys.executable, id="controller-python-c-locale"),
    pytest.param(PYTHON36, id="python3.6-c-locale",
                 marks=pytest.mark.skipif(not os.path.exists(PYTHON36), reason="needs CPython 3.6 (pyenv 3.6.15)")),
]
# <root>/ansible_collections/hpc/pbs/plugins/module_utils/common/text_files.py
COLLECTIONS_ROOT = os.path.abspath(os.path.join(os.path.dirname(text_files.__file__), *[os.pardir] * 6))

PROBE = r"""
import json, sys
from ansible_collections.hpc.pbs.plugins.module_utils.pbs.pbs_conf import resolve_pbs_paths
from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hooks import read_hook_dir
from ansible_collections.hpc.pbs.plugins.module_utils.moms.cgroup_layout import read_layout
from ansible_collections.hpc.pbs.plugins.module_utils.cluster.install_facts import read_text
conf, hooks_dir, mountinfo = sys.argv[1:4]
paths = resolve_pbs_paths(conf)
layout = read_layout(mountinfo)
print(json.dumps({"encoding": open(conf).encoding, "pbs_home": paths.conf["PBS_HOME"],
                  "hooks": read_hook_dir(hooks_dir), "layout": layout["layout"], "error": layout["error"],
                  "text": read_text(conf).splitlines()[0]}))
"""


@pytest.mark.parametrize("python", INTERPRETERS)
def test_files_with_non_ascii_text_read_the_same_under_the_c_locale(tmp_path, python):
    conf = tmp_path / "pbs.conf"
    conf.write_bytes("# géré par Ansible\nPBS_HOME=/var/spool/pbs\nPBS_EXEC=/opt/pbs\n".encode("utf-8"))
    hooks_dir = tmp_path / "hooks"
    hooks_dir.mkdir()
    (hooks_dir / "h1.HK").write_bytes("type=site\nuser=pbsadmin\nevent=queuejob\nnote=écrit à la main\n".encode("utf-8"))
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_bytes("29 1 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n"
                          "40 1 0:40 / /mnt/données rw - fuse.sshfs x@y: rw\n".encode("utf-8"))
    env = dict(os.environ, PYTHONPATH=COLLECTIONS_ROOT, **C_LOCALE)
    proc = subprocess.run([python, "-c", PROBE, str(conf), str(hooks_dir), str(mountinfo)],
                          env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert found["encoding"].lower() in ("ascii", "ansi_x3.4-1968")  # the locale is the one that failed
    assert found["pbs_home"] == "/var/spool/pbs"
    assert (found["hooks"]["h1"]["event"], found["hooks"]["h1"]["note"]) == ("queuejob", "écrit à la main")
    assert (found["layout"], found["error"]) == ("v2", None)
    assert found["text"] == "# géré par Ansible"


def test_bytes_that_are_not_utf8_are_replaced_or_raise_when_strict(tmp_path):
    path = tmp_path / "latin1"
    path.write_bytes(b"PBS_SERVER=s\xe9rveur\n")
    assert text_files.read_utf8(str(path)) == "PBS_SERVER=s\ufffdrveur\n"
    with pytest.raises(ValueError):
        text_files.read_utf8(str(path), errors="strict")
    with pytest.raises(OSError):
        text_files.read_utf8(str(tmp_path / "absent"))
