"""The mock's ``pbs_python --hook -i IN -o OUT -l LOG SCRIPT`` (mockpbs.hookrun.pbs_python_hook_mode)
against OpenPBS's (src/tools/pbs_python.c).

Each case runs a script on an input file (the synthetic events of
plugins/module_utils/hooks/hook_preflight.py, or a hand-written one) and checks the exit status,
the ``-o`` output and the log lines (without their timestamps) the mock writes. Where a
23.06.06 build exists (marker ``real_pbs``), the same case is run by the real pbs_python
and the two must agree byte for byte (exit status, output, log lines). The preflight
through this pbs_python: tests/unit/plugins/module_utils/test_hook_preflight_mock_pbs_python.py.
"""
import os
import subprocess
import sys
from pathlib import Path

import importlib.util

import pytest

REPO = Path(__file__).resolve().parents[3]
# The preflight's input builder, a standard-library module (read by path: the mock's tests
# do not import the collection).
_SPEC = importlib.util.spec_from_file_location(
    "hpc_pbs_hook_preflight", str(REPO / "plugins" / "module_utils" / "hooks" / "hook_preflight.py"))
hook_preflight = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(hook_preflight)
MOCK_PARENT = REPO / "tests" / "mockpbs"
sys.path.insert(0, str(REPO / "tests" / "openpbs"))
import pbs_python as real_pbs_python  # noqa: E402  pylint: disable=wrong-import-position


def event_input(event, alarm=30):
    return hook_preflight.event_input_text("hk", event, alarm)


PROBE = '''import pbs
e = pbs.event()
out = ["name=%s" % __name__, "type=%s" % e.type]
for attr in ("job", "vnode_list", "job_list"):
    try:
        value = getattr(e, attr)
        if attr == "vnode_list":
            value = sorted((k, str(v.resources_available["ncpus"])) for k, v in value.items())
        elif attr == "job":
            value = value.id
        out.append("%s=%s" % (attr, value))
    except pbs.EventIncompatibleError:
        out.append("%s=none" % attr)
pbs.logmsg(pbs.LOG_DEBUG, " ".join(out))
'''
RAISES = 'import pbs\npbs.event().job.Resource_List["select"].nonexistent()\n'
LAUNCH_EDIT = ('import pbs\ne = pbs.event()\ne.env["NEWV"] = "a,b"\ne.progname = "/bin/false"\n'
               'e.argv.append("x")\ne.reject("bye")\n')
LAUNCH_ENV = ('HOME=/root,PBS_JOBID=0.hpc-pbs-preflight,PBS_JOBNAME=preflight,PBS_NODEFILE=/dev/null,'
              'PBS_ENVIRONMENT=PBS_BATCH,PBS_QUEUE=workq')
MODULES = ('import sys\nimport pbs\n'
           'pbs.event().reject(" ".join(m for m in ("json", "re", "collections", "subprocess") if m in sys.modules)'
           ' or "none of them")\n')
ACCEPTED = "pbs.event().accept=True\npbs.event().reject=False\n"
REJECTED = "pbs.event().reject=True\npbs.event().accept=False\n"
ERR = "0001;pbs_python;Svr;pbs_python;PBS server internal error (15011) in "

