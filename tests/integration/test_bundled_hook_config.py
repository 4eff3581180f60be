"""The bundled reliable startup hook checks its config file against its own schema where PBS
runs it: in pbs_server's queuejob interpreter, real OpenPBS (23.06.06, and 22.05.11 whose
pbs_python is CPython 3.6) and the mock alike.

A config that breaks ``files/hooks/reliable_job_startup.schema.json`` makes every qsub fail
with the hook's message naming the file's key and the rule (the generated validator in the
body, not the roles' check on the controller: the config is imported with qmgr here); a
good one pads the job. Only queuejob runs: no scheduling cycle, the padded job stays queued
on the single mom and is deleted.

pbs_server runs every queuejob event in one long-lived interpreter (so does the mock's,
``mockpbs.server.hook_interpreter``), where the hook keeps the last config it checked
(``hook_state()``): a config imported again while the hook stays must still be the one the
next qsub gets.
"""
import time

import pytest

import pbsjobs

pytestmark = [pytest.mark.integration, pytest.mark.cluster_moms(1), pytest.mark.release_smoke]


def test_a_config_out_of_the_schema_fails_qsub_naming_the_key_and_a_good_one_pads(pbs_cluster):
    try:
        pbsjobs.install_bundled_hook(pbs_cluster, config={"increment": "abc%", "queues": ["workq", ""]})
        refused = pbsjobs.qsub(pbs_cluster, ["-l", "select=2:ncpus=1", "--", "/bin/sleep", "60"], check=False)
        assert refused.returncode != 0
        message = refused.stdout + refused.stderr
        assert "reliable_job_startup: config file " in message, message
        assert ("increment must be a whole number \"N\" or a percentage \"N%\" with N >= 1, not 'abc%'; "
                "queues[1] must be a queue name, not ''") in message, message

        pbsjobs.install_bundled_hook(pbs_cluster, config={"increment": {"0": 1, "1": 2.0}, "queues": ["workq"]})
        jobid = pbsjobs.qsub(pbs_cluster, ["-l", "select=1:ncpus=1+2:ncpus=1", "--", "/bin/sleep", "60"])
        try:
            attrs = pbsjobs.qstat_f(pbs_cluster, jobid)
            assert attrs["Resource_List.select"] == "1:ncpus=1+4:ncpus=1", attrs
            assert attrs["Resource_List.site"] == "1:ncpus=1+2:ncpus=1", attrs
        finally:
            pbsjobs.qdel(pbs_cluster, jobid)
    finally:
        pbsjobs.delete_hook(pbs_cluster, "reliable_job_startup")


def _padded_select(cluster, select):
    jobid = pbsjobs.qsub(cluster, ["-l", "select=" + select, "--", "/bin/sleep", "60"])
    try:
        return pbsjobs.qstat_f(cluster, jobid)["Resource_List.select"]
    finally:
        pbsjobs.qdel(cluster, jobid)


def test_each_config_imported_while_the_hook_stays_is_the_one_the_next_qsub_gets(pbs_cluster):
    try:
        pbsjobs.install_bundled_hook(pbs_cluster, config={"increment": 1})
        assert _padded_select(pbs_cluster, "1:ncpus=1+1:ncpus=1") == "1:ncpus=1+2:ncpus=1"
        assert _padded_select(pbs_cluster, "1:ncpus=1+1:ncpus=1") == "1:ncpus=1+2:ncpus=1"
        pbsjobs.import_hook_config(pbs_cluster, "reliable_job_startup", {"increment": 3})
        assert _padded_select(pbs_cluster, "1:ncpus=1+1:ncpus=1") == "1:ncpus=1+4:ncpus=1"
        pbsjobs.import_hook_config(pbs_cluster, "reliable_job_startup", {"increment": "abc%"})
        refused = pbsjobs.qsub(pbs_cluster, ["-l", "select=2:ncpus=1", "--", "/bin/sleep", "60"], check=False)
        assert refused.returncode != 0
        assert "increment must be" in refused.stdout + refused.stderr
        pbsjobs.import_hook_config(pbs_cluster, "reliable_job_startup", {"increment": 1})
        assert _padded_select(pbs_cluster, "1:ncpus=1+1:ncpus=1") == "1:ncpus=1+2:ncpus=1"
    finally:
        pbsjobs.delete_hook(pbs_cluster, "reliable_job_startup")


def test_a_config_that_is_not_json_fails_qsub_naming_the_file_and_why(pbs_cluster):
    """Imported as hpc.pbs.hook imports a config (a file without suffix, which PBS does not
    load at import), then met by a fresh interpreter: the server restarts it at the next
    event (python_restart_max_hooks 1, python_restart_min_interval 1 s), so no json module
    is imported there yet. CPython 3.10 and 3.11's C scanner then raises SystemError, not
    JSONDecodeError; the hook must still say what is wrong."""
    try:
        pbsjobs.install_bundled_hook(pbs_cluster)
        pbsjobs.import_hook_config_text(pbs_cluster, "reliable_job_startup", '{"increment": 2 "tolerate": "all"}')
        pbsjobs.qmgr(pbs_cluster, "set server python_restart_max_hooks = 1")
        pbsjobs.qmgr(pbs_cluster, "set server python_restart_min_interval = 1")
        for _attempt in range(2):  # the first may be the event that the interpreter had counted up to
            time.sleep(1.5)
            refused = pbsjobs.qsub(pbs_cluster, ["-l", "select=2:ncpus=1", "--", "/bin/sleep", "60"], check=False)
            assert refused.returncode != 0
            message = refused.stdout + refused.stderr
            assert "reliable_job_startup: config file " in message, message
            assert "is not valid JSON: Expecting ',' delimiter: line 1 column 17" in message, message
        server_log = pbsjobs.log_text(pbs_cluster, pbsjobs.SERVER, "server_logs")
        assert "Restarting Python interpreter to reduce mem usage" in server_log
    finally:
        pbsjobs.qmgr(pbs_cluster, "unset server python_restart_max_hooks", check=False)
        pbsjobs.qmgr(pbs_cluster, "unset server python_restart_min_interval", check=False)
        pbsjobs.delete_hook(pbs_cluster, "reliable_job_startup")
