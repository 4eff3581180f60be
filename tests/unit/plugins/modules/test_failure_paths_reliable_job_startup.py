"""The bundled reliable_job_startup hook matches a job submitted without ``-q`` by the
server's ``default_queue`` (the queue the server puts it in), under the ``pbs`` emulator
(mockpbs.hookrun runs the unchanged hook file in a child process, as pbs_python would)."""
import json
from pathlib import Path

import pytest

from mockpbs.hookrun import run_hook

REPO = Path(__file__).resolve().parents[4]
HOOK_BODY = REPO / "files" / "hooks" / "reliable_job_startup.py"
DEFAULT_CONFIG = json.loads((REPO / "files" / "hooks" / "reliable_job_startup.json").read_text())


def queuejob(tmp_path, queue, queues, default_queue):
    """Run the hook's queuejob for a job of two chunks in ``queue`` (None: no ``-q``),
    configured for ``queues``, on a server whose default_queue is ``default_queue``
    (None: unset). Returns the runner's result."""
    config = tmp_path / "reliable_job_startup.CF"
    config.write_text(json.dumps(dict(DEFAULT_CONFIG, queues=queues)))
    hook = {"name": "reliable_job_startup", "body": str(HOOK_BODY), "config": str(config),
            "alarm": 30, "user": "pbsadmin", "debug": False}
    server_attributes = {} if default_queue is None else {"default_queue": default_queue}
    job = {"id": None, "Job_Name": "STDIN", "Job_Owner": "pbsuser@pbs-server", "queue": queue,
           "Resource_List": {"select": "1:ncpus=1+1:ncpus=1"}}
    context = {"job": job, "daemon": "server", "server": "pbs-server",
               "server_attributes": server_attributes, "hostname": "pbs-server",
               "requestor": "pbsuser", "requestor_host": "pbs-server"}
    result = run_hook(hook, "queuejob", context, str(tmp_path))
    assert result["exception"] is None, result["exception"]
    assert result["accepted"], result["reject_msg"]
    return result


@pytest.mark.parametrize("queue, queues, default_queue, padded", [
    (None, ["long"], "long", True),      # no -q, the default queue is configured
    (None, ["long"], "workq", False),    # no -q, the default queue is not configured
    (None, ["long"], None, False),       # no -q and no default queue: nothing matches
    ("workq", ["long"], "long", False),  # -q names another queue: the default is moot
    ("long", ["long"], "workq", True),
])
def test_job_without_q_is_matched_by_the_default_queue(tmp_path, queue, queues,
                                                       default_queue, padded):
    result = queuejob(tmp_path, queue, queues, default_queue)
    assert ("Resource_List" in result["job"]) is padded
    assert ("tolerate_node_failures" in result["job"]) is padded
    if padded:
        assert result["job"]["Resource_List"]["select"] == "1:ncpus=1+2:ncpus=1"


def test_the_left_alone_message_names_the_default_queue(tmp_path):
    result = queuejob(tmp_path, None, ["long"], "workq")
    assert any("queue 'workq' is not in ['long'], job left alone" in record[3]
               for record in result["logs"]), result["logs"]
