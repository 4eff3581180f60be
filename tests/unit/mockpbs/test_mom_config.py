"""Mock pbs_mom: mom_priv/config parsing, SIGHUP reload, alarm defaults, hook_copy.

Reference: transcript f (bad values kill the mom), requests.c req_copy_hookfile
(``joinjob_alarm_time updated to N``), PP-928 interfaces 3 and 4.
"""
import os
import stat
import subprocess
import sys

import pytest

from mockpbs import wire
from mockpbs.mom import config as momconfig
from mockpbs.mom.daemon import Mom
from mockpbs.testaddr import release_address, reserve_address


def log_lines(home):
    logdir = os.path.join(home, "mom_logs")
    lines = []
    for name in sorted(os.listdir(logdir)):
        with open(os.path.join(logdir, name)) as handle:
            lines.extend(handle.read().splitlines())
    return lines


def log_tail(home, marker):
    """Lines logged after the last line containing ``marker``."""
    lines = log_lines(home)
    index = max(i for i, line in enumerate(lines) if marker in line)
    return lines[index + 1:]


def has_line(lines, suffix):
    """A log line whose part after the timestamp is exactly ``suffix``."""
    return any(line.split(";", 1)[1] == suffix for line in lines)


@pytest.fixture
def mom_factory(tmp_path):
    moms = []

    def make(config_text=None, name="mom1"):
        home = tmp_path / name
        (home / "mom_priv").mkdir(parents=True, exist_ok=True)
        if config_text is not None:
            (home / "mom_priv" / "config").write_text(config_text)
        exits = []
        mom = Mom(str(home), name, name, reserve_address(), "server", server_address="127.0.0.1",
                  server_port=1, exit_on_bad_config=lambda: exits.append(True))
        mom.exits = exits
        moms.append(mom)
        return mom

    yield make
    for mom in moms:
        mom.stop()
        release_address(mom.address)


def write_config(mom, text):
    with open(os.path.join(mom.priv, "config"), "w") as handle:
        handle.write(text)


@pytest.mark.parametrize("line", [
    "$job_launch_delay abc",
    "$job_launch_delay -5",
    "$job_launch_delay 0",
    "$sister_join_job_alarm 1.5",
    "$job_launch_delay 45 # comment",
    "$sister_join_job_alarm 0",
])
def test_pp928_i3_i4_bad_value_on_hup_logs_failed_aborting_and_mom_exits(mom_factory, line):
    mom = mom_factory("$restrict_user_maxsysid 999\n")
    assert mom.start(hello=False)
    write_config(mom, "$restrict_user_maxsysid 999\n%s\n" % line)
    assert mom.hangup() is False
    tail = log_tail(mom.pbs_home, "catch_hup;caught signal 1")
    name, value = line[1:].split(" ", 1)
    assert has_line(tail, "0002;pbs_mom;Svr;%s;%s" % (name, value))
    assert has_line(tail, '0001;pbs_mom;Svr;pbs_mom;parse_config, config[2] command "%s" failed, aborting' % line)
    assert tail[-1].endswith(";0002;pbs_mom;Svr;Log;Log closed")
    assert mom.exits == [True]
    assert mom.stopped.is_set()
    with pytest.raises(wire.WireError):
        wire.request(mom.address, wire.MOM_PORT, {"op": "ping"}, timeout=2)


def test_unknown_option_logs_command_name_not_found_and_mom_exits(mom_factory):
    mom = mom_factory("")
    assert mom.start(hello=False)
    write_config(mom, "$restrict_user_maxsysid 999\n$no_such_option 1\n")
    assert mom.hangup() is False
    tail = log_tail(mom.pbs_home, "catch_hup;caught signal 1")
    assert has_line(tail, "0001;pbs_mom;Svr;pbs_mom;parse_config, command name no_such_option not found")
    assert mom.exits == [True]


