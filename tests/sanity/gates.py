# -*- coding: utf-8 -*-
"""The ecosystem's gates as a contributor runs them: ``ansible-test sanity`` and ``ansible-lint``.

Usage, from the repository root with the venv active (``make sanity`` / ``make lint`` run
exactly this)::

    python tests/sanity/gates.py sanity [--root DIR] [ansible-test options ...]
    python tests/sanity/gates.py lint [ansible-lint options ...]

``sanity`` runs ``ansible-test sanity --python <this Python> --requirements --venv`` on the
checkout. ansible-test only runs inside ``ansible_collections/<namespace>/<name>`` and finds
that path with ``os.getcwd()``, which resolves symbolic links: from the link that ``make
collection`` makes (``build/collections/ansible_collections/hpc/pbs``) it sees the
checkout's real path and refuses to run. So the checkout's files - those git would commit:
tracked, plus untracked ones not ignored by ``.gitignore`` - are copied to
``<root>/ansible_collections/hpc/pbs`` (``<root>`` is ``build/sanity`` unless given),
replacing an earlier copy, and ansible-test runs there (the copy is its own git work tree,
so ansible-test checks those files and ``.gitignore`` still applies). Where a rule cannot apply,
``tests/sanity/ignore-<ansible version>.txt`` says so with its reason.

ansible-test bootstraps pip into each sanity venv with ``get-pip-<version>.py`` downloaded
from ci-files.testing.ansible.com unless ``~/.ansible/test/cache/get_pip_<version>.py``
exists. That host may be unreachable (it is on the CI network), so ansible-test runs with
``HOME`` = ``build/ansible-test-home``, where ``tests/sanity/get_pip_bootstrap.py`` is put
under that name; the venvs ansible-test builds stay there between runs (the first run
takes a few minutes).

``lint`` runs ``ansible-lint`` in the repository root: ``.ansible-lint`` sets the profile
(production) and ``.ansible-lint-ignore`` lists, with reasons, the findings that cannot
apply.

Exit status: the tool's own; 2 for a usage error or when the tool is not installed.
"""
import argparse
import os
import shutil
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLLECTION_PATH = ("ansible_collections", "hpc", "pbs")
DEFAULT_SANITY_ROOT = os.path.join(REPO, "build", "sanity")
LINT_HOME = os.path.join(REPO, "build", "ansible-lint-home")
SANITY_HOME = os.path.join(REPO, "build", "ansible-test-home")
PIP_BOOTSTRAP = os.path.join(REPO, "tests", "sanity", "get_pip_bootstrap.py")
# The pip version ansible-test bootstraps (ansible-core 2.19: pip 24.2); the cached
# script's name carries it.
PIP_BOOTSTRAP_CACHE_NAME = "get_pip_24_2.py"


class GateError(Exception):
    """A gate cannot start (tool missing, not a git checkout); the message says why."""


def tool_path(name):
    """Path of the executable ``name``: the one beside this Python (the venv's) first, else on PATH.

    Raises GateError when neither exists.
    """
    beside = os.path.join(os.path.dirname(sys.executable), name)
    found = beside if os.access(beside, os.X_OK) else shutil.which(name)
    if not found:
        raise GateError("%s is not installed (make venv installs it into .venv)" % name)
    return found


