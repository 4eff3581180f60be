# -*- coding: utf-8 -*-
"""Running OpenPBS ``qmgr`` and reading its output, with qmgr's own formats and rules.

Formats (OpenPBS 23.06, reference transcripts a_ and k_):

- ``list OBJ [NAME]`` prints a header line ``<Kind> <name>`` (``Server vm``, ``Sched
  default``, ``Queue workq``, ``Node vm``, ``Hook h1`` - also for pbshooks), then one
  ``    attr = value`` line per set attribute (four spaces), then a blank line. A long
  list value wraps as ``,`` + newline + tab + rest. An empty list prints ``""``.
- In stdin mode qmgr first prints ``Max open servers: 49``.
- Values with white space, ``,`` or ``=`` must be quoted with ``"..."`` or ``'...'``;
  ``\\"`` is not an escape (a backslash is literal), so a value holding ``"`` must be
  single-quoted, and a value holding both quote characters cannot be written.
- Exit codes: 1 list of a missing object, 3/4 syntax error (also an unknown attribute),
  32 hook errors, 156 invalid request, 166 illegal value, 177 already exists.

Writes run in ONE ``qmgr -a`` invocation with the commands on stdin: ``-a`` makes qmgr
stop at the first rejected command (without it, qmgr goes on and its exit code only
reflects the last command), so a failed step can never be followed by a later one such
as enabling a hook.
"""

import re

OBJECT_TYPES = ("server", "sched", "queue", "node", "hook", "pbshook")

# Header words of ``list`` output, by object type.
LIST_HEADER_KIND = {
    "server": "Server", "sched": "Sched", "queue": "Queue", "node": "Node",
    "hook": "Hook", "pbshook": "Hook",
}

EXIT_MISSING_OBJECT = 1

TRUE_WORDS = ("true", "t", "y", "1")
FALSE_WORDS = ("false", "f", "n", "0")

# Characters a value may hold and still be written without quotes.
_BARE_VALUE = re.compile(r"^[A-Za-z0-9_.@*:/%+-]+$")
_ATTR_LINE = re.compile(r"^    (\S+) =(?: (.*))?$")
_HEADER_LINE = re.compile(r"^(\S+) (\S+)\s*$")
_MAX_OPEN = re.compile(r"^Max open servers: \d+\s*$")


class QmgrError(Exception):
    """A qmgr call failed. Attributes: ``msg``, ``cmd`` (argument list), ``rc``,
    ``stdout``, ``stderr``, ``commands`` (stdin commands, if any), and for a batch that
    stopped half-way ``applied`` / ``not_applied`` (the write commands that did and did not
    take effect, in order; None when unknown)."""

    def __init__(self, msg, cmd, rc, stdout, stderr, commands=None, applied=None,
                 not_applied=None):
        Exception.__init__(self, msg)
        self.msg = msg
        self.cmd = cmd
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr
        self.commands = commands or []
        self.applied = applied
        self.not_applied = not_applied

    def fail_kwargs(self):
        """Keyword arguments for ``module.fail_json``."""
        kwargs = dict(msg=self.msg, cmd=self.cmd, rc=self.rc, stdout=self.stdout,
                      stderr=self.stderr, commands=self.commands)
        if self.applied is not None:
            kwargs.update(applied=self.applied, not_applied=self.not_applied,
                          changed=bool(self.applied))
        return kwargs


class QmgrValueError(ValueError):
    """A value cannot be written as a qmgr command (newline, or both quote kinds)."""


def quote_value(value):
    """Return ``value`` (str) as qmgr accepts it on a command line.

    Bare when it only holds ``[A-Za-z0-9_.@*:/%+-]``; ``""`` for the empty string;
    ``"..."`` otherwise, or ``'...'`` when it contains ``"``. Raises
    :class:`QmgrValueError` for a newline or for both ``"`` and ``'``.
    """
    value = str(value)
    if "\n" in value or "\r" in value:
        raise QmgrValueError("a qmgr value cannot contain a newline: %r" % value)
    if value == "":
        return '""'
    if _BARE_VALUE.match(value):
        return value
    if '"' in value:
        if "'" in value:
            raise QmgrValueError(
                "qmgr cannot take a value containing both \" and ' (\\\" is not an "
                "escape in qmgr): %r" % value)
        return "'%s'" % value
    return '"%s"' % value


