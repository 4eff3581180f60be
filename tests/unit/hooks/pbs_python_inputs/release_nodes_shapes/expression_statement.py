# pbs_python: crashes
# The call as a statement of its own: its result dropped at once.
import pbs

pbs.event().job.release_nodes(keep_select="1:ncpus=1+1:ncpus=1")
