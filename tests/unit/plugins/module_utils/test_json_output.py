"""The one reader of PBS's ``-F json`` output (``plugins/module_utils/pbs/json_output.py``)."""
import pytest

from ansible_collections.hpc.pbs.plugins.module_utils.common.module_error import ModuleError
from ansible_collections.hpc.pbs.plugins.module_utils.pbs import json_output


class Runner:
    def __init__(self, rc, out, err=""):
        self.result = (rc, out, err)
        self.calls = []

    def run_command(self, argv):
        self.calls.append(argv)
        return self.result


@pytest.mark.parametrize("text", ["[1, 2]", "42", "null", '"Jobs"'])
def test_a_document_that_is_not_an_object_is_refused(text):
    with pytest.raises(ValueError, match="not a JSON object"):
        json_output.parse_json_output(text)


def test_the_jobs_object_is_read_as_it_is_and_absent_means_no_job():
    document = {"Jobs": {"1.vm": {"run_count": 2, "Resource_List": {"ncpus": 1}}}}
    assert json_output.json_jobs(document) == [("1.vm", {"run_count": 2, "Resource_List": {"ncpus": 1}})]
    assert json_output.json_jobs({"pbs_server": "vm"}) == []


@pytest.mark.parametrize("jobs", [[1], {"1.vm": "H"}, None])
def test_a_jobs_member_of_another_shape_is_refused(jobs):
    with pytest.raises(ValueError, match='no "Jobs" object of job objects'):
        json_output.json_jobs({"Jobs": jobs})


def test_run_json_names_the_command_when_it_fails_or_prints_no_json():
    with pytest.raises(ModuleError) as caught:
        json_output.run_json(Runner(1, "", "Connection refused"), ["/opt/pbs/bin/qstat", "-F", "json"], "the jobs")
    assert caught.value.msg == ("cannot read the jobs: /opt/pbs/bin/qstat exited 1; check that the PBS "
                                "server runs and this host may query it")
    assert caught.value.extra["stderr"] == "Connection refused"
    with pytest.raises(ModuleError, match=r"^cannot read the vnodes: pbsnodes printed no JSON \("):
        json_output.run_json(Runner(0, "{not json"), ["pbsnodes", "-a", "-F", "json"], "the vnodes")
    assert json_output.run_json(Runner(0, '{"nodes": {}}'), ["pbsnodes"], "the vnodes") == {"nodes": {}}
