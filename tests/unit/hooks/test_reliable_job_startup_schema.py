"""The reliable_job_startup hook's own config checks agree with its JSON Schema.

The roles check a config against ``files/hooks/reliable_job_startup.schema.json`` on the
controller; the hook checks the same file again where it runs (``check_config``). Each
example config goes through both: the schema (as the roles' ``hpc.pbs.json_schema_errors``
reads it, draft 2020-12) and the unchanged hook under the ``pbs`` emulator at queuejob.
A config one accepts and the other refuses would pass the roles and then make the hook
reject every job (or the other way round).
"""
import json
from pathlib import Path

import jsonschema
import pytest

from mockpbs.hookrun import run_hook

REPO = Path(__file__).resolve().parents[3]
HOOK_BODY = REPO / "files" / "hooks" / "reliable_job_startup.py"
DEFAULT_CONFIG = json.loads((REPO / "files" / "hooks" / "reliable_job_startup.json").read_text())
SCHEMA = json.loads((REPO / "files" / "hooks" / "reliable_job_startup.schema.json").read_text())
HOOK_NAME = "reliable_job_startup"


def queuejob(tmp_path, config):
    """Run the hook at queuejob for a two-chunk job with ``config`` as its config file."""
    config_path = tmp_path / (HOOK_NAME + ".CF")
    config_path.write_text(json.dumps(config))
    hook = {"name": HOOK_NAME, "body": str(HOOK_BODY), "config": str(config_path), "alarm": 30,
            "user": "pbsadmin", "debug": False}
    job = {"id": None, "Job_Name": "STDIN", "Job_Owner": "pbsuser@pbs-server", "queue": "workq",
           "Resource_List": {"select": "1:ncpus=1+1:ncpus=1"}}
    context = {"job": job, "daemon": "server", "server": "pbs-server", "hostname": "pbs-server",
               "requestor": "pbsuser", "requestor_host": "pbs-server"}
    result = run_hook(hook, "queuejob", context, str(tmp_path))
    assert result["exception"] is None, result["exception"]
    return result, str(config_path)


def test_bundled_default_config_is_valid_under_its_schema():
    jsonschema.validate(DEFAULT_CONFIG, SCHEMA)


@pytest.mark.parametrize("config, valid", [
    ({}, True),
    (DEFAULT_CONFIG, True),
    ({"tolerate": "all", "increment": "2", "keep_select_resource": "software", "queues": ["workq", "big"],
      "offline_failed_vnodes": False}, True),
    ({"increment": "50%"}, True),
    ({"increment": "007"}, True),
    ({"increment": 3}, True),
    ({"increment": 2.0}, True),
    ({"increment": {"0": 1, "2": "10%"}}, True),
    ({"increment": {"1": 2.0}}, True),
    ({"tolerate": "none"}, False),
    ({"tolerate": None}, False),
    ({"increment": 0}, False),
    ({"increment": -1}, False),
    ({"increment": 1.5}, False),
    ({"increment": True}, False),
    ({"increment": "0"}, False),
    ({"increment": "0%"}, False),
    ({"increment": "abc%"}, False),
    ({"increment": "1.5"}, False),
    ({"increment": ""}, False),
    ({"increment": {}}, False),
    ({"increment": {"x": 1}}, False),
    ({"increment": {"-1": 1}}, False),
    ({"increment": {"0": 0}}, False),
    ({"increment": [1]}, False),
    ({"keep_select_resource": "select"}, False),
    ({"keep_select_resource": "ncpus"}, False),
    ({"keep_select_resource": "1site"}, False),
    ({"keep_select_resource": "my site"}, False),
    ({"keep_select_resource": 5}, False),
    ({"queues": "workq"}, False),
    ({"queues": [""]}, False),
    ({"queues": [5]}, False),
    ({"queues": ["workq", "workq"]}, False),
    ({"offline_failed_vnodes": "yes"}, False),
    ({"offline_failed_vnodes": 1}, False),
    ({"incremnet": 2}, False),
    ([1], False),
    (None, False),
])
def test_schema_and_hook_agree_on_configs(tmp_path, config, valid):
    errors = list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(config))
    assert (not errors) is valid, errors
    result, config_path = queuejob(tmp_path, config)
    if valid:
        assert result["accepted"], result["reject_msg"]
    else:
        assert not result["accepted"]
        assert config_path in result["reject_msg"], result["reject_msg"]


def test_a_whole_float_increment_pads_as_its_integer(tmp_path):
    as_float = queuejob(tmp_path, {"increment": 2.0, "queues": []})[0]
    as_int = queuejob(tmp_path, {"increment": 2, "queues": []})[0]
    assert as_float["job"]["Resource_List"]["select"] == as_int["job"]["Resource_List"]["select"] == "1:ncpus=1+3:ncpus=1"
