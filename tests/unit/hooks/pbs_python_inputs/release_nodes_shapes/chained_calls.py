# pbs_python: crashes
# release_nodes() called on what release_nodes() returned, the last result kept: the
# intermediate one is dropped, two returns for one kept reference.
import pbs

pj = pbs.event().job.release_nodes(keep_select="1:ncpus=1+1:ncpus=1").release_nodes(
    keep_select="1:ncpus=1+1:ncpus=1")
