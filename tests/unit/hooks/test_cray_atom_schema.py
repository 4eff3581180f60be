"""The cray_atom hook's own config checks agree with its JSON Schema.

The cray_atom role checks a config against ``files/hooks/cray_atom.schema.json`` on the
controller; the hook checks the same file again where it runs (``check_config``). Each
example config goes through both: the schema (as the role's ``hpc.pbs.json_schema_errors``
reads it, draft 2020-12) and the unchanged hook under the ``pbs`` emulator at
execjob_begin, registering the job with the mock ATOM service. A config one accepts and
the other refuses would pass the role and then make the hook reject every job on the moms.
"""
import json
import os
import pwd
import shutil
import tempfile
from pathlib import Path

import jsonschema
import pytest

from mockpbs.atom.service import AtomService
from mockpbs.hookrun import run_hook

REPO = Path(__file__).resolve().parents[3]
HOOK_BODY = REPO / "files" / "hooks" / "cray_atom.py"
DEFAULT_CONFIG = json.loads((REPO / "files" / "hooks" / "cray_atom.json").read_text())
SCHEMA = json.loads((REPO / "files" / "hooks" / "cray_atom.schema.json").read_text())
HOOK_NAME = "cray_atom"
ME = pwd.getpwuid(os.getuid()).pw_name


@pytest.fixture
def atomd():
    # UNIX socket paths are limited to 107 bytes: pytest's tmp_path can be longer.
    workdir = tempfile.mkdtemp(prefix="atom", dir="/tmp")
    with AtomService(os.path.join(workdir, "atomd.sock")) as service:
        yield service
    shutil.rmtree(workdir, ignore_errors=True)


def execjob_begin(atomd, config):
    """Run the hook at execjob_begin with ``config`` as its config file; a dict is given the
    mock service's socket unless it names its own ``unix_socket_file``."""
    workdir = os.path.dirname(atomd.socket_path)
    if isinstance(config, dict):
        config = dict({"unix_socket_file": atomd.socket_path}, **config)
    config_path = os.path.join(workdir, HOOK_NAME + ".CF")
    with open(config_path, "w") as handle:
        handle.write(json.dumps(config))
    hook = {"name": HOOK_NAME, "body": str(HOOK_BODY), "config": config_path, "alarm": 30,
            "user": "pbsadmin", "debug": False}
    job = {"id": "5.pbs-server", "Job_Name": "STDIN", "Job_Owner": "%s@pbs-server" % ME, "euser": ME, "egroup": ME,
           "queue": "workq",
           "Resource_List": {"select": "1:ncpus=1", "ncpus": "1", "nodect": "1"},
           "exec_vnode": "(node1:ncpus=1)", "exec_host": "node1/0"}
    context = {"job": job, "vnode_list": {}, "vnode_list_fail": {}, "in_ms_mom": True, "hostname": "node1",
               "server": "pbs-server", "daemon": "mom", "requestor": "pbs_mom", "requestor_host": "node1"}
    result = run_hook(hook, "execjob_begin", context, workdir)
    assert result["exception"] is None, result["exception"]
    return result, config_path


def test_bundled_default_config_is_valid_under_its_schema():
    jsonschema.validate(DEFAULT_CONFIG, SCHEMA)


@pytest.mark.parametrize("config, valid", [
    ({}, True),
    ({"post_timeout": 30, "delete_timeout": 0.5, "require_socket": True}, True),
    ({"post_timeout": 2.5}, True),
    ({"unix_socket_file": "/nonexistent/atomd.sock"}, True),
    ({"require_socket": False}, True),
    ({"post_timeout": 0}, False),
    ({"delete_timeout": -1}, False),
    ({"post_timeout": "30"}, False),
    ({"post_timeout": True}, False),
    ({"delete_timeout": None}, False),
    ({"unix_socket_file": "atomd.sock"}, False),
    ({"unix_socket_file": ""}, False),
    ({"unix_socket_file": 5}, False),
    ({"unix_socket_file": "/run/atomd\u0000.sock"}, False),
    ({"require_socket": "yes"}, False),
    ({"require_socket": 1}, False),
    ({"version_uri": "/rm/v2"}, False),
    ([1, 2], False),
    ("config", False),
])
def test_schema_and_hook_agree_on_configs(atomd, config, valid):
    errors = list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(config))
    assert (not errors) is valid, errors
    result, config_path = execjob_begin(atomd, config)
    if valid:
        assert result["accepted"], result["reject_msg"]
    else:
        assert not result["accepted"]
        assert config_path in result["reject_msg"], result["reject_msg"]
