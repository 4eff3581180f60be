"""hpc.pbs.hook with qmgr faked at the process boundary (run_command)."""
import json
import os
import sys

import pytest
from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpc.pbs.plugins.modules import hook as hook_module
from hpc_pbs_module_fakes import EVENTS, FakeQmgr, QmgrFailure, run_module

BODY = ('import pbs\ne = pbs.event()\npbs.logmsg(pbs.LOG_DEBUG, "h1 trivial hook ran for event '
        'type %s" % e.type)\ne.accept()\n')
CONFIG = '{"alpha": 1, "beta": ["a", "b"], "gamma": {"x": true}}\n'
BAD_CONFIG = '{"alpha": 1, "beta": [ "a", "b" , }\n'
CRAY_ATOM = {"type": "pbs", "enabled": "false", "event": "execjob_begin,execjob_end",
             "user": "pbsadmin", "alarm": "300", "order": "100", "debug": "false",
             "fail_action": "offline_vnodes"}
CRAY_CF = b'{\n    "post_timeout": 30,\n    "delete_timeout": 30,\n    "unix_socket_file": "/var/run/atomd/atomd.sock"\n}\n'


@pytest.fixture
def pbs(tmp_path, monkeypatch):
    home, exec_dir = tmp_path / "home", tmp_path / "exec"
    conf = tmp_path / "pbs.conf"
    conf.write_text("PBS_HOME=%s\nPBS_EXEC=%s\n" % (home, exec_dir))
    for var in ("PBS_HOME", "PBS_EXEC", "PBS_CONF_FILE"):
        monkeypatch.delenv(var, raising=False)
    fake = FakeQmgr(str(exec_dir / "bin" / "qmgr"), str(home))
    fake.add("pbshook", "PBS_cray_atom", CRAY_ATOM, config=CRAY_CF)
    real_run_command = AnsibleModule.run_command

    def run_command(self, args, **kw):
        """qmgr is faked; the hook interpreter of the preflight runs for real."""
        if args[0] == fake.qmgr_path:
            return fake.run_command(self, args, **kw)
        fake.interpreter_calls.append(args)
        return real_run_command(self, args, **kw)

    fake.interpreter_calls = []
    monkeypatch.setattr(AnsibleModule, "run_command", run_command)
    fake.conf = str(conf)
    fake.tmp = tmp_path / "moduletmp"
    fake.tmp.mkdir()
    return fake


def run(pbs, check_mode=False, diff=False, **args):
    args.setdefault("pbs_conf_file", pbs.conf)
    return run_module(hook_module.main, args, check_mode=check_mode, diff=diff, tmpdir=pbs.tmp)


def new_hook_args(**extra):
    args = dict(name="h1", events=["execjob_launch", "queuejob"], alarm=45, order=5,
                fail_action=["offline_vnodes"], body=BODY, config=CONFIG, enabled=True)
    args.update(extra)
    return args


def test_create_hook_disabled_import_verify_then_enable_then_idempotent(pbs):
    code, result = run(pbs, diff=True, **new_hook_args())
    assert code == 0, result
    commands = result["commands"]
    assert commands[:7] == [
        "create hook h1",
        "set hook h1 enabled = false",
        'set hook h1 event = "queuejob,execjob_launch"',
        "set hook h1 alarm = 45",
        "set hook h1 order = 5",
        "set hook h1 fail_action = offline_vnodes",
        commands[6],
    ]
    assert commands[6].startswith("import hook h1 application/x-python default ")
    assert commands[7].startswith("import hook h1 application/x-config default ")
    # enabled only in a second qmgr call, once the imported files are verified
    assert commands[8:] == ["list hook h1", "set hook h1 enabled = true", "list hook h1"]
    assert len(pbs.reads()) == 1 and len(pbs.writes()) == 2
    assert result["preflight"]["compiled"] is True
    assert pbs.hook_file("h1", "PY") == BODY.encode() and pbs.hook_file("h1", "CF") == CONFIG.encode()
    assert result["hook"]["enabled"] == "true"
    assert result["hook"]["event"] == "queuejob,execjob_launch"
    assert os.listdir(str(pbs.tmp)) == []  # staged import files removed
    body_diff = [d for d in result["diff"] if d["after_header"] == "h1.PY"][0]
    assert body_diff["before"] == "" and body_diff["after"] == BODY
    attr_diff = result["diff"][0]
    assert attr_diff["before"] == "" and "alarm = 45" in attr_diff["after"]

    pbs.calls = []
    code, result = run(pbs, **new_hook_args(events=["queuejob", "execjob_launch"]))
    assert code == 0 and result["changed"] is False and result["commands"] == []
    assert len(pbs.calls) == 1 and not pbs.writes()


