"""hpc.pbs.hook behaviour the other tests leave unchecked.

The tests cover edges of ``plugins/modules/hook.py`` (and of the rules it takes from
``plugins/module_utils/hooks/hooks.py``) that the other unit tests leave unchecked: the edges of the
ranges PBS accepts (``set_hook_order()``: 1-1000 for a site hook; ``set_hook_alarm()`` and
``set_hook_freq()``: "must be > 0"), ``fail_action`` (``set_hook_fail_action()``: ``none``
cannot be combined with the others; the server lists the actions in its own order), what the
preflight hands ``pbs_python --hook`` (the hook's alarm in the input file, the current config
as ``pbs.hook_config_filename``), which imports are verified before a hook is enabled, a hook
directory this user may not search (read through ``qmgr export``), the enabled state of a new
hook, the reported attributes and diffs, the failure texts, and the argument spec (choices,
defaults, ``path`` options, element types, the documentation). qmgr is faked at the process
boundary; the preflight's interpreter runs for real.
"""
import os
import sys

import pytest
import yaml
from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpc.pbs.plugins.module_utils.common import json_schema
from ansible_collections.hpc.pbs.plugins.modules import hook as hook_module
from hpc_pbs_module_fakes import run_module

BODY = "import pbs\npbs.event().accept()\n"
NEW_BODY = "import pbs\ne = pbs.event()\ne.accept()\n"
# What config={"alpha": 1} is written as (JSON, sorted keys, indent 2, final newline).
ALPHA_1 = b'{\n  "alpha": 1\n}\n'
SITE_HOOK = {"type": "site", "enabled": "true", "event": "execjob_begin", "user": "pbsadmin",
             "alarm": "300", "order": "1", "debug": "false", "fail_action": "none"}
CRAY_ATOM = {"type": "pbs", "enabled": "false", "event": "execjob_begin,execjob_end",
             "user": "pbsadmin", "alarm": "300", "order": "100", "debug": "false",
             "fail_action": "offline_vnodes"}
CRAY_CF = b'{\n    "post_timeout": 30,\n    "delete_timeout": 30,\n    "unix_socket_file": "/var/run/atomd/atomd.sock"\n}\n'
# AnsibleModule.run_command as ansible-core has it (the fixtures patch it later).
REAL_RUN_COMMAND = AnsibleModule.run_command
# The order in which the server lists a hook's fail_action (hook_fail_action_as_string(),
# OpenPBS src/lib/Libutil/hook.c): by flag, not as given.
FAIL_ACTION_LIST_ORDER = ("none", "offline_vnodes", "clear_vnodes_upon_recovery",
                          "scheduler_restart_cycle")

# A pbs_python with a hook mode that records what the preflight gives it: the ``-i`` input
# file (``pbs.event().alarm=N`` lines) and the file named by PBS_HOOK_CONFIG_FILE (what
# the body sees as pbs.hook_config_filename), then reports the body loaded.
RECORDING_PBS_PYTHON = '''#!%s
import json, os, shutil, sys
args = sys.argv[1:]
if args[:1] != ["--hook"]:
    os.execv(sys.executable, [sys.executable] + args)
record = os.environ["HPC_PBS_TEST_RECORD"]
shutil.copy(args[args.index("-i") + 1], record + ".input")
config = os.environ.get("PBS_HOOK_CONFIG_FILE")
with open(record + ".config", "wb") as out:
    out.write(open(config, "rb").read() if config else b"<no config>")
with open(os.environ["HPC_PBS_PREFLIGHT_RESULT"], "w") as out:
    json.dump({"loaded": True}, out)
'''


@pytest.fixture
def pbs(fake_qmgr, pbs_install, monkeypatch, tmp_path):
    """A server host: qmgr is a :class:`FakeQmgr` holding ``PBS_cray_atom``; any other
    command (the preflight's interpreter) runs for real."""
    fake = fake_qmgr()
    fake.add("pbshook", "PBS_cray_atom", CRAY_ATOM, config=CRAY_CF)

    def run_command(self, args, **kw):
        if args[0] == fake.qmgr_path:
            return fake.run_command(self, args, **kw)
        return REAL_RUN_COMMAND(self, args, **kw)

    monkeypatch.setattr(AnsibleModule, "run_command", run_command)
    fake.conf = pbs_install.conf
    fake.home, fake.exec_dir = pbs_install.home, pbs_install.exec_dir
    fake.tmp = tmp_path / "moduletmp"
    fake.tmp.mkdir()
    return fake


