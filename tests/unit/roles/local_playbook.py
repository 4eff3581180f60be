"""Run a playbook of the collection against hosts that are all this machine
(``ansible_connection=local``) with a fake PBS (the ``fake_pbs`` fixture of conftest.py)."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
VENV_BIN = Path(sys.executable).parent
RECAP_RE = re.compile(r"^(\S+)\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M)


def ansible_playbook_local(fake, playbook, inventory_text, variables, *options):
    """``ansible-playbook -i INVENTORY PLAYBOOK -e VARIABLES OPTIONS`` with the collection made
    importable from ``fake["dir"]`` and ``PBS_CONF_FILE`` = ``fake["conf"]``:
    ``(returncode, stdout + stderr)``."""
    tmp = fake["dir"]
    collections = tmp / "collections" / "ansible_collections" / "hpc"
    collections.mkdir(parents=True, exist_ok=True)
    if not (collections / "pbs").exists():
        (collections / "pbs").symlink_to(REPO)
    inventory = tmp / "inventory.ini"
    inventory.write_text(inventory_text)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(tmp / "collections"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_CONFIG=str(REPO / "ansible.cfg"),
               ANSIBLE_LOCAL_TEMP=str(tmp / "ansible-local"), ANSIBLE_REMOTE_TEMP=str(tmp / "ansible-remote"),
               PBS_CONF_FILE=str(fake["conf"]))
    argv = [str(VENV_BIN / "ansible-playbook"), "-i", str(inventory), str(playbook),
            "-e", json.dumps(variables)] + list(options)
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300, stdin=subprocess.DEVNULL,
                          check=False)
    return proc.returncode, proc.stdout + proc.stderr


def run_local_playbook(fake, playbook, inventory_text, variables):
    """As ansible_playbook_local: ``(returncode, output, {host: failed count from the recap})``."""
    returncode, output = ansible_playbook_local(fake, playbook, inventory_text, variables)
    recap = {m.group(1): int(m.group(5)) for m in RECAP_RE.finditer(output)}
    return returncode, output, recap
