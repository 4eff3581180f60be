"""The mom config option table (plugins/module_utils/mom_config_options.py): every option of
a Linux pbs_mom checked by its type, refusals that say what is wrong and what is accepted."""
import os

import pytest

from ansible_collections.hpc.pbs.plugins.module_utils import mom_config_options as opts
from ansible_collections.hpc.pbs.plugins.module_utils.mom_config_options import (
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
    path = os.path.join(os.path.dirname(opts.__file__), "..", "modules", "mom_config.py")
    with open(path) as handle:
        tree = ast.parse(handle.read())
    doc = next(node.value.value for node in tree.body if isinstance(node, ast.Assign)
               and getattr(node.targets[0], "id", None) == "DOCUMENTATION")
    text = " ".join(" ".join(yaml.safe_load(doc)["options"]["options"]["description"]).split())
    for name, rule in opts.RULES.items():
        line = "C(%s)%s - %s" % (name, " (repeatable)" if rule.repeatable else "", rule.accepts)
        assert " ".join(line.split()) in text, name
