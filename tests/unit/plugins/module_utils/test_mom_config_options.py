"""The mom config option table (plugins/module_utils/moms/mom_config_options.py): every option of
a Linux pbs_mom checked by its type, refusals that say what is wrong and what is accepted."""

import os
import stat
import types
import pytest
from ansible_collections.hpc.pbs.plugins.module_utils.moms import mom_config_options as opts
from ansible_collections.hpc.pbs.plugins.module_utils.moms import mom_daemon as md
from ansible_collections.hpc.pbs.plugins.module_utils.moms.mom_config_options import (
    MomConfigValueError, normalize_value)


# special[] of OpenPBS 23.06 src/resmom/mom_main.c, without the entries a Linux build does
# not compile (MOM_ALPS, WIN32, NAS) and without configversion (not checkable).
LINUX_SPECIAL_TABLE = (
    "action", "alien_attach", "alien_kill", "attach_allow", "checkpoint_path", "clienthost",
    "cputmult", "enforce", "ideal_load", "jobdir_root", "kbd_idle", "logevent",
    "max_check_poll", "max_load", "max_poll_downtime", "min_check_poll", "momname", "port",
    "prologalarm", "sister_join_job_alarm", "job_launch_delay", "restart_background",
    "restart_transmogrify", "restrict_user", "restrict_user_exceptions",
    "restrict_user_maxsysid", "restricted", "gen_nodefile_on_sister_mom", "suspendsig",
    "tmpdir", "vnodedef_additive", "usecp", "wallmult", "reject_root_scripts",
    "report_hook_checksums",
)


def test_every_linux_option_has_a_rule_and_nothing_else_does():
    assert sorted(opts.RULES) == sorted(LINUX_SPECIAL_TABLE)
    assert opts.UNCHECKABLE == ("configversion",)


# The cases of the hostile-input report, then one or more per type.
REFUSED = [
    ("max_check_poll", "abc", "whole seconds 1-86400"),
    ("restrict_user", "maybe", "a boolean (true/false, yes/no, on/off, 1/0)"),
    ("usecp", "nocolon", "'host:/from/path /to/path'"),
    ("prologalarm", 0, "whole seconds 1-86400"),
    ("cputmult", 0, "a decimal number > 0 and <= 1000"),
    ("job_launch_delay", 10 ** 25, "whole seconds 1-86400 (PP-928 interface 4)"),
    ("job_launch_delay", 86401, "whole seconds 1-86400"),
    ("sister_join_job_alarm", "60 # comment", "whole seconds 1-86400 (PP-928 interface 3)"),
    ("sister_join_job_alarm", "010", "whole seconds 1-86400"),
    ("max_check_poll", True, "whole seconds"),
    ("min_check_poll", -1, "whole seconds"),
    ("max_poll_downtime", "300s", "whole seconds"),
    ("restrict_user_maxsysid", 2 ** 31, "a uid 1-2147483647"),
    ("port", 65535, "a port number 1-65534"),
    ("port", 0, "a port number"),
    ("wallmult", -1.5, "a decimal number > 0"),
    ("wallmult", float("inf"), "a decimal number > 0"),
    ("cputmult", "1e3", "a decimal number"),
    ("ideal_load", -0.5, "a decimal number 0-100000"),
    ("max_load", "2.0 now", "optionally followed by 'suspend'"),
    ("kbd_idle", "10 20 30 40", "1 to 3 whole numbers"),
    ("kbd_idle", 0, "1 to 3 whole numbers"),
    ("logevent", "0x1fz", "an event mask"),
    ("logevent", "0x100", "includes 0x3"),
    ("logevent", 70000, "an event mask 0-0xFFFF"),
    ("attach_allow", 2, "a boolean"),
    ("restrict_user", "", "a boolean"),
    ("usecp", "*.x:/home", "'host:/from/path /to/path'"),
    ("usecp", "*.x:home /home", "both paths absolute"),
    ("usecp", "a b:/home /home", "'host:/from/path /to/path'"),
    ("restricted", "host,other", "a host name or pattern"),
    ("momname", "m" * 64, "at most 63 characters"),
    ("momname", "mom one", "a host name"),
    ("clienthost", "no-such-host.invalid", "a host name that resolves"),
    ("suspendsig", "STOP", "a signal number 1-64"),
    ("suspendsig", 65, "a signal number 1-64"),
    ("restrict_user_exceptions", ",".join("u%d" % i for i in range(11)), "1-10 user names"),
    ("restrict_user_exceptions", "bob;rm", "user names"),
    ("action", "terminate 30 kill", "'EVENT TIMEOUT requeue'"),
    ("action", "explode 30 requeue", "EVENT one of terminate"),
    ("action", "terminate x requeue", "TIMEOUT 0-86400"),
    ("enforce", "mem 5", "a flag (cpuburst"),
    ("enforce", "delta_weightup 2", "'SETTING NUMBER'"),
    ("tmpdir", "relative/dir", "an absolute path"),
    ("tmpdir", "/no/such/directory", "an absolute path of an existing directory"),
    ("jobdir_root", "PBS_USER_HOME private", "optionally followed by 'shared'"),
    ("checkpoint_path", "/no/such/dir", "an absolute path of an existing directory"),
]


