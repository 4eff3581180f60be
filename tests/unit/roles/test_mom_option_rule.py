"""One rule for ``$job_launch_delay`` / ``$sister_join_job_alarm`` (PP-928 interfaces 4
and 3; issue 15 point 6): the roles refuse what ``hpc.pbs.mom_config`` refuses, with its
message, and accept what it accepts.

The same values go through the module's check (``module_utils.mom_config_options.plan``,
what the module calls on its ``options``) and through the ``validate`` entry point of
``hpc.pbs.reliable_job_startup`` and ``hpc.pbs.mom_tunables``, run by the real
``ansible-playbook`` on localhost: one run per role, every value in a block whose rescue
records the failure message. A value the role's argument spec (type int) refuses never
reaches the roles' value rule; it must be one the module refuses too.
"""
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
VENV_BIN = Path(sys.executable).parent
OPTIONS = ("job_launch_delay", "sister_join_job_alarm")
ROLES = ("reliable_job_startup", "mom_tunables")
ACCEPTED = [1, 30, 86400, "30", " 7 ", None]
REFUSED = [0, -3, 86401, 10 ** 25, "010", 5.0, True, False, "1e3", "abc", "5abc", 2.7, "10 # ten", "", [5]]
ROLE_MESSAGE = "%s must be null or whole seconds >= 1 (pbs_mom exits on any other value): %s"
SPEC_MESSAGE = "Validation of arguments failed"

ONE_VALUE_TASKS = """
- name: Validate one value
  block:
    - name: Run the role's validate entry point
      ansible.builtin.include_role:
        name: hpc.pbs.{role}
        tasks_from: validate
      vars:
        {role}_job_launch_delay: "{{{{ case.value if case.option == 'job_launch_delay' else none }}}}"
        {role}_sister_join_job_alarm: "{{{{ case.value if case.option == 'sister_join_job_alarm' else none }}}}"
    - name: Record the acceptance
      ansible.builtin.set_fact:
        outcomes: "{{{{ outcomes + [''] }}}}"
  rescue:
    - name: Record the refusal
      ansible.builtin.set_fact:
        outcomes: "{{{{ outcomes + [ansible_failed_result.msg | default('(no message)')] }}}}"
"""

PLAYBOOK = """
- name: Every case through the validate entry point of {role}
  hosts: localhost
  gather_facts: false
  vars:
    outcomes: []
  tasks:
    - name: One case
      ansible.builtin.include_tasks: one_value.yml
      loop: "{{{{ cases }}}}"
      loop_control:
        loop_var: case
    - name: Write the outcomes
      ansible.builtin.copy:
        content: "{{{{ outcomes | to_json }}}}"
        dest: "{outcomes}"
        mode: "0644"
"""


def load_options_module():
    """``plugins/module_utils/moms/mom_config_options.py`` (standard library only) by its path."""
    path = REPO / "plugins" / "module_utils" / "moms" / "mom_config_options.py"
    spec = importlib.util.spec_from_file_location("hpc_pbs_mom_config_options", str(path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


OPTIONS_MODULE = load_options_module()
CASES = [{"option": option, "value": value} for option in OPTIONS for value in ACCEPTED + REFUSED]


def module_message(option, value):
    """What ``hpc.pbs.mom_config`` says of ``options: {option: value}``: "" or its message."""
    try:
        OPTIONS_MODULE.plan({option: value}, "present")
    except OPTIONS_MODULE.MomConfigValueError as exc:
        return str(exc)
    return ""


def run_validate(role, tmp_path):
    """Each case of :data:`CASES` through ``role``'s validate entry point: ``[msg or ""]``."""
    collections = tmp_path / "collections" / "ansible_collections" / "hpc"
    collections.mkdir(parents=True)
    (collections / "pbs").symlink_to(REPO)
    outcomes = tmp_path / "outcomes.json"
    (tmp_path / "one_value.yml").write_text(ONE_VALUE_TASKS.format(role=role))
    playbook = tmp_path / "validate.yml"
    playbook.write_text(PLAYBOOK.format(role=role, outcomes=outcomes))
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps({"cases": CASES}))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(tmp_path / "collections"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_LOCAL_TEMP=str(tmp_path / "ansible-local"))
    argv = [str(VENV_BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local",
            "-e", "ansible_python_interpreter=%s" % sys.executable, "-e", "@%s" % cases, str(playbook)]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600, stdin=subprocess.DEVNULL,
                          check=False)
    assert proc.returncode == 0 and outcomes.exists(), proc.stdout + proc.stderr
    return json.loads(outcomes.read_text())


@pytest.fixture(scope="module", params=ROLES)
def role_outcomes(request, tmp_path_factory):
    """``(role, {(option, json of value): message or ""})`` of one run of the role."""
    role = request.param
    messages = run_validate(role, tmp_path_factory.mktemp(role))
    assert len(messages) == len(CASES), messages
    return role, {(c["option"], json.dumps(c["value"])): m for c, m in zip(CASES, messages)}


@pytest.mark.parametrize("option", OPTIONS)
def test_the_table_is_what_the_module_accepts_and_refuses(option):
    assert [v for v in ACCEPTED if module_message(option, v)] == []
    assert [v for v in REFUSED if not module_message(option, v)] == []


@pytest.mark.parametrize("case", CASES, ids=lambda c: "%s=%s" % (c["option"], json.dumps(c["value"])))
def test_each_role_accepts_and_refuses_as_the_module_with_its_message(role_outcomes, case):
    role, outcomes = role_outcomes
    option, value = case["option"], case["value"]
    variable = "%s_%s" % (role, option)
    message, refusal = outcomes[(option, json.dumps(value))], module_message(option, value)
    if not refusal:
        assert message == "", "%s refused %r, which hpc.pbs.mom_config accepts: %s" % (role, value, message)
    elif SPEC_MESSAGE in message:
        # The argument spec (type int) refused it before the value rule: no int means it.
        assert variable in message, message
    else:
        assert message == "%s: %s" % (role, ROLE_MESSAGE % (variable, refusal)), message
