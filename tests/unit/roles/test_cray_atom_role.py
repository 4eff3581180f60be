"""Input validation and the $sister_join_job_alarm report of the hpc.pbs.cray_atom role,
through real ansible-playbook runs.

A bad input must stop the play before anything changes: the managed host (localhost) has
a fake PBS whose ``qmgr`` and ``pbs_python`` only record that they were called, and no
call may happen. Seed: shasta-pbs-cray-atom-hook.txt ("Hook Configuration File")."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
PLAYBOOK = REPO / "playbooks" / "cray_atom.yml"
VENV_BIN = Path(sys.executable).parent


@pytest.fixture
def fake_pbs(tmp_path):
    """pbs.conf + PBS_EXEC/bin/{qmgr,pbs_python} that append their argv to calls.log."""
    exec_dir = tmp_path / "exec" / "bin"
    exec_dir.mkdir(parents=True)
    calls = tmp_path / "calls.log"
    for name in ("qmgr", "pbs_python"):
        script = exec_dir / name
        script.write_text("#!/bin/sh\necho \"%s $*\" >> %s\nexit 1\n" % (name, calls))
        script.chmod(0o755)
    home = tmp_path / "home"
    (home / "mom_priv").mkdir(parents=True)
    (home / "server_priv").mkdir(parents=True)
    conf = tmp_path / "pbs.conf"
    conf.write_text("PBS_EXEC=%s\nPBS_HOME=%s\nPBS_SERVER=localhost\nPBS_START_SERVER=1\nPBS_START_MOM=1\n"
                    % (tmp_path / "exec", home))
    return {"conf": conf, "calls": calls, "dir": tmp_path}


def collections_root(tmp_path):
    root = tmp_path / "collections" / "ansible_collections" / "hpc"
    root.mkdir(parents=True)
    (root / "pbs").symlink_to(REPO)
    return tmp_path / "collections"


def run_playbook(fake, extra_vars, groups=("pbs_server", "pbs_mom"), check=False):
    tmp = fake["dir"]
    inventory = tmp / "inventory.ini"
    lines = []
    for group in groups:
        lines += ["[%s]" % group, "localhost ansible_connection=local ansible_python_interpreter=%s" % sys.executable]
    inventory.write_text("\n".join(lines) + "\n")
    variables = dict(extra_vars, cray_atom_pbs_conf_file=str(fake["conf"]))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(collections_root(tmp)), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCAL_TEMP=str(tmp / "ansible-local"), ANSIBLE_REMOTE_TEMP=str(tmp / "ansible-remote"),
               PBS_CONF_FILE=str(fake["conf"]))
    argv = [str(VENV_BIN / "ansible-playbook"), "-i", str(inventory), str(PLAYBOOK), "-e", json.dumps(variables)]
    if check:
        argv.append("--check")
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300, check=False)


def assert_nothing_ran(fake):
    assert not fake["calls"].exists(), fake["calls"].read_text()


@pytest.mark.parametrize("extra_vars,message", [
    ({"cray_atom_config": {"post_timeout": 0}}, "post_timeout: 0 is less than or equal to the minimum of 0"),
    ({"cray_atom_config": {"delete_timeout": "30"}}, "delete_timeout: '30' is not of type 'number'"),
    ({"cray_atom_config": {"unix_socket_file": "run/atomd.sock"}}, "unix_socket_file: 'run/atomd.sock' does not match"),
    ({"cray_atom_config": {"version_uri": "/rm/v2"}}, "('version_uri' was unexpected)"),
    ({"cray_atom_config": {"require_socket": "yes"}}, "require_socket: 'yes' is not of type 'boolean'"),
    ({"cray_atom_hook_name": "PBS_my_atom"}, "starts with PBS, which is reserved"),
    ({"cray_atom_hook_order": 0}, "cray_atom_hook_order must be 1-1000, not 0"),
    ({"cray_atom_hook_alarm": 0}, "cray_atom_hook_alarm must be at least 1 second"),
    ({"cray_atom_hook_source": "both"}, "cray_atom_hook_source"),
    ({"cray_atom_install_method": "pip", "cray_atom_pip_packages": []}, "cray_atom_pip_packages may not be empty"),
    ({"cray_atom_hook_body_src": "/nonexistent/own_atom.py"},
     'cray_atom_hook_body_src "/nonexistent/own_atom.py": no such file on the controller'),
    ({"cray_atom_hook_body_src": "~/nonexistent/own_atom.py"},
     'cray_atom_hook_body_src "~/nonexistent/own_atom.py": no such file on the controller (%s/nonexistent/own_atom.py)'
     % os.path.realpath(os.path.expanduser("~"))),
    ({"cray_atom_hook_source": "builtin", "cray_atom_hook_body_src": str(PLAYBOOK)},
     "is set but cray_atom_hook_source is builtin"),
])
@pytest.mark.parametrize("check", [False, True], ids=["apply", "check"])
def test_bad_input_stops_the_play_before_any_change(fake_pbs, extra_vars, message, check):
    result = run_playbook(fake_pbs, extra_vars, check=check)
    assert result.returncode != 0
    assert message in result.stdout, result.stdout[-3000:]
    assert_nothing_ran(fake_pbs)


def test_valid_input_passes_validation_on_a_mom(fake_pbs):
    # Only a mom (no server to query): validation passes, and the next step is the first
    # to touch PBS - the fake pbs_python, which fails; nothing before it ran.
    result = run_playbook(fake_pbs, {"cray_atom_config": {"post_timeout": 45.5}}, groups=("pbs_mom",))
    assert "Check the hook config against its JSON Schema" in result.stdout
    assert "ok: [localhost]" in result.stdout
    assert fake_pbs["calls"].read_text().startswith("pbs_python -c")


def test_an_own_hook_body_passes_validation_on_a_mom(fake_pbs, tmp_path):
    own = tmp_path / "own_atom.py"
    own.write_text("import pbs\n")
    result = run_playbook(fake_pbs, {"cray_atom_hook_body_src": str(own)}, groups=("pbs_mom",))
    assert "Check the hook body file on the controller" in result.stdout
    assert "no such file on the controller" not in result.stdout
    assert fake_pbs["calls"].read_text().startswith("pbs_python -c")


REPORT_RE = re.compile(r'^ok: \[localhost\] => \{\n    "msg": (".*")\n\}$', re.M)


def report(tmp_path, join_alarm, extra_vars=None, server_hook=None):
    """The message tasks/report.yml prints for a mom whose cluster_info gave ``join_alarm``
    (the shape of ``mom.sister_join_job_alarm``: value, source, hooks); ``server_hook``: the
    ``__cray_atom_active_hook`` server.yml would have set on the server (None: no server)."""
    playbook = tmp_path / "report.yml"
    playbook.write_text("- hosts: pbs_mom\n  gather_facts: false\n  tasks:\n"
                        "    - ansible.builtin.include_role:\n        name: hpc.pbs.cray_atom\n"
                        "        tasks_from: report\n")
    inventory = tmp_path / "inventory.ini"
    host = "localhost ansible_connection=local ansible_python_interpreter=%s" % sys.executable
    inventory.write_text("[pbs_mom]\n%s\n" % host + ("[pbs_server]\n%s\n" % host if server_hook else ""))
    variables = dict(extra_vars or {}, __cray_atom_mom_info={"mom": {"sister_join_job_alarm": join_alarm}})
    if server_hook:
        variables["__cray_atom_active_hook"] = server_hook
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(collections_root(tmp_path)), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "ansible-local"))
    result = subprocess.run([str(VENV_BIN / "ansible-playbook"), "-i", str(inventory), str(playbook),
                             "-e", json.dumps(variables)], capture_output=True, text=True, env=env, timeout=300, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    messages = [json.loads(text) for text in REPORT_RE.findall(result.stdout)]
    assert len(messages) == 1, result.stdout
    return messages[0]


def unset(hooks):
    return {"value": sum(h["alarm"] for h in hooks) or 30, "source": "default", "hooks": hooks}


RJS = {"name": "reliable_job_startup", "alarm": 45}


@pytest.mark.parametrize("hooks,extra_vars,with_hook,without_hook", [
    ([RJS], {}, 345, 45),
    # The ATOM hooks already on the mom from an earlier run are not counted twice.
    ([RJS, {"name": "cray_atom", "alarm": 300}, {"name": "PBS_cray_atom", "alarm": 300}], {}, 345, 45),
    # No other execjob_begin hook: PBS's default without any is 30 s.
    ([], {}, 300, 30),
    ([], {"cray_atom_hook_alarm": 120}, 120, 30),
    # A disabled ATOM hook adds nothing.
    ([RJS], {"cray_atom_hook_enabled": False}, 45, 45),
], ids=["other-hook", "atom-hooks-on-mom", "only-atom", "atom-alarm-120", "atom-disabled"])
def test_report_when_unset_names_the_default_with_and_without_the_hook(tmp_path, hooks, extra_vars,
                                                                       with_hook, without_hook):
    alarm = extra_vars.get("cray_atom_hook_alarm", 300)
    assert report(tmp_path, unset(hooks), extra_vars) == (
        "$sister_join_job_alarm is not set: its default, the sum of the alarms of the enabled execjob_begin "
        "hooks, is %d s with the ATOM hook cray_atom (alarm %d s), against %d s without it; set it with "
        "the mom_tunables role to choose another value." % (with_hook, alarm, without_hook))


def test_report_uses_the_hook_the_server_chose(tmp_path):
    builtin = {"name": "PBS_cray_atom", "source": "builtin", "alarm": 200, "enabled": True}
    assert report(tmp_path, unset([RJS]), server_hook=builtin).startswith(
        "$sister_join_job_alarm is not set: its default, the sum of the alarms of the enabled execjob_begin "
        "hooks, is 245 s with the ATOM hook PBS_cray_atom (alarm 200 s), against 45 s without it;")


@pytest.mark.parametrize("value,warned", [(60, True), (344, True), (345, False), (900, False)])
def test_report_when_set_says_the_hook_does_not_change_it_and_warns_below_the_alarms(tmp_path, value, warned):
    join_alarm = {"value": value, "source": "mom_config", "hooks": [RJS]}
    expected = ("$sister_join_job_alarm is %d s, set in mom_priv/config: the ATOM hook cray_atom (alarm 300 s) "
                "does not change it." % value)
    if warned:
        expected += (" WARNING: it is below the 345 s the execjob_begin hooks may take: the mom stops "
                     "waiting for sisters first.")
    assert report(tmp_path, join_alarm) == expected


# -- the hooks' Python: which interpreter, how missing modules are installed, what failures say --
MISSING = ["requests (No module named 'requests')",
           "requests_unixsocket (No module named 'requests_unixsocket')"]
FAKE_INTERPRETER = """#!%(python)s
import json, os, sys
with open(%(calls)r, "a") as log:
    log.write("%(name)s " + " ".join(sys.argv[1:2]) + "\\n")
