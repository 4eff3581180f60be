# pbs_python: exits 0
# The PP-928 page's example: the result held by a module-level name.
import pbs

e = pbs.event()
pj = e.job.release_nodes(keep_select="1:ncpus=1+1:ncpus=1")
if pj is not None:
    pbs.logjobmsg(e.job.id, "pj.exec_vnode=%s" % pj.exec_vnode)
