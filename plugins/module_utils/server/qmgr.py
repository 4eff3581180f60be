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

Every command is built here, from checked parts, so that no input can extend it: on stdin
qmgr ends a command at a newline or an unquoted ``;``, joins a line ending in ``\\`` with
the next, starts a comment at an unquoted `` #``, and reads ``,`` as a list separator and
``=`` as an assignment. Object names and attribute names must therefore match qmgr's
grammar for their object type in full (:data:`NAME_RULES`, :func:`attribute_name_problem`);
several objects are named only by passing a list; values are quoted (:func:`quote_value`)
and may hold no newline or other control character; values of the attributes this
collection knows must also have their type (``qmgr_attributes``).
"""

import re
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from ansible_collections.hpc.pbs.plugins.module_utils.server import qmgr_attributes
from ansible_collections.hpc.pbs.plugins.module_utils.hooks.hooks import HOOK_NAME
from ansible_collections.hpc.pbs.plugins.module_utils.common.module_error import ModuleError
from ansible_collections.hpc.pbs.plugins.module_utils.pbs.listing import parse_listing
from ansible_collections.hpc.pbs.plugins.module_utils.pbs.pbs_command import (
    InputNotRead, PbsRunner, module_run_command)

OBJECT_TYPES = ("server", "sched", "queue", "node", "hook", "pbshook")

EXIT_MISSING_OBJECT = 1

TRUE_WORDS = ("true", "t", "y", "1")
FALSE_WORDS = ("false", "f", "n", "0")

# Object names by type: (full-match pattern, longest length, what is accepted). qmgr's
# check_list() wants a letter first (a letter or digit for nodes) and splits on "," and
# "@"; the server limits queue and scheduler names to 15 characters (PBS_MAXQUEUENAME,
# PBS_MAXSCHEDNAME), node names to 255 and legal_vnode_char(); hook names are file names
# NAME.HK/.PY/.CF under server_priv/hooks (PBS_HOOK_NAME_SIZE 512). PBS also allows
# "#", "^", "/" and "\\" in node names; this collection does not, as qmgr's stdin reader
# treats a trailing "\\" as a line continuation.
NAME_RULES = {
    "server": (re.compile(r"[A-Za-z][A-Za-z0-9.-]*"), 255,
               "a host name: a letter, then letters, digits, '.' or '-'"),
    "sched": (re.compile(r"[A-Za-z][A-Za-z0-9_-]*"), 15,
              "a letter, then letters, digits, '_' or '-', at most 15 characters"),
    "queue": (re.compile(r"[A-Za-z][A-Za-z0-9_-]*"), 15,
              "a letter, then letters, digits, '_' or '-', at most 15 characters"),
    "node": (re.compile(r"[A-Za-z0-9][A-Za-z0-9._\[\]-]*"), 255,
             "a letter or digit, then letters, digits, '.', '_', '-', '[' or ']'"),
    "hook": (HOOK_NAME, 511, "a letter, then letters, digits, '_' or '-'"),
    "pbshook": (HOOK_NAME, 511, "a letter, then letters, digits, '_' or '-'"),
}
# Attribute names (``attr`` or ``attr.resource``): PBS attribute names are a letter then
# letters, digits and "_"; resource names verify_resc_name() (attr_resc_func.c) also "-".
_ATTRIBUTE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_RESOURCE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
RESOURCE_OBJECT_TYPES = ("server", "queue", "node")
ATTRIBUTE_NAME_ACCEPTED = ("an attribute name as qmgr lists it: a letter, then letters, "
                           "digits or '_' (for server, queue and node also "
                           "ATTRIBUTE.RESOURCE such as resources_available.ncpus)")

# Characters a value may hold and still be written without quotes.
_BARE_VALUE = re.compile(r"[A-Za-z0-9_.@*:/%+-]+")
_HEADER_LINE = re.compile(r"^(\S+) (\S+)\s*$")
_MAX_OPEN = re.compile(r"^Max open servers: \d+\s*$")


class QmgrError(ModuleError):
    """A qmgr call failed (a :class:`~module_error.ModuleError`: a module's ``main()`` fails
    the task with :meth:`fail_kwargs`). Attributes: ``msg``, ``cmd`` (argument list), ``rc``,
    ``stdout``, ``stderr``, ``commands`` (stdin commands, if any), for a batch that
    stopped half-way ``applied`` / ``not_applied`` (the write commands that did and did not
    take effect, in order; None when unknown), and ``rejected`` (dict ``command``,
    ``object_type``, ``name``, ``attribute``, ``value`` of the command qmgr refused; None
    when unknown)."""

    def __init__(self, msg: str, cmd: List[str], rc: int, stdout: str, stderr: str,
                 commands: Optional[List[str]] = None, applied: Optional[List[str]] = None,
                 not_applied: Optional[List[str]] = None,
                 rejected: Optional[Dict[str, Any]] = None) -> None:
        ModuleError.__init__(self, msg)
        self.cmd = cmd
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr
        self.commands = commands or []
        self.applied = applied
        self.not_applied = not_applied
        self.rejected = rejected

    def fail_kwargs(self) -> Dict[str, Any]:
        """Keyword arguments for ``module.fail_json``."""
        kwargs = dict(msg=self.msg, cmd=self.cmd, rc=self.rc, stdout=self.stdout,
                      stderr=self.stderr, commands=[str(c) for c in self.commands])
        if self.applied is not None:
            kwargs.update(applied=[str(c) for c in self.applied],
                          not_applied=[str(c) for c in self.not_applied],
                          changed=bool(self.applied))
        if self.rejected is not None:
            kwargs.update(rejected=self.rejected)
        return kwargs


class QmgrValueError(ValueError):
    """A name or value cannot be written as a qmgr command (its message says why and what
    is accepted)."""


class QmgrCommand(str):
    """The text of one qmgr command (a ``str``) that remembers its parts: ``verb``,
    ``object_type``, ``name`` (str, comma-joined names, or None), ``attribute`` and
    ``value`` (None when the command has none)."""

    def __new__(cls, text, verb, object_type, name=None, attribute=None, value=None):
        self = str.__new__(cls, text)
        self.verb = verb
        self.object_type = object_type
        self.name = name
        self.attribute = attribute
        self.value = value
        return self

    def parts(self) -> Dict[str, Optional[str]]:
        """``{command, object_type, name, attribute, value}`` for messages and results."""
        return dict(command=str(self), object_type=self.object_type, name=self.name,
                    attribute=self.attribute, value=self.value)

    def describe(self) -> str:
        """``server attribute scheduler_iteration, value 'abc'`` and the like."""
        text = object_ref(self.object_type, self.name)
        if self.attribute is not None:
            text += " attribute %s" % self.attribute
        if self.value is not None:
            text += ", value %r" % self.value
        return text


def _character_problem(text):
    """What in ``text`` qmgr would read as syntax, described (a newline first, else the
    first such character), or None."""
    if "\n" in text or "\r" in text:
        return "a newline (qmgr would read a second command)"
    for char in text:
        if ord(char) < 32 or ord(char) == 127:
            return "the control character %r" % char
        if char.isspace():
            return "white space"
        if char == ",":
            return "a comma (qmgr reads a comma as a list separator)"
        if char == "=":
            return "'=' (qmgr reads an assignment)"
        if char in "\"'":
            return "a quote"
        if char == ";":
            return "';' (qmgr's command separator)"
    return None


def object_name_problem(object_type: str, name: Any) -> Optional[str]:
    """Why ``name`` cannot name one object of ``object_type`` in a qmgr command (str: what
    is wrong and what is accepted), or None."""
    if object_type not in NAME_RULES:
        return "unknown qmgr object type %r; accepted: %s" % (
            object_type, ", ".join(OBJECT_TYPES))
    pattern, longest, accepted = NAME_RULES[object_type]
    if not isinstance(name, str):
        return "%s name %r is not a string; accepted: %s" % (object_type, name, accepted)
    wrong = _character_problem(name)
    if wrong is None and not name:
        wrong = "nothing"
    if wrong is None and not pattern.fullmatch(name):
        wrong = "a character qmgr does not take there"
    if wrong is None and len(name) > longest:
        wrong = "%d characters, more than %d" % (len(name), longest)
    if wrong is None:
        return None
    return "%s name %r is not accepted: it holds %s; accepted: %s" % (
        object_type, name, wrong, accepted)


def attribute_name_problem(object_type: str, attribute: Any) -> Optional[str]:
    """Why ``attribute`` cannot be an attribute name of ``object_type`` in a qmgr command
    (str: what is wrong and what is accepted), or None."""
    if not isinstance(attribute, str):
        return "attribute name %r is not a string; accepted: %s" % (
            attribute, ATTRIBUTE_NAME_ACCEPTED)
    base, dot, resource = attribute.partition(".")
    wrong = _character_problem(attribute)
    if wrong is None and not _ATTRIBUTE_NAME.fullmatch(base):
        wrong = "a character qmgr does not take in an attribute name"
    if wrong is None and dot and object_type not in RESOURCE_OBJECT_TYPES:
        wrong = "a resource part, which %s attributes do not have" % object_type
    if wrong is None and dot and not _RESOURCE_NAME.fullmatch(resource):
        wrong = "a resource name that is not a letter followed by letters, digits, '_' or '-'"
    if wrong is None:
        return None
    return "%s attribute name %r is not accepted: it holds %s; accepted: %s" % (
        object_type, attribute, wrong, ATTRIBUTE_NAME_ACCEPTED)


def value_problem(object_type: str, attribute: str, value: str,
                  operator: str = "=") -> Optional[str]:
    """Why ``value`` (str) cannot be written to ``attribute`` of ``object_type`` with
    ``operator``: a control character, both quote characters, or a value of the wrong type
    for an attribute of :mod:`qmgr_attributes`. Returns str or None."""
    for char in value:
        if ord(char) < 32 and char != "\t" or ord(char) == 127:
            return ("%s attribute %s: a qmgr value cannot hold a newline or other control "
                    "character (%r in %r)" % (object_type, attribute, char, value))
    if '"' in value and "'" in value:
        return ("%s attribute %s: qmgr cannot take a value containing both \" and ' "
                "(\\\" is not an escape in qmgr): %r" % (object_type, attribute, value))
    return qmgr_attributes.value_problem(object_type, attribute, value, operator,
                                         object_name_problem)


def _raise_if(problem):
    if problem:
        raise QmgrValueError(problem)


def stdin_line_problem(command: str) -> Optional[str]:
    """Why ``command`` (str) would not reach qmgr's stdin reader (get_request() in qmgr.c)
    as exactly one whole command, or None: a newline ends it, an unquoted ``;`` starts
    another one, an unquoted ``#`` after white space starts a comment, a trailing ``\\``
    joins the next line, and an unclosed quote swallows the rest."""
    quote = None
    for index, char in enumerate(command):
        if char in "\r\n":
            return "qmgr command %r holds a newline" % str(command)
        if quote:
            if char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char == ";":
            return "qmgr command %r holds an unquoted ';'" % str(command)
        elif char == "#" and index and command[index - 1].isspace():
            return "qmgr command %r holds an unquoted comment" % str(command)
    if quote:
        return "qmgr command %r holds an unclosed quote" % str(command)
    if command.endswith("\\"):
        return "qmgr command %r ends with a line continuation" % str(command)
    return None


def quote_value(value: str) -> str:
    """Return ``value`` (str) as qmgr accepts it on a command line.

    Bare when it only holds ``[A-Za-z0-9_.@*:/%+-]``; ``""`` for the empty string;
    ``"..."`` otherwise, or ``'...'`` when it contains ``"``. Raises
    :class:`QmgrValueError` for a newline or other control character, or for both ``"``
    and ``'``.
    """
    value = str(value)
    if "\n" in value or "\r" in value:
        raise QmgrValueError("a qmgr value cannot contain a newline: %r" % value)
    if any(ord(char) < 32 and char != "\t" or ord(char) == 127 for char in value):
        raise QmgrValueError("a qmgr value cannot contain a control character: %r" % value)
    if value == "":
        return '""'
    if _BARE_VALUE.fullmatch(value):
        return value
    if '"' in value:
        if "'" in value:
            raise QmgrValueError(
                "qmgr cannot take a value containing both \" and ' (\\\" is not an "
                "escape in qmgr): %r" % value)
        return "'%s'" % value
    return '"%s"' % value


def object_ref(object_type: str, name: Union[str, Sequence[str], None] = None) -> str:
    """``server`` / ``server NAME`` / ``sched default`` / ``node a,b`` ... as qmgr wants.

    ``name``: None, one name (str) or an explicit list of names (joined with ``,``, which
    qmgr runs once per object). Raises :class:`QmgrValueError` for an unknown object type
    or a name that is not one object name of that type (:func:`object_name_problem`).
    """
    if object_type not in OBJECT_TYPES:
        raise QmgrValueError("unknown qmgr object type %r; accepted: %s"
                             % (object_type, ", ".join(OBJECT_TYPES)))
    if name is None:
        return object_type
    names = list(name) if isinstance(name, (list, tuple)) else [name]
    if not names:
        raise QmgrValueError("an empty list of %s names" % object_type)
    for each in names:
        problem = object_name_problem(object_type, each)
        if problem and "," in each:
            problem += " (several objects are given as a list of names, never in one name)"
        _raise_if(problem)
    return "%s %s" % (object_type, ",".join(names))


def _joined(name):
    if isinstance(name, (list, tuple)):
        return ",".join(name)
    return name or None


def list_command(object_type: str, name: Union[str, Sequence[str], None] = None,
                 attributes: Sequence[str] = ()) -> QmgrCommand:
    """``list OBJ [NAME] [ATTR[,ATTR...]]``; names and attributes checked."""
    text = "list %s" % object_ref(object_type, name)
    for attribute in attributes:
        _raise_if(attribute_name_problem(object_type, attribute))
    if attributes:
        text += " " + ",".join(attributes)
    return QmgrCommand(text, "list", object_type, _joined(name))


def set_command(object_type: str, name: Optional[str], attribute: str, value: str,
                operator: str = "=") -> QmgrCommand:
    """``set OBJ [NAME] attribute OP value`` with ``value`` (str) checked
    (:func:`value_problem`) and quoted; operator = += -=. Raises
    :class:`QmgrValueError`."""
    if operator not in ("=", "+=", "-="):
        raise QmgrValueError("operator must be =, += or -=")
    ref = object_ref(object_type, name)
    _raise_if(attribute_name_problem(object_type, attribute))
    value = str(value)
    _raise_if(value_problem(object_type, attribute, value, operator))
    text = "set %s %s %s %s" % (ref, attribute, operator, quote_value(value))
    return QmgrCommand(text, "set", object_type, _joined(name), attribute, value)


def unset_command(object_type: str, name: Optional[str], attribute: str) -> QmgrCommand:
    """``unset OBJ [NAME] attribute``; name and attribute checked."""
    ref = object_ref(object_type, name)
    _raise_if(attribute_name_problem(object_type, attribute))
    return QmgrCommand("unset %s %s" % (ref, attribute), "unset", object_type,
                       _joined(name), attribute)


def create_command(object_type: str, name: str) -> QmgrCommand:
    """``create OBJ NAME`` (one object)."""
    return QmgrCommand("create %s" % object_ref(object_type, name), "create", object_type,
                       name)


def delete_command(object_type: str, name: str) -> QmgrCommand:
    """``delete OBJ NAME`` (one object)."""
    return QmgrCommand("delete %s" % object_ref(object_type, name), "delete", object_type,
                       name)


HOOK_CONTENT_TYPES = ("application/x-python", "application/x-config")


def import_command(object_type: str, name: str, content_type: str, path: str) -> QmgrCommand:
    """``import hook|pbshook NAME CONTENT_TYPE default PATH`` (``path`` quoted)."""
    if content_type not in HOOK_CONTENT_TYPES:
        raise QmgrValueError("content type must be one of %s" % ", ".join(HOOK_CONTENT_TYPES))
    text = "import %s %s default %s" % (object_ref(object_type, name), content_type,
                                        quote_value(path))
    return QmgrCommand(text, "import", object_type, name, value=str(path))


def export_command(object_type: str, name: str, content_type: str) -> QmgrCommand:
    """``export hook|pbshook NAME CONTENT_TYPE default`` (to stdout)."""
    if content_type not in HOOK_CONTENT_TYPES:
        raise QmgrValueError("content type must be one of %s" % ", ".join(HOOK_CONTENT_TYPES))
    return QmgrCommand("export %s %s default" % (object_ref(object_type, name), content_type),
                       "export", object_type, name)


def strip_max_open_servers(text: str) -> str:
    """Drop the ``Max open servers: N`` line qmgr prints first in stdin mode."""
    lines = text.splitlines(True)
    if lines and _MAX_OPEN.match(lines[0]):
        lines = lines[1:]
    return "".join(lines)


def parse_list_output(text: str) -> List[Tuple[str, str, Dict[str, str]]]:
    """Parse ``qmgr list`` output into a list of ``(kind, name, attributes)``.

    ``kind`` is the header word (``Server``, ``Hook``...), ``attributes`` a dict of
    attribute name -> value string in listing order. Wrapped values (a line ending in
    ``,`` continued on lines starting with a tab) are joined; ``""`` becomes the empty
    string; trailing white space is dropped. A leading ``Max open servers`` line is
    ignored. Raises ValueError (:class:`ListingError`) on a line the listing format does
    not have there.
    """
    objects = parse_listing(strip_max_open_servers(text), _HEADER_LINE, "qmgr list", strip_continuations=True)
    for _key, attributes in objects:
        for name, value in attributes.items():
            if value == '""':
                attributes[name] = ""
    return [(kind, name, attributes) for (kind, name), attributes in objects]


def split_list_value(value: str) -> List[str]:
    """Items of a comma separated qmgr list value (``a,b`` or ``a, b``); [] for ``""``."""
    return [item.strip() for item in value.split(",") if item.strip()]


def bool_word(value: Any) -> Optional[bool]:
    """True/False for a qmgr boolean word (``True``, ``false``, ``t``, ``1``...), else None."""
    word = str(value).strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    return None


class Qmgr:
    """Runs ``qmgr`` through ``module.run_command`` with argument lists (never a shell),
    by :class:`~pbs_command.PbsRunner` (``PBS_CONF_FILE`` and the C locale).

    ``module``: an AnsibleModule; ``path``: the qmgr executable; ``conf_file``: the
    pbs.conf qmgr is to read (None: ``$PBS_CONF_FILE`` / ``/etc/pbs.conf`` of the module).
    :meth:`for_paths` builds one from a ``PbsPaths``.
    """

    def __init__(self, module: Any, path: str, conf_file: Optional[str] = None) -> None:
        self.runner = PbsRunner(module_run_command(module), conf_file)
        self.path = path

    @classmethod
    def for_paths(cls, module: Any, paths: Any) -> "Qmgr":
        """The qmgr of the installation ``paths`` (``PbsPaths``) describes."""
        return cls(module, paths.qmgr, paths.conf_file)

    def run_one(self, command: str) -> Tuple[int, str, str]:
        """Run ``qmgr -c COMMAND``; return ``(rc, stdout, stderr)`` without judging rc.
        Raises :class:`QmgrValueError` for a command that is not one whole qmgr command
        (:func:`stdin_line_problem`)."""
        _raise_if(stdin_line_problem(command))
        cmd = [self.path, "-c", str(command)]
        rc, out, err = self.runner.run_command(cmd)
        return rc, out, err

    def list_object(self, object_type: str,
                    name: Optional[str] = None) -> Optional[Tuple[str, str, Dict[str, str]]]:
        """Attributes (dict) of one object from ``qmgr -c "list OBJ [NAME]"``.

        Returns ``(kind, name, attributes)`` or None when qmgr exits 1 (missing object).
        Raises :class:`QmgrError` on any other failure or unparsable output.
        """
        command = list_command(object_type, name)
        rc, out, err = self.run_one(command)
        cmd = [self.path, "-c", str(command)]
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

    def list_objects(self, object_type: str, names: Sequence[str]) -> Dict[str, Dict[str, str]]:
        """``{name: attributes}`` of the objects ``names`` (list) from ONE ``qmgr -c "list
        OBJ a,b"``, which qmgr runs once per name; missing objects are left out (qmgr then
        exits 1 after listing the others). Raises :class:`QmgrError` on any other failure
        or unparsable output."""
        command = list_command(object_type, list(names))
        rc, out, err = self.run_one(command)
        cmd = [self.path, "-c", str(command)]
        if rc not in (0, EXIT_MISSING_OBJECT):
            raise QmgrError("qmgr could not list %s (rc %s): %s. Check that pbs_server "
                            "is running and that this user is a PBS manager."
                            % (object_ref(object_type, list(names)), rc, err.strip()),
                            cmd, rc, out, err)
        try:
            objects = parse_list_output(out)
        except ValueError as exc:
            raise QmgrError("cannot parse the output of %r: %s" % (str(command), exc),
                            cmd, rc, out, err)
        return dict((name, attrs) for _kind, name, attrs in objects if name in names)

    def export_hook(self, hook_kind: str, name: str, content_type: str) -> str:
        """Raw content of a hook file via ``export hook|pbshook NAME <type> default``.

        ``content_type``: ``application/x-python`` or ``application/x-config``. Returns
        the text exactly as qmgr printed it. Raises :class:`QmgrError` on rc != 0.
        """
        command = export_command(hook_kind, name, content_type)
        rc, out, err = self.run_one(command)
        if rc != 0:
            raise QmgrError("qmgr could not export %s of %s %s (rc %s): %s"
                            % (content_type, hook_kind, name, rc, err.strip()),
                            [self.path, "-c", str(command)], rc, out, err)
        return out

    def run_batch(self, commands: Sequence[str], what: str,
                  marker: Optional[str] = None) -> Tuple[str, str]:
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
        for command in commands:
            _raise_if(stdin_line_problem(command))
        writes = [c for c in commands if not c.startswith("list ")]
        use_markers = marker is not None and len(writes) > 1
        fed = []
        for command in commands:
            fed.append(command)
            if use_markers and not command.startswith(("list ", "delete ")):
                fed.append(marker)
        cmd = [self.path, "-a"]
        data = "".join(str(c) + "\n" for c in fed)
        try:
            rc, out, err = self.runner.run_command(cmd, data=data, binary_data=True)
        except InputNotRead as exc:
            # qmgr quit before reading (it could not reach its server): none of the commands
            # ran. A read without input makes it say why.
            rc, dummy, err = self.runner.run_command([self.path, "-c", "list server"])
            rc, out, err = rc or 1, "", (err.rstrip("\n") + "\n" if err else "") + str(exc)
        out = strip_max_open_servers(out)
        if rc != 0:
            applied, not_applied = self._applied_split(out, writes, use_markers)
            rejected = _rejected_command(out, writes, not_applied)
            raise QmgrError(_rejection_message(what, rc, err, rejected, applied, not_applied),
                            cmd, rc, out, err, commands, applied, not_applied,
                            _rejected_parts(rejected))
        if use_markers:
            out = drop_marker_listings(out, len([c for c in commands
                                                 if not c.startswith(("list ", "delete "))]))
        return out, err

    @staticmethod
    def _applied_split(out, writes, use_markers):
        """``(applied, not_applied)`` write commands from the marker listings in ``out``, or
        ``(None, None)`` when they cannot be told apart."""
        if not use_markers:
            return None, None
        try:
            done = len(parse_list_output(out))
        except ValueError:
            return None, None
        done = min(done, len(writes))
        return writes[:done], writes[done:]


def _rejected_command(out, writes, not_applied):
    """The write command qmgr refused, or None when it cannot be known: the first one not
    applied (markers), else the only write when qmgr listed nothing after it."""
    if not_applied is not None:
        return not_applied[0] if not_applied else None
    if len(writes) == 1:
        try:
            listed = parse_list_output(out)
        except ValueError:
            listed = None
        if not listed:
            return writes[0]
    return None


def _rejected_parts(rejected):
    """``QmgrError.rejected`` for the refused command (dict), or None."""
    if isinstance(rejected, QmgrCommand):
        return rejected.parts()
    if rejected is not None:
        return dict(command=str(rejected))
    return None


def _rejection_message(what, rc, err, rejected, applied, not_applied):
    """The failure text of a batch: which object, attribute and value qmgr refused and its
    own words, what did and did not take effect, and what to do."""
    said = "; ".join(line.strip() for line in err.splitlines() if line.strip()) or "no message"
    if rejected is None:
        where = ""
    elif isinstance(rejected, QmgrCommand):
        where = " at %s (command %r)" % (rejected.describe(), str(rejected))
    else:
        where = " at command %r" % str(rejected)
    detail = ""
    if applied is not None:
        detail = " Applied before it: %s; not applied: %s." % (
            [str(c) for c in applied] or "none", [str(c) for c in not_applied])
    return ("qmgr rejected %s%s (rc %s): %s.%s qmgr stopped at the first rejected command; "
            "fix the value or attribute it names and run the task again."
            % (what, where, rc, said, detail))


# An attribute every object of the type has, so ``list OBJ NAME ATTR`` is valid and short.
MARKER_ATTRIBUTE = {
    "server": "scheduling", "sched": "scheduling", "queue": "queue_type", "node": "state",
    "hook": "enabled", "pbshook": "enabled",
}


def marker_command(object_type: str, name: Optional[str] = None) -> QmgrCommand:
    """``list OBJ [NAME] ATTR``: one header line (plus one attribute line) of output."""
    return list_command(object_type, name, [MARKER_ATTRIBUTE[object_type]])


def drop_marker_listings(text: str, count: int) -> str:
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