def object_ref(object_type, name=None):
    """``server`` / ``server NAME`` / ``sched default`` / ``hook h1`` ... as qmgr wants."""
    if object_type not in OBJECT_TYPES:
        raise ValueError("unknown qmgr object type %r" % object_type)
    return object_type if not name else "%s %s" % (object_type, name)


def list_command(object_type, name=None):
    return "list %s" % object_ref(object_type, name)


def set_command(object_type, name, attribute, value, operator="="):
    """``set OBJ [NAME] attribute OP value`` with ``value`` quoted; operator = += -=."""
    if operator not in ("=", "+=", "-="):
        raise ValueError("operator must be =, += or -=")
    return "set %s %s %s %s" % (object_ref(object_type, name), attribute, operator,
                                quote_value(value))


def unset_command(object_type, name, attribute):
    return "unset %s %s" % (object_ref(object_type, name), attribute)


def strip_max_open_servers(text):
    """Drop the ``Max open servers: N`` line qmgr prints first in stdin mode."""
    lines = text.splitlines(True)
    if lines and _MAX_OPEN.match(lines[0]):
        lines = lines[1:]
    return "".join(lines)


def parse_list_output(text):
    """Parse ``qmgr list`` output into a list of ``(kind, name, attributes)``.

    ``kind`` is the header word (``Server``, ``Hook``...), ``attributes`` a dict of
    attribute name -> value string in listing order. Wrapped values (a line ending in
    ``,`` continued on lines starting with a tab) are joined; ``""`` becomes the empty
    string; trailing white space is dropped. A leading ``Max open servers`` line is
    ignored. Raises ValueError on an attribute line outside of an object.
    """
    objects = []
    current = None
    last_attr = None
    for line in strip_max_open_servers(text).splitlines():
        if not line.strip():
            last_attr = None
            continue
        if line.startswith("\t"):
            if current is None or last_attr is None:
                raise ValueError("continuation line outside of an attribute: %r" % line)
            current[2][last_attr] += line.strip()
            continue
        match = _ATTR_LINE.match(line)
        if match:
            if current is None:
                raise ValueError("attribute line before an object header: %r" % line)
            value = (match.group(2) or "").rstrip()
            if value == '""':
                value = ""
            current[2][match.group(1)] = value
            last_attr = match.group(1)
            continue
        match = _HEADER_LINE.match(line)
        if match and not line.startswith(" "):
            current = (match.group(1), match.group(2), {})
            objects.append(current)
            last_attr = None
            continue
        raise ValueError("unexpected line in qmgr list output: %r" % line)
    return objects


def split_list_value(value):
    """Items of a comma separated qmgr list value (``a,b`` or ``a, b``); [] for ``""``."""
    return [item.strip() for item in value.split(",") if item.strip()]


def bool_word(value):
    """True/False for a qmgr boolean word (``True``, ``false``, ``t``, ``1``...), else None."""
    word = str(value).strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    return None


