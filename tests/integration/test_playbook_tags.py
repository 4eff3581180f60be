"""Tags per part on site.yml and audit.yml, and the playbooks of the built collection run
by their names (``ansible-playbook hpc.pbs.site``), as README's "Running on a real
cluster" shows them.

No cluster: ``--list-tasks`` and ``--syntax-check`` only read the playbooks (a few seconds
in all). The audit run by its name against a cluster is in test_audit.py.
"""
import os
import re
import subprocess
import sys
import tarfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_rollout import REPO, ansible_env  # noqa: E402

BIN = os.path.dirname(sys.executable)
PARTS = ("server_hook", "mom_tunables", "scheduler", "cray_atom", "cgroup_resize")
# Ansible itself adds this task, tagged "always", to each role it imports (import_role, roles:)
# or includes (include_role) for an entry point that has an argument spec.
ARG_SPEC_TASK = "Validating arguments against arg spec"
# site.yml's control steps in its free-strategy play, tagged "always" alone so that no --tags
# or --skip-tags leaves a mom in the play past its own part: the handlers of the moms'
# part, then every mom that is not the server leaves the play before the server's tasks.
INVENTORY_CHECK = "Check the inventory's inputs for every host before anything is read or changed"
CONTROL_STEPS = {"site.yml": ["Load the collection's filters in the controller's main process",
                              "Find the first host of each distinct set of inputs", INVENTORY_CHECK,
                              "Reload the moms whose tunables changed",
                              "End the play on the execution hosts that are not the PBS server"],
                 "audit.yml": ["Load the collection's filters in the controller's main process",
                               "Note when the audit started (the reports' run.started, ISO 8601 UTC)", INVENTORY_CHECK]}
INVENTORY = "[pbs_server]\npbs-server\n\n[pbs_mom]\nmom1\nmom2\n"
TASK_LINE = re.compile(r"^ {6}(?P<name>.+?)\tTAGS: \[(?P<tags>[^\]]*)\]$")


def run(argv, env, cwd=REPO):
    """Run an ansible command; CompletedProcess (text, stdout and stderr joined)."""
    return subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, stdin=subprocess.DEVNULL, timeout=300, check=False)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return ansible_env(tmp_path_factory.mktemp("ansible"))


@pytest.fixture(scope="module")
def inventory(tmp_path_factory):
    path = tmp_path_factory.mktemp("inventory") / "inventory.ini"
    path.write_text(INVENTORY)
    return str(path)


def listed_tasks(env, inventory, playbook, *more):
    """``ansible-playbook --list-tasks``: ``[(task name, {tags})]`` in play order."""
    proc = run([os.path.join(BIN, "ansible-playbook"), "-i", inventory, playbook, "--list-tasks"] + list(more), env)
    assert proc.returncode == 0, proc.stdout
    tasks = []
    for line in proc.stdout.splitlines():
        match = TASK_LINE.match(line)
        if match:
            tasks.append((match.group("name"), set(t.strip() for t in match.group("tags").split(",") if t.strip())))
    return tasks


@pytest.mark.parametrize("playbook", ["site.yml", "audit.yml"])
def test_every_task_belongs_to_a_part(env, inventory, playbook):
    listed = listed_tasks(env, inventory, os.path.join(REPO, "playbooks", playbook))
    control = [name for name, tags in listed if tags == {"always"}]
    assert control == CONTROL_STEPS[playbook], control
    untagged = [name for name, tags in listed if not tags & set(PARTS) and name not in control]
    assert untagged == [], untagged
    empty = [part for part in PARTS if not any(part in tags for name, tags in listed)]
    assert empty == [], empty


