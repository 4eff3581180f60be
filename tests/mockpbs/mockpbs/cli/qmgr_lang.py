"""The qmgr command language: parsing directives and formatting ``list``/``print`` output,
as OpenPBS 23.06 qmgr does (reference/openpbs transcripts a, b, k).

Parsing (:func:`parse`) is what the qmgr client does before it talks to the server:

- ``COMMAND OBJECT [NAMES] [ATTR OP VALUE[, ATTR OP VALUE...]]`` for create/set,
  ``COMMAND OBJECT [NAMES] [ATTR[,ATTR...]]`` for unset/list/print, ``import OBJECT NAME
  CONTENT_TYPE ENCODING FILE`` and ``export OBJECT NAME CONTENT_TYPE ENCODING [FILE]``.
- Commands may be abbreviated (``s`` set, ``l`` list, ``c`` create, ``d`` delete, ``u``
  unset, ``p`` print, ``i`` import, ``e`` export), objects too (``s`` server, ``q`` queue,
  ``n`` node, ``h`` hook, ``sc`` sched).
- ``NAMES`` is one object name or a comma-separated list of them (``list node
  mom1,mom2``, ``set node mom1,mom2 state=offline``): qmgr's ``check_list()`` rejects an
  empty name (``a,,b``, ``a,``, ``,a``) with rc 3, the caret one column before the bad
  name, and the client then runs the directive once per name, in list order
  (:meth:`Command.per_object`).
- Values may be quoted with ``'`` or ``"``; adjacent quoted and bare pieces concatenate;
  there are no escapes (``"say \\"hi\\""`` gives ``say \\hi\\``).
- Errors raise :class:`QmgrSyntaxError` carrying the column for the caret line and the
  exit code (3: bad object name, 4: bad attribute list or value, 1: bad command/object).
"""
import re

from mockpbs import attributes

COMMANDS = {
    "create": "create", "c": "create", "delete": "delete", "d": "delete", "set": "set",
    "s": "set", "unset": "unset", "u": "unset", "list": "list", "l": "list", "print": "print",
    "p": "print", "import": "import", "i": "import", "export": "export", "e": "export",
    "quit": "quit", "q": "quit", "exit": "quit",
}
OBJECTS = {
    "server": "server", "s": "server", "sched": "sched", "sc": "sched", "queue": "queue",
    "q": "queue", "node": "node", "n": "node", "hook": "hook", "h": "hook",
    "pbshook": "pbshook",
}
DEFAULT_SCHED = "default"
LIST_ATTRIBUTES = {"event", "managers", "operators", "acl_hosts", "acl_users", "acl_roots"}
NAME_RE = re.compile(r"[A-Za-z0-9_.\-@\[\]]+")
NAME_LIST_RE = re.compile(r"[A-Za-z0-9_.\-@\[\],]+")
ATTR_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)?")
WRAP_LIMIT = 80


class QmgrSyntaxError(Exception):
    """``position``: 0-based column of the caret; ``rc``: qmgr's exit code."""

    def __init__(self, position, rc):
        super().__init__("Syntax error at %d" % position)
        self.position = position
        self.rc = rc


class Command:
    """A parsed directive. ``attrs`` is a list of ``(name, op, value)``; op is ``=``,
    ``+=``, ``-=`` (create/set) or None (unset/list/print). ``names``: the object names
    in the order given (empty when none was), ``name``: the first of them or None."""

    def __init__(self, verb, objtype=None, name=None, attrs=None, content_type=None,
                 encoding=None, filename=None, names=None):
        self.verb = verb
        self.objtype = objtype
        self.names = list(names) if names else ([name] if name else [])
        self.name = self.names[0] if self.names else None
        self.attrs = attrs or []
        self.content_type = content_type
        self.encoding = encoding
        self.filename = filename

    def per_object(self):
        """The directive once per object name, as qmgr's ``execute()`` sends it: a list of
        :class:`Command` with one name each (``[self]`` when there are fewer than two)."""
        if len(self.names) < 2:
            return [self]
        return [Command(self.verb, self.objtype, name, list(self.attrs), self.content_type,
                        self.encoding, self.filename) for name in self.names]

    def to_message(self):
        return {"op": "qmgr", "command": self.verb, "object": self.objtype, "name": self.name,
                "attrs": [list(a) for a in self.attrs], "content_type": self.content_type,
                "encoding": self.encoding}

    def __repr__(self):
        return "Command(%r, %r, %r, %r)" % (self.verb, self.objtype, self.name, self.attrs)


def syntax_error_text(line, position):
    """The two stderr lines qmgr prints after ``qmgr: Syntax error``."""
    return "%s\n%s^\n" % (line, " " * position)


