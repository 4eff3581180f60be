# pbs_python: exits 0
# The fix: every result of release_nodes() kept in a module-level list until the hook ends.
import pbs

KEPT = []


def prune():
    job = pbs.event().job
    pruned = job.release_nodes(keep_select="1:ncpus=1+1:ncpus=1")
    KEPT.append(pruned)
    pbs.logjobmsg(job.id, "pruned to %s" % pruned.exec_vnode)


prune()
