"""cray_atom_hook_body_src on the mock cluster: the bundled site hook runs a body of the
site's own, kept on a second run and in check mode; with auto on a server that has the
built-in PBS_cray_atom (the mock has it, disabled) the body is refused before anything
changes, naming the variable.

Mock only: the role reads the file on the controller and installs it through the same
hpc.pbs.hook task on every backend (test_import checks an own body on real OpenPBS).
"""
import json
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rjs_demo  # noqa: E402  (REPO, RECAP_RE)
from test_rollout import ansible_env  # noqa: E402

pytestmark = pytest.mark.integration

SERVER = "pbs-server"
BUNDLED_BODY = os.path.join(rjs_demo.REPO, "files", "hooks", "cray_atom.py")
HOOK_FILE = "/var/spool/pbs/server_priv/hooks/cray_atom.PY"


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return ansible_env(tmp_path_factory.mktemp("ansible"))


@pytest.fixture(scope="module")
def cluster(cluster_factory, pbs_backend):
    if pbs_backend != "mock":
        pytest.skip("the same hpc.pbs.hook task on every backend; mock only to keep the real tier short")
    cluster = cluster_factory(moms=1)
    yield cluster
    cluster.down()


def play(cluster, env, variables, check=False):
    """ansible-playbook playbooks/cray_atom.yml -e JSON [--check]: (rc, output, {host: recap})."""
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", cluster.inventory,
            "playbooks/cray_atom.yml", "-e", json.dumps(variables)] + (["--check"] if check else [])
    proc = subprocess.run(argv, cwd=rjs_demo.REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, stdin=subprocess.DEVNULL, timeout=600, check=False)
    recap = {m.group(1): {"changed": int(m.group(3)), "failed": int(m.group(5))}
             for m in rjs_demo.RECAP_RE.finditer(proc.stdout)}
    return proc.returncode, proc.stdout, recap


def server_body(cluster):
    proc = cluster.exec(SERVER, ["cat", HOOK_FILE])
    return proc.stdout if proc.returncode == 0 else None


def test_an_own_body_is_installed_and_kept(cluster, env, tmp_path):
    with open(BUNDLED_BODY) as handle:
        own = handle.read() + "# the site's own line\n"
    body = tmp_path / "own_cray_atom.py"
    body.write_text(own)
    variables = {"cray_atom_hook_source": "bundled", "cray_atom_hook_body_src": str(body)}
    rc, output, recap = play(cluster, env, variables)
    assert rc == 0 and recap[SERVER]["changed"] > 0, output[-3000:]
    assert server_body(cluster) == own
    rc, output, recap = play(cluster, env, variables, check=True)
    assert rc == 0 and all(r["changed"] == 0 for r in recap.values()), output[-3000:]
    # Without the variable the role would install the bundled body again.
    rc, output, recap = play(cluster, env, {"cray_atom_hook_source": "bundled"}, check=True)
    assert rc == 0 and recap[SERVER]["changed"] > 0, output[-3000:]
    assert server_body(cluster) == own


def test_auto_with_the_builtin_hook_refuses_an_own_body(cluster, env, tmp_path):
    body = tmp_path / "own_cray_atom.py"
    body.write_text("import pbs\n")
    before = server_body(cluster)
    rc, output, recap = play(cluster, env, {"cray_atom_hook_body_src": str(body)})
    assert rc != 0, output[-3000:]
    assert ("cray_atom_hook_body_src %s is set but cray_atom_hook_source auto chose the built-in PBS_cray_atom"
            % json.dumps(str(body))) in output, output[-3000:]
    assert all(r["changed"] == 0 for r in recap.values()), recap
    assert server_body(cluster) == before
    listed = cluster.exec(SERVER, ["qmgr", "-c", "list pbshook PBS_cray_atom"], check=True).stdout
    assert "enabled = false" in listed, listed
