# pbs_python: crashes
# Two results dropped: two references short, and the module-level name does not make up
# for both.
import pbs

j = pbs.event().job
j.release_nodes(keep_select="1:ncpus=1+1:ncpus=1")
j.release_nodes(keep_select="1:ncpus=1+1:ncpus=1")