@pytest.mark.parametrize("name,value,accepted", REFUSED,
                         ids=["%s=%r" % (n, v)[:40] for n, v, _a in REFUSED])
def test_refused_values_say_what_is_wrong_and_what_is_accepted(name, value, accepted):
    with pytest.raises(MomConfigValueError) as info:
        normalize_value(name, value)
    message = str(info.value)
    assert message.startswith("%s: %r is refused (" % (name, value)), message
    assert "; accepted: " in message and accepted in message, message


ACCEPTED = [
    ("job_launch_delay", 45, "45"), ("job_launch_delay", "86400", "86400"),
    ("sister_join_job_alarm", " 60 ", "60"), ("prologalarm", 1, "1"),
    ("max_check_poll", 120, "120"), ("min_check_poll", "10", "10"),
    ("restrict_user_maxsysid", 999, "999"), ("max_poll_downtime", 300, "300"),
    ("restrict_user", True, "true"), ("restrict_user", "YES", "true"),
    ("attach_allow", 0, "false"), ("reject_root_scripts", "off", "false"),
    ("vnodedef_additive", "1", "true"), ("gen_nodefile_on_sister_mom", False, "false"),
    ("cputmult", 1.5, "1.5"), ("wallmult", "0.5", "0.5"), ("cputmult", 1000, "1000"),
    ("ideal_load", 0, "0"), ("max_load", "3.5 suspend", "3.5 suspend"),
    ("kbd_idle", "10  20 3", "10 20 3"), ("logevent", "0x1ff", "0x1ff"),
    ("logevent", 511, "511"), ("port", 15002, "15002"), ("momname", "mom-1.x", "mom-1.x"),
    ("clienthost", "localhost", "localhost"), ("restricted", "*.example.com", "*.example.com"),
    ("usecp", "*.example.com:/home  /home", "*.example.com:/home /home"),
    ("suspendsig", "20 18", "20 18"), ("restrict_user_exceptions", "alice, bob", "alice,bob"),
    ("action", "terminate 30 !kill.sh -9 %sid", "terminate 30 !kill.sh -9 %sid"),
    ("action", "checkpoint 0 requeue", "checkpoint 0 requeue"),
    ("enforce", "!mem", "!mem"), ("enforce", "delta_weightup 0.4", "delta_weightup 0.4"),
    ("jobdir_root", "PBS_USER_HOME", "PBS_USER_HOME"),
]


@pytest.mark.parametrize("name,value,text", ACCEPTED)
def test_accepted_values_are_written_in_the_form_the_mom_reads(name, value, text):
    assert normalize_value(name, value) == text