def test_check_mode_creates_nothing(pbs):
    code, result = run(pbs, check_mode=True, **new_hook_args())
    assert code == 0 and result["changed"] is True
    assert result["commands"][0] == "create hook h1"
    assert 'import hook h1 application/x-python default "<temporary file>"' in result["commands"]
    assert not pbs.writes() and ("hook", "h1") not in pbs.objects
    assert os.listdir(str(pbs.tmp)) == []


def test_unknown_event_fails_before_anything_with_qmgr_event_list(pbs):
    code, result = run(pbs, **new_hook_args(events=["queuejob", "yaya"]))
    assert code == 1
    assert "invalid argument (yaya) to event. Should be one or more of: " + ",".join(EVENTS) in result["msg"]
    assert result["invalid_events"] == ["yaya"]
    assert pbs.calls == [] and ("hook", "h1") not in pbs.objects


def test_broken_json_config_fails_before_import(pbs):
    code, result = run(pbs, **new_hook_args(config=BAD_CONFIG))
    assert code == 1 and "not valid JSON" in result["msg"]
    assert pbs.calls == [] and ("hook", "h1") not in pbs.objects


def test_raw_config_format_skips_json_check(pbs):
    code, result = run(pbs, **new_hook_args(config="key: value\n", config_format="raw"))
    assert code == 0 and pbs.hook_file("h1", "CF") == b"key: value\n"


def test_config_src_and_body_src_on_managed_host(pbs, tmp_path):
    (tmp_path / "h.py").write_text(BODY)
    (tmp_path / "h.json").write_text(BAD_CONFIG)
    args = new_hook_args(body_src=str(tmp_path / "h.py"), config_src=str(tmp_path / "h.json"))
    del args["body"], args["config"]
    code, result = run(pbs, **args)
    assert code == 1 and "not valid JSON" in result["msg"] and pbs.calls == []
    (tmp_path / "h.json").write_text(CONFIG)
    args = new_hook_args(body_src=str(tmp_path / "h.py"), config_src=str(tmp_path / "h.json"))
    del args["body"], args["config"]
    code, result = run(pbs, **args)
    assert code == 0 and pbs.hook_file("h1", "PY") == BODY.encode()


def test_failed_import_never_leaves_new_hook_enabled(pbs, monkeypatch):
    def refuse(words):
        raise QmgrFailure(32, 2, "qmgr obj=h1 svr=default: Incorrect padding\n"
                                 "qmgr: hook error returned from server\n")
    monkeypatch.setattr(pbs, "do_import", refuse)
    code, result = run(pbs, **new_hook_args())
    assert code == 1 and "Incorrect padding" in result["msg"] and result["rc"] == 2
    assert pbs.objects[("hook", "h1")]["enabled"] == "false"
    assert os.listdir(str(pbs.tmp)) == []


def test_new_hook_without_body_stays_disabled(pbs):
    code, result = run(pbs, name="h2", events=["queuejob"])
    assert code == 0 and pbs.objects[("hook", "h2")]["enabled"] == "false"
    assert "set hook h2 enabled = true" not in result["commands"]


def test_event_change_reasserts_attributes_it_resets(pbs):
    pbs.add("hook", "per", {"type": "site", "enabled": "true", "event": "exechost_periodic",
                            "user": "pbsadmin", "alarm": "30", "freq": "120", "order": "1",
                            "debug": "false", "fail_action": "none"}, body=BODY.encode())
    code, result = run(pbs, name="per", events=["periodic"], freq=120)
    assert code == 0, result
    assert result["commands"] == ["set hook per event = periodic", "set hook per freq = 120",
                                  "list hook per"]
    assert pbs.objects[("hook", "per")]["freq"] == "120"
    assert result["hook"]["freq"] == "120"


def test_freq_without_periodic_event_is_refused(pbs):
    code, result = run(pbs, name="h3", events=["queuejob"], freq=30)
    assert code == 1 and "periodic" in result["msg"] and not pbs.writes()


