# pbs_python: crashes
# The shape of the bundled reliable_job_startup hook before its fix: the pruned job is a
# local of a function, dropped when it returns with the function's other reference.
import pbs


def prune():
    job = pbs.event().job
    pruned = job.release_nodes(keep_select="1:ncpus=1+1:ncpus=1")
    pbs.logjobmsg(job.id, "pruned to %s" % pruned.exec_vnode)


prune()