def test_a_list_is_only_for_repeatable_options():
    assert normalize_value("clienthost", ["localhost", "127.0.0.1"]) == ["localhost", "127.0.0.1"]
    with pytest.raises(MomConfigValueError, match="job_launch_delay takes one value"):
        normalize_value("job_launch_delay", [45])
    with pytest.raises(MomConfigValueError, match="the list is empty"):
        normalize_value("usecp", [])


def test_unknown_and_uncheckable_names_need_unchecked_options():
    with pytest.raises(MomConfigValueError, match="command name alps_client not found"):
        normalize_value("alps_client", "/opt/alps")
    with pytest.raises(MomConfigValueError, match="name it in unchecked_options"):
        normalize_value("configversion", 2)
    assert normalize_value("configversion", 2, unchecked=("configversion",)) == "2"
    assert normalize_value("alps_client", "/opt/alps", unchecked=("alps_client",)) == "/opt/alps"
    for bad in ("x # y", "a\nb", ""):
        with pytest.raises(MomConfigValueError, match="unchecked"):
            normalize_value("alps_client", bad, unchecked=("alps_client",))
    with pytest.raises(MomConfigValueError, match="is not an option name"):
        opts.check_name("$bad name", unchecked=("$bad name",))
    with pytest.raises(MomConfigValueError, match="job_launch_delay is checked by this module"):
        normalize_value("job_launch_delay", 10 ** 25, unchecked=("job_launch_delay",))


def test_a_line_longer_than_the_mom_reads_is_refused():
    name = "x" * 500
    with pytest.raises(MomConfigValueError, match="longer than 510"):
        normalize_value("alps_client", "/" + name, unchecked=("alps_client",))


def test_directory_checks_follow_the_moms_file_security(tmp_path):
    # tmp_path lies under /tmp (mode 1777): a parent writable by others
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    os.chmod(str(sticky), 0o1777)
    assert "writable by group or others" in opts.directory_problem(str(sticky), True)
    plain = tmp_path / "plain"
    plain.mkdir()
    os.chmod(str(plain), 0o755)
    assert "lacks the sticky bit" in opts.directory_problem(str(plain), True)
    # $checkpoint_path: the directory alone, not writable by group or others
    assert opts.directory_problem(str(plain), False) is None
    os.chmod(str(plain), 0o775)
    assert "writable by group or others" in opts.directory_problem(str(plain), False)
    assert "is not a directory" in opts.directory_problem("/etc/hostname", False)
    # a root-owned sticky directory under root-owned parents is what $tmpdir needs
    assert opts.directory_problem("/var/tmp", True) is None
    assert normalize_value("tmpdir", "/var/tmp") == "/var/tmp"


def test_combinations_the_mom_refuses_or_replaces():
    assert opts.combination_problems({"min_check_poll": "10", "max_check_poll": "120"}) == []
    [problem] = opts.combination_problems({"min_check_poll": "200"})
    assert "min_check_poll 200 is above max_check_poll 120" in problem
    [problem] = opts.combination_problems({"restart_transmogrify": "true"})
    assert "without an action 'restart TIMEOUT !script' line; accepted: " in problem
    assert opts.combination_problems({"restart_transmogrify": "true",
                                      "action": ["restart 30 !restart.sh"]}) == []


def test_same_value_compares_what_the_mom_reads():
    assert opts.same_value("restrict_user", "yes", "true")
    assert opts.same_value("kbd_idle", "10  20", "10 20")
    assert not opts.same_value("restrict_user", "no", "true")
    assert not opts.same_value("max_check_poll", "010", "10")   # strtol base 0: octal 8


