"""Input validation of the hpc.pbs.cray_atom role, through real ansible-playbook runs.

A bad input must stop the play before anything changes: the managed host (localhost) has
a fake PBS whose ``qmgr`` and ``pbs_python`` only record that they were called, and no
call may happen. Seed: shasta-pbs-cray-atom-hook.txt ("Hook Configuration File")."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
PLAYBOOK = REPO / "playbooks" / "cray_atom.yml"
VENV_BIN = Path(sys.executable).parent


@pytest.fixture
def fake_pbs(tmp_path):
    """pbs.conf + PBS_EXEC/bin/{qmgr,pbs_python} that append their argv to calls.log."""
    exec_dir = tmp_path / "exec" / "bin"
    exec_dir.mkdir(parents=True)
    calls = tmp_path / "calls.log"
    for name in ("qmgr", "pbs_python"):
        script = exec_dir / name
        script.write_text("#!/bin/sh\necho \"%s $*\" >> %s\nexit 1\n" % (name, calls))
        script.chmod(0o755)
    home = tmp_path / "home"
    (home / "mom_priv").mkdir(parents=True)
    (home / "server_priv").mkdir(parents=True)
    conf = tmp_path / "pbs.conf"
    conf.write_text("PBS_EXEC=%s\nPBS_HOME=%s\nPBS_SERVER=localhost\nPBS_START_SERVER=1\nPBS_START_MOM=1\n"
                    % (tmp_path / "exec", home))
    return {"conf": conf, "calls": calls, "dir": tmp_path}


def collections_root(tmp_path):
    root = tmp_path / "collections" / "ansible_collections" / "hpc"
    root.mkdir(parents=True)
    (root / "pbs").symlink_to(REPO)
    return tmp_path / "collections"


def run_playbook(fake, extra_vars, groups=("pbs_server", "pbs_mom"), check=False):
    tmp = fake["dir"]
    inventory = tmp / "inventory.ini"
    lines = []
    for group in groups:
        lines += ["[%s]" % group, "localhost ansible_connection=local ansible_python_interpreter=%s" % sys.executable]
    inventory.write_text("\n".join(lines) + "\n")
    variables = dict(extra_vars, cray_atom_pbs_conf_file=str(fake["conf"]))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(collections_root(tmp)), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCAL_TEMP=str(tmp / "ansible-local"), ANSIBLE_REMOTE_TEMP=str(tmp / "ansible-remote"),
               PBS_CONF_FILE=str(fake["conf"]))
    argv = [str(VENV_BIN / "ansible-playbook"), "-i", str(inventory), str(PLAYBOOK), "-e", json.dumps(variables)]
    if check:
        argv.append("--check")
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)


def assert_nothing_ran(fake):
    assert not fake["calls"].exists(), fake["calls"].read_text()


@pytest.mark.parametrize("extra_vars,message", [
    ({"cray_atom_config": {"post_timeout": 0}}, "post_timeout: 0 is less than or equal to the minimum of 0"),
    ({"cray_atom_config": {"delete_timeout": "30"}}, "delete_timeout: '30' is not of type 'number'"),
    ({"cray_atom_config": {"unix_socket_file": "run/atomd.sock"}}, "unix_socket_file: 'run/atomd.sock' does not match"),
    ({"cray_atom_config": {"version_uri": "/rm/v2"}}, "('version_uri' was unexpected)"),
    ({"cray_atom_config": {"require_socket": "yes"}}, "require_socket: 'yes' is not of type 'boolean'"),
    ({"cray_atom_hook_name": "PBS_my_atom"}, "must start with a letter or _"),
    ({"cray_atom_hook_order": 0}, "cray_atom_hook_order must be 1-1000, not 0"),
    ({"cray_atom_hook_alarm": 0}, "cray_atom_hook_alarm must be at least 1 second"),
    ({"cray_atom_hook_source": "both"}, "cray_atom_hook_source"),
    ({"cray_atom_install_method": "pip", "cray_atom_pip_packages": []}, "cray_atom_pip_packages may not be empty"),
])
@pytest.mark.parametrize("check", [False, True], ids=["apply", "check"])
def test_bad_input_stops_the_play_before_any_change(fake_pbs, extra_vars, message, check):
    result = run_playbook(fake_pbs, extra_vars, check=check)
    assert result.returncode != 0
    assert message in result.stdout, result.stdout[-3000:]
    assert_nothing_ran(fake_pbs)


def test_valid_input_passes_validation_on_a_mom(fake_pbs):
    # Only a mom (no server to query): validation passes, and the next step is the first
    # to touch PBS - the fake pbs_python, which fails; nothing before it ran.
    result = run_playbook(fake_pbs, {"cray_atom_config": {"post_timeout": 45.5}}, groups=("pbs_mom",))
    assert "Check the hook config against its JSON Schema" in result.stdout
    assert "ok: [localhost]" in result.stdout
    assert fake_pbs["calls"].read_text().startswith("pbs_python -c")
