"""What the running pbs_mom holds (plugins/module_utils/moms/mom_daemon.py): its last config read
found in its logs, compared with the file; equal lines never rewritten."""
import pytest

from ansible_collections.hpc.pbs.plugins.module_utils.moms import mom_config as mc
from ansible_collections.hpc.pbs.plugins.module_utils.moms import mom_daemon as md

# A real mom's reload (reference transcript f), then a day change.
RELOAD_45 = (
    "11/21/2026 19:22:24;0002;pbs_mom;n/a;catch_hup;caught signal 1\n"
    "11/21/2026 19:22:24;0002;pbs_mom;n/a;process_hup;reset\n"
    "11/21/2026 19:22:24;0002;pbs_mom;Svr;Log;Log opened\n"
    "11/21/2026 19:22:24;0100;pbs_mom;Svr;parse_config;file config\n"
    "11/21/2026 19:22:24;0002;pbs_mom;n/a;set_restrict_user_maxsys;setting 999\n"
    "11/21/2026 19:22:24;0002;pbs_mom;Svr;job_launch_delay;45\n"
    "11/21/2026 19:22:24;0002;pbs_mom;Svr;sister_join_job_alarm;60\n"
    "11/21/2026 19:22:24;0002;pbs_mom;n/a;read_config;max_check_poll = 120, min_check_poll = 10\n")
START_30 = (
    "11/20/2026 08:00:00;0002;pbs_mom;Svr;Log;Log opened\n"
    "11/20/2026 08:00:00;0100;pbs_mom;Svr;parse_config;file config\n"
    "11/20/2026 08:00:00;0002;pbs_mom;Svr;job_launch_delay;30\n")


@pytest.fixture
def logs(tmp_path):
    directory = tmp_path / "mom_logs"
    directory.mkdir()
    return directory


def test_last_config_read_is_the_text_from_the_last_read_on(logs):
    (logs / "20261121").write_text(START_30.replace("11/20", "11/21") + RELOAD_45 +
                                   "11/21/2026 23:00:00;0008;pbs_mom;Job;1.x;started\n")
    text = md.last_config_read(str(logs))
    assert text.startswith("11/21/2026 19:22:24;0100;pbs_mom;Svr;parse_config;file config\n")
    assert text.endswith(";started\n")
    assert md.logged_value(text, "Svr", "job_launch_delay") == "45"
    assert md.logged_value(text, "n/a", "set_restrict_user_maxsys") == "setting 999"


def test_last_config_read_follows_older_day_files(logs):
    (logs / "20261120").write_text(START_30)
    (logs / "20261121").write_text("11/21/2026 00:00:00;0002;pbs_mom;Svr;Log;Log opened\n")
    (logs / "notes.txt").write_text(RELOAD_45)         # not a day file
    text = md.last_config_read(str(logs))
    assert text.startswith("11/20/2026 08:00:00;0100;pbs_mom;Svr;parse_config;file config\n")
    assert md.logged_value(text, "Svr", "job_launch_delay") == "30"
    assert md.last_config_read(str(logs), days=1) is None


def test_no_config_read_in_the_logs_is_unknown(logs, tmp_path):
    assert md.last_config_read(str(logs)) is None
    (logs / "20261121").write_text("11/21/2026 00:00:00;0002;pbs_mom;Svr;Log;Log opened\n")
    assert md.last_config_read(str(logs)) is None
    assert md.last_config_read(str(tmp_path / "missing")) is None


def test_running_differences_compare_logged_values_with_the_file():
    text = RELOAD_45
    same = {"job_launch_delay": "45", "sister_join_job_alarm": "60",
            "restrict_user_maxsysid": "999"}
    assert md.running_differences(text, same, set(same)) == []
    newer = dict(same, job_launch_delay="50")
    assert md.running_differences(text, newer, {"job_launch_delay"}) == [
        ("job_launch_delay", "45", "50")]
    # removed from the file, but the running mom still has it
    assert md.running_differences(text, {}, {"sister_join_job_alarm"}) == [
        ("sister_join_job_alarm", "60", None)]
    # set in the file, never logged: the mom runs with its default
    assert md.running_differences(text, {"prologalarm": "30"}, {"prologalarm"}) == [
        ("prologalarm", None, "30")]
    # options whose value the mom does not log, or repeated ones, are not compared
    assert md.running_differences(text, {"port": "15002", "clienthost": ["a", "b"]},
                                  {"port", "clienthost"}) == []
    # only the options asked about
    assert md.running_differences(text, newer, {"sister_join_job_alarm"}) == []


