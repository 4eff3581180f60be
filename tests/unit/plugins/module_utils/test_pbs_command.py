"""PbsRunner: the one way a module runs a PBS command (PBS_CONF_FILE, C locale, argv)."""
import types

from ansible_collections.hpc.pbs.plugins.module_utils.pbs_command import C_LOCALE, PbsRunner


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