def test_disable_comes_first_and_body_change_is_imported(pbs):
    pbs.add("hook", "h1", {"type": "site", "enabled": "true", "event": "queuejob", "user": "pbsadmin",
                           "alarm": "30", "order": "1", "debug": "false", "fail_action": "none"},
            body=b"old body\n")
    code, result = run(pbs, diff=True, name="h1", enabled=False, events=["queuejob", "modifyjob"], body=BODY)
    assert result["commands"][0] == "set hook h1 enabled = false"
    assert result["commands"][1] == 'set hook h1 event = "queuejob,modifyjob"'
    assert result["commands"][2].startswith("import hook h1 application/x-python")
    body_diff = [d for d in result["diff"] if d["after_header"] == "h1.PY"][0]
    assert body_diff["before"] == "old body\n" and body_diff["after"] == BODY


def test_export_is_used_when_hook_files_are_unreadable(pbs, monkeypatch):
    pbs.add("hook", "h1", {"type": "site", "enabled": "true", "event": "queuejob", "user": "pbsadmin",
                           "alarm": "30", "order": "1", "debug": "false", "fail_action": "none"},
            body=BODY.encode(), config=CONFIG.encode())
    monkeypatch.setattr(hook_module.os, "access", lambda path, mode: False)
    code, result = run(pbs, name="h1", body=BODY, config=CONFIG)
    assert code == 0 and result["changed"] is False
    exported = [c[0][2] for c in pbs.reads() if c[0][2].startswith("export")]
    assert exported == ["export hook h1 application/x-python default",
                        "export hook h1 application/x-config default"]


def test_pbshook_config_and_enable(pbs):
    new_cf = {"post_timeout": 45, "delete_timeout": 45, "unix_socket_file": "/var/run/atomd/atomd.sock"}
    code, result = run(pbs, name="PBS_cray_atom", type="pbs", config=json.dumps(new_cf), enabled=True)
    assert code == 0, result
    assert result["commands"][0].startswith("import pbshook PBS_cray_atom application/x-config default ")
    assert result["commands"][1:] == ["list pbshook PBS_cray_atom", "set pbshook PBS_cray_atom enabled = true",
                                      "list pbshook PBS_cray_atom"]
    assert "preflight" not in result  # a built-in pbshook's body is PBS's own
    assert json.loads(pbs.hook_file("PBS_cray_atom", "CF").decode()) == new_cf
    assert result["hook"]["enabled"] == "true"
    code, result = run(pbs, name="PBS_cray_atom", type="pbs", enabled=False)
    assert code == 0, result
    assert any("Disabling a PBS hook" in w for w in result["warnings"]), result["warnings"]


@pytest.mark.parametrize("extra", [dict(body=BODY), dict(user="pbsuser"), dict(state="absent")])
def test_pbshook_refuses_what_pbs_refuses(pbs, extra):
    code, result = run(pbs, name="PBS_cray_atom", type="pbs", **extra)
    assert code == 1 and pbs.calls == []


@pytest.mark.parametrize("name", ["PBS_mine", "1bad", "bad name"])
def test_site_hook_name_rules(pbs, name):
    code, result = run(pbs, name=name, events=["queuejob"])
    assert code == 1 and pbs.calls == []


def test_missing_pbshook_fails(pbs):
    code, result = run(pbs, name="PBS_power", type="pbs", enabled=True)
    assert code == 1 and "does not exist" in result["msg"] and not pbs.writes()


def test_order_out_of_range_refused(pbs):
    code, result = run(pbs, name="h1", order=1001)
    assert code == 1 and "[1, 1000]" in result["msg"] and pbs.calls == []


def test_delete_and_idempotent_delete(pbs):
    run(pbs, **new_hook_args())
    code, result = run(pbs, name="h1", state="absent")
    assert result["changed"] is True and result["commands"] == ["delete hook h1"]
    assert ("hook", "h1") not in pbs.objects and pbs.hook_file("h1", "PY") is None
    code, result = run(pbs, name="h1", state="absent")
    assert result["changed"] is False


