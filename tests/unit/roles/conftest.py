"""Fixtures of the role and playbook tests that run against this machine."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture
def fake_pbs(tmp_path):
    """pbs.conf + PBS_EXEC/bin/qmgr that records its call in calls.log and exits 1."""
    exec_dir = tmp_path / "exec" / "bin"
    exec_dir.mkdir(parents=True)
    calls = tmp_path / "calls.log"
    qmgr = exec_dir / "qmgr"
    qmgr.write_text("#!/bin/sh\necho \"qmgr $*\" >> %s\nexit 1\n" % calls)
    qmgr.chmod(0o755)
    home = tmp_path / "home"
    for sub in ("mom_priv/hooks", "server_priv/hooks", "mom_logs"):
        (home / sub).mkdir(parents=True)
    conf = tmp_path / "pbs.conf"
    conf.write_text("PBS_EXEC=%s\nPBS_HOME=%s\nPBS_SERVER=srv\nPBS_START_SERVER=1\nPBS_START_MOM=1\n"
                    % (tmp_path / "exec", home))
    return {"conf": conf, "calls": calls, "dir": tmp_path, "mom_config": home / "mom_priv" / "config"}