class _Scanner:
    def __init__(self, text):
        self.text = text
        self.pos = 0

    def skip_ws(self):
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1

    def at_end(self):
        self.skip_ws()
        return self.pos >= len(self.text)

    def word(self, pattern=re.compile(r"[A-Za-z_]+")):
        self.skip_ws()
        match = pattern.match(self.text, self.pos)
        if not match:
            return None, self.pos
        start = self.pos
        self.pos = match.end()
        return match.group(0), start

    def bare_token(self):
        """Whitespace-delimited token (import/export arguments)."""
        self.skip_ws()
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in " \t":
            self.pos += 1
        return self.text[start:self.pos], start

    def peek_operator(self):
        """Return the operator at the current position (after blanks) without moving."""
        save = self.pos
        self.skip_ws()
        for op in ("+=", "-=", "="):
            if self.text.startswith(op, self.pos):
                self.pos = save
                return op
        self.pos = save
        return None

    def value(self):
        """A value: quoted/bare pieces glued together; returns (value, start) or raises."""
        self.skip_ws()
        start = self.pos
        pieces = []
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char in "\"'":
                end = self.text.find(char, self.pos + 1)
                if end < 0:
                    raise QmgrSyntaxError(self.pos, 4)
                pieces.append(self.text[self.pos + 1:end])
                self.pos = end + 1
            elif char in " \t,":
                break
            else:
                begin = self.pos
                while self.pos < len(self.text) and self.text[self.pos] not in " \t,\"'":
                    self.pos += 1
                pieces.append(self.text[begin:self.pos])
        if self.pos == start:
            raise QmgrSyntaxError(start, 4)
        return "".join(pieces), start


def _attribute_named(objtype, name):
    return attributes.attribute_known(objtype, name)


def parse(line):
    """Parse one qmgr directive. Returns a :class:`Command` (verb ``quit`` for quit/exit)
    or None for a blank/comment line; raises :class:`QmgrSyntaxError`."""
    scanner = _Scanner(line.rstrip("\n"))
    if scanner.at_end() or scanner.text.lstrip().startswith("#"):
        return None
    word, start = scanner.word()
    verb = COMMANDS.get((word or "").lower())
    if verb is None:
        raise QmgrSyntaxError(start, 1)
    if verb == "quit":
        return Command("quit")
    word, start = scanner.word()
    objtype = OBJECTS.get((word or "").lower())
    if objtype is None:
        raise QmgrSyntaxError(start, 2)
    command = Command(verb, objtype)

    if verb in ("import", "export"):
        name, start = scanner.word(NAME_RE)
        if not name:
            raise QmgrSyntaxError(start, 3)
        _check_name(objtype, name, start)
        command.name = name
        command.content_type, start = scanner.bare_token()
        if not command.content_type:
            raise QmgrSyntaxError(start, 4)
        command.encoding, start = scanner.bare_token()
        if not command.encoding:
            raise QmgrSyntaxError(start, 4)
        command.filename, start = scanner.bare_token()
        if verb == "import" and not command.filename:
            raise QmgrSyntaxError(start, 4)
        if not scanner.at_end():
            raise QmgrSyntaxError(scanner.pos, 4)
        return command

    with_values = verb in ("create", "set")
    # Is the next token an object name or the first attribute?
    scanner.skip_ws()
    if not scanner.at_end():
        save = scanner.pos
        token, start = scanner.word(NAME_LIST_RE)
        if token is None:
            raise QmgrSyntaxError(scanner.pos, 3)
        # As qmgr.c's parse(): the word is the first attribute when is_attr() knows it as
        # one of the object type's attributes (never for hooks), else the object name(s).
        # So "set sched no_such = 1" takes no_such for a name and fails at the "=".
        is_attribute = objtype not in ("hook", "pbshook") and _attribute_named(objtype, token.split(",")[0])
        if is_attribute:
            scanner.pos = save
        else:
            command.names = _name_list(objtype, token, start)
            command.name = command.names[0]
    if verb in ("create", "delete") and not command.name and objtype not in ("server", "sched"):
        raise QmgrSyntaxError(scanner.pos, 3)

    first = True
    while not scanner.at_end():
        if not first:
            if scanner.text[scanner.pos] != ",":
                raise QmgrSyntaxError(scanner.pos, 4)
            scanner.pos += 1
        first = False
        name, start = scanner.word(ATTR_RE)
        if not name:
            raise QmgrSyntaxError(scanner.pos, 4)
        # An attribute qmgr does not know still goes to the server, which answers
        # PBSE_NOATTR ("Undefined attribute"), as real OpenPBS does.
        if not with_values:
            command.attrs.append((name, None, None))
            continue
        op = scanner.peek_operator()
        if op is None:
            scanner.skip_ws()
            raise QmgrSyntaxError(scanner.pos, 4)
        scanner.skip_ws()
        scanner.pos += len(op)
        value, _unused = scanner.value()
        command.attrs.append((name, op, value))
    return command


