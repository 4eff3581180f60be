"""mockpbs.pbs: constants, logging, event parameters and read-only rules of the emulator."""
import pytest

from mockpbs import pbs


def start(event="execjob_launch", **context):
    base = {"job": {"id": "1.vm", "run_count": "2", "Resource_List": {"select": "1:ncpus=1"}},
            "vnode_list": {"vm": {"name": "vm", "host": "vm", "state": "free"}},
            "env": {"PBS_NODEFILE": "/f"}, "argv": ["a"], "progname": "p", "hostname": "vm",
            "daemon": "mom", "in_ms_mom": True}
    base.update(context)
    return pbs._start({"name": "hk", "config": "/tmp/hk.CF"}, event, base)


def test_event_constants_have_openpbs_values():
    assert (pbs.QUEUEJOB, pbs.MODIFYJOB, pbs.RUNJOB, pbs.PERIODIC) == (0x1, 0x2, 0x10, 0x8000)
    assert (pbs.EXECJOB_BEGIN, pbs.EXECJOB_PROLOGUE, pbs.EXECJOB_EPILOGUE, pbs.EXECJOB_END) == (0x40, 0x80, 0x100, 0x200)
    assert (pbs.EXECJOB_PRETERM, pbs.EXECJOB_LAUNCH, pbs.EXECHOST_PERIODIC, pbs.EXECHOST_STARTUP) == (0x400, 0x800, 0x1000, 0x2000)
    assert (pbs.EXECJOB_ATTACH, pbs.EXECJOB_RESIZE, pbs.EXECJOB_ABORT) == (0x4000, 0x20000, 0x40000)


def test_event_type_and_parameters():
    e = start()
    assert pbs.event() is e
    assert e.type == pbs.EXECJOB_LAUNCH and e.hook_name == "hk"
    assert e.job.id == "1.vm" and e.job.run_count == 2 and e.job.in_ms_mom() is True
    assert e.job.Resource_List["select"] == "1:ncpus=1" and isinstance(e.job.Resource_List["select"], pbs.select)
    assert e.job.Resource_List["walltime"] is None and e.job.comment is None
    assert e.vnode_list["vm"].state == pbs.ND_FREE
    assert pbs.hook_config_filename == "/tmp/hk.CF" and pbs.get_local_nodename() == "vm"
    assert "PBS_HOME" in pbs.pbs_conf


def test_queuejob_has_no_vnode_list():
    e = start("queuejob")
    with pytest.raises(pbs.EventIncompatibleError):
        e.vnode_list


def test_logmsg_classes():
    start()
    pbs.logmsg(pbs.LOG_DEBUG, "a")
    pbs.logmsg(pbs.LOG_ERROR, "b")
    pbs.logmsg(pbs.EVENT_DEBUG4, "c")
    pbs.logjobmsg("1.vm", "d")
    assert pbs._current.logs == [[0x6, "Hook", "pbs_python", "a"], [0x6, "Hook", "pbs_python", "b"],
                                 [0x800, "Hook", "pbs_python", "c"], [0x8, "Job", "1.vm", "d"]]
    with pytest.raises(TypeError, match="Invalid severity or eventtype value <3>"):
        pbs.logmsg(3, "x")


def test_server_hook_log_object_name():
    start("queuejob", daemon="server", server="vm")
    pbs.logmsg(pbs.LOG_DEBUG, "queuejob hook executed")
    assert pbs._current.logs == [[0x6, "Hook", "Server@vm", "queuejob hook executed"]]


def test_event_parameters_read_only_except_launch_ones():
    e = start()
    e.argv = ["b"]
    with pytest.raises(pbs.BadAttributeValueError, match="event attribute 'job' is readonly"):
        e.job = None
    with pytest.raises(pbs.BadAttributeValueError, match="env variable 'PBS_NODEFILE' is readonly"):
        e.env["PBS_NODEFILE"] = "/other"


def test_rerun_only_in_mom_hooks():
    with pytest.raises(NotImplementedError):
        start("queuejob").job.rerun()


def test_hold_types_validated_and_node_state_text():
    assert pbs.hold_types("s") == "s"
    with pytest.raises(pbs.BadAttributeValueError):
        pbs.hold_types("x")
    assert pbs.state_to_text(pbs.ND_OFFLINE | pbs.ND_DOWN) == "offline,down"
    assert pbs.text_to_state("offline") == pbs.ND_OFFLINE


def test_select_validation():
    # OpenPBS's decode_select takes any digits as a chunk count, 0 included (checked under
    # the real pbs_python: tests/unit/hooks/test_real_pbs_python.py).
    assert pbs.select("0:ncpus=1") == "0:ncpus=1"
    with pytest.raises(pbs.BadResourceValueError, match="input value -1:ncpus=1 not of the right format for 'select'"):
        pbs.select("-1:ncpus=1")
    with pytest.raises(pbs.BadResourceValueError):
        pbs.select("ncpus")