def test_lines_after_a_failed_line_are_still_parsed_as_the_real_mom_does(mom_factory):
    mom = mom_factory("")
    assert mom.start(hello=False)
    write_config(mom, "$restrict_user_maxsysid 999\n$job_launch_delay 45 # comment\n$sister_join_job_alarm 60   \n")
    assert mom.hangup() is False
    tail = log_tail(mom.pbs_home, "catch_hup;caught signal 1")
    messages = [line.split(";", 1)[1] for line in tail]
    failed = messages.index('0001;pbs_mom;Svr;pbs_mom;parse_config, config[2] command '
                            '"$job_launch_delay 45 # comment" failed, aborting')
    assert messages[failed + 1] == "0002;pbs_mom;Svr;sister_join_job_alarm;60"


def test_pp928_i3_i4_good_values_logged_on_hup_and_used(mom_factory):
    mom = mom_factory("$restrict_user_maxsysid 999\n")
    assert mom.start(hello=False)
    write_config(mom, "$restrict_user_maxsysid 999\n$job_launch_delay 45\n$sister_join_job_alarm 60   \n")
    assert mom.hangup() is True
    tail = log_tail(mom.pbs_home, "catch_hup;caught signal 1")
    expected = [
        "0002;pbs_mom;n/a;process_hup;reset",
        "0002;pbs_mom;Svr;Log;Log closed",
        "0002;pbs_mom;Svr;Log;Log opened",
        "0002;pbs_mom;Svr;pbs_mom;pbs_version=23.06.06",
        "0100;pbs_mom;Svr;parse_config;file config",
        "0002;pbs_mom;n/a;set_restrict_user_maxsys;setting 999",
        "0002;pbs_mom;Svr;job_launch_delay;45",
        "0002;pbs_mom;Svr;sister_join_job_alarm;60",
        "0002;pbs_mom;n/a;read_config;max_check_poll = 120, min_check_poll = 10",
    ]
    messages = [line.split(";", 1)[1] for line in tail]
    positions = [messages.index(m) for m in expected]
    assert positions == sorted(positions)
    assert (mom.launch_delay(), mom.join_alarm()) == (45, 60)
    assert mom.exits == []
    assert wire.request(mom.address, wire.MOM_PORT, {"op": "ping"})["node"] == "mom1"


def test_start_with_bad_config_does_not_listen(mom_factory):
    mom = mom_factory("$job_launch_delay abc\n")
    assert mom.start(hello=False) is False
    assert has_line(log_lines(mom.pbs_home),
                    '0001;pbs_mom;Svr;pbs_mom;parse_config, config[1] command "$job_launch_delay abc" failed, aborting')
    with pytest.raises(wire.WireError):
        wire.request(mom.address, wire.MOM_PORT, {"op": "ping"}, timeout=2)


