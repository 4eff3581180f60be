"""hpc.pbs.hook's event preflight and body checks on the test cluster, through
ansible-playbook: before a body goes live, each of its events runs once in the server's
``pbs_python --hook`` on a synthetic event.

- The bundled hooks (reliable_job_startup, cray_atom, cgroup_resize from files/hooks, with
  their default configs) pass it: every event is run, on a real OpenPBS and on the mock
  (whose pbs_python has the hook mode too: mockpbs.hookrun.pbs_python_hook_mode).
- A body raising at its first queuejob event (``Resource_List["select"].nonexistent()``) is
  refused and ``qmgr -c "list hook X"`` shows nothing created.
- A body_src that is not UTF-8 and one over 100 MiB (a sparse file, refused from its size)
  are refused before any qmgr call, on every backend.

One cluster (one mom) and one ansible-playbook run per backend (the release smoke tier
also runs it on OpenPBS 22.05.11).
"""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_rollout import QMGR, REPO, SERVER, ansible_env, run_playbook  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.cluster_moms(1), pytest.mark.release_smoke]

HOOKS = os.path.join(REPO, "files", "hooks")
BUNDLED = {
    "pf_rjs": ("reliable_job_startup", ["queuejob", "execjob_launch"]),
    "pf_atom": ("cray_atom", ["execjob_begin", "execjob_end"]),
    "pf_cgroup": ("cgroup_resize", ["execjob_begin", "execjob_launch", "execjob_resize", "execjob_end"]),
}
RAISING_BODY = ('import pbs\n\nif __name__ == "builtins":\n'
                '    pbs.event().job.Resource_List["select"].nonexistent()\n')
LATIN1_PATH = "/tmp/pf_latin1_hook.py"
BIG_PATH = "/tmp/pf_big_hook.py"
BIG_SIZE = 100 * 1024 * 1024 + 1


def read(name):
    with open(os.path.join(HOOKS, name)) as handle:
        return handle.read()


def bundled_tasks():
    tasks = []
    for hook, (source, events) in sorted(BUNDLED.items()):
        tasks.append({"name": "bundled %s" % source, "register": hook, "ignore_errors": True,
                      "hpc.pbs.hook": {"name": hook, "events": events, "enabled": False,
                                       "body": read(source + ".py"),
                                       "config": json.loads(read(source + ".json"))}})
    return tasks


def refused_task(register, **args):
    args.setdefault("events", ["queuejob", "execjob_launch"])
    return {"name": "refused %s" % register, "register": register, "ignore_errors": True,
            "hpc.pbs.hook": dict(args, name=register, enabled=True)}


def playbook(tmp_path, tasks):
    path = tmp_path / "preflight.yml"
    registered = ", ".join("%r: %s" % (t["register"], t["register"]) for t in tasks)
    tasks = tasks + [{"name": "results", "ansible.builtin.copy": {
        "dest": str(tmp_path / "results.json"), "content": "{{ {%s} | to_json }}" % registered},
        "delegate_to": "localhost"}]
    path.write_text(json.dumps([{"hosts": SERVER, "gather_facts": False, "tasks": tasks}], indent=1))
    return str(path)


def listed_hooks(cluster):
    return cluster.exec(SERVER, [QMGR, "-c", "list hook"]).stdout


@pytest.fixture(scope="module")
def results(pbs_cluster, tmp_path_factory):
    """Every task of the one playbook run: ``{register: result}``, and the hook list after."""
    pbs_cluster.exec(SERVER, ["python3", "-c", "open(%r, 'wb').write(b'import pbs\\n# caf\\xe9\\n')"
                              % LATIN1_PATH], check=True)
    pbs_cluster.exec(SERVER, ["python3", "-c", "open(%r, 'wb').truncate(%d)" % (BIG_PATH, BIG_SIZE)],
                     check=True)
    tmp = tmp_path_factory.mktemp("preflight")
    tasks = bundled_tasks() + [
        refused_task("pf_raises", body=RAISING_BODY),
        refused_task("pf_latin1", body_src=LATIN1_PATH),
        refused_task("pf_big", body_src=BIG_PATH),
    ]
    env = ansible_env(tmp_path_factory.mktemp("ansible"))
    rc, out, counts = run_playbook(pbs_cluster, env, playbook(tmp, tasks), {})
    assert rc == 0 and counts[SERVER]["failed"] == 0, out
    with open(str(tmp / "results.json")) as handle:
        return json.load(handle), listed_hooks(pbs_cluster)


def test_bundled_hooks_pass_the_event_preflight(results):
    done, listing = results
    for hook, (source, events) in sorted(BUNDLED.items()):
        result = done[hook]
        assert not result.get("failed") and result["changed"], (source, result)
        preflight = result["preflight"]
        assert preflight["compiled"] is True
        assert preflight["loaded"] is True and sorted(preflight["events"]) == sorted(events), source
        assert all(outcome["ran"] for outcome in preflight["events"].values()), preflight
        if source != "cgroup_resize":   # may reject where the server host has no cgroup v1 of its own
            assert all(o["accepted"] for o in preflight["events"].values()), preflight
        assert "Hook %s" % hook in listing


@pytest.mark.parametrize("hook, text", [
    ("pf_latin1", "body_src: the hook body is not UTF-8 text (byte 0xe9 at offset 16, line 2)"),
    ("pf_big", "body_src: the hook body is %d bytes, over the 104857600 bytes" % BIG_SIZE),
])
def test_a_body_that_is_not_utf8_or_too_big_creates_nothing(results, pbs_cluster, hook, text):
    done, listing = results
    assert done[hook]["failed"] and not done[hook]["changed"] and done[hook]["msg"].startswith(text), done[hook]
    assert "Hook %s" % hook not in listing
    assert pbs_cluster.exec(SERVER, [QMGR, "-c", "list hook %s" % hook]).returncode != 0


def test_a_body_raising_at_its_first_queuejob_creates_nothing(results, pbs_cluster):
    done, listing = results
    result = done["pf_raises"]
    assert result.get("failed") and not result["changed"], result
    assert "raises an exception at its first queuejob event" in result["msg"]
    assert "AttributeError: 'select' object has no attribute 'nonexistent'" in result["msg"]
    assert "Hook pf_raises" not in listing
    assert pbs_cluster.exec(SERVER, [QMGR, "-c", "list hook pf_raises"]).returncode != 0
