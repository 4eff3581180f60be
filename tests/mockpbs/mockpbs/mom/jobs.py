"""The jobs of one mom (PP-928 interfaces 1, 3, 4, 5, 8, 9): the table of their records and
the parts that handle them by role, composed over one context (:class:`MomJobs`).

- :mod:`mockpbs.mom.primary`: the primary mom (mother superior) starts a job: its
  execjob_begin, the join of the sister moms, the prologues, the launch hooks and the
  pruning of ``release_nodes()`` at launch;
- :mod:`mockpbs.mom.running`: the job program on the primary, the polling of its sisters,
  its end (obit, requeue after a lost sister) and its deletion (qdel);
- :mod:`mockpbs.mom.sister`: the sister side of the primary's IM requests;
- :mod:`mockpbs.mom.tm`: the task manager (``tm_nodeinfo``, ``tm_spawn``, ``spawn_task``);
- :mod:`mockpbs.mom.jobevents`: the hooks of a job's events; :mod:`mockpbs.mom.jobenv`:
  the job program's user, environment, ``PBS_NODEFILE`` and output files.
"""
import threading

from mockpbs.mom import jobenv
from mockpbs.mom.jobevents import JobEvents
from mockpbs.mom.primary import PrimaryMom
from mockpbs.mom.running import COMM_MATURITY_TIME, POLL_INTERVAL, POLL_TIMEOUT, RunningJobs
from mockpbs.mom.sister import SisterMom
from mockpbs.mom.tm import TaskManager


class MomJobs:
    """The jobs of one mom: {jobid: JobRecord} under one lock, the polling settings of its
    running jobs (``poll_interval``, ``poll_timeout``, ``comm_maturity``: seconds), and its
    parts: ``events``, ``primary``, ``running``, ``sister``, ``tm``. ``mom`` provides what
    they need (see each part).

    In-process tests replace ``_user(job)`` (the job owner's passwd entry) and
    ``reclaim_late_prologue_acks(record)`` on this object."""

    def __init__(self, mom):
        self.mom = mom
        self._records = {}
        self._lock = threading.Lock()
        self.poll_interval = POLL_INTERVAL
        self.poll_timeout = POLL_TIMEOUT
        self.comm_maturity = COMM_MATURITY_TIME
        self.events = JobEvents(mom)
        self.primary = PrimaryMom(self)
        self.running = RunningJobs(self)
        self.sister = SisterMom(self)
        self.tm = TaskManager(self)

    def get(self, jobid):
        """The JobRecord of ``jobid``; None when this mom does not have the job."""
        with self._lock:
            return self._records.get(jobid)

    def add(self, record):
        """Keep ``record`` (a JobRecord) under its job's id, replacing any earlier one."""
        with self._lock:
            self._records[record.job["id"]] = record

    def pop(self, jobid):
        """Drop the job ``jobid``; returns its JobRecord, or None when there was none."""
        with self._lock:
            return self._records.pop(jobid, None)

    def user_of(self, job):
        """The passwd entry of the user the job's programs run as."""
        return self._user(job)

    def _user(self, job):
        return jobenv.job_user(job)

    def reclaim_late_prologue_acks(self, record):
        """The primary's interface 4 step just before its launch hooks
        (:meth:`mockpbs.mom.primary.PrimaryMom.reclaim_late_prologue_acks`)."""
        return self.primary.reclaim_late_prologue_acks(record)