@pytest.mark.parametrize("playbook, scheduler_tasks, shared_steps", [
    ("site.yml", ["Check the inputs of sched_tuning", "hpc.pbs.sched_tuning : Set job_run_wait of the scheduler"],
     {"Leave the checks to the first host of each distinct set of inputs, and to the PBS server":
      {"server_hook", "mom_tunables", "scheduler"},
      "Plan the hook and job_run_wait on the server, changing nothing": {"server_hook", "scheduler"},
      "End the play on the PBS server when its plan has nothing to change": {"server_hook", "scheduler"}}),
    ("audit.yml", [], None),
])
def test_scheduler_tag_selects_only_the_scheduler(env, inventory, playbook, scheduler_tasks, shared_steps):
    """site.yml: sched_tuning's input check (first play) and its task, and the steps it shares with other parts
    (the checks' start, the server's plan); audit.yml: only the steps every part shares (each host's one read,
    which plans the scheduler when its part runs; the rows, the report), which carry every tag (test_audit: a tag
    leaves the other parts' plans out of the read)."""
    selected = [(name, tags) for name, tags in listed_tasks(env, inventory, os.path.join(REPO, "playbooks", playbook),
                                                            "--tags", "scheduler")
                if ARG_SPEC_TASK not in name]
    assert [name for name, tags in selected if tags & set(PARTS) == {"scheduler"}] == scheduler_tasks, selected
    assert [name for name, tags in selected if tags == {"always"}] == CONTROL_STEPS[playbook], selected
    shared = [(name, tags) for name, tags in selected if tags & set(PARTS) != {"scheduler"} and tags != {"always"}]
    if shared_steps is None:
        assert all(tags >= set(PARTS) for name, tags in shared), selected
    else:
        assert dict(shared) == shared_steps, selected


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The collection built by ``ansible-galaxy collection build`` and installed into a fresh
    collections path: ``(environment, tarball member names)``."""
    work = tmp_path_factory.mktemp("galaxy")
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(work / "collections"),
               PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    env.pop("ANSIBLE_CONFIG", None)  # no checkout config: only the installed collection
    built = run([os.path.join(BIN, "ansible-galaxy"), "collection", "build", "--output-path", str(work), REPO],
                env, cwd=str(work))
    assert built.returncode == 0, built.stdout
    tarball = str(work / "hpc-pbs-0.1.0.tar.gz")
    with tarfile.open(tarball) as archive:
        members = archive.getnames()
    done = run([os.path.join(BIN, "ansible-galaxy"), "collection", "install", tarball, "-p",
                str(work / "collections")], env, cwd=str(work))
    assert done.returncode == 0, done.stdout
    return env, members


def test_build_ships_the_playbooks(installed):
    env, members = installed
    for name in ("site", "audit", "rollout", "recover", "cray_atom", "cgroup_resize"):
        assert "playbooks/%s.yml" % name in members, sorted(m for m in members if "playbook" in m)


@pytest.mark.parametrize("playbook, scheduler_task", [
    ("hpc.pbs.site", "hpc.pbs.sched_tuning : Set job_run_wait of the scheduler\tTAGS: [scheduler]"),
    ("hpc.pbs.audit", "Read pbs.conf, the hook files and the mom's tunables and config plan, plan the server's hook and"
                      " scheduler\tTAGS: [cgroup_resize, cray_atom, mom_tunables, scheduler, server_hook]")])
def test_installed_playbooks_run_by_name(installed, inventory, tmp_path, playbook, scheduler_task):
    """Outside the checkout, with only the installed collection: the README's commands. The task that does the
    scheduler's part is listed with its tags (the audit plans it in every host's read)."""
    env, dummy = installed
    proc = run([os.path.join(BIN, "ansible-playbook"), "-i", inventory, playbook, "--syntax-check"], env,
               cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stdout
    assert "ansible_collections/hpc/pbs/playbooks/%s.yml" % playbook.split(".")[-1] in proc.stdout, proc.stdout
    listed = run([os.path.join(BIN, "ansible-playbook"), "-i", inventory, playbook, "--list-tasks",
                  "--tags", "scheduler"], env, cwd=str(tmp_path))
    assert listed.returncode == 0, listed.stdout
    assert scheduler_task in listed.stdout, listed.stdout


def readme_section(title):
    with open(os.path.join(REPO, "README.md")) as handle:
        text = handle.read()
    start = text.index("\n## %s\n" % title)
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else len(text)]


def test_readme_real_cluster_example_works_as_typed(installed, tmp_path):
    """README "Running on a real cluster": its inventory has both groups with hosts and
    become, and each ansible-playbook command it shows parses as typed (--list-tasks added:
    the example's hosts do not exist) against the installed collection."""
    env, dummy = installed
    section = readme_section("Running on a real cluster")
    inventory = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    (tmp_path / "inventory.yml").write_text(inventory)
    graph = run([os.path.join(BIN, "ansible-inventory"), "-i", "inventory.yml", "--graph"], env, cwd=str(tmp_path))
    assert graph.returncode == 0 and "@pbs_server:" in graph.stdout and "@pbs_mom:" in graph.stdout, graph.stdout
    assert "node128" in graph.stdout and "pbs-head01" in graph.stdout, graph.stdout
    host = run([os.path.join(BIN, "ansible-inventory"), "-i", "inventory.yml", "--host", "node001"], env,
               cwd=str(tmp_path))
    assert '"ansible_become": true' in host.stdout, host.stdout
    commands = [line for line in re.search(r"```sh\n(.*?)```", section, re.S).group(1).splitlines()
                if line.startswith("ansible-playbook ")]
    assert len(commands) >= 3, commands
    for command in commands:
        argv = command.split()
        argv[0] = os.path.join(BIN, argv[0])
        proc = run(argv + ["--list-tasks"], env, cwd=str(tmp_path))
        assert proc.returncode == 0, (command, proc.stdout)
        assert "ansible_collections/hpc/pbs/playbooks/" in proc.stdout, (command, proc.stdout)
