"""PBS's listing format, the one parser of it: ``qmgr -c 'list ...'`` and ``qstat -f`` print
an object as a header line (``Hook name``, ``Job Id: 1.server``), then one ``    name = value``
line per attribute (four spaces); a value too long for its line goes on in lines that start
with a tab.  Standard library only (runs on the nodes)."""
import re
from typing import Dict, List, Optional, Pattern, Tuple

_ATTRIBUTE_LINE = re.compile(r"^    (\S+) = ?(.*)$")


class ListingError(ValueError):
    """A line that PBS's listing format does not have where it stands; the message quotes it."""


def parse_listing(text: str, header: Pattern, what: str,
                  strip_continuations: bool = False) -> List[Tuple[Tuple[str, ...], Dict[str, str]]]:
    """Objects of a PBS listing, in order: ``[(header groups, {attribute: value})]``.

    ``header`` is a compiled pattern that a header line (one not starting with white space)
    matches; its groups become the object's key (``("Hook", "name")``, ``("1.server",)``).
    Attributes keep the listing's order; a continuation line is appended to the attribute
    before it, as it is (``strip_continuations``: with its surrounding white space removed,
    as qmgr wraps a list after its commas); trailing white space of a value is dropped.

    Raises :class:`ListingError` naming ``what`` (``qmgr list``, ``qstat -f``) on a line
    that is neither, on an attribute line before any header, or on a continuation line with
    no attribute to continue (after a header or a blank line).
    """
    objects = []  # type: List[Tuple[Tuple[str, ...], Dict[str, str]]]
    current = None  # type: Optional[Dict[str, str]]
    last = None  # type: Optional[str]
    for line in text.splitlines():
        if not line.strip():
            last = None
            continue
        if line.startswith("\t"):
            if current is None or last is None:
                raise ListingError("continuation line outside of an attribute: %r" % line)
            current[last] += line.strip() if strip_continuations else line[1:].rstrip("\r\n")
            continue
        match = _ATTRIBUTE_LINE.match(line)
        if match:
            if current is None:
                raise ListingError("attribute line before an object header: %r" % line)
            current[match.group(1)] = match.group(2).rstrip()
            last = match.group(1)
            continue
        match = header.match(line) if not line[:1].isspace() else None
        if not match:
            raise ListingError("unexpected line in %s output: %r" % (what, line))
        current, last = {}, None
        objects.append((match.groups(), current))
    for _key, attributes in objects:
        for name, value in attributes.items():
            attributes[name] = value.rstrip()
    return objects
