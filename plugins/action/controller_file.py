# -*- coding: utf-8 -*-
# Copyright: hpc.pbs developers
# Apache License 2.0
"""Action plugin of ``hpc.pbs.controller_file``: write a text file on the controller from
the task's worker process, atomically (a temporary file of the directory, renamed). No
module runs and no connection is used; the documentation is in ``plugins/modules``."""

import os
import stat
import tempfile

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_bytes, to_text
from ansible.plugins.action import ActionBase

ARGUMENT_SPEC = dict(
    path=dict(type="path", required=True),
    content=dict(type="str", required=True),
    mode=dict(type="raw", default="0644"),
)


def parse_mode(value):
    """The permission bits (int) of ``mode``: an octal string ("0644", "640") or an int,
    0 to 0o7777. Raises ValueError naming what is accepted."""
    if isinstance(value, bool):
        bits = None
    elif isinstance(value, int):
        bits = value
    else:
        try:
            bits = int(str(value), 8)
        except ValueError:
            bits = None
    if bits is None or not 0 <= bits <= 0o7777:
        raise ValueError("mode: %r is not a file mode; accepted: an octal string such as "
                         "'0644', or an integer from 0 to 0o7777" % (value,))
    return bits


def read_existing(path):
    """(bytes, mode bits) of the regular file at ``path``, or (None, None) when there is
    none. Raises ValueError for a directory or another kind of file."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None, None
    if not stat.S_ISREG(info.st_mode):
        raise ValueError("%s is not a regular file" % path)
    with open(path, "rb") as handle:
        return handle.read(), stat.S_IMODE(info.st_mode)


def write_atomically(path, data, mode):
    """Replace ``path`` by ``data`` (bytes) with permission bits ``mode``: a temporary file
    of the same directory, written, synced and renamed; removed again on any error."""
    directory = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise


class ActionModule(ActionBase):
    """Write ``content`` to ``path`` on the controller with ``mode``."""

    TRANSFERS_FILES = False
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        try:
            mode = parse_mode(args["mode"])
        except ValueError as err:
            raise AnsibleActionFail(to_text(err))
        path = os.path.abspath(args["path"])
        data = to_bytes(args["content"], errors="surrogate_or_strict")
        try:
            old_data, old_mode = read_existing(path)
        except (OSError, ValueError) as err:
            raise AnsibleActionFail("path: cannot write %s on the controller: %s" % (path, err))
        content_changed = old_data != data
        mode_changed = not content_changed and old_mode != mode
        result.update(changed=content_changed or mode_changed, path=path, mode="%04o" % mode)
        if self._task.diff and result["changed"]:
            result["diff"] = dict(
                before_header=path, after_header=path,
                before="" if old_data is None else to_text(old_data, errors="surrogate_or_replace"),
                after=to_text(data, errors="surrogate_or_replace"))
            if mode_changed:
                result["diff"].update(before="mode %04o\n" % old_mode, after="mode %04o\n" % mode)
        if self._task.check_mode or not result["changed"]:
            return result
        try:
            if content_changed:
                write_atomically(path, data, mode)
            else:
                os.chmod(path, mode)
        except OSError as err:
            raise AnsibleActionFail("path: cannot write %s on the controller: %s" % (path, err))
        return result
