# pbs_python: exits 0
# A release_nodes() that cannot be satisfied returns None: nothing is borrowed from the job.
import pbs


def prune():
    return pbs.event().job.release_nodes(keep_select="9:ncpus=1") is None


if prune():
    pbs.event().reject("cannot prune")
