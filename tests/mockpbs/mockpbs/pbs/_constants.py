"""The constants of the ``pbs`` hook module, with OpenPBS's numeric values: event types
(``hook.h``), log levels and event classes (``hook.h``, ``log.h``), vnode states (a bit
mask) and their texts as ``pbsnodes`` prints them."""
from mockpbs import pbslog

# ---------------------------------------------------------------- event types (hook.h)
QUEUEJOB = 0x01
MODIFYJOB = 0x02
RESVSUB = 0x04
MOVEJOB = 0x08
RUNJOB = 0x10
PROVISION = 0x20
EXECJOB_BEGIN = 0x40
EXECJOB_PROLOGUE = 0x80
EXECJOB_EPILOGUE = 0x100
EXECJOB_END = 0x200
EXECJOB_PRETERM = 0x400
EXECJOB_LAUNCH = 0x800
EXECHOST_PERIODIC = 0x1000
EXECHOST_STARTUP = 0x2000
EXECJOB_ATTACH = 0x4000
PERIODIC = 0x8000
RESV_END = 0x10000
EXECJOB_RESIZE = 0x20000
EXECJOB_ABORT = 0x40000
EXECJOB_POSTSUSPEND = 0x80000
EXECJOB_PRERESUME = 0x100000
MANAGEMENT = 0x200000
MODIFYVNODE = 0x400000
JOBOBIT = 0x800000
RESV_BEGIN = 0x1000000
RESV_CONFIRM = 0x2000000
MODIFYRESV = 0x4000000

EVENT_TYPES = {
    "queuejob": QUEUEJOB, "modifyjob": MODIFYJOB, "resvsub": RESVSUB, "movejob": MOVEJOB,
    "runjob": RUNJOB, "provision": PROVISION, "execjob_begin": EXECJOB_BEGIN,
    "execjob_prologue": EXECJOB_PROLOGUE, "execjob_epilogue": EXECJOB_EPILOGUE,
    "execjob_end": EXECJOB_END, "execjob_preterm": EXECJOB_PRETERM,
    "execjob_launch": EXECJOB_LAUNCH, "exechost_periodic": EXECHOST_PERIODIC,
    "exechost_startup": EXECHOST_STARTUP, "execjob_attach": EXECJOB_ATTACH,
    "periodic": PERIODIC, "resv_end": RESV_END, "execjob_resize": EXECJOB_RESIZE,
    "execjob_abort": EXECJOB_ABORT, "execjob_postsuspend": EXECJOB_POSTSUSPEND,
    "execjob_preresume": EXECJOB_PRERESUME, "management": MANAGEMENT,
    "modifyvnode": MODIFYVNODE, "jobobit": JOBOBIT, "resv_begin": RESV_BEGIN,
    "resv_confirm": RESV_CONFIRM, "modifyresv": MODIFYRESV,
}
MOM_EVENTS = (EXECJOB_BEGIN | EXECJOB_PROLOGUE | EXECJOB_EPILOGUE | EXECJOB_END | EXECJOB_PRETERM
              | EXECHOST_PERIODIC | EXECJOB_LAUNCH | EXECHOST_STARTUP | EXECJOB_ATTACH
              | EXECJOB_RESIZE | EXECJOB_ABORT | EXECJOB_POSTSUSPEND | EXECJOB_PRERESUME)

# ---------------------------------------------------------------- log levels (hook.h, log.h)
# pbs.LOG_* are syslog severities; PBS logs them under event class ADMIN|SYSTEM (0x0006).
LOG_DEBUG = 0x0005
LOG_WARNING = 0x0006
LOG_ERROR = 0x0007
EVENT_ERROR = pbslog.PBSEVENT_ERROR
EVENT_SYSTEM = pbslog.PBSEVENT_SYSTEM
EVENT_ADMIN = pbslog.PBSEVENT_ADMIN
EVENT_JOB = pbslog.PBSEVENT_JOB
EVENT_JOB_USAGE = pbslog.PBSEVENT_JOB_USAGE
EVENT_SECURITY = pbslog.PBSEVENT_SECURITY
EVENT_SCHED = pbslog.PBSEVENT_SCHED
EVENT_DEBUG = pbslog.PBSEVENT_DEBUG
EVENT_DEBUG2 = pbslog.PBSEVENT_DEBUG2
EVENT_RESV = pbslog.PBSEVENT_RESV
EVENT_DEBUG3 = pbslog.PBSEVENT_DEBUG3
EVENT_DEBUG4 = pbslog.PBSEVENT_DEBUG4
EVENT_FORCE = 0x8000
_SEVERITIES = (LOG_DEBUG, LOG_WARNING, LOG_ERROR)
_EVENT_CLASSES = (EVENT_ERROR, EVENT_SYSTEM, EVENT_ADMIN, EVENT_JOB, EVENT_JOB_USAGE,
                  EVENT_SECURITY, EVENT_SCHED, EVENT_DEBUG, EVENT_DEBUG2, EVENT_RESV,
                  EVENT_DEBUG3, EVENT_DEBUG4, EVENT_FORCE)

# ---------------------------------------------------------------- vnode states (bit mask)
ND_FREE = 0
ND_OFFLINE = 1
ND_DOWN = 2
ND_DELETED = 4
ND_UNRESOLVABLE = 8
ND_JOBBUSY = 16
ND_STALE = 32
ND_JOB_EXCLUSIVE = 64
ND_BUSY = 128
ND_STATE_UNKNOWN = 256
ND_NEEDS_HELLOSVR = 512
ND_INIT = 1024
ND_PROV = 2048
ND_WAIT_PROV = 4096
ND_RESVEXCL = 8192
ND_OFFLINE_BY_MOM = 16384
ND_MARKEDDOWN = 32768
ND_NEED_ADDRS = 65536
ND_MAINTENANCE = 131072
ND_SLEEP = 262144
ND_NEED_CREDENTIALS = 524288
ND_STATE_FREE = ND_FREE
# State text as pbsnodes prints it, bit by bit.
_STATE_NAMES = (
    (ND_OFFLINE, "offline"), (ND_DOWN, "down"), (ND_DELETED, "deleted"),
    (ND_UNRESOLVABLE, "unresolvable"), (ND_JOBBUSY, "job-busy"), (ND_STALE, "Stale"),
    (ND_JOB_EXCLUSIVE, "job-exclusive"), (ND_BUSY, "busy"), (ND_STATE_UNKNOWN, "state-unknown"),
    (ND_INIT, "initializing"), (ND_PROV, "provisioning"), (ND_WAIT_PROV, "wait-provisioning"),
    (ND_RESVEXCL, "resv-exclusive"), (ND_OFFLINE_BY_MOM, "offline_by_mom"),
    (ND_MAINTENANCE, "maintenance"), (ND_SLEEP, "sleep"),
)


def state_to_text(state):
    """``ND_OFFLINE`` -> ``"offline"``; a mask of several bits -> ``"offline,down"``."""
    state = int(state)
    if state == ND_FREE:
        return "free"
    return ",".join(name for bit, name in _STATE_NAMES if state & bit)


def text_to_state(text):
    """``"offline,down"`` -> ``ND_OFFLINE | ND_DOWN``; unknown words are ignored."""
    by_name = {name: bit for bit, name in _STATE_NAMES}
    state = ND_FREE
    for word in str(text or "free").split(","):
        state |= by_name.get(word.strip(), 0)
    return state