def run(pbs, check_mode=False, diff=False, tmpdir=None, **args):
    args.setdefault("pbs_conf_file", pbs.conf)
    return run_module(hook_module.main, args, check_mode=check_mode, diff=diff,
                      tmpdir=tmpdir or pbs.tmp)


def add_site_hook(pbs, name="h1", body=BODY.encode(), config=None, **attrs):
    values = dict(SITE_HOOK)
    values.update(attrs)
    pbs.add("hook", name, values, body=body, config=config)
    return pbs.objects[("hook", name)]


def install_recording_pbs_python(pbs, monkeypatch, tmp_path):
    """PBS_EXEC/bin/pbs_python records its input; returns the record path prefix."""
    bin_dir = pbs.exec_dir / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / "pbs_python"
    path.write_text(RECORDING_PBS_PYTHON % sys.executable)
    path.chmod(0o755)
    record = str(tmp_path / "pbs_python_record")
    monkeypatch.setenv("HPC_PBS_TEST_RECORD", record)
    return record


def read_bytes(path):
    with open(path, "rb") as handle:
        return handle.read()


# -- the ranges PBS accepts --------------------------------------------------------------

@pytest.mark.parametrize("order", [1, 1000])
def test_the_ends_of_the_site_hook_order_range_are_accepted(pbs, order):
    """HOOK_SITE_ORDER_MIN / _MAX (OpenPBS src/include/hook.h) are 1 and 1000, both valid."""
    code, result = run(pbs, name="h1", events=["queuejob"], order=order)
    assert code == 0, result
    assert pbs.objects[("hook", "h1")]["order"] == str(order)


def test_an_alarm_of_one_second_is_accepted(pbs):
    """set_hook_alarm(): "alarm value '<v>' of a hook must be > 0"; 1 is the least."""
    code, result = run(pbs, name="h1", events=["queuejob"], alarm=1)
    assert code == 0, result
    assert pbs.objects[("hook", "h1")]["alarm"] == "1"


def test_a_freq_of_one_second_is_accepted(pbs):
    """set_hook_freq(): "freq value '<v>' of a hook must be > 0"; 1 is the least."""
    code, result = run(pbs, name="h1", events=["periodic"], freq=1)
    assert code == 0, result
    assert pbs.objects[("hook", "h1")]["freq"] == "1"


# -- fail_action (set_hook_fail_action()) -----------------------------------------------------

def test_an_empty_fail_action_is_refused_before_qmgr(pbs):
    code, result = run(pbs, name="h1", events=["execjob_begin"], fail_action=[])
    assert code == 1 and result["msg"] == "fail_action is empty: give [none] or a list of actions"
    assert pbs.calls == []


def test_none_combined_with_another_fail_action_is_refused_before_qmgr(pbs):
    """PBS: "can't combine "none" with other fail_action values"."""
    code, result = run(pbs, name="h1", events=["execjob_begin"],
                       fail_action=["none", "offline_vnodes"])
    assert code == 1 and result["msg"] == "fail_action 'none' cannot be combined with other actions"
    assert pbs.calls == []


def test_none_alone_is_a_fail_action(pbs):
    add_site_hook(pbs, fail_action="offline_vnodes")
    code, result = run(pbs, name="h1", fail_action=["none"])
    assert code == 0, result
    assert pbs.objects[("hook", "h1")]["fail_action"] == "none"


def listing_fail_actions_in_server_order(pbs):
    """Make the fake list fail_action as the server does (FAIL_ACTION_LIST_ORDER)."""
    real_set = pbs.set_hook_attr

    def set_hook_attr(key, attrs, attr, op, value):
        real_set(key, attrs, attr, op, value)
        if attr == "fail_action":
            given = value.split(",")
            attrs[attr] = ",".join(a for a in FAIL_ACTION_LIST_ORDER if a in given)
    pbs.set_hook_attr = set_hook_attr


