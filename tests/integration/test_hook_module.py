"""hpc.pbs.hook preflight on the test cluster, on both backends, through ansible-playbook.

A body with a syntax error is refused before anything is imported (the hook list, the live
hook's body and its enabled state unchanged, qsub still works); a body failing at module
level is refused too (the server's pbs_python hook mode, the mock's as OpenPBS's); a
config breaking its schema is refused on the controller although the server's Python has
no jsonschema; a good hook with a good config goes live and qsub runs through it. One
cluster (one mom) and two ansible-playbook runs per backend.
"""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_rollout import QMGR, SERVER, ansible_env, run_playbook  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.cluster_moms(1)]

HOOK = "h3live"
GOOD_BODY = """import json
import pbs

with open(pbs.hook_config_filename) as handle:
    SETTINGS = json.load(handle)

if __name__ == "builtins":
    pbs.logmsg(pbs.LOG_DEBUG, "h3live tag %s" % SETTINGS["tag"])
    pbs.event().accept()
"""
SYNTAX_ERROR_BODY = GOOD_BODY.replace('SETTINGS["tag"])', 'SETTINGS["tag"]')
NAME_ERROR_BODY = GOOD_BODY.replace("SETTINGS = json.load(handle)",
                                    "SETTINGS = json.load(handle)\nLIMIT = undefined_limit")
SCHEMA = {"type": "object", "required": ["tag"], "additionalProperties": False,
          "properties": {"tag": {"type": "string", "pattern": "^[a-z]+$"}}}
GOOD_CONFIG = {"tag": "live"}


def hook_task(title, register, **args):
    """A ``hpc.pbs.hook`` task on the live hook, ``args`` changing the good values."""
    base = {"name": HOOK, "events": ["queuejob"], "body": GOOD_BODY, "config": GOOD_CONFIG,
            "config_schema": SCHEMA, "enabled": True}
    base.update(args)
    return {"name": title, "hpc.pbs.hook": base, "register": register, "ignore_errors": True}


def refusal_cases(backend):
    """``[(task, text the refusal must hold)]`` for this backend."""
    cases = [
        (hook_task("syntax in the live hook", "syntax_live", body=SYNTAX_ERROR_BODY), "h3live.PY line 8"),
        (hook_task("syntax in a new hook", "syntax_new", name="h3new", body=SYNTAX_ERROR_BODY),
         "does not compile"),
        (hook_task("schema on the controller", "schema", config={"tag": "Not Lower"}),
         "checked on the controller"),
    ]
    cases.append((hook_task("NameError at load", "name_error", body=NAME_ERROR_BODY),
                  "NameError: name 'undefined_limit' is not defined"))
    return cases


def write_playbook(tmp_path, name, tasks):
    path = tmp_path / name
    path.write_text(json.dumps([{"hosts": SERVER, "gather_facts": False, "tasks": tasks}],
                               indent=1))
    return str(path)


def hook_snapshot(cluster):
    """The hook list and the live hook's body and config, as qmgr shows them."""
    return [cluster.exec(SERVER, [QMGR, "-c", command]).stdout for command in (
        "list hook", "export hook %s application/x-python default" % HOOK,
        "export hook %s application/x-config default" % HOOK)]


def qsub_works(cluster):
    job = cluster.exec(SERVER, ["qsub", "--", "/bin/true"], user="pbsuser")
    if job.returncode == 0:
        cluster.exec(SERVER, ["qdel", "-W", "force", job.stdout.strip()])
    return job


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return ansible_env(tmp_path_factory.mktemp("ansible"))


def test_hook_preflight(pbs_cluster, pbs_backend, env, tmp_path):
    no_jsonschema = pbs_cluster.exec(SERVER, ["/usr/bin/python3", "-c", "import jsonschema"])
    assert no_jsonschema.returncode != 0, "the server node must lack jsonschema for this test"

    live = [hook_task("good hook goes live", "good"), {"ansible.builtin.assert": {"that": [
        "good is changed", "good is not failed", "good.hook.enabled == 'true'",
        "good.preflight.compiled", "good.preflight.loaded",
        "good.preflight.events.queuejob.ran", "good.preflight.events.queuejob.accepted"],
        "fail_msg": "{{ good | to_json }}"}}]
    rc, out, _unused = run_playbook(pbs_cluster, env, write_playbook(tmp_path, "live.yml", live), {})
    assert rc == 0, out
    assert qsub_works(pbs_cluster).returncode == 0

    before = hook_snapshot(pbs_cluster)
    assert "enabled = true" in before[0] and before[1] == GOOD_BODY
    cases = refusal_cases(pbs_backend)
    tasks = [task for task, _text in cases]
    for task, text in cases:
        name = task["register"]
        tasks.append({"name": "Check %s" % task["name"], "ansible.builtin.assert": {
            "that": ["%s is failed" % name, "%s is not changed" % name,
                     "%r in %s.msg" % (text, name), "'Nothing was changed' in %s.msg" % name
                     if name != "schema" else "'nothing was changed' in %s.msg" % name],
            "fail_msg": "{{ %s | to_json }}" % name}})
    rc, out, counts = run_playbook(pbs_cluster, env, write_playbook(tmp_path, "refused.yml", tasks), {})
    assert rc == 0 and counts[SERVER]["failed"] == 0, out
    assert hook_snapshot(pbs_cluster) == before
    job = qsub_works(pbs_cluster)
    assert job.returncode == 0, job.stderr