def test_log_lines_as_the_mom_writes_them():
    assert opts.expected_log_line("job_launch_delay", "45") == ("Svr", "job_launch_delay", "45")
    assert opts.expected_log_line("prologalarm", "30") == ("Svr", "prolog alarm", "30")
    assert opts.expected_log_line("restrict_user", "yes") == ("Svr", "set_restrict_user", "true")
    assert opts.expected_log_line("restrict_user_maxsysid", "999") == (
        "n/a", "set_restrict_user_maxsys", "setting 999")
    assert opts.expected_log_line("sister_join_job_alarm", None) == (
        "Svr", "sister_join_job_alarm", None)
    assert opts.expected_log_line("usecp", "h:/a /b") is None       # repeatable
    assert opts.expected_log_line("port", "15002") is None          # not logged


def test_the_module_doc_lists_every_option_with_what_it_accepts():
    import ast
    import yaml
    path = os.path.join(os.path.dirname(opts.__file__), "..", "..", "modules", "mom_config.py")
    with open(path) as handle:
        tree = ast.parse(handle.read())
    doc = next(node.value.value for node in tree.body if isinstance(node, ast.Assign)
               and getattr(node.targets[0], "id", None) == "DOCUMENTATION")
    text = " ".join(" ".join(yaml.safe_load(doc)["options"]["options"]["description"]).split())
    for name, rule in opts.RULES.items():
        line = "C(%s)%s - %s" % (name, " (repeatable)" if rule.repeatable else "", rule.accepts)
        assert " ".join(line.split()) in text, name


def refused(name, value, unchecked=()):
    """The refusal message of ``$name value`` (fails the test when it is accepted)."""
    with pytest.raises(MomConfigValueError) as info:
        normalize_value(name, value, unchecked)
    return str(info.value)


# -- ranges: the lowest and highest accepted value, and the first refused one -------------

@pytest.mark.parametrize("name, value, text", [
    ("max_check_poll", 1, "1"),
    ("min_check_poll", 1, "1"),
    ("port", 1, "1"),
    ("restrict_user_maxsysid", 1, "1"),
    ("kbd_idle", "1", "1"),
    ("kbd_idle", "60", "60"),
    ("kbd_idle", "1 1 1", "1 1 1"),
    ("suspendsig", "1", "1"),
    ("suspendsig", 12, "12"),
    ("suspendsig", "20 18", "20 18"),
    ("max_load", "0", "0"),
    ("max_load", "0.5", "0.5"),
    ("max_load", "2.5", "2.5"),
    ("cputmult", "0.5", "0.5"),
    ("wallmult", "0.01", "0.01"),
    ("logevent", "0x3", "0x3"),
    ("logevent", "3", "3"),
    ("logevent", "0xFFFF", "0xFFFF"),
    ("logevent", 65535, "65535"),
    ("enforce", "delta_percent_over 0", "delta_percent_over 0"),
    ("enforce", "delta_percent_over 10000", "delta_percent_over 10000"),
    ("enforce", "average_percent_over 0", "average_percent_over 0"),
    ("enforce", "average_percent_over 10000", "average_percent_over 10000"),
    ("enforce", "average_trialperiod 1", "average_trialperiod 1"),
    ("enforce", "delta_cpufactor 0.5", "delta_cpufactor 0.5"),
    ("enforce", "average_cpufactor 0.5", "average_cpufactor 0.5"),
    ("enforce", "delta_weightdown 0", "delta_weightdown 0"),
    ("enforce", "delta_weightdown 1", "delta_weightdown 1"),
])
def test_the_ends_of_each_range_are_accepted(name, value, text):
    assert normalize_value(name, value) == text


