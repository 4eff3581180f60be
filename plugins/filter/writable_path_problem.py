# Copyright: hpc.pbs developers
# Apache License 2.0
"""Filter ``hpc.pbs.writable_path_problem``: why a file cannot be written on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
name: writable_path_problem
short_description: Say why a report file cannot be written on the controller
version_added: 0.1.0
author: hpc.pbs developers
description:
  - >-
    Returns why the file O(_input) cannot be written on the Ansible controller, or an empty
    string when it can. Filters run on the controller, so this checks the controller's file
    system whatever the host of the task. A relative path is taken from the current directory
    of ansible-playbook.
  - >-
    Accepted - a path whose directory exists and may be written and entered by this user
    (the file is written to a temporary file of that directory, then renamed; a temporary
    file is made and removed there to be sure), and which is not itself a directory; when
    the file exists it must be a regular file this user may write.
  - The playbooks of this collection check their report paths with it before anything is read or changed.
positional: _input
options:
  _input:
    description: The path of the file.
    type: raw
    required: true
"""

EXAMPLES = r"""
- name: Refuse a report path that cannot be written
  ansible.builtin.assert:
    that: (audit_report_path | hpc.pbs.writable_path_problem) == ''
    fail_msg: "audit_report_path: {{ audit_report_path | hpc.pbs.writable_path_problem }}"
"""

RETURN = r"""
_value:
  description: The reason, naming the path and what is accepted, or an empty string.
  type: str
"""

import os
import tempfile

ACCEPTED = "a file path whose directory exists and is writable on the controller"


def writable_path_problem(path):
    """``""`` when ``path`` can be written on this machine, else why not (str)."""
    if not isinstance(path, str) or not path.strip():
        return "%r is not a file path; accepted: %s" % (path, ACCEPTED)
    if "\0" in path:
        return "%r holds a NUL character; accepted: %s" % (path, ACCEPTED)
    full = os.path.abspath(os.path.expanduser(path))
    directory = os.path.dirname(full)
    if os.path.isdir(full):
        return "%s is a directory; accepted: %s" % (full, ACCEPTED)
    if not os.path.isdir(directory):
        return "the directory %s does not exist; accepted: %s" % (directory, ACCEPTED)
    if not os.access(directory, os.W_OK | os.X_OK):
        # The report is written through a temporary file of that directory, renamed.
        return "the directory %s is not writable by this user; accepted: %s" % (directory, ACCEPTED)
    try:  # what the permission bits do not show: a read-only file system, /proc
        handle, probe = tempfile.mkstemp(dir=directory, prefix=".hpc-pbs-write-check-")
    except OSError as exc:
        return "the directory %s cannot be written (%s); accepted: %s" % (directory, exc.strerror, ACCEPTED)
    os.close(handle)
    os.unlink(probe)
    if os.path.lexists(full) and not os.path.isfile(full):
        return "%s exists and is not a regular file; accepted: %s" % (full, ACCEPTED)
    if os.path.exists(full) and not os.access(full, os.W_OK):
        return "%s exists and is not writable by this user; accepted: %s" % (full, ACCEPTED)
    return ""


class FilterModule:
    """hpc.pbs filter for report paths on the controller."""

    def filters(self):
        return {"writable_path_problem": writable_path_problem}