def test_issue_names_content_event_and_config_dict(pbs):
    code, result = run(pbs, name="h2", content=BODY, event=["queuejob"],
                       config={"b": [1, 2], "a": "x"}, enabled=True)
    assert code == 0, result
    assert pbs.hook_file("h2", "PY") == BODY.encode()
    assert pbs.hook_file("h2", "CF") == b'{\n  "a": "x",\n  "b": [\n    1,\n    2\n  ]\n}\n'
    assert pbs.objects[("hook", "h2")]["event"] == "queuejob"
    pbs.calls = []
    code, result = run(pbs, name="h2", content=BODY, event=["queuejob"],
                       config={"a": "x", "b": [1, 2]}, enabled=True)
    assert code == 0 and result["changed"] is False and not pbs.writes()


def test_src_alias_reads_a_file_on_the_host(pbs, tmp_path):
    src = tmp_path / "h3.py"
    src.write_text(BODY)
    code, result = run(pbs, name="h3", src=str(src), events=["queuejob"])
    assert code == 0 and pbs.hook_file("h3", "PY") == BODY.encode()


SCHEMA = {"type": "object", "required": ["alpha"],
          "properties": {"alpha": {"type": "integer", "minimum": 1}}}


def test_config_schema_is_checked_before_anything_is_written(pbs):
    code, result = run(pbs, name="h4", body=BODY, events=["queuejob"],
                       config={"alpha": 0}, config_schema=SCHEMA)
    assert code == 1 and "does not satisfy config_schema" in result["msg"]
    assert "alpha" in result["msg"] and not pbs.calls
    assert ("hook", "h4") not in pbs.objects
    code, result = run(pbs, name="h4", body=BODY, events=["queuejob"],
                       config={"alpha": 2}, config_schema=SCHEMA)
    assert code == 0 and json.loads(pbs.hook_file("h4", "CF")) == {"alpha": 2}


def test_an_invalid_schema_is_refused(pbs):
    code, result = run(pbs, name="h5", config={"a": 1}, config_schema={"type": "nonsense"})
    assert code == 1 and "invalid JSON Schema" in result["msg"] and not pbs.calls


def test_pbshook_freq_is_allowed_and_body_refused(pbs):
    pbs.objects[("pbshook", "PBS_cray_atom")]["event"] = "execjob_begin,exechost_periodic"
    code, result = run(pbs, name="PBS_cray_atom", type="pbs", freq=120)
    assert code == 0, result
    assert pbs.objects[("pbshook", "PBS_cray_atom")]["freq"] == "120"
    code, result = run(pbs, name="PBS_cray_atom", type="pbs", content=BODY)
    assert code == 1 and "application/x-config" in result["msg"]


def test_half_applied_batch_lists_what_was_and_was_not_applied(pbs):
    pbs.add("hook", "h6", {"type": "site", "enabled": "false", "event": "queuejob",
                           "user": "pbsadmin", "alarm": "30", "order": "1",
                           "debug": "false", "fail_action": "none"})
    # the fake qmgr refuses freq without a periodic event: the 3rd write fails
    code, result = run(pbs, name="h6", alarm=50, order=7, freq=10, enabled=False,
                       events=["queuejob", "periodic"])
    assert code == 0, result   # with a periodic event it works
    pbs.objects[("hook", "h6")]["event"] = "queuejob"
    pbs.objects[("hook", "h6")].pop("freq")
    real_set = pbs.set_hook_attr

    def refuse_order(key, attrs, attr, op, value):
        if attr == "order":
            raise QmgrFailure(32, 2, "qmgr obj=h6 svr=default: order refused\n")
        return real_set(key, attrs, attr, op, value)
    pbs.set_hook_attr = refuse_order
    pbs.calls = []
    code, result = run(pbs, name="h6", alarm=60, order=8, debug=True)
    assert code == 1
    assert result["applied"] == ["set hook h6 alarm = 60"]
    assert result["not_applied"] == ["set hook h6 order = 8", "set hook h6 debug = true"]
    assert result["changed"] is True
    assert "set hook h6 order = 8" in result["msg"]
    assert pbs.objects[("hook", "h6")]["alarm"] == "60"
    assert len(pbs.writes()) == 1


