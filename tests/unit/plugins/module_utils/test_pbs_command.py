"""PbsRunner: the one way a module runs a PBS command (PBS_CONF_FILE, C locale, argv)."""
import types

import pytest

from ansible_collections.hpc.pbs.plugins.module_utils.pbs.pbs_command import C_LOCALE, PbsRunner


class Recorder:
    def __init__(self):
        self.calls = []

    def __call__(self, args, **kwargs):
        self.calls.append((args, kwargs))
        return 0, "out", "err"


def test_a_command_gets_the_pbs_conf_it_was_given_and_the_c_locale():
    recorder = Recorder()
    runner = PbsRunner(recorder, "/opt/pbs/etc/pbs.conf")
    assert runner.run_command(("/opt/pbs/bin/qstat", "-f")) == (0, "out", "err")
    assert recorder.calls == [(["/opt/pbs/bin/qstat", "-f"], {"environ_update": dict(
        C_LOCALE, PBS_CONF_FILE="/opt/pbs/etc/pbs.conf")})]
    assert C_LOCALE == {"LANGUAGE": "C", "LANG": "C", "LC_ALL": "C", "LC_MESSAGES": "C"}


def test_stdin_working_directory_and_more_variables_are_passed_on():
    recorder = Recorder()
    runner = PbsRunner(recorder, "/p.conf")
    runner.run_command(["qmgr", "-a"], data="list server\n", binary_data=True, cwd="/tmp",
                       environ_update={"X": "1", "LANG": "en"})
    assert recorder.calls[0][1] == {
        "data": "list server\n", "binary_data": True, "cwd": "/tmp",
        "environ_update": dict(C_LOCALE, PBS_CONF_FILE="/p.conf", X="1", LANG="en")}


def test_without_a_conf_file_the_module_environment_decides():
    recorder = Recorder()
    PbsRunner(recorder).run_command(["qstat"])
    assert recorder.calls[0][1] == {"environ_update": dict(C_LOCALE)}


def test_for_module_takes_the_conf_file_the_module_resolved():
    recorder = Recorder()
    module = types.SimpleNamespace(run_command=recorder)
    paths = types.SimpleNamespace(conf_file="/site/pbs.conf")
    PbsRunner.for_module(module, paths).run_command(["pbsnodes", "-a"])
    assert recorder.calls[0][1]["environ_update"]["PBS_CONF_FILE"] == "/site/pbs.conf"


class QuitsBeforeReading:
    """A module whose qmgr cannot reach its server: fed on stdin, it quits before reading
    (writing its input fails with EPIPE); run without input, it says why."""

    def __init__(self):
        self.calls = []

    def run_command(self, args, data=None, handle_exceptions=True, **kwargs):
        self.calls.append((list(args), data, handle_exceptions))
        if data is not None:
            if handle_exceptions:  # AnsibleModule would fail the task with "Error executing command."
                raise AssertionError("EPIPE reached run_command's own handler")
            raise BrokenPipeError(32, "Broken pipe")
        return 2, "", "Unknown Host.\nqmgr: cannot connect to server nosuch (errno=15010)\n"


def test_qmgr_that_quits_before_reading_its_commands_says_why_and_ran_none():
    from ansible_collections.hpc.pbs.plugins.module_utils.server.qmgr import Qmgr, QmgrError
    module = QuitsBeforeReading()
    qmgr = Qmgr(module, "/opt/pbs/bin/qmgr", "/etc/pbs.conf")
    with pytest.raises(QmgrError) as raised:
        qmgr.run_batch(["set server scheduling = true", "set server job_history_enable = true"],
                       "the server attributes", marker="list server")
    error = raised.value
    assert "Unknown Host" in error.msg and "cannot connect to server nosuch" in error.msg, error.msg
    assert "exited before reading its input" in error.stderr
    assert error.rc == 2 and not error.applied
    assert module.calls[-1] == (["/opt/pbs/bin/qmgr", "-c", "list server"], None, True)


def test_other_failures_to_run_a_command_fed_on_stdin_are_left_to_run_command():
    from ansible_collections.hpc.pbs.plugins.module_utils.pbs.pbs_command import module_run_command
    calls = []

    class Module:
        def run_command(self, args, data=None, handle_exceptions=True, **kwargs):
            calls.append(handle_exceptions)
            if not handle_exceptions:
                raise FileNotFoundError(2, "No such file or directory")
            return 2, "", "handled"

    assert module_run_command(Module())(["/nosuch"], data="x") == (2, "", "handled")
    assert calls == [False, True]