def _name_list(objtype, text, start):
    """Split the comma-separated object names ``text`` (found at column ``start``) as qmgr's
    ``check_list()`` does; raises :class:`QmgrSyntaxError` (rc 3) for an empty name or a
    name that cannot start an object name. qmgr puts the caret one column before the
    offending name (at the comma), except for the first name."""
    names = []
    position = 0
    while True:
        end = text.find(",", position)
        end = len(text) if end < 0 else end
        name = text[position:end]
        caret = start + max(position, 1) - 1
        if not name:
            raise QmgrSyntaxError(caret, 3)
        _check_name(objtype, name, caret)
        names.append(name)
        if end == len(text):
            return names
        position = end + 1


def _check_name(objtype, name, start):
    if objtype in ("hook", "pbshook", "queue") and not (name[0].isalpha() or name[0] == "_"):
        raise QmgrSyntaxError(start, 3)


# ---------------------------------------------------------------------------
# output formats

def format_list_value(name, value):
    """``    name = value`` with qmgr's wrapping: the value is cut after a comma once the
    running length reaches 80 columns, and (as 23.06 does) after every later comma too."""
    out = ["    %s = " % name]
    length = len(name) + 11
    pieces = value.split(",")
    for index, piece in enumerate(pieces):
        length += len(piece) + 1
        if index and length >= WRAP_LIMIT:
            out.append("\n\t")
            piece = piece.lstrip(" \t")
        out.append(piece)
        if index < len(pieces) - 1:
            out.append(",")
    return "".join(out) + "\n"


def format_list(label, name, items):
    """One object of ``qmgr list``: ``Hook h1`` + attribute lines + a blank line."""
    return "%s %s\n" % (label, name) + "".join(format_list_value(k, v) for k, v in items) + "\n"


def quote_print_value(value):
    if re.search(r"[\"' ,]", value):
        quote = "'" if '"' in value else '"'
        return "%s%s%s" % (quote, value, quote)
    return value


def format_print_attr(prefix, name, value):
    """``set <prefix> name = value`` lines; list attributes give one ``+=`` line per item."""
    if name in LIST_ATTRIBUTES and value != '""':
        pieces = value.split(",")
    else:
        pieces = [value]
    lines = []
    for index, piece in enumerate(pieces):
        lines.append("set %s %s %s %s\n" % (prefix, name, "=" if index == 0 else "+=",
                                            quote_print_value(piece)))
    return "".join(lines)


def format_print_queue(name, items):
    text = "#\n# Create and define queue %s\n#\ncreate queue %s\n" % (name, name)
    return text + "".join(format_print_attr("queue %s" % name, k, v) for k, v in items)


def format_print_server(queues, server_items):
    text = ""
    if queues:
        text += "#\n# Create queues and set their attributes.\n#\n"
        text += "".join(format_print_queue(name, items) for name, items in queues)
    text += "#\n# Set server attributes.\n#\n"
    return text + "".join(format_print_attr("server", k, v) for k, v in server_items)


def format_print_sched(name, items):
    text = "#\n# Create and define scheduler %s\n#\ncreate sched %s\n" % (name, name)
    return text + "".join(format_print_attr("sched", k, v) for k, v in items)


def format_print_nodes(nodes):
    """``nodes``: list of (name, create_suffix, items)."""
    text = "#\n# Create nodes and set their properties.\n#\n"
    for name, suffix, items in nodes:
        text += "#\n# Create and define node %s\n#\ncreate node %s%s\n" % (name, name, suffix)
        text += "".join(format_print_attr("node %s" % name, k, v) for k, v in items)
    return text


def format_print_hooks(hooks):
    """``hooks``: list of dicts ``{"name", "items", "PY_b64", "CF_b64"}`` (base64 text,
    possibly empty)."""
    text = "#\n# Create hooks and set their properties.\n#\n"
    for hook in hooks:
        name = hook["name"]
        text += "#\n# Create and define hook %s\n#\ncreate hook %s\n" % (name, name)
        text += "".join(format_print_attr("hook %s" % name, k, v) for k, v in hook["items"])
        for kind, key in (("application/x-python", "PY_b64"), ("application/x-config", "CF_b64")):
            text += "import hook %s %s base64 -\n" % (name, kind)
            if hook.get(key):
                text += hook[key] + "\n"
            text += "\n"
    return text