def test_two_fail_actions_are_set_and_reported_as_the_server_lists_them(pbs):
    """offline_vnodes and scheduler_restart_cycle both need execjob_begin (or prologue)."""
    listing_fail_actions_in_server_order(pbs)
    code, result = run(pbs, name="h1", events=["execjob_begin"],
                       fail_action=["scheduler_restart_cycle", "offline_vnodes"])
    assert code == 0, result
    assert result["hook"]["fail_action"] == "offline_vnodes,scheduler_restart_cycle"


# -- the preflight: what pbs_python --hook is given -----------------------------------------

def test_the_preflight_load_gets_the_alarm_the_task_sets(pbs, monkeypatch, tmp_path):
    record = install_recording_pbs_python(pbs, monkeypatch, tmp_path)
    add_site_hook(pbs)
    code, result = run(pbs, name="h1", body=NEW_BODY, alarm=45)
    assert code == 0, result
    assert "pbs.event().alarm=45\n" in read_bytes(record + ".input").decode()


def test_the_preflight_load_gets_the_hooks_alarm_when_the_task_sets_none(pbs, monkeypatch, tmp_path):
    record = install_recording_pbs_python(pbs, monkeypatch, tmp_path)
    add_site_hook(pbs)
    code, result = run(pbs, name="h1", body=NEW_BODY)
    assert code == 0, result
    assert "pbs.event().alarm=300\n" in read_bytes(record + ".input").decode()


def test_a_new_body_is_loaded_with_the_current_config(pbs, monkeypatch, tmp_path):
    """The server gives a hook its config file as pbs.hook_config_filename: a new body
    alone goes live with the config already there."""
    record = install_recording_pbs_python(pbs, monkeypatch, tmp_path)
    add_site_hook(pbs, config=ALPHA_1)
    code, result = run(pbs, name="h1", body=NEW_BODY)
    assert code == 0, result
    assert read_bytes(record + ".config") == ALPHA_1


def test_an_unchanged_config_does_not_preflight_the_current_body(pbs):
    add_site_hook(pbs, config=ALPHA_1)
    code, result = run(pbs, name="h1", config={"alpha": 1})
    assert code == 0 and result["changed"] is False, result
    assert "preflight" not in result


# -- reading the current files -----------------------------------------------------------------

def test_a_hooks_directory_this_user_cannot_search_is_read_through_qmgr_export(pbs, monkeypatch):
    """As a user without read and search permission on server_priv/hooks: the directory
    exists (F_OK) but its files cannot be looked at, so qmgr exports them."""
    add_site_hook(pbs, config=ALPHA_1)
    hooks_dir = os.path.join(str(pbs.home), "server_priv", "hooks")
    real_access = os.access
    monkeypatch.setattr(hook_module.os, "access", lambda path, mode: (
        mode == os.F_OK if path == hooks_dir else real_access(path, mode)))
    code, result = run(pbs, name="h1", body=BODY, config={"alpha": 1})
    assert code == 0 and result["changed"] is False, result
    exported = [c[0][2] for c in pbs.reads() if c[0][2].startswith("export")]
    assert exported == ["export hook h1 application/x-python default",
                        "export hook h1 application/x-config default"]


def test_a_pbshook_is_left_disabled_when_the_server_does_not_hold_the_imported_config(pbs, monkeypatch):
    real_import = pbs.do_import

    def truncating_import(words):
        out = real_import(words)
        with open(os.path.join(pbs.hooks_dir, "PBS_cray_atom.CF"), "wb") as handle:
            handle.write(b"{}\n")
        return out
    monkeypatch.setattr(pbs, "do_import", truncating_import)
    code, result = run(pbs, name="PBS_cray_atom", type="pbs", enabled=True,
                       config={"post_timeout": 45, "delete_timeout": 45,
                               "unix_socket_file": "/var/run/atomd/atomd.sock"})
    assert code == 1 and "pbshook PBS_cray_atom was left disabled: its config" in result["msg"], result
    assert pbs.objects[("pbshook", "PBS_cray_atom")]["enabled"] == "false"


