"""Edges of ``qstat -f`` parsing and job attributes (``plugins/module_utils/jobs/jobs.py``) the
other tests leave unchecked: continuation lines, unknown lines, a job without an owner.
"""
import pytest

from ansible_collections.hpc.pbs.plugins.module_utils.jobs import jobs


@pytest.mark.parametrize("text", [
    "Job Id: 1.vm\n\tcontinued\n",
    "Job Id: 1.vm\n    Job_Name = a\n\n\tcontinued\n",
], ids=["right-after-the-header", "after-a-blank-line"])
def test_a_continuation_line_without_an_attribute_is_a_parse_error(text):
    with pytest.raises(jobs.QstatParseError, match="^continuation line outside of an attribute: "):
        jobs.parse_qstat_full(text)


def test_an_unknown_line_is_a_parse_error_that_quotes_it():
    with pytest.raises(jobs.QstatParseError, match="^unexpected line in qstat -f output: 'garbage'$"):
        jobs.parse_qstat_full("Job Id: 1.vm\ngarbage\n")


def test_a_continuation_is_appended_as_it_is_even_ending_in_x():
    text = "Job Id: 1.vm\n    Variable_List = PBS_O_HOME=/root,\n\tPBS_O_HOST=nodeX\n"
    assert jobs.parse_qstat_full(text) == [("1.vm", {"Variable_List": "PBS_O_HOME=/root,PBS_O_HOST=nodeX"})]


def test_a_job_without_owner_has_an_empty_user():
    assert jobs.job_owner_user({}) == ""
    assert jobs.job_owner_user({"Job_Owner": "pbsuser@vm"}) == "pbsuser"