@pytest.mark.parametrize("name, value, reason", [
    ("kbd_idle", "0", "out of range"),
    ("kbd_idle", "1 2 3 4", "not 1 to 3 numbers"),
    ("suspendsig", "0", "out of range"),
    ("suspendsig", "65", "out of range"),
    ("suspendsig", "20 18 19", "not one or two signal numbers"),
    ("max_load", "1 suspend 2", "not of the form 'load' or 'load suspend'"),
    ("max_load", "1 resume", "not of the form 'load' or 'load suspend'"),
    ("wallmult", "0", "out of range"),
    ("cputmult", "0", "out of range"),
    ("logevent", "0x10000", "out of range"),
    ("logevent", "0x2", "the mask lacks 0x1"),
    ("logevent", "1", "the mask lacks 0x1"),
    ("logevent", "0xFFFC", "the mask lacks 0x1"),
    ("enforce", "delta_percent_over 10001", "out of range"),
    ("enforce", "delta_percent_over many", "not a whole number"),
    ("enforce", "average_percent_over 10001", "out of range"),
    ("enforce", "average_percent_over -1", "not a whole number"),
    ("enforce", "average_trialperiod 0", "out of range"),
    ("enforce", "average_trialperiod soon", "not a whole number"),
    ("enforce", "delta_cpufactor 0", "out of range"),
    ("enforce", "average_cpufactor 0", "out of range"),
    ("enforce", "delta_weightdown 1.5", "out of range"),
])
def test_values_past_the_ends_of_a_range_are_refused(name, value, reason):
    message = refused(name, value)
    assert message.startswith("%s: %r is refused (" % (name, value))
    assert reason in message


def test_the_logevent_mask_must_keep_the_error_and_system_events():
    # PBSEVENT_ERROR 0x0001 and PBSEVENT_SYSTEM 0x0002 (OpenPBS src/include/log.h): the
    # reload check reads the mom's lines of both classes.
    assert normalize_value("logevent", "0x0003") == "0x0003"
    assert "the mask lacks 0x1 (errors) or 0x2 (system events)" in refused("logevent", "0x4")


@pytest.mark.parametrize("name, value", [
    ("momname", True),
    ("restrict_user_exceptions", False),
    ("momname", {"host": "node1"}),
])
def test_a_bool_or_a_mapping_is_not_taken_for_a_word(name, value):
    assert "a %s is not accepted here" % type(value).__name__ in refused(name, value)


# -- host names: PBS_MAXHOSTNAME 255 (OpenPBS src/include/pbs_ifl.h) ----------------------

def long_host(chars):
    """A valid host name of ``chars`` characters (<= 256): labels of 63 letters."""
    return ".".join(["n" * 63] * 4)[:chars - 1] + "x"


def test_a_host_name_may_have_255_characters_not_256():
    assert len(long_host(255)) == 255 and len(long_host(256)) == 256
    assert opts.host_name(long_host(255)) == long_host(255)
    with pytest.raises(ValueError, match="not a host name"):
        opts.host_name(long_host(256))


def test_a_restricted_pattern_may_have_255_characters_not_256():
    assert normalize_value("restricted", [long_host(255)]) == [long_host(255)]
    assert "not a host name or * pattern" in refused("restricted", [long_host(256)])


def test_momname_may_have_63_characters_not_64():
    # set_momname() fails on strlen(value) > 63 (OpenPBS src/resmom/mom_main.c)
    assert normalize_value("momname", "m" * 63) == "m" * 63
    assert "not a host name" in refused("momname", "m" * 64)


def test_a_usecp_source_path_may_hold_a_colon():
    assert normalize_value("usecp", ["*.example.org:/data:old /scratch"]) == [
        "*.example.org:/data:old /scratch"]


# -- word counts of the options that take several words ----------------------------------

def test_restrict_user_exceptions_takes_ten_names_and_refuses_eleven():
    # NUM_RESTRICT_USER_EXEMPT_UIDS 10 outside the NAS build (OpenPBS src/include/mom_func.h)
    ten = ["user%d" % i for i in range(10)]
    assert normalize_value("restrict_user_exceptions", " ".join(ten)) == ",".join(ten)
    message = refused("restrict_user_exceptions", ",".join(ten + ["user10"]))
    assert "more than 10 names (pbs_mom ignores the rest)" in message


@pytest.mark.parametrize("value", [
    "restart 30 !/opt/pbs/restart.sh",
    "terminate 0 !/opt/pbs/kill.sh -9 $jobid",
    "checkpoint 60 requeue",
])
def test_action_lines_with_a_script_or_requeue_are_accepted(value):
    assert normalize_value("action", [value]) == [value]


