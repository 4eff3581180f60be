"""A job as one mom knows it: its record (as primary or sister) and what both sides derive
from its attributes (the hosts of ``exec_host``, its tolerance of node failures, its
``Resource_List`` after a prune)."""
import threading

from mockpbs import pbslog, selectspec

# log_joberr() writes PBSEVENT_ERROR | PBSEVENT_FORCE, which the log shows as 0001
# (src/lib/Liblog/pbs_log.c; seen in a real mom's log).
JOB_ERROR_CLASS = pbslog.PBSEVENT_ERROR


def tolerates_failures(job, running=False):
    """``do_tolerate_node_failures()``: ``all`` always; ``job_start`` only while the job is
    not yet running its program (``running`` False)."""
    value = job.get("tolerate_node_failures")
    return value == "all" or (value == "job_start" and not running)


def exec_hosts(job):
    """Unique host names of ``exec_host``, in order (the primary first)."""
    seen = []
    for host, _index, _ncpus in selectspec.parse_exec_host(job.get("exec_host", "")):
        if host not in seen:
            seen.append(host)
    return seen


def _sum_resource(chunks, name, size):
    total = 0
    found = False
    for chunk in chunks:
        for _vnode, resources in chunk:
            for key, value in resources:
                if key != name:
                    continue
                found = True
                total += selectspec.size_to_kb(value) if size else int(value)
    return total, found


def resource_list_from(job):
    """Resource_List after a prune: ncpus/mem summed over exec_vnode, nodect = chunks,
    select = schedselect; other resources (place, site...) kept."""
    resources = dict(job.get("Resource_List") or {})
    chunks = selectspec.parse_exec_vnode(job.get("exec_vnode", ""))
    ncpus, _unused = _sum_resource(chunks, "ncpus", False)
    resources["ncpus"] = str(ncpus)
    mem, has_mem = _sum_resource(chunks, "mem", True)
    if has_mem:
        resources["mem"] = selectspec.format_kb(mem)
    resources["nodect"] = str(len(chunks))
    if job.get("schedselect"):
        resources["select"] = job["schedselect"]
    return resources


class JobRecord:
    """A job this mom knows, as primary (``primary`` True) or sister."""

    def __init__(self, job, vnodes, primary):
        self.job = job
        self.vnodes = vnodes
        self.primary = primary
        self.failed_hosts = []
        # Sisters that never answered IM_JOIN_JOB before $sister_join_job_alarm: treated as
        # failed (no prologue, pruned away) but, as in OpenPBS, in no list a hook sees:
        # not in vnode_list_fail or failed_mom_list (no error came back), nor in
        # succeeded_mom_list (they did not join).
        self.silent_hosts = []
        self.process = None
        self.deleted = False
        self.started = None
        self.sisters = []
        self.cookie = None                # PBS_JOBCOOKIE: tasks must present it
        self.prologue_replies = {}        # host -> exec_prologue reply, filled even when late
        self.late_prologue_hosts = []     # hosts failed only for not answering in time
        self.lost_hosts = []              # sisters lost while the job ran (tolerated)
        self.lost_since = {}              # host -> time.time() it was first found lost (hn_eof_ts)
        self.node_failure = None          # host whose loss killed the job
        self.begun = False                # this mom's execjob_begin hooks accepted the job
        self.poll_stop = threading.Event()