@pytest.mark.parametrize("args", [
    {"name": "h7", "alarm": "ten"}, {"name": "h7", "order": 0}, {"name": "h7", "alarm": 0},
    {"name": "h7", "user": "root"}, {"name": "h7", "events": ["queuejob; rm -rf /"]},
    {"name": "h7; touch /tmp/x"}, {"name": "h7", "freq": -1, "events": ["periodic"]},
    {"name": "h7", "config": 5},
])
def test_bad_input_creates_nothing(pbs, args):
    code, result = run(pbs, **args)
    assert code == 1 and result["msg"]
    assert ("hook", "h7") not in pbs.objects and not pbs.writes()


# --- preflight: the body is compiled (and loaded where pbs_python can) before anything ----

SYNTAX_ERROR_BODY = "import pbs\ne = pbs.event(\ne.accept()\n"
NAME_ERROR_BODY = "import pbs\nlimit = undefined_setting\npbs.event().accept()\n"
ENABLED_HOOK = {"type": "site", "enabled": "true", "event": "queuejob", "user": "pbsadmin",
                "alarm": "30", "order": "1", "debug": "false", "fail_action": "none"}

# A pbs_python for unit tests: ``--hook ... <script>`` runs the script with a minimal
# ``pbs`` module (event().accept()/reject() end the hook with SystemExit, as PBS's do),
# anything else goes to this Python, as the real one hands its arguments to its Python.
FAKE_PBS_PYTHON = '''#!%s
import os, sys, types
args = sys.argv[1:]
if args[:1] != ["--hook"]:
    os.execv(sys.executable, [sys.executable] + args)
with open(os.path.join(os.path.dirname(args[args.index("-i") + 1]), "argv"), "w") as f:
    f.write(" ".join(args))
pbs = types.ModuleType("pbs")
class Event(object):
    type = 1
    def accept(self):
        raise SystemExit(0)
    reject = accept
pbs.event = Event
pbs.hook_config_filename = os.environ.get("PBS_HOOK_CONFIG_FILE")
sys.modules["pbs"] = pbs
exec(compile(open(args[-1]).read(), args[-1], "exec"), {"__name__": "builtins"})
'''
# A plain Python behind a pbs_python wrapper (as the mock's is): no hook mode.
PLAIN_PBS_PYTHON = '''#!/bin/sh
exec %s "$@"
'''


def install_pbs_python(pbs, text):
    os.makedirs(os.path.dirname(pbs.qmgr_path), exist_ok=True)
    path = os.path.join(os.path.dirname(pbs.qmgr_path), "pbs_python")
    with open(path, "w") as handle:
        handle.write(text % sys.executable if "%s" in text else text)
    os.chmod(path, 0o755)
    return path


def test_syntax_error_is_refused_before_anything_with_file_line_and_message(pbs):
    code, result = run(pbs, **new_hook_args(body=SYNTAX_ERROR_BODY))
    assert code == 1, result
    assert "h1.PY line 2" in result["msg"] and "was never closed" in result["msg"]
    assert "Nothing was changed" in result["msg"]
    assert not pbs.writes() and ("hook", "h1") not in pbs.objects


def test_syntax_error_leaves_a_live_hook_its_body_and_enabled_state(pbs):
    pbs.add("hook", "h1", dict(ENABLED_HOOK), body=BODY.encode())
    code, result = run(pbs, name="h1", body=SYNTAX_ERROR_BODY, enabled=True)
    assert code == 1 and "line 2" in result["msg"]
    assert not pbs.writes() and pbs.hook_file("h1", "PY") == BODY.encode()
    assert pbs.objects[("hook", "h1")]["enabled"] == "true"


def test_body_src_is_named_in_the_syntax_error(pbs, tmp_path):
    src = tmp_path / "site_hook.py"
    src.write_text("def f(:\n    pass\n")
    code, result = run(pbs, name="h1", body_src=str(src), events=["queuejob"])
    assert code == 1 and "%s line 1" % src in result["msg"] and not pbs.writes()


def test_compile_uses_pbs_python_where_it_exists(pbs):
    path = install_pbs_python(pbs, PLAIN_PBS_PYTHON)
    code, result = run(pbs, **new_hook_args(body=SYNTAX_ERROR_BODY))
    assert code == 1 and path in result["msg"]
    assert pbs.interpreter_calls[0][:2] == [path, "-S"]


def test_unchanged_body_is_not_preflighted(pbs):
    run(pbs, **new_hook_args())
    pbs.interpreter_calls[:] = []
    code, result = run(pbs, **new_hook_args())
    assert code == 0 and result["changed"] is False and "preflight" not in result
    assert pbs.interpreter_calls == []


