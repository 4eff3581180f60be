# pbs_python: exits 0
# The result dropped, but the job itself held by a module-level name: one reference short,
# never zero.
import pbs

j = pbs.event().job
if j.release_nodes(keep_select="1:ncpus=1+1:ncpus=1") is None:
    pbs.event().reject("unsuccessful at LAUNCH")