# (id, script, input text, exit status, -o text (None: no file), log lines without the time)
CASES = [
    ("accept", "import pbs\npbs.event().accept()\n", event_input("queuejob"), 0, ACCEPTED, []),
    ("end-of-script", "x = 1\n", event_input("execjob_end"), 0, ACCEPTED, []),
    ("reject", 'import pbs\npbs.event().reject("no way")\n', event_input("execjob_begin"), 0,
     REJECTED + "pbs.event().reject_msg=no way\n", []),
    ("sys-exit", "import sys\nsys.exit(3)\n", event_input("queuejob"), 0, ACCEPTED, []),
    # pbs_python starts a hook with no json, re or collections imported (hookrun.PBS_PYTHON_MODULES).
    ("modules", MODULES, event_input("queuejob"), 0, REJECTED + "pbs.event().reject_msg=none of them\n", []),
    ("raises", RAISES, event_input("queuejob"), 254, REJECTED, [
        ERR + "Error evaluating Python script, <class 'AttributeError'>",
        ERR + "Error evaluating Python script, 'select' object has no attribute 'nonexistent'",
        "0100;pbs_python;Hook;hk;queuejob hook 'hk' encountered an exception, request rejected"]),
    ("alarm", 'import pbs\npbs.logmsg(pbs.LOG_DEBUG, "start")\nwhile True:\n    pass\n',
     event_input("queuejob", alarm=1), 253, REJECTED, [
         "0006;pbs_python;Hook;pbs_python;start",
         "0100;pbs_python;Hook;catch_hook_alarm;alarm call received, interrupting hook execution.",
         ERR + "Python script received a KeyboardInterrupt, <class 'KeyboardInterrupt'>",
         ERR + "Python script received a KeyboardInterrupt, <could not figure out the exception value>",
         "0100;pbs_python;Hook;hk;alarm call while running queuejob hook 'hk', request rejected"]),
    ("launch-edit", LAUNCH_EDIT, event_input("execjob_launch"), 0,
     REJECTED + "pbs.event().reject_msg=bye\npbs.event().progname=/bin/false\n"
     "pbs.event().argv[0]=/bin/true\npbs.event().argv[1]=x\n"
     'pbs.event().env="""%s,NEWV=a,b"""\n' % LAUNCH_ENV,
     ["0100;pbs_python;Hook;hk;progname orig: /bin/true", "0100;pbs_python;Hook;hk;progname new: /bin/false",
      "0100;pbs_python;Hook;hk;argv orig: /bin/true", "0100;pbs_python;Hook;hk;argv new: /bin/true x",
      "0100;pbs_python;Hook;hk;env orig: " + LAUNCH_ENV, "0100;pbs_python;Hook;hk;env new: %s,NEWV=a,b" % LAUNCH_ENV]),
    ("launch-accept", "pass\n", event_input("execjob_launch"), 0,
     ACCEPTED + "pbs.event().progname=/bin/true\npbs.event().argv[0]=/bin/true\n"
     'pbs.event().env="""%s"""\n' % LAUNCH_ENV, []),
    ("probe-queuejob", PROBE, event_input("queuejob"), 0, ACCEPTED,
     ["0006;pbs_python;Hook;pbs_python;name=builtins type=1 job= vnode_list=none job_list=none"]),
    ("probe-startup", PROBE, event_input("exechost_startup"), 0, ACCEPTED,
     ["0006;pbs_python;Hook;pbs_python;name=builtins type=8192 job=none "
      "vnode_list=[('hpc-pbs-preflight-1', '1')] job_list=none"]),
    ("probe-periodic-host", PROBE, event_input("exechost_periodic"), 0, ACCEPTED,
     ["0006;pbs_python;Hook;pbs_python;name=builtins type=4096 job=none "
      "vnode_list=[('hpc-pbs-preflight-1', '1')] job_list={}"]),
    ("probe-begin", PROBE, event_input("execjob_begin"), 0, ACCEPTED,
     ["0006;pbs_python;Hook;pbs_python;name=builtins type=64 job=0.hpc-pbs-preflight "
      "vnode_list=[('hpc-pbs-preflight-1', 'None'), ('hpc-pbs-preflight-2', 'None'), "
      "('hpc-pbs-preflight-3', 'None')] job_list=none"]),
    ("periodic", "import pbs\npbs.event().reject('ran')\n", hook_preflight.load_input_text("hk", "periodic", 30),
     1, None, ["0080;pbs_python;Hook;hk;Unexpected event"]),
    ("unknown-type", "pass\n", "pbs.event().type=nosuch\npbs.event().hook_name=hk\n", 1, None,
     ["0080;pbs_python;Hook;hk;Unexpected event"]),
    ("unknown-event-attribute", "pass\n", "pbs.event().type=queuejob\npbs.event().bogus=1\n", 2, None, []),
]


