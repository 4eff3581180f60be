"""mockpbs.server.hook_interpreter: server hook events run in one long-lived interpreter,
as pbs_server runs them: the body compiled once per import, a fresh namespace per event,
``sys.modules`` kept until the interpreter restarts after ``python_restart_max_hooks``
runs (no sooner than ``python_restart_min_interval``), alarms that interrupt the hook but
keep the interpreter."""
import os
import sys

import pytest

from mockpbs import pbslog
from mockpbs.server import hook_interpreter
from mockpbs.server.hook_interpreter import HookInterpreter

# the hook writer of the hook runner's own tests (their directory, not on sys.path under
# --import-mode=importlib)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_hookrun import make_hook  # noqa: E402

JOB = {"id": "1.server", "Job_Name": "STDIN", "Resource_List": {"select": "ncpus=1"}}
CONTEXT = {"job": JOB, "hostname": "server", "server": "server", "daemon": "server",
           "requestor": "pbsuser", "requestor_host": "server"}

# The hook counts its runs in a module of sys.modules and says how many there were, and
# whether its compiled code is the one of the previous run, through the job's comment.
COUNTING_HOOK = """\
import sys
import pbs
state = sys.modules.get("_counting_hook_state")
if state is None:
    state = type(sys)("_counting_hook_state")
    state.runs, state.code = 0, None
    sys.modules["_counting_hook_state"] = state
state.runs += 1
same_code = state.code is sys._getframe().f_code
state.code = sys._getframe().f_code
fresh = "leftover" not in globals()
leftover = True
pbs.event().job.comment = "runs=%d same_code=%s fresh_namespace=%s config=%s" % (
    state.runs, same_code, fresh, pbs.hook_config_filename)
"""


class Log:
    def __init__(self):
        self.records = []

    def record(self, event_class, objtype, objname, message):
        self.records.append((event_class, objtype, objname, message))


class Clock:
    def __init__(self, now=1_000_000.0):
        self.now = now

    def __call__(self):
        return self.now


@pytest.fixture
def interpreter(tmp_path):
    made = []

    def make(**kwargs):
        kwargs.setdefault("log", Log())
        item = HookInterpreter(str(tmp_path), **kwargs)
        made.append(item)
        return item
    yield make
    for item in made:
        item.close()


def counting_hook(tmp_path):
    return make_hook(tmp_path, COUNTING_HOOK, name="counting")


def comment(result):
    assert result["accepted"], result
    return result["job"]["comment"]


def test_sys_modules_outlive_an_event_and_each_event_gets_a_fresh_namespace(tmp_path, interpreter):
    server = interpreter()
    hook = counting_hook(tmp_path)
    first = comment(server.run(hook, "queuejob", CONTEXT, script_version=1))
    second = comment(server.run(hook, "queuejob", CONTEXT, script_version=1))
    assert first.startswith("runs=1 same_code=False fresh_namespace=True")
    assert second.startswith("runs=2 same_code=True fresh_namespace=True")
    assert server.starts == 1


# Which of json, re and collections sys.modules holds as the event starts; then imports json.
MODULES_HOOK = """\
import sys
import pbs
pbs.event().job.comment = " ".join(m for m in ("json", "re", "collections") if m in sys.modules) or "none"
import json
"""


def test_a_new_interpreter_starts_with_pbs_pythons_modules_and_keeps_what_hooks_import(tmp_path, interpreter):
    server = interpreter()
    hook = make_hook(tmp_path, MODULES_HOOK, name="modules")
    assert comment(server.run(hook, "queuejob", CONTEXT, script_version=1)) == "none"
    assert comment(server.run(hook, "queuejob", CONTEXT, script_version=1)) == "json re collections"
    assert server.starts == 1


def test_a_script_imported_again_is_compiled_again_and_the_interpreter_stays(tmp_path, interpreter):
    server = interpreter()
    hook = counting_hook(tmp_path)
    server.run(hook, "queuejob", CONTEXT, script_version=1)
    again = comment(server.run(hook, "queuejob", CONTEXT, script_version=2))
    assert again.startswith("runs=2 same_code=False")


def test_a_changed_body_file_is_compiled_again_without_a_new_import(tmp_path, interpreter):
    server = interpreter()
    hook = counting_hook(tmp_path)
    server.run(hook, "queuejob", CONTEXT, script_version=1)
    make_hook(tmp_path, COUNTING_HOOK + "pbs.event().job.Job_Name = 'changed'\n", name="counting")
    result = server.run(hook, "queuejob", CONTEXT, script_version=1)
    assert comment(result).startswith("runs=2 same_code=False")
    assert result["job"]["Job_Name"] == "changed"