def checkout_files(repo=REPO):
    """Sorted paths, relative to ``repo``, of the files git would commit there.

    Tracked files that still exist plus untracked files ``.gitignore`` does not exclude.
    Raises GateError when ``repo`` is not a git checkout or git is missing.
    """
    try:
        listed = subprocess.run(["git", "-C", repo, "ls-files", "-z", "--cached", "--others",
                                 "--exclude-standard"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                check=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        raise GateError("cannot list the checkout's files with git: %s" % error) from error
    names = {name for name in listed.decode("utf-8", "surrogateescape").split("\0") if name}
    return sorted(name for name in names if os.path.lexists(os.path.join(repo, name)))


def place_checkout(root, repo=REPO):
    """Copy the checkout's files (:func:`checkout_files`) to ``<root>/ansible_collections/hpc/pbs``.

    An earlier copy there is removed first; symbolic links are copied as links and file
    modes are kept. The copy gets a git repository of its own (no commit): ansible-test
    takes its file list from the nearest enclosing git work tree, which for a copy under
    ``build/`` would otherwise be the checkout itself, where ``build/`` is ignored.
    Returns the collection directory (a str).
    """
    target = os.path.join(root, *COLLECTION_PATH)
    if os.path.lexists(target):
        shutil.rmtree(target)
    for relative in checkout_files(repo):
        source = os.path.join(repo, relative)
        destination = os.path.join(target, relative)
        os.makedirs(os.path.dirname(destination), exist_ok=True)
        if os.path.islink(source):
            os.symlink(os.readlink(source), destination)
        else:
            shutil.copy2(source, destination)
    subprocess.run(["git", "init", "-q", target], check=True)
    return target


def sanity_home():
    """HOME for ansible-test, holding the pip bootstrap script it looks for first (a str)."""
    cache = os.path.join(SANITY_HOME, ".ansible", "test", "cache")
    os.makedirs(cache, exist_ok=True)
    shutil.copyfile(PIP_BOOTSTRAP, os.path.join(cache, PIP_BOOTSTRAP_CACHE_NAME))
    return SANITY_HOME


def sanity_command(extra_args=()):
    """The ansible-test command line (a list): every sanity test on this Python, in venvs."""
    return [tool_path("ansible-test"), "sanity", "--python", "%d.%d" % sys.version_info[:2],
            "--requirements", "--venv", "--color", "no"] + list(extra_args)


def tool_environment(**overrides):
    """This process's environment with the venv's bin first on PATH, plus ``overrides``.

    The gates' tools start other tools (ansible-lint runs ansible-galaxy and
    ansible-playbook) by name: they must find the venv's, venv active or not.
    """
    environment = dict(os.environ, **overrides)
    environment["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), environment.get("PATH", os.defpath)])
    return environment


def run_sanity(root, extra_args=()):
    """Place the checkout under ``root`` and run ansible-test sanity there; its exit status."""
    command = sanity_command(extra_args)
    target = place_checkout(root)
    environment = tool_environment(HOME=sanity_home())
    print("ansible-test sanity in %s (a copy of the checkout)" % target, flush=True)
    return subprocess.call(command, cwd=target, env=environment)


def lint_environment():
    """The environment of ansible-lint: its Ansible home (where it looks for installed
    collections before the checkout's ``build/collections`` link) is ``build/ansible-lint-home``,
    which nothing installs into (``.ansible-lint``: offline). ``~/.ansible`` or the venv's
    ``.ansible`` may hold an older copy of hpc.pbs that molecule installed: seen first, it
    would be checked instead of the checkout."""
    environment = tool_environment(ANSIBLE_HOME=LINT_HOME)
    environment.pop("VIRTUAL_ENV", None)
    os.makedirs(os.path.join(LINT_HOME, "collections"), exist_ok=True)
    return environment


def run_lint(extra_args=()):
    """Run ansible-lint in the repository root (its config files there); its exit status."""
    return subprocess.call([tool_path("ansible-lint")] + list(extra_args), cwd=REPO, env=lint_environment())


def parse_arguments(argv):
    """``(options, extra)``: the gate and its options, and the arguments passed to the tool."""
    parser = argparse.ArgumentParser(description="The ecosystem's gates on this checkout.")
    parser.add_argument("gate", choices=("sanity", "lint"))
    parser.add_argument("--root", default=DEFAULT_SANITY_ROOT,
                        help="sanity: where ansible_collections/hpc/pbs is placed (default build/sanity)")
    return parser.parse_known_args(argv)


def main(argv=None):
    """Command line entry point; returns the exit status."""
    options, extra = parse_arguments(sys.argv[1:] if argv is None else argv)
    try:
        if options.gate == "sanity":
            return run_sanity(options.root, extra)
        return run_lint(extra)
    except GateError as error:
        print("gates: %s" % error, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