# -- the enabled state of a new hook --------------------------------------------------------------

def test_a_new_hook_with_a_body_ends_enabled_when_enabled_is_not_given(pbs):
    """PBS's default for a new hook is enabled; it is enabled once its body is in."""
    code, result = run(pbs, name="h1", events=["queuejob"], body=BODY)
    assert code == 0, result
    assert result["commands"][-2:] == ["set hook h1 enabled = true", "list hook h1"]
    assert pbs.objects[("hook", "h1")]["enabled"] == "true"


def test_a_new_hook_with_a_body_and_enabled_false_stays_disabled(pbs):
    code, result = run(pbs, name="h1", events=["queuejob"], body=BODY, enabled=False)
    assert code == 0, result
    assert pbs.objects[("hook", "h1")]["enabled"] == "false"
    assert "set hook h1 enabled = true" not in result["commands"]


# -- what the result reports ----------------------------------------------------------------------

def test_check_mode_reports_the_attributes_the_commands_would_give(pbs):
    code, result = run(pbs, check_mode=True, name="h1", events=["queuejob"], alarm=45, order=5)
    assert code == 0, result
    hook = result["hook"]
    assert (hook["event"], hook["alarm"], hook["order"], hook["enabled"]) == ("queuejob", "45", "5", "false")
    assert ("hook", "h1") not in pbs.objects


@pytest.mark.parametrize("args", [dict(state="present"), dict(state="absent")],
                         ids=["unchanged", "absent-already"])
def test_a_task_that_changes_nothing_reports_the_hook(pbs, args):
    expected = {}
    if args["state"] == "present":
        expected = dict(add_site_hook(pbs))
    code, result = run(pbs, name="h1", **args)
    assert code == 0 and result["changed"] is False, result
    assert result["hook"] == expected


def test_the_diff_of_a_deletion_shows_the_attributes_going(pbs):
    add_site_hook(pbs)
    code, result = run(pbs, diff=True, name="h1", state="absent")
    assert code == 0, result
    assert result["diff"] == {"before": "".join("%s = %s\n" % item for item in SITE_HOOK.items()),
                              "after": "", "before_header": "hook h1", "after_header": "hook h1"}


def test_the_diff_of_a_new_body_names_the_hook_files(pbs):
    add_site_hook(pbs)
    code, result = run(pbs, diff=True, name="h1", body=NEW_BODY, alarm=45)
    assert code == 0, result
    attributes, body = result["diff"]
    assert (attributes["before_header"], attributes["after_header"]) == ("hook h1 attributes",) * 2
    assert "alarm = 45\n" in attributes["after"] and "alarm = 300\n" in attributes["before"]
    assert body == {"before": BODY, "after": NEW_BODY, "before_header": "h1.PY", "after_header": "h1.PY"}


def test_the_diff_shows_no_file_that_does_not_change(pbs):
    add_site_hook(pbs, config=ALPHA_1)
    code, result = run(pbs, diff=True, name="h1", body=BODY, config={"alpha": 1}, alarm=45)
    assert code == 0, result
    assert [d["before_header"] for d in result["diff"]] == ["hook h1 attributes"]


# -- failure texts ---------------------------------------------------------------------------------

def test_an_unreadable_body_src_names_the_option_path_and_the_alternative(pbs, tmp_path):
    missing = str(tmp_path / "nowhere" / "h1.py")
    code, result = run(pbs, name="h1", body_src=missing)
    assert code == 1
    assert result["msg"].startswith("body_src: cannot read %s on the managed host: " % missing)
    assert result["msg"].endswith("Copy the file there first or give the content in body.")
    assert pbs.calls == []