def test_a_boolean_written_as_a_word_compares_as_the_mom_logs_it():
    text = "x;0002;pbs_mom;Svr;set_restrict_user;true\n"
    assert md.running_differences(text, {"restrict_user": "yes"}, {"restrict_user"}) == []
    assert md.running_differences(text, {"restrict_user": "off"}, {"restrict_user"}) == [
        ("restrict_user", "true", "off")]


# -- issue: equal values with other spacing or CRLF are never rewritten -------------------
@pytest.mark.parametrize("text", [
    "$clienthost pbs-server\n$job_launch_delay  45\n",
    "$clienthost pbs-server\n$job_launch_delay\t45 \n",
    "$clienthost pbs-server\r\n$job_launch_delay 45\r\n",
    "$clienthost pbs-server\r\n$job_launch_delay  45  \r\n",
    "  $job_launch_delay 45\n",
])
def test_equal_lines_are_kept_byte_for_byte(text):
    assert mc.apply_options(text, {"job_launch_delay": ["45"]}, set()) == text


def test_a_value_meaning_the_same_is_kept_when_same_says_so():
    text = "$restrict_user yes\r\n"
    assert mc.apply_options(text, {"restrict_user": ["true"]}, set()) == "$restrict_user true\r\n"

    def same(name, old, new):
        return old.lower() == "yes" and new == "true"

    assert mc.apply_options(text, {"restrict_user": ["true"]}, set(), same=same) == text


def test_a_changed_line_keeps_its_crlf_and_new_lines_follow_the_file():
    text = "$clienthost pbs-server\r\n$job_launch_delay  20\r\n"
    assert mc.apply_options(text, {"job_launch_delay": ["45"], "sister_join_job_alarm": ["60"]},
                            set()) == ("$clienthost pbs-server\r\n$job_launch_delay 45\r\n"
                                       "$sister_join_job_alarm 60\r\n")


def test_config_d_files_read_after_the_values_do_not_start_a_new_read(logs):
    # a real mom reads mom_priv/config.d/* after the config file, logging each the same way
    (logs / "20261124").write_text(
        "11/24/2026 16:16:17;0002;pbs_mom;n/a;process_hup;reset\n"
        "11/24/2026 16:16:17;0100;pbs_mom;Svr;parse_config;file config\n"
        "11/24/2026 16:16:17;0002;pbs_mom;Svr;job_launch_delay;37\n"
        "11/24/2026 16:16:17;0100;pbs_mom;Svr;parse_config;file "
        "/var/spool/pbs/mom_priv/config.d/hpcpbs_vnodes\n"
        "11/24/2026 16:16:17;0002;pbs_mom;n/a;read_config;max_check_poll = 120, min_check_poll = 10\n")
    text = md.last_config_read(str(logs))
    assert text.startswith("11/24/2026 16:16:17;0100;pbs_mom;Svr;parse_config;file config\n")
    assert md.logged_value(text, "Svr", "job_launch_delay") == "37"


def test_a_large_log_is_read_from_its_end(logs):
    filler = "11/24/2026 10:00:00;0008;pbs_mom;Job;%d.x;running\n"
    (logs / "20261124").write_text(START_30 + "".join(filler % i for i in range(3000))
                                   + RELOAD_45 + "".join(filler % i for i in range(50)))
    whole = (logs / "20261124").read_bytes()
    marker_line = whole.rindex(b"\n", 0, whole.rindex(b";parse_config;file config")) + 1
    inside_marker = len(whole) - (marker_line + 5)
    # the first chunk starts mid-line: inside the last marker line, after it, or at 0
    for chunk in (inside_marker, 64, 1000, 1 << 20):
        text = md.text_from_last_read(str(logs / "20261124"), chunk=chunk)
        assert text.startswith(RELOAD_45.splitlines(True)[3])
        assert md.logged_value(text, "Svr", "job_launch_delay") == "45"
    assert md.text_from_last_read(str(logs / "none")) is None