def test_pbs_mom_command_with_bad_config_exits_1_with_pbs_text(tmp_path):
    home = tmp_path / "home"
    (home / "mom_priv").mkdir(parents=True)
    (home / "mom_priv" / "config").write_text("$restrict_user_maxsysid 999\n$job_launch_delay abc\n")
    conf = tmp_path / "pbs.conf"
    conf.write_text("PBS_HOME=%s\nPBS_EXEC=/opt/pbs\nPBS_SERVER=localhost\n" % home)
    env = dict(os.environ, PBS_CONF_FILE=str(conf))
    for key in ("PBS_HOME", "PBS_EXEC", "PBS_SERVER", "PBS_MOM_NODE_NAME"):
        env.pop(key, None)
    proc = subprocess.run([sys.executable, "-m", "mockpbs", "pbs_mom"], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 1
    assert proc.stderr == "/opt/pbs/sbin/pbs_mom: config file(s) parsing failed\n"
    assert not (home / "mom_priv" / "mom.lock").exists()


def test_parse_text_accepts_common_options_as_strings():
    config = momconfig.parse_text(
        "# comment\n\n$clienthost pbs-server\n$logevent 0x1ff\n$restricted *.example.com\n"
        "$usecp *:/home/ /home/\n$ideal_load 1.5\n$max_load 2.0\nncpus 4\n")
    assert config.ok
    assert config.options["clienthost"] == ["pbs-server"]
    assert config.statics == {"ncpus": "4"}
    assert config.sister_join_job_alarm is None and config.job_launch_delay is None


HK_BEGIN_45 = "type=site\nenabled=true\nevent=execjob_begin\nalarm=45\n"
HK_BEGIN_15 = "type=site\nenabled=true\nevent=execjob_begin,execjob_end\nalarm=15\n"
HK_PROLOGUE_20 = "type=site\nenabled=true\nevent=execjob_prologue\nalarm=20\n"
HK_BEGIN_DISABLED = "type=site\nenabled=false\nevent=execjob_begin\nalarm=100\n"


def test_pp928_i3_i4_defaults_are_30_without_hooks(mom_factory):
    mom = mom_factory("")
    assert mom.start(hello=False)
    assert (mom.join_alarm(), mom.launch_delay()) == (30, 30)


def test_pp928_i3_i4_defaults_sum_enabled_hook_alarms_and_log_updates(mom_factory):
    mom = mom_factory("")
    assert mom.start(hello=False)
    for name, hk in (("b45", HK_BEGIN_45), ("b15", HK_BEGIN_15), ("p20", HK_PROLOGUE_20),
                     ("off", HK_BEGIN_DISABLED)):
        reply = wire.request(mom.address, wire.MOM_PORT,
                             {"op": "hook_copy", "name": name, "files": {"HK": hk, "PY": "import pbs\n"}})
        assert reply["ok"]
    assert (mom.join_alarm(), mom.launch_delay()) == (60, 20)
    lines = log_lines(mom.pbs_home)
    assert has_line(lines, "0001;pbs_mom;Svr;pbs_mom;req_copy_hookfile, joinjob_alarm_time updated to 60")
    assert has_line(lines, "0001;pbs_mom;Svr;pbs_mom;req_copy_hookfile, job_launch_delay updated to 20")


def test_pp928_i3_configured_value_wins_over_hook_alarms(mom_factory):
    mom = mom_factory("$sister_join_job_alarm 7\n")
    assert mom.start(hello=False)
    wire.request(mom.address, wire.MOM_PORT, {"op": "hook_copy", "name": "b45", "files": {"HK": HK_BEGIN_45}})
    assert mom.join_alarm() == 7
    assert not any("joinjob_alarm_time updated" in line for line in log_lines(mom.pbs_home))


def test_hook_copy_writes_files_mode_0700_and_logs_like_the_real_mom(mom_factory):
    mom = mom_factory("")
    assert mom.start(hello=False)
    files = {"HK": HK_BEGIN_45, "PY": "import pbs\npbs.event().accept()\n", "CF": '{"a": 1}'}
    reply = wire.request(mom.address, wire.MOM_PORT, {"op": "hook_copy", "name": "h1", "files": files})
    assert reply == {"ok": True}
    for ext, text in files.items():
        path = os.path.join(mom.priv, "hooks", "h1.%s" % ext)
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o700
        with open(path) as handle:
            assert handle.read() == text
    lines = log_lines(mom.pbs_home)
    assert has_line(lines, "0080;pbs_mom;Hook;h1.HK;copy hook-related file request received")
    assert any(";0100;pbs_mom;Req;;Type 85 request received from root@" in line for line in lines)
    assert wire.request(mom.address, wire.MOM_PORT, {"op": "hook_delete", "name": "h1"}) == {"ok": True}
    assert not any(n.startswith("h1.") for n in os.listdir(os.path.join(mom.priv, "hooks")))


def test_gen_nodefile_on_sister_mom_is_a_boolean_option_as_in_mom_main_c():
    # special[] of mom_main.c lists it (set_gen_nodefile_on_sister_mom, set_boolean):
    # a real mom keeps running with it, so the mock mom must not exit on it.
    assert momconfig.parse_text("$gen_nodefile_on_sister_mom false\n").ok
    assert not momconfig.parse_text("$gen_nodefile_on_sister_mom maybe\n").ok