@pytest.mark.parametrize("value, reason", [
    ("terminate 30 !!/opt/pbs/kill.sh", "the action must be 'requeue' or '!script'"),
    ("terminate 30 !/opt/pbs/kill.sh #comment", "script arguments may not hold quotes or '#'"),
    ("terminate 30 !/opt/pbs/kill.sh a#b", "script arguments may not hold quotes or '#'"),
    ('terminate 30 !/opt/pbs/kill.sh "x', "script arguments may not hold quotes or '#'"),
    ("terminate 30 !/opt/pbs/kill.sh -9 it's", "script arguments may not hold quotes or '#'"),
])
def test_action_scripts_and_arguments_the_mom_would_misread_are_refused(value, reason):
    assert reason in refused("action", [value])


def test_jobdir_root_takes_a_path_and_optionally_shared():
    assert normalize_value("jobdir_root", "PBS_USER_HOME shared") == "PBS_USER_HOME shared"
    assert normalize_value("jobdir_root", "/var/tmp") == "/var/tmp"
    assert normalize_value("jobdir_root", "/var/tmp  shared") == "/var/tmp shared"


@pytest.mark.parametrize("value", ["", "PBS_USER_HOME shared again", "/var/tmp private"])
def test_jobdir_root_of_another_form_is_refused(value):
    assert "not of the form 'path' or 'path shared'" in refused("jobdir_root", value)


# -- directory security: chk_file_sec() (OpenPBS src/lib/Liblog/chk_file_sec.c) -----------
# refuses an owner uid > 10 and, for $tmpdir and $jobdir_root, a group gid > 9.

def fake_tree(monkeypatch, entries):
    """Make ``directory_problem`` see only ``entries`` (path -> (mode, uid, gid))."""
    def lstat(path):
        if path not in entries:
            raise FileNotFoundError(2, "No such file or directory")
        mode, uid, gid = entries[path]
        return os.stat_result((mode, 0, 0, 2, uid, gid, 4096, 0, 0, 0))
    fake_os = types.SimpleNamespace(
        lstat=lstat, path=types.SimpleNamespace(realpath=lambda p: p, dirname=os.path.dirname))
    monkeypatch.setattr(opts, "os", fake_os)


def secure_tree(monkeypatch, dir_uid=0, dir_gid=0, parent_uid=0):
    fake_tree(monkeypatch, {
        "/srv": (stat.S_IFDIR | 0o755, 0, 0),
        "/srv/pbs": (stat.S_IFDIR | 0o755, parent_uid, 0),
        "/srv/pbs/tmp": (stat.S_IFDIR | 0o1777, dir_uid, dir_gid),
    })


def test_tmpdir_owned_by_uid_10_and_gid_9_under_a_parent_of_uid_10_is_secure(monkeypatch):
    secure_tree(monkeypatch, dir_uid=10, dir_gid=9, parent_uid=10)
    assert normalize_value("tmpdir", "/srv/pbs/tmp") == "/srv/pbs/tmp"


@pytest.mark.parametrize("owners, problem", [
    ({"dir_uid": 11}, "/srv/pbs/tmp is owned by uid 11, not root"),
    ({"dir_gid": 10}, "/srv/pbs/tmp has group 10, not a system group (gid <= 9)"),
    ({"parent_uid": 11}, "parent /srv/pbs is owned by uid 11, not root"),
])
def test_tmpdir_owned_past_the_limits_is_refused_with_the_owner(monkeypatch, owners, problem):
    secure_tree(monkeypatch, **owners)
    assert "(%s)" % problem in refused("tmpdir", "/srv/pbs/tmp")