scenario = json.load(open(%(scenario)r))
probe = dict(scenario["probe"])
if os.path.exists(%(installed)r) and scenario.get("fixed_by_install"):
    probe["missing"] = []
print(json.dumps(probe))
"""
FAKE_PIP_PYTHON = """#!%(python)s
import json, sys
with open(%(calls)r, "a") as log:
    log.write("python " + " ".join(sys.argv[1:]) + "\\n")
scenario = json.load(open(%(scenario)r))
if scenario.get("pip_error"):
    sys.stderr.write(scenario["pip_error"] + "\\n")
    sys.exit(1)
open(%(installed)r, "w").close()
"""


@pytest.fixture
def hook_python(fake_pbs):
    """fake_pbs whose pbs_python prints the probe's answer from scenario.json (``missing``
    emptied once the fake pip ran, with ``fixed_by_install``); ``python`` is the fake
    interpreter pip runs with (it logs ``python <args>`` and creates ``installed``)."""
    tmp = fake_pbs["dir"]
    paths = {"python": sys.executable, "calls": str(fake_pbs["calls"]),
             "scenario": str(tmp / "scenario.json"), "installed": str(tmp / "installed")}
    for name, source in (("pbs_python", FAKE_INTERPRETER), ("system_python3", FAKE_INTERPRETER),
                         ("pip_python", FAKE_PIP_PYTHON)):
        path = tmp / "exec" / "bin" / name if name == "pbs_python" else tmp / name
        path.write_text(source % dict(paths, name=name))
        path.chmod(0o755)

    def scenario(fixed_by_install=True, pip_error=None, **probe):
        answer = {"executable": str(tmp / "pip_python"), "prefix": "/opt/python", "version": "3.11",
                  "missing": MISSING, "versions": {}, "externally_managed": False, "pip": True,
                  "distribution_python": False}
        answer.update(probe)
        (tmp / "scenario.json").write_text(json.dumps({"probe": answer, "fixed_by_install": fixed_by_install,
                                                       "pip_error": pip_error}))
    scenario()
    return dict(fake_pbs, scenario=scenario, pbs_python=str(tmp / "exec" / "bin" / "pbs_python"),
                pip_python=str(tmp / "pip_python"), system_python=str(tmp / "system_python3"))


def mom_run(fake, extra_vars, check=False):
    result = run_playbook(fake, dict({"cray_atom_hook_source": "bundled"}, **extra_vars), groups=("pbs_mom",),
                          check=check)
    calls = fake["calls"].read_text().splitlines() if fake["calls"].exists() else []
    return result, calls


def failure(result):
    """The message of the last task that failed (its ``"msg"`` in the JSON ansible prints;
    a rescued task fails before the one that reports)."""
    found = re.findall(r'^fatal: \[localhost\]: FAILED! => (\{.*\})$', result.stdout, re.M)
    assert found, result.stdout[-3000:]
    return json.loads(found[-1])["msg"]


WHERE = "cray_atom on localhost: %s, the Python of PBS hooks, "
WHAT_TO_DO = ("Install requests and requests_unixsocket for that interpreter (on Debian or Ubuntu: apt-get install "
              "python3-requests python3-requests-unixsocket; elsewhere the distribution's packages or pip into the "
              "Python PBS was built with) and run the role again, or choose another cray_atom_install_method")
PEP668 = "it is an externally managed Python (PEP 668: pip may not install into it)"
NO_SOURCE = ("no source of wheels is set (cray_atom_pip_wheels_src, cray_atom_pip_find_links or "
             "cray_atom_pip_index_url), and cray_atom_pip_configured_index is false: pip may not fetch from its "
             "own configured index (pip.conf, PIP_INDEX_URL, else PyPI)")
# pip with no source of wheels: only when the site lets pip use its own configuration.
CONFIGURED_INDEX = {"cray_atom_pip_configured_index": True}


def test_install_method_none_says_what_is_missing_and_what_to_do(hook_python):
    result, calls = mom_run(hook_python, {"cray_atom_install_method": "none"})
    assert result.returncode != 0
    assert failure(result) == (
        (WHERE % hook_python["pbs_python"]) + "cannot import " + "; ".join(MISSING)
        + ", and cray_atom_install_method is none: the role installs nothing. " + WHAT_TO_DO
        + " (auto, package with cray_atom_os_packages naming this distribution's packages, pip with "
          "cray_atom_hook_python naming an interpreter pip may change).")
    assert calls == ["pbs_python -c"]


def test_pip_is_refused_on_an_externally_managed_python(hook_python):
    hook_python["scenario"](externally_managed=True)
    result, calls = mom_run(hook_python, dict(CONFIGURED_INDEX, cray_atom_install_method="pip"))
    assert result.returncode != 0
    assert "and pip may not install them: %s. %s" % (PEP668, WHAT_TO_DO) in failure(result)
    assert calls == ["pbs_python -c"]


def test_auto_stops_when_neither_packages_nor_pip_apply(hook_python):
    hook_python["scenario"](externally_managed=True)
    result, calls = mom_run(hook_python, CONFIGURED_INDEX)
    assert result.returncode != 0
    message = failure(result)
    assert message.startswith((WHERE % hook_python["pbs_python"]) + "cannot import requests")
    assert ("and no way to install them applies: distribution packages do not (it is not the distribution's own "
            "Python (its prefix is /opt/python, distribution packages go to /usr)), pip may not (%s)." % PEP668) in message
    assert calls == ["pbs_python -c"]


def test_auto_uses_pip_where_pip_may_change_the_interpreter_and_verifies(hook_python):
    result, calls = mom_run(hook_python, CONFIGURED_INDEX)
    assert result.returncode == 0, result.stdout[-3000:]
    assert calls == ["pbs_python -c",
                     "python -m pip install --disable-pip-version-check requests==2.34.2 requests-unixsocket==0.4.1",
                     "pbs_python -c"]
    assert "changed: [localhost]" in result.stdout


def test_auto_uses_pip_on_a_distribution_without_known_packages(hook_python):
    hook_python["scenario"](distribution_python=True, prefix="/usr")
    result, calls = mom_run(hook_python, dict(CONFIGURED_INDEX, cray_atom_os_package_distributions=["Gentoo"]))
    assert result.returncode == 0, result.stdout[-3000:]
    assert calls[1].startswith("python -m pip install")


@pytest.mark.parametrize("method,reason", [
    ("pip", "and pip may not install them: " + NO_SOURCE + ". "),
    ("auto", "pip may not (" + NO_SOURCE + ")."),
])
def test_pip_without_a_source_is_refused_before_anything_is_installed(hook_python, method, reason):
    result, calls = mom_run(hook_python, {"cray_atom_install_method": method})
    assert result.returncode != 0
    assert reason in failure(result)
    assert calls == ["pbs_python -c"]


@pytest.mark.parametrize("source,argv", [
    ({"cray_atom_pip_find_links": "/shared/wheels"}, "--no-index --find-links /shared/wheels"),
    ({"cray_atom_pip_index_url": "https://pypi.site.example/simple"}, "--index-url https://pypi.site.example/simple"),
])
def test_pip_takes_the_source_the_site_named(hook_python, source, argv):
    result, calls = mom_run(hook_python, dict(source, cray_atom_install_method="pip"))
    assert result.returncode == 0, result.stdout[-3000:]
    assert calls[1] == ("python -m pip install --disable-pip-version-check %s "
                        "requests==2.34.2 requests-unixsocket==0.4.1" % argv)


def test_modules_still_missing_after_the_install_say_so(hook_python):
    hook_python["scenario"](fixed_by_install=False)
    result, calls = mom_run(hook_python, dict(CONFIGURED_INDEX, cray_atom_install_method="pip"))
    assert result.returncode != 0
    assert failure(result).startswith(
        (WHERE % hook_python["pbs_python"]) + "still cannot import " + "; ".join(MISSING)
        + " after the role installed requests==2.34.2 requests-unixsocket==0.4.1 with %s -m pip: they went "
          "to another Python. Install requests" % hook_python["pip_python"])
    assert len(calls) == 3


def test_a_failed_pip_install_says_what_pip_said(hook_python):
    hook_python["scenario"](externally_managed=True, pip_error="error: externally-managed-environment")
    result, calls = mom_run(hook_python, dict(CONFIGURED_INDEX, cray_atom_install_method="pip",
                                              cray_atom_hook_python=hook_python["pip_python"]))
    assert result.returncode != 0
    assert ("and installing requests==2.34.2 requests-unixsocket==0.4.1 with %s -m pip failed: "
            "error: externally-managed-environment. Install requests" % hook_python["pip_python"]) in failure(result)
    assert calls[-1].startswith("python -m pip install")


def test_an_interpreter_that_does_not_run_is_named(fake_pbs):
    result, calls = mom_run(fake_pbs, {})
    assert result.returncode != 0
    assert failure(result) == (
        (WHERE % (fake_pbs["dir"] / "exec" / "bin" / "pbs_python")) + "could not run the import check (rc 1: no error output). "
        "Check PBS_EXEC in %s and that the interpreter runs, then run the role again." % fake_pbs["conf"])
    assert calls[0].startswith("pbs_python -c import importlib") and not any("-m pip" in c for c in calls)


def test_without_pbs_python_the_system_python_is_asked(hook_python):
    os.unlink(hook_python["pbs_python"])
    hook_python["scenario"](missing=[])
    result, calls = mom_run(hook_python, {"__cray_atom_system_python": hook_python["system_python"]})
    assert result.returncode == 0, result.stdout[-3000:]
    assert calls == ["system_python3 -c"]


def debian_with_python_apt():
    try:
        family = subprocess.run(["/usr/bin/python3", "-c", "import apt_pkg"], capture_output=True, check=False).returncode == 0
    except OSError:
        family = False
    return family and os.path.exists("/etc/debian_version")


@pytest.mark.skipif(not debian_with_python_apt(), reason="needs a Debian-family host with python3-apt")
def test_auto_installs_the_debian_packages_for_the_distributions_python(hook_python):
    # Check mode: apt only says what it would do, whatever this host has installed.
    hook_python["scenario"](distribution_python=True, prefix="/usr", externally_managed=True)
    result, calls = mom_run(hook_python, {}, check=True)
    assert result.returncode == 0, result.stdout[-3000:]
    assert re.search(r"TASK \[hpc.pbs.cray_atom : Install the modules as Debian packages\] \**\n"
                     r"(ok|changed): \[localhost\]", result.stdout), result.stdout[-3000:]
    assert re.search(r"TASK \[hpc.pbs.cray_atom : Install the pinned modules with pip\] \**\n"
                     r"skipping: \[localhost\]", result.stdout), result.stdout[-3000:]
    assert calls == ["pbs_python -c"]
