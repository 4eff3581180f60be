"""qsub script directives and the small job commands (qalter, qhold, qrls, qdel) against an
in-process server with no nodes (jobs stay queued)."""
import re

from mockpbs.cli import qalter, qdel, qhold, qrls, qstat, qsub
from mockpbs.testing import server as testing


def attrs(jobid):
    out = testing.run_cli(qstat.main, ["-f", jobid])[1].replace("\n\t", "")
    return dict(re.findall(r"^    (\S+) = (.*)$", out, re.M))


def test_script_directives_apply_and_command_line_wins(server, tmp_path):
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/sh\n#PBS -N fromscript\n#PBS -l select=2:ncpus=1\n#PBS -j oe\nhostname\n")
    rc, out, _unused = testing.run_cli(qsub.main, ["-N", "cli", str(script)])
    assert rc == 0
    values = attrs(out.strip())
    assert (values["Job_Name"], values["Resource_List.select"], values["Join_Path"]) == ("cli", "2:ncpus=1", "oe")
    assert values["Resource_List.ncpus"] == "2" and values["Resource_List.place"] == "free"


def test_stdin_script_is_named_stdin_and_variables_are_passed(server):
    rc, out, _unused = testing.run_cli(qsub.main, ["-v", "FOO=bar"], stdin="#PBS -l place=scatter\necho hi\n")
    values = attrs(out.strip())
    assert values["Job_Name"] == "STDIN" and "FOO=bar" in values["Variable_List"]
    assert values["Resource_List.place"] == "scatter"


def test_qalter_tolerate_values_and_error_text(server):
    jobid = testing.run_cli(qsub.main, ["-W", "tolerate_node_failures=all", "--", "/bin/sleep", "30"])[1].strip()
    assert testing.run_cli(qalter.main, ["-W", "tolerate_node_failures=job_start", jobid])[0] == 0
    assert attrs(jobid)["tolerate_node_failures"] == "job_start"
    assert testing.run_cli(qalter.main, ["-W", "tolerate_node_failures=bogus", jobid]) == (
        166, "", "qalter: Illegal attribute or resource value %s\n" % jobid)


def test_qhold_qrls_and_qdel(server):
    jobid = testing.run_cli(qsub.main, ["--", "/bin/true"])[1].strip()
    assert testing.run_cli(qhold.main, [jobid])[0] == 0
    assert (attrs(jobid)["job_state"], attrs(jobid)["Hold_Types"]) == ("H", "u")
    assert testing.run_cli(qrls.main, [jobid])[0] == 0
    assert (attrs(jobid)["job_state"], attrs(jobid)["Hold_Types"]) == ("Q", "n")
    assert testing.run_cli(qdel.main, [jobid])[0] == 0
    assert testing.run_cli(qdel.main, [jobid]) == (153, "", "qdel: Unknown Job Id %s\n" % jobid)