def test_checkpoint_path_needs_neither_the_sticky_bit_nor_secure_parents(monkeypatch):
    fake_tree(monkeypatch, {
        "/scratch": (stat.S_IFDIR | 0o1777, 1000, 1000),
        "/scratch/ckpt": (stat.S_IFDIR | 0o755, 10, 100),
    })
    assert normalize_value("checkpoint_path", "/scratch/ckpt") == "/scratch/ckpt"


# -- unchecked options and the length of a line ------------------------------------------

def test_an_unchecked_boolean_is_written_as_a_word():
    assert normalize_value("configversion", True, unchecked=("configversion",)) == "true"
    assert normalize_value("configversion", False, unchecked=("configversion",)) == "false"


def test_an_unchecked_mapping_is_refused_with_its_value():
    message = refused("configversion", {"v": 2}, unchecked=("configversion",))
    assert message == "configversion: value must be a string, number or boolean, got {'v': 2}"


def test_a_line_of_510_characters_is_accepted_and_511_refused():
    # char line[512] read by fgets() in parse_config() (OpenPBS src/resmom/mom_main.c)
    name = "site_option"
    value = "v" * (510 - len("$%s " % name))
    assert normalize_value(name, value, unchecked=(name,)) == value
    assert "longer than 510 characters" in refused(name, value + "v", unchecked=(name,))


# -- whole files ---------------------------------------------------------------------------

@pytest.mark.parametrize("options", [
    {"max_check_poll": "10"},                       # default min_check_poll 10
    {"min_check_poll": "30", "max_check_poll": "30"},
    {"min_check_poll": ["5", "200", "20"]},         # the last line is the one read
    {"max_check_poll": ["5", "9", "60"], "min_check_poll": "30"},
])
def test_poll_limits_the_mom_keeps(options):
    # MIN_CHECK_POLL_TIME 10, MAX_CHECK_POLL_TIME 120 (OpenPBS src/include/mom_func.h);
    # read_config() replaces both only when min > max.
    assert opts.combination_problems(options) == []


def test_a_max_check_poll_below_the_default_min_is_a_problem():
    [problem] = opts.combination_problems({"max_check_poll": "9"})
    assert problem.startswith("min_check_poll 10 is above max_check_poll 9: ")


@pytest.mark.parametrize("actions", [
    ["terminate 30 !/opt/pbs/kill.sh"],
    ["restart 30 requeue"],
    "restart 30 requeue",
])
def test_restart_transmogrify_needs_a_restart_action_with_a_script(actions):
    [problem] = opts.combination_problems({"restart_transmogrify": "true", "action": actions})
    assert problem.startswith("restart_transmogrify true is refused")


def test_an_option_no_rule_knows_is_not_compared_with_the_log():
    assert opts.expected_log_line("configversion", "2") is None
    assert md.running_differences("", {"configversion": "2", "usecp": ["a:/b /c"]},
                                  ["configversion", "usecp"]) == []


# -- plan: every problem of a task at once, the options to remove ---------------------------

@pytest.mark.parametrize("name", ["", "job launch_delay", "$job_launch_delay"])
@pytest.mark.parametrize("state, value", [("absent", 45), ("present", None)])
def test_a_line_to_remove_needs_an_option_name(name, state, value):
    with pytest.raises(MomConfigValueError) as info:
        opts.plan({name: value}, state)
    assert str(info.value) == "%r is not an option name (give it without '$')" % name


def test_the_options_after_a_removal_are_still_planned():
    desired, remove, expected = opts.plan({"sister_join_job_alarm": None, "job_launch_delay": 45}, "present")
    assert (desired, remove) == ({"job_launch_delay": ["45"]}, {"sister_join_job_alarm"})
    assert len(expected) == 1


def test_every_bad_value_of_a_task_is_named_at_once():
    with pytest.raises(MomConfigValueError) as info:
        opts.plan({"job_launch_delay": -1, "sister_join_job_alarm": "soon"}, "present")
    problems = str(info.value).splitlines()
    assert len(problems) == 2 and problems[0].startswith("job_launch_delay") and "sister_join_job_alarm" in problems[1]