def test_each_event_sees_its_own_hooks_config_file(tmp_path, interpreter):
    server = interpreter()
    with_config = make_hook(tmp_path, COUNTING_HOOK, name="a", config="{}")
    without = make_hook(tmp_path, COUNTING_HOOK, name="b")
    assert comment(server.run(with_config, "queuejob", CONTEXT)).endswith("config=%s" % with_config["config"])
    assert comment(server.run(without, "queuejob", CONTEXT)).endswith("config=None")
    assert comment(server.run(with_config, "queuejob", CONTEXT)).endswith("config=%s" % with_config["config"])


def test_the_interpreter_restarts_after_max_hooks_runs_once_min_interval_passed(tmp_path, interpreter):
    clock = Clock()
    log = Log()
    server = interpreter(clock=clock, log=log)
    hook = counting_hook(tmp_path)
    attributes = {"python_restart_max_hooks": "3", "python_restart_min_interval": "00:01:00"}
    runs = [comment(server.run(hook, "queuejob", CONTEXT, server_attributes=attributes)) for _count in range(5)]
    # the third run's set-up restarts (the first restart: none before), then three more
    assert [text.split()[0] for text in runs] == ["runs=1", "runs=2", "runs=1", "runs=2", "runs=3"]
    assert server.starts == 2
    restarts = [r for r in log.records if r[3] == hook_interpreter.RESTART_MESSAGE]
    assert restarts == [(pbslog.PBSEVENT_DEBUG2, pbslog.OBJ_HOOK, "_pbs_python_event_set",
                         hook_interpreter.RESTART_MESSAGE)]
    assert any(r[3].startswith("Current memory usage: VmSize=") for r in log.records)
    # the sixth run reaches max_hooks again, but only 0 s after the last restart: no restart
    assert comment(server.run(hook, "queuejob", CONTEXT, server_attributes=attributes)).startswith("runs=4")
    clock.now += 60
    assert comment(server.run(hook, "queuejob", CONTEXT, server_attributes=attributes)).startswith("runs=1")
    assert server.starts == 3


def test_restart_settings_read_the_server_attributes_with_pbs_defaults():
    assert hook_interpreter.restart_settings({}) == (100, 30)
    assert hook_interpreter.restart_settings({"python_restart_max_hooks": "5",
                                              "python_restart_min_interval": "90"}) == (5, 90)
    assert hook_interpreter.restart_settings({"python_restart_min_interval": "1:02:03"}) == (100, 3723)
    assert hook_interpreter.restart_settings({"python_restart_max_hooks": "many",
                                              "python_restart_min_interval": "soon"}) == (100, 30)


def run_between_counting_events(tmp_path, server, body, **hook_options):
    """The counting hook, then a hook of ``body``, then the counting hook again; returns the
    second event's result and the third one's comment."""
    counting = counting_hook(tmp_path)
    other = make_hook(tmp_path, body, name="other", **hook_options)
    server.run(counting, "queuejob", CONTEXT)
    result = server.run(other, "queuejob", CONTEXT)
    return result, comment(server.run(counting, "queuejob", CONTEXT))


def test_an_alarm_interrupts_the_hook_and_the_interpreter_goes_on(tmp_path, interpreter):
    server = interpreter()
    result, after = run_between_counting_events(tmp_path, server, "import time\ntime.sleep(30)\n", alarm=1)
    assert result["alarm"] is True and result["accepted"] is False
    assert after.startswith("runs=2")
    assert server.starts == 1


def test_a_hook_that_ends_the_interpreter_is_rejected_and_the_next_event_gets_a_new_one(tmp_path, interpreter):
    server = interpreter()
    result, after = run_between_counting_events(tmp_path, server, "import os\nos._exit(3)\n")
    assert result["accepted"] is False and "exited (3)" in result["exception"]
    assert after.startswith("runs=1")
    assert server.starts == 2


def test_a_rejecting_or_raising_hook_keeps_the_interpreter(tmp_path, interpreter):
    server = interpreter()
    counting = counting_hook(tmp_path)
    rejecting = make_hook(tmp_path, "import pbs\npbs.event().reject('no')\n", name="rejecting")
    raising = make_hook(tmp_path, "raise ValueError('broken')\n", name="raising")
    server.run(counting, "queuejob", CONTEXT)
    assert server.run(rejecting, "queuejob", CONTEXT)["reject_msg"] == "no"
    assert "ValueError: broken" in server.run(raising, "queuejob", CONTEXT)["exception"]
    assert comment(server.run(counting, "queuejob", CONTEXT)).startswith("runs=2")


def test_close_ends_the_child(tmp_path, interpreter):
    server = interpreter()
    server.run(counting_hook(tmp_path), "queuejob", CONTEXT)
    process = server._process  # pylint: disable=protected-access
    server.close()
    assert process.poll() is not None
    assert not os.path.exists("/proc/%d" % process.pid) or process.returncode is not None
