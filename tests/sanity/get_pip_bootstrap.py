# -*- coding: utf-8 -*-
"""Offline stand-in for ansible-test's ``get-pip-<version>.py`` bootstrap download.

ansible-test (``--requirements``) bootstraps pip into each empty sanity venv by running
``https://ci-files.testing.ansible.com/ansible-test/get-pip-<version>.py``, a host this
machine cannot resolve; it first looks for the script in
``~/.ansible/test/cache/get_pip_<version>.py``. This script, saved there, does what
get-pip does: it runs pip from a wheel the interpreter already carries (the one bundled
with ``ensurepip``) to ``pip install`` the packages ansible-test names (``pip==24.2`` ...)
from the configured package index. get-pip's own ``--no-setuptools`` / ``--no-wheel``
flags are dropped because pip does not know them; without them get-pip would add
setuptools and wheel, which ansible-test never asks for here.
"""
import glob
import os
import sys

GET_PIP_ONLY_FLAGS = ("--no-setuptools", "--no-wheel")


def bundled_pip_wheel():
    """Path of the pip wheel bundled with ``ensurepip``; SystemExit when there is none."""
    import ensurepip  # pylint: disable=import-outside-toplevel
    wheels = sorted(glob.glob(os.path.join(os.path.dirname(ensurepip.__file__), "_bundled",
                                           "pip-*.whl")))
    if not wheels:
        sys.exit("get_pip_bootstrap: this Python has no ensurepip wheel to bootstrap pip from")
    return wheels[-1]


def main():
    sys.path.insert(0, bundled_pip_wheel())
    from pip._internal.cli.main import main as pip_main  # pylint: disable=import-outside-toplevel,import-error
    args = [arg for arg in sys.argv[1:] if arg not in GET_PIP_ONLY_FLAGS]
    return pip_main(["install"] + args)


if __name__ == "__main__":
    sys.exit(main())
