"""The reliable_job_startup hook keeps what it can from one event to the next where its
interpreter outlives an event (pbs_server runs every queuejob event of a hook in one
long-lived interpreter, compiled once, the module body each time in a fresh namespace): in a
module object of ``sys.modules``, for the hook's compiled code, its ConfigError class and the
last config that passed its checks, with the path and text it was read from. A config file
is checked again when its path or text changed or the hook's code did; one that fails its
checks is never kept. pbs_python, which a mom starts for each event, starts with nothing."""
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
HOOK_BODY = REPO / "files" / "hooks" / "reliable_job_startup.py"
STATE_MODULE = "_reliable_job_startup_state"


@pytest.fixture
def config_file(tmp_path):
    path = tmp_path / "reliable_job_startup.CF"

    def write(config):
        path.write_text(json.dumps(config))
        return path

    return write


@pytest.fixture
def counted(load_hook, monkeypatch):
    """``counted(body_path, config_path)``: the hook loaded with ``config_path`` as its
    config file and the configs its whole-config check was run on, in a list."""
    monkeypatch.delitem(sys.modules, STATE_MODULE, raising=False)

    def load(body_path, config_path):
        hook = load_hook(body_path, hook_config_filename=str(config_path))
        checked = []
        real = hook.schema_problems

        def schema_problems(value, schema, root=None, path=""):
            if root is None:
                checked.append(value)
            return real(value, schema, root, path)

        monkeypatch.setattr(hook, "schema_problems", schema_problems)
        return hook, checked

    return load


def test_the_state_module_name_is_the_hooks(load_hook):
    assert load_hook(HOOK_BODY).HOOK_STATE_MODULE == STATE_MODULE


def test_module_bodies_run_from_one_compiled_hook_share_config_error_and_the_checked_config(
        load_hook, monkeypatch, config_file):
    # As pbs_server runs a hook: compiled once, its module body run for each event in a
    # fresh namespace.
    monkeypatch.delitem(sys.modules, STATE_MODULE, raising=False)
    pbs = load_hook(HOOK_BODY, hook_config_filename=str(config_file({"increment": 2}))).pbs
    code = compile(HOOK_BODY.read_text(), "<embedded code object>", "exec")
    first, second = {"__name__": "hook"}, {"__name__": "hook"}
    exec(code, first)  # pylint: disable=exec-used
    exec(code, second)  # pylint: disable=exec-used
    assert first["ConfigError"] is second["ConfigError"]
    assert issubclass(first["ConfigError"], ValueError)
    first["load_config"]()
    assert sys.modules[STATE_MODULE].checked[0] == pbs.hook_config_filename
    second["schema_problems"] = None  # checking again would fail
    assert second["load_config"]()[0]["increment"] == 2


def test_a_config_file_is_checked_once_until_its_text_changes(counted, config_file):
    path = config_file({"increment": 2})
    hook, checked = counted(HOOK_BODY, path)
    first = hook.load_config()
    again = hook.load_config()
    assert first == again == (dict(hook.DEFAULT_CONFIG, increment=2), str(path))
    assert checked == [{"increment": 2}]

    config_file({"increment": 3})
    assert hook.load_config()[0]["increment"] == 3
    assert checked == [{"increment": 2}, {"increment": 3}]


def test_a_config_that_fails_its_checks_is_never_kept(counted, config_file):
    path = config_file({"increment": 2})
    hook, checked = counted(HOOK_BODY, path)
    hook.load_config()
    config_file({"increment": 0})
    for _attempt in range(2):
        with pytest.raises(hook.ConfigError, match="increment must be"):
            hook.load_config()
    assert checked == [{"increment": 2}, {"increment": 0}, {"increment": 0}]
    # the config kept before the failures, whose text this is again
    config_file({"increment": 2})
    assert hook.load_config()[0]["increment"] == 2
    assert len(checked) == 3


def test_each_config_file_path_is_checked_on_its_own(counted, config_file, tmp_path):
    path = config_file({"increment": 2})
    other = tmp_path / "other.CF"
    other.write_text(path.read_text())
    hook, checked = counted(HOOK_BODY, path)
    hook.load_config()
    hook.pbs.hook_config_filename = str(other)
    assert hook.load_config() == (dict(hook.DEFAULT_CONFIG, increment=2), str(other))
    assert len(checked) == 2


def test_the_kept_config_is_handed_out_as_a_copy(counted, config_file):
    hook, checked = counted(HOOK_BODY, config_file({"increment": 2}))
    hook.load_config()[0]["increment"] = 99
    hook.load_config()[0]["increment"] = 98
    assert hook.load_config()[0]["increment"] == 2
    assert len(checked) == 1


def test_another_hook_code_checks_the_same_config_again(counted, config_file, tmp_path):
    path = config_file({"increment": 2})
    hook, checked = counted(HOOK_BODY, path)
    hook.load_config()
    changed_body = tmp_path / "reliable_job_startup.py"
    changed_body.write_text(HOOK_BODY.read_text().replace(
        'DEFAULT_HOOK_NAME = "reliable_job_startup"', 'DEFAULT_HOOK_NAME = "reliable_job_startup"\n'))
    changed, checked_by_changed = counted(changed_body, path)
    changed.load_config()
    assert len(checked) == 1 and len(checked_by_changed) == 1
