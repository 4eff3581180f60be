"""PBS daemon log and accounting file formats.

Daemon log line (``PBS_HOME/<daemon>_logs/YYYYMMDD``)::

    MM/DD/YYYY HH:MM:SS;<event class, 4 hex digits>;<daemon>;<object type>;<object name>;<message>

e.g. ``11/21/2026 19:22:24;0002;pbs_mom;Svr;job_launch_delay;45`` and
``11/21/2026 19:26:59;0008;pbs_mom;Job;17.vm;pruned to exec_vnode=(vm:ncpus=1)``.

Accounting record (``PBS_HOME/server_priv/accounting/YYYYMMDD``)::

    MM/DD/YYYY HH:MM:SS;<record type>;<job id>;<key=value key=value ...>
"""
import os
import threading
import time

# Event classes (PBSEVENT_*), written as the 4-hex-digit field.
PBSEVENT_ERROR = 0x0001
PBSEVENT_SYSTEM = 0x0002
PBSEVENT_ADMIN = 0x0004
PBSEVENT_JOB = 0x0008
PBSEVENT_JOB_USAGE = 0x0010
PBSEVENT_SECURITY = 0x0020
PBSEVENT_SCHED = 0x0040
PBSEVENT_DEBUG = 0x0080
PBSEVENT_DEBUG2 = 0x0100
PBSEVENT_RESV = 0x0200
PBSEVENT_DEBUG3 = 0x0400
PBSEVENT_DEBUG4 = 0x0800

# Object types as they appear in the fourth field.
OBJ_SERVER = "Svr"
OBJ_JOB = "Job"
OBJ_HOOK = "Hook"
OBJ_NODE = "Node"
OBJ_REQ = "Req"
OBJ_NONE = "n/a"

_lock = threading.Lock()


def timestamp(when=None):
    return time.strftime("%m/%d/%Y %H:%M:%S", time.localtime(when))


def format_line(event_class, daemon, objtype, objname, message, when=None):
    return "%s;%04x;%s;%s;%s;%s" % (timestamp(when), event_class, daemon, objtype, objname, message)


class DaemonLog:
    """Appends PBS-format lines to ``<log_dir>/YYYYMMDD`` (a new file each day)."""

    def __init__(self, log_dir, daemon):
        self.log_dir = log_dir
        self.daemon = daemon
        os.makedirs(log_dir, exist_ok=True)

    def path(self, when=None):
        return os.path.join(self.log_dir, time.strftime("%Y%m%d", time.localtime(when)))

    def record(self, event_class, objtype, objname, message):
        when = time.time()
        line = format_line(event_class, self.daemon, objtype, objname, message, when)
        with _lock:
            with open(self.path(when), "a") as handle:
                handle.write(line + "\n")
        return line

    # Shorthands for the common objects.
    def svr(self, event_class, objname, message):
        return self.record(event_class, OBJ_SERVER, objname, message)

    def job(self, event_class, jobid, message):
        return self.record(event_class, OBJ_JOB, jobid, message)

    def hook(self, event_class, hookname, message):
        return self.record(event_class, OBJ_HOOK, hookname, message)


class AccountingLog:
    """Appends accounting records to ``<acct_dir>/YYYYMMDD``."""

    def __init__(self, acct_dir):
        self.acct_dir = acct_dir
        os.makedirs(acct_dir, exist_ok=True)

    def record(self, record_type, jobid, fields):
        """``fields``: a pre-formatted ``key=value ...`` string or a list of (key, value)."""
        when = time.time()
        if not isinstance(fields, str):
            fields = " ".join("%s=%s" % kv for kv in fields)
        line = "%s;%s;%s;%s" % (timestamp(when), record_type, jobid, fields)
        path = os.path.join(self.acct_dir, time.strftime("%Y%m%d", time.localtime(when)))
        with _lock:
            with open(path, "a") as handle:
                handle.write(line + "\n")
        return line
