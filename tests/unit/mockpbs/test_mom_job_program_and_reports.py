"""What the mom runs and reports (gaps found by the PP-928 and job-array work):

- ``qsub -- PROGRAM ARGS`` jobs (``executable`` / ``argument_list`` in the job dict, as
  transcripts g and h show them) run PROGRAM with ARGS, not an empty script;
- a subjob's program sees ``PBS_ARRAY_INDEX``, ``PBS_ARRAY_ID`` and ``PBS_JOBID=N[i].srv``;
- ``mom_job_obit`` and ``mom_job_requeue`` carry the job's ``run_count``;
- the ``ping`` reply carries the natural vnode's ``resources_available``.
"""
from mockpbs import wire

SHOW_LAUNCH = '''import pbs
e = pbs.event()
pbs.logjobmsg(e.job.id, "launch progname=%s argv=%s" % (e.progname, list(e.argv)))
'''
REJECT_BEGIN = 'import pbs\npbs.event().reject("no")\n'


def test_executable_job_runs_the_program_with_its_arguments(mom_cluster):
    c = mom_cluster(names=("moma",))
    c.hook("show", "execjob_launch", SHOW_LAUNCH)
    c.start()
    c.run_job(c.job(exec_vnode="(moma:ncpus=1)", exec_host="moma/0", schedselect="1:ncpus=1", script="",
                    executable="<jsdl-hpcpa:Executable>/bin/echo</jsdl-hpcpa:Executable>",
                    argument_list="<jsdl-hpcpa:Argument>20</jsdl-hpcpa:Argument>"
                                  "<jsdl-hpcpa:Argument>a b</jsdl-hpcpa:Argument>"))
    assert c.server.wait_for("mom_job_obit")["exit_status"] == 0
    assert c.output() == "20 a b\n"
    assert "0008;pbs_python;Job;17.srv;launch progname=/bin/echo argv=['/bin/echo', '20', 'a b']" in c.log("moma")


def test_executable_without_a_slash_is_found_on_the_job_path(mom_cluster):
    c = mom_cluster(names=("moma",))
    c.start()
    c.run_job(c.job(exec_vnode="(moma:ncpus=1)", exec_host="moma/0", schedselect="1:ncpus=1", script="",
                    executable="<jsdl-hpcpa:Executable>echo</jsdl-hpcpa:Executable>"))
    c.server.wait_for("mom_job_obit")
    assert c.output() == "\n"


def test_subjob_environment_names_its_array_and_index(mom_cluster):
    c = mom_cluster(names=("moma",))
    c.start()
    c.run_job(c.job(id="5[3].srv", array_id="5[].srv", array_index="3",
                    exec_vnode="(moma:ncpus=1)", exec_host="moma/0", schedselect="1:ncpus=1",
                    script='echo "$PBS_JOBID $PBS_ARRAY_ID $PBS_ARRAY_INDEX"\n'))
    c.server.wait_for("mom_job_obit")
    assert c.output() == "5[3].srv 5[].srv 3\n"


def test_obit_and_requeue_carry_run_count(mom_cluster):
    c = mom_cluster(names=("moma",))
    c.start()
    single = dict(exec_vnode="(moma:ncpus=1)", exec_host="moma/0", schedselect="1:ncpus=1")
    c.run_job(c.job(run_count="4", **single))
    assert c.server.wait_for("mom_job_obit")["run_count"] == "4"
    c.hook("no", "execjob_begin", REJECT_BEGIN)
    c.run_job(c.job(id="18.srv", run_count="7", **single))
    assert c.server.wait_for("mom_job_requeue")["run_count"] == "7"


def test_ping_reply_carries_the_natural_vnode_resources(mom_cluster):
    c = mom_cluster(names=("moma",))
    c.write("moma", "mom_priv/config.d/vnodes", "$configversion 2\nmoma: resources_available.ncpus = 3\n")
    c.start()
    reply = wire.request(c.addresses["moma"], wire.MOM_PORT, {"op": "ping"})
    assert reply["node"] == "moma"
    assert reply["resources_available"]["ncpus"] == "3"
    assert reply["resources_available"]["host"] == "moma"