def run(command, script, input_text, tmp_path, env):
    (tmp_path / "hook.py").write_text(script)
    (tmp_path / "hook.in").write_text(input_text)
    out, log = tmp_path / "hook.out", tmp_path / "hook.log"
    proc = subprocess.run(command + ["--hook", "-i", str(tmp_path / "hook.in"), "-o", str(out), "-l", str(log),
                                     str(tmp_path / "hook.py")],
                          env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=60, check=False)
    lines = [line.split(";", 1)[1] for line in log.read_text().splitlines()] if log.exists() else []
    return proc.returncode, (out.read_text() if out.exists() else None), lines, proc.stderr


def mock_env():
    env = {k: v for k, v in os.environ.items() if k not in ("PBS_HOOK_CONFIG_FILE",)}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(MOCK_PARENT), env.get("PYTHONPATH")) if p)
    return env


def run_mock(script, input_text, tmp_path):
    return run([sys.executable, "-m", "mockpbs", "pbs_python"], script, input_text, tmp_path, mock_env())


@pytest.mark.parametrize("script, input_text, status, output, log",
                         [pytest.param(*case[1:], id=case[0]) for case in CASES])
def test_the_mock_hook_mode(tmp_path, script, input_text, status, output, log):
    rc, got_output, got_log, stderr = run_mock(script, input_text, tmp_path)
    assert (rc, got_output, got_log) == (status, output, log), stderr


def test_an_unknown_event_attribute_is_named_on_stderr(tmp_path):
    rc, output, _log, stderr = run_mock("pass\n", "pbs.event().type=queuejob\npbs.event().bogus=1\n", tmp_path)
    assert (rc, output, stderr) == (2, None, "pbs_python: unknown event attribute 'bogus'\n")


def test_no_input_file_is_a_usage_error(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "mockpbs", "pbs_python", "--hook", "-o", "x"], env=mock_env(),
                          cwd=str(tmp_path), capture_output=True, text=True, check=False)
    assert (proc.returncode, proc.stderr) == (2, "pbs_python: No -i <input_file> given\n")


def test_the_hook_config_file_is_the_scripts(tmp_path):
    (tmp_path / "hook.CF").write_text("cfg")
    env = dict(mock_env(), PBS_HOOK_CONFIG_FILE=str(tmp_path / "hook.CF"))
    script = "import pbs\npbs.event().reject(open(pbs.hook_config_filename).read())\n"
    rc, output, _log, _err = run([sys.executable, "-m", "mockpbs", "pbs_python"], script, event_input("queuejob"),
                                 tmp_path, env)
    assert (rc, output) == (0, REJECTED + "pbs.event().reject_msg=cfg\n")


def real_23():
    root = real_pbs_python.install_root()
    if root is None:
        return pytest.param(None, marks=[pytest.mark.real_pbs, pytest.mark.skip(reason="no OpenPBS 23.06.06 build")])
    return pytest.param(root / "opt" / "pbs", marks=pytest.mark.real_pbs)


@pytest.mark.parametrize("pbs_exec", [real_23()], ids=["23.06.06"])
@pytest.mark.parametrize("script, input_text", [pytest.param(c[1], c[2], id=c[0]) for c in CASES])
def test_the_real_pbs_python_agrees(tmp_path, pbs_exec, script, input_text):
    work = tmp_path / "real"
    work.mkdir()
    env = real_pbs_python.hook_environment(pbs_exec, work)
    real = run([str(pbs_exec / "bin" / "pbs_python")], script, input_text, work, env)
    mock_dir = tmp_path / "mock"
    mock_dir.mkdir()
    mock = run_mock(script, input_text, mock_dir)
    assert mock[:3] == real[:3]


def test_the_alarm_interrupts_the_script_when_it_is_due(tmp_path):
    """alarm=1: KeyboardInterrupt after about a second (not at the end of a longer wait)."""
    import time
    started = time.monotonic()
    rc, output, _log, _err = run_mock("import time\ntime.sleep(20)\n", event_input("execjob_begin", alarm=1), tmp_path)
    assert (rc, output) == (253, REJECTED)
    assert time.monotonic() - started < 3.5
