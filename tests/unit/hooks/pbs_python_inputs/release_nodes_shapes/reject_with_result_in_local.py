# pbs_python: crashes
# reject() ends the hook from inside the function: its frame, and the result in it, go
# with the SystemExit before pbs_python writes the results.
import pbs


def check():
    job = pbs.event().job
    pruned = job.release_nodes(keep_select="1:ncpus=1+1:ncpus=1")
    pbs.event().reject("checked %s" % pruned.exec_vnode)


check()
