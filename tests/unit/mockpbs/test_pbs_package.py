"""mockpbs.pbs is a package of modules (issue 15): a hook's ``import pbs`` still sees the
names of the single module it was, and the run state its modules share is the one
``pbs._current`` shows."""
import types

from mockpbs import pbs

PUBLIC_NAMES = {
    "BadAttributeValueError", "BadAttributeValueTypeError", "BadResourceValueError",
    "BadResourceValueTypeError", "EVENT_ADMIN", "EVENT_DEBUG", "EVENT_DEBUG2", "EVENT_DEBUG3",
    "EVENT_DEBUG4", "EVENT_ERROR", "EVENT_FORCE", "EVENT_JOB", "EVENT_JOB_USAGE", "EVENT_RESV",
    "EVENT_SCHED", "EVENT_SECURITY", "EVENT_SYSTEM", "EVENT_TYPES", "EXECHOST_PERIODIC",
    "EXECHOST_STARTUP", "EXECJOB_ABORT", "EXECJOB_ATTACH", "EXECJOB_BEGIN", "EXECJOB_END",
    "EXECJOB_EPILOGUE", "EXECJOB_LAUNCH", "EXECJOB_POSTSUSPEND", "EXECJOB_PRERESUME",
    "EXECJOB_PRETERM", "EXECJOB_PROLOGUE", "EXECJOB_RESIZE", "EventIncompatibleError", "JOBOBIT",
    "LAUNCH_SET_REFUSED", "LOG_DEBUG", "LOG_ERROR", "LOG_WARNING", "MANAGEMENT", "MODIFYJOB",
    "MODIFYRESV", "MODIFYVNODE", "MOM_EVENTS", "MOVEJOB", "ND_BUSY", "ND_DELETED", "ND_DOWN",
    "ND_FREE", "ND_INIT", "ND_JOBBUSY", "ND_JOB_EXCLUSIVE", "ND_MAINTENANCE", "ND_MARKEDDOWN",
    "ND_NEEDS_HELLOSVR", "ND_NEED_ADDRS", "ND_NEED_CREDENTIALS", "ND_OFFLINE", "ND_OFFLINE_BY_MOM",
    "ND_PROV", "ND_RESVEXCL", "ND_SLEEP", "ND_STALE", "ND_STATE_FREE", "ND_STATE_UNKNOWN",
    "ND_UNRESOLVABLE", "ND_WAIT_PROV", "NothingSettableError", "PERIODIC", "PROVISION", "QUEUEJOB",
    "RESIZE_SET_REFUSED", "RESVSUB", "RESV_BEGIN", "RESV_CONFIRM", "RESV_END", "RUNJOB",
    "UnsetAttributeNameError", "UnsetResourceNameError", "event", "exec_host", "exec_vnode",
    "get_local_nodename", "hold_types", "hook_config_filename", "logjobmsg", "logmsg", "pbs_conf",
    "pbs_env", "place", "select", "select_syntax_ok", "server", "state_to_text", "text_to_state",
}


def test_a_hook_sees_every_name_of_the_single_module_and_no_other():
    public = {name for name in dir(pbs)
              if not name.startswith("_") and not isinstance(getattr(pbs, name), types.ModuleType)}
    assert public == PUBLIC_NAMES
    assert set(pbs.__all__) == PUBLIC_NAMES


def test_no_submodule_hides_a_name_of_the_api():
    assert callable(pbs.event) and callable(pbs.server) and issubclass(pbs.select, str)


def test_start_shows_the_state_every_module_writes_to():
    before = pbs._current
    event = pbs._start({"name": "h", "config": "/cfg"}, "execjob_begin",
                       {"job": {"id": "1.vm"}, "daemon": "mom", "hostname": "n1"})
    assert pbs._current is not before
    assert pbs.event() is event and pbs.get_local_nodename() == "n1"
    assert pbs.hook_config_filename == "/cfg"
    pbs.logmsg(pbs.LOG_DEBUG, "from the hook")
    event.job.comment = "set"
    assert pbs._current.logs == [[0x0006, "Hook", "pbs_python", "from the hook"]]
    assert pbs._outcome()["job"] == {"comment": "set"}
    assert not pbs._job_freed()
