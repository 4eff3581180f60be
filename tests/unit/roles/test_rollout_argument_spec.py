"""roles/rollout/meta/argument_specs.yml is the one home of the rollout's options: the
role's defaults, the playbook's ``serial`` defaults and every ``rollout_*`` name the role
reads agree with it, and the run checks the variables' types against it.

The first three read files only; the last runs playbooks/rollout.yml against the fake PBS
of test_rollout_inputs.py (about 2 s).
"""
import re
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_rollout_inputs import GOOD, assert_nothing_touched, run_rollout  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
ROLE = REPO / "roles" / "rollout"
OPTIONS = yaml.safe_load((ROLE / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]["options"]
ROLLOUT_NAME = re.compile(r"\brollout_[a-z_]+\b")


def test_role_defaults_are_the_spec_defaults():
    defaults = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
    assert defaults == {name: spec["default"] for name, spec in OPTIONS.items() if "default" in spec}


def test_playbook_serial_defaults_are_the_spec_defaults():
    """``serial`` is templated before the role's defaults are loaded: its default()s repeat them."""
    playbook = (REPO / "playbooks" / "rollout.yml").read_text()
    serial = re.search(r"^  serial: >-\n((?:    .*\n)+)", playbook, re.M).group(1)
    canary = set(re.findall(r"rollout_canary_hosts \| default\(([^)]*)\)", serial))
    batch = set(re.findall(r"rollout_batch_size \| default\(([^)]*)\)", serial))
    assert canary == {str(OPTIONS["rollout_canary_hosts"]["default"])}, serial
    assert batch == {"'%s'" % OPTIONS["rollout_batch_size"]["default"]}, serial


def facts_and_registers(node):
    """Names a task tree sets: set_fact keys and register names, recursively."""
    names = set()
    if isinstance(node, list):
        for item in node:
            names |= facts_and_registers(item)
    elif isinstance(node, dict):
        facts = node.get("ansible.builtin.set_fact")
        if isinstance(facts, dict):
            names |= set(facts)
        if "register" in node:
            names.add(node["register"])
        for key in ("block", "rescue", "always"):
            names |= facts_and_registers(node.get(key))
    return names


def test_every_rollout_name_the_role_reads_is_an_option_or_its_own_fact():
    """A ``rollout_*`` name in the role that is neither an option nor a fact it sets would be
    an undocumented option (and refused as a misspelling by the unknown-variable check)."""
    files = sorted((ROLE / "tasks").glob("*.yml")) + [ROLE / "vars" / "main.yml"]
    own = set()
    used = set()
    for path in files:
        text = path.read_text()
        own |= facts_and_registers(yaml.safe_load(text))
        used |= set(ROLLOUT_NAME.findall(re.sub(r"(?m)^\s*#.*$", "", text)))
    undocumented = used - own - set(OPTIONS)
    assert undocumented == set(), undocumented


def test_a_type_the_spec_refuses_stops_the_run(fake_pbs):
    """rollout_drain is a bool: "perhaps" is refused by the spec check before any contact."""
    rc, output, recap = run_rollout(fake_pbs, dict(GOOD, rollout_drain="perhaps"))
    assert re.search(r"argument 'rollout_drain' is of type \S+ and we were unable to convert to bool", output), output
    assert_nothing_touched(fake_pbs, rc, output, recap)