class Qmgr(object):
    """Runs ``qmgr`` through ``module.run_command`` with argument lists (never a shell).

    ``module``: an AnsibleModule; ``path``: the qmgr executable.
    """

    def __init__(self, module, path):
        self.module = module
        self.path = path

    def run_one(self, command):
        """Run ``qmgr -c COMMAND``; return ``(rc, stdout, stderr)`` without judging rc."""
        cmd = [self.path, "-c", command]
        rc, out, err = self.module.run_command(cmd)
        return rc, out, err

    def list_object(self, object_type, name=None):
        """Attributes (dict) of one object from ``qmgr -c "list OBJ [NAME]"``.

        Returns ``(kind, name, attributes)`` or None when qmgr exits 1 (missing object).
        Raises :class:`QmgrError` on any other failure or unparsable output.
        """
        command = list_command(object_type, name)
        rc, out, err = self.run_one(command)
        cmd = [self.path, "-c", command]
        if rc == EXIT_MISSING_OBJECT:
            return None
        if rc != 0:
            raise QmgrError("qmgr could not list %s (rc %s): %s. Check that pbs_server "
                            "is running and that this user is a PBS manager."
                            % (object_ref(object_type, name), rc, err.strip()),
                            cmd, rc, out, err)
        try:
            objects = parse_list_output(out)
        except ValueError as exc:
            raise QmgrError("cannot parse the output of %r: %s" % (command, exc),
                            cmd, rc, out, err)
        if not objects:
            return None
        return objects[0]

    def export_hook(self, hook_kind, name, content_type):
        """Raw content of a hook file via ``export hook|pbshook NAME <type> default``.

        ``content_type``: ``application/x-python`` or ``application/x-config``. Returns
        the text exactly as qmgr printed it. Raises :class:`QmgrError` on rc != 0.
        """
        command = "export %s %s %s default" % (hook_kind, name, content_type)
        rc, out, err = self.run_one(command)
        if rc != 0:
            raise QmgrError("qmgr could not export %s of %s %s (rc %s): %s"
                            % (content_type, hook_kind, name, rc, err.strip()),
                            [self.path, "-c", command], rc, out, err)
        return out

    def run_batch(self, commands, what, marker=None):
        """Run ``commands`` (list of str) in ONE ``qmgr -a`` invocation fed on stdin.

        ``what`` names the change for error messages. ``marker``: a cheap ``list`` command
        of the object being changed (see :func:`marker_command`); when given and there is
        more than one write command, it is fed after every write command so that the
        number of listings qmgr printed before it stopped tells exactly how many writes
        took effect (a write prints nothing on stdout; ``-a`` stops at the first rejected
        command). Markers are not returned in any output.

        Returns ``(stdout, stderr)`` with the ``Max open servers`` line and the marker
        listings removed from stdout. Raises :class:`QmgrError` when qmgr exits non-zero;
        with markers its ``applied`` / ``not_applied`` lists say which write commands
        took effect.
        """
        writes = [c for c in commands if not c.startswith("list ")]
        use_markers = marker is not None and len(writes) > 1
        fed = []
        for command in commands:
            fed.append(command)
            if use_markers and not command.startswith(("list ", "delete ")):
                fed.append(marker)
        cmd = [self.path, "-a"]
        data = "".join(c + "\n" for c in fed)
        rc, out, err = self.module.run_command(cmd, data=data, binary_data=True)
        out = strip_max_open_servers(out)
        if rc != 0:
            applied = not_applied = None
            detail = ""
            if use_markers:
                try:
                    done = len(parse_list_output(out))
                except ValueError:
                    done = None
                if done is not None:
                    done = min(done, len(writes))
                    applied, not_applied = writes[:done], writes[done:]
                    detail = (" qmgr stopped at %r; applied before it: %s; not applied: %s."
                              % (not_applied[0] if not_applied else None,
                                 applied or "none", not_applied))
            raise QmgrError("qmgr rejected %s (rc %s): %s.%s qmgr stopped at the first "
                            "rejected command; fix the value or attribute it names and "
                            "run the task again." % (what, rc, err.strip(), detail),
                            cmd, rc, out, err, commands, applied, not_applied)
        if use_markers:
            out = drop_marker_listings(out, len([c for c in commands
                                                 if not c.startswith(("list ", "delete "))]))
        return out, err


# An attribute every object of the type has, so ``list OBJ NAME ATTR`` is valid and short.
MARKER_ATTRIBUTE = {
    "server": "scheduling", "sched": "scheduling", "queue": "queue_type", "node": "state",
    "hook": "enabled", "pbshook": "enabled",
}


def marker_command(object_type, name=None):
    """``list OBJ [NAME] ATTR``: one header line (plus one attribute line) of output."""
    return "%s %s" % (list_command(object_type, name), MARKER_ATTRIBUTE[object_type])


def drop_marker_listings(text, count):
    """``text`` without its first ``count`` object listings (the markers' output)."""
    if count <= 0:
        return text
    lines = text.splitlines(True)
    seen = 0
    for index, line in enumerate(lines):
        if line.strip() and not line.startswith((" ", "\t")):
            seen += 1
            if seen == count + 1:
                return "".join(lines[index:])
    return ""