def test_a_schema_without_jsonschema_on_the_host_says_where_to_check_it(pbs, monkeypatch):
    monkeypatch.setattr(json_schema, "_jsonschema", lambda: None)
    code, result = run(pbs, name="h1", config={"alpha": 1}, config_schema={"type": "object"})
    assert code == 1
    assert result["msg"].startswith("config_schema: the Python library 'jsonschema' cannot be imported")
    assert result["msg"].endswith("install jsonschema there. Nothing was changed.")
    assert pbs.calls == []


def test_a_listing_after_the_change_that_cannot_be_parsed_says_the_hook_was_changed(pbs):
    add_site_hook(pbs)
    real_run_command = pbs.run_command

    def headless_listing(module, args, data=None, **kwargs):
        rc, out, err = real_run_command(module, args, data=data, **kwargs)
        if data and "set hook" in data:
            out = out.replace("Hook h1\n", "")
        return rc, out, err
    pbs.run_command = headless_listing
    code, result = run(pbs, name="h1", alarm=45)
    assert code == 1
    assert result["msg"].startswith("the hook was changed but the listing after it cannot be parsed: ")
    assert result["commands"] == ["set hook h1 alarm = 45", "list hook h1"]
    assert pbs.objects[("hook", "h1")]["alarm"] == "45"


def test_a_module_tmpdir_qmgr_cannot_quote_fails_before_anything_changes(pbs, tmp_path):
    """qmgr has no escape: a path holding both ``"`` and ``'`` cannot be imported."""
    odd = tmp_path / "it's \"odd\""
    odd.mkdir()
    add_site_hook(pbs)
    code, result = run(pbs, tmpdir=odd, name="h1", body=NEW_BODY)
    assert code == 1, result
    assert "both" in result["msg"] and result["msg"].endswith(". Nothing was changed.")
    assert not pbs.writes() and os.listdir(str(odd)) == []


# -- argument spec and documentation ---------------------------------------------------------------

def test_name_is_required(pbs):
    code, result = run(pbs, events=["queuejob"])
    assert code == 1 and result["msg"] == "missing required arguments: name", result
    assert pbs.calls == []


@pytest.mark.parametrize("option, value", [
    ("state", "gone"), ("type", "builtin"), ("fail_action", ["reboot"]), ("config_format", "yaml"),
    ("user", "root"),
])
def test_values_outside_the_choices_are_refused_before_qmgr(pbs, option, value):
    code, result = run(pbs, name="h1", events=["queuejob"], **{option: value})
    assert code == 1 and result["msg"].startswith("value of %s must be one" % option), result
    assert pbs.calls == []


def test_state_defaults_to_present(pbs):
    code, result = run(pbs, name="h1", events=["queuejob"])
    assert code == 0, result
    assert result["invocation"]["module_args"]["state"] == "present"


def test_an_event_that_is_not_a_string_is_named_like_qmgr_names_it(pbs):
    code, result = run(pbs, name="h1", events=[123])
    assert code == 1 and result["invalid_events"] == ["123"], result
    assert pbs.calls == []


def test_debug_false_turns_debug_off(pbs):
    add_site_hook(pbs, debug="true")
    code, result = run(pbs, name="h1", debug=False)
    assert code == 0, result
    assert result["commands"][0] == "set hook h1 debug = false"
    assert pbs.objects[("hook", "h1")]["debug"] == "false"


@pytest.mark.parametrize("option", ["body_src", "config_src"])
def test_a_src_path_under_home_is_expanded(pbs, monkeypatch, tmp_path, option):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "h1.file").write_text(BODY if option == "body_src" else '{"alpha": 1}\n')
    code, result = run(pbs, name="h1", events=["queuejob"], **{option: "~/h1.file"})
    assert code == 0, result
    ext = "PY" if option == "body_src" else "CF"
    assert pbs.hook_file("h1", ext) == read_bytes(str(tmp_path / "h1.file"))


def test_the_documentation_describes_the_module():
    """ansible-doc reads DOCUMENTATION; every option the module takes is documented."""
    doc = yaml.safe_load(hook_module.DOCUMENTATION)
    assert doc["module"] == "hook"
    assert {"name", "state", "type", "events", "body", "config", "config_format"} <= set(doc["options"])