def test_import_time_error_is_refused_where_pbs_python_loads_hooks(pbs):
    install_pbs_python(pbs, FAKE_PBS_PYTHON)
    pbs.add("hook", "h1", dict(ENABLED_HOOK), body=BODY.encode())
    code, result = run(pbs, name="h1", body=NAME_ERROR_BODY, events=["queuejob"])
    assert code == 1, result
    assert "fails when pbs_python loads it (queuejob event" in result["msg"]
    assert "line 2" in result["msg"] and "NameError: name 'undefined_setting'" in result["msg"]
    assert not pbs.writes() and pbs.hook_file("h1", "PY") == BODY.encode()


def test_a_good_body_is_loaded_with_its_event_and_new_config_then_goes_live(pbs, tmp_path):
    """The body is loaded (module level) with the new config, its event code runs once at
    its execjob_launch event (not at the load, not for periodic, which pbs_python's hook
    mode cannot run) and does not raise; then the hook goes live."""
    install_pbs_python(pbs, FAKE_PBS_PYTHON)
    marker = tmp_path / "event_code_ran"
    body = ("import json, pbs\n"
            "settings = json.load(open(pbs.hook_config_filename))\n"
            "assert settings == {'alpha': 1}, settings\n"
            "if __name__ == 'builtins':\n"
            "    with open(%r, 'a') as handle:\n"
            "        handle.write('event code ran with %%s\\n' %% json.dumps(settings))\n"
            "    pbs.event().accept()\n" % str(marker))
    code, result = run(pbs, **new_hook_args(body=body, config={"alpha": 1},
                                            events=["periodic", "execjob_launch"]))
    assert code == 0, result
    assert result["preflight"]["loaded"] is True
    assert result["preflight"]["load_event"] == "execjob_launch"  # periodic has no input form
    assert result["preflight"]["events"]["execjob_launch"] == {"ran": True, "accepted": True,
                                                               "reject_message": ""}
    assert result["preflight"]["events"]["periodic"]["ran"] is False
    assert marker.read_text() == 'event code ran with {"alpha": 1}\n'   # once, with the new config
    assert pbs.objects[("hook", "h1")]["enabled"] == "true"
    code, result = run(pbs, name="h1", config={"alpha": 2})
    assert code == 1 and "AssertionError: {'alpha': 2}" in result["msg"]  # body checked with it
    assert json.loads(pbs.hook_file("h1", "CF")) == {"alpha": 1}
    assert marker.read_text() == 'event code ran with {"alpha": 1}\n'   # refused at the load


def test_pbs_python_without_hook_mode_compiles_only_and_says_so(pbs):
    install_pbs_python(pbs, PLAIN_PBS_PYTHON)
    code, result = run(pbs, **new_hook_args(body=NAME_ERROR_BODY))
    assert code == 0, result
    assert result["preflight"]["compiled"] is True and result["preflight"]["loaded"] is False
    assert "no hook mode" in result["preflight"]["not_loaded_because"]


def test_a_pbs_python_that_cannot_run_the_load_fails_the_task_unchanged(pbs):
    install_pbs_python(pbs, '#!/bin/sh\ncase "$1" in --hook) echo "pbs_python: Unable to open '
                            'logfile" >&2; exit 1;; esac\nexec %s "$@"\n')
    code, result = run(pbs, **new_hook_args())
    assert code == 1 and "Unable to open logfile" in result["msg"] and result["rc"] == 1
    assert not pbs.writes() and ("hook", "h1") not in pbs.objects


def test_hook_is_left_disabled_when_the_server_does_not_hold_the_imported_body(pbs, monkeypatch):
    real_import = pbs.do_import

    def truncating_import(words):
        out = real_import(words)
        path = os.path.join(pbs.hooks_dir, "h1.PY")
        if os.path.exists(path):
            with open(path, "wb") as handle:
                handle.write(b"import pbs\n")
        return out
    monkeypatch.setattr(pbs, "do_import", truncating_import)
    code, result = run(pbs, **new_hook_args())
    assert code == 1 and "left disabled" in result["msg"] and "body" in result["msg"]
    assert pbs.objects[("hook", "h1")]["enabled"] == "false"
    assert len(pbs.writes()) == 1
