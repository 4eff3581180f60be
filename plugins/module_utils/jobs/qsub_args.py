# -*- coding: utf-8 -*-
"""The server's ``default_qsub_arguments``: parse it as qsub does, and edit only its
``-W tolerate_node_failures=...`` part (PP-928 interface 1).

Facts (reference transcript d_, OpenPBS ``src/cmds/qsub.c``):

- The server stores any string without checking it. Every ``qsub`` prepends it to its own
  arguments; a per-user background qsub process caches it, so one bad value makes every
  plain ``qsub`` fail with ``qsub: illegal -W value`` until that process ends. A value is
  therefore only written after it has been parsed back successfully.
- qsub's options (its usage text): ``-a -A -c -C -e -f -h -I -j -J -k -l -m -M -N -o -p -P
  -q -r -R -S -u -v -V -W -X -z``; ``-W`` takes a comma separated list of
  ``name=value`` items; ``tolerate_node_failures`` accepts ``all``, ``job_start``,
  ``none``.

Standard library only.
"""

import getopt
import re
import shlex
from typing import List, Optional, Sequence, Tuple

# getopt string of the options qsub accepts (those with ``:`` take a value).
QSUB_OPTSTRING = "a:A:c:C:e:fhIj:J:k:l:m:M:N:o:p:P:q:r:R:S:u:v:VW:Xz"
TOLERATE_ATTRIBUTE = "tolerate_node_failures"
TOLERATE_VALUES = ("all", "job_start", "none")

_BARE_TOKEN = re.compile(r"^[A-Za-z0-9_.@%+=:,/-]+$")
_UNQUOTABLE = ('"', "\\", "$", "`", "\n", "\r")


class QsubArgumentsError(ValueError):
    """The text cannot be parsed as qsub arguments, or an edit would not parse back."""


def split_w_items(value: str) -> List[str]:
    """Items of a ``-W`` value split on commas outside quotes (qsub's ``comma_token``).

    Returns a list of str; raises :class:`QsubArgumentsError` for an unbalanced quote.
    """
    items = []
    current = []
    quote = None
    for char in value:
        if quote:
            if char == quote:
                quote = None
            current.append(char)
        elif char in ("'", '"'):
            quote = char
            current.append(char)
        elif char == ",":
            items.append("".join(current))
            current = []
        else:
            current.append(char)
    if quote:
        raise QsubArgumentsError("unbalanced %s in -W value %r" % (quote, value))
    items.append("".join(current))
    return items


def parse_qsub_arguments(text: str, check_tolerate: bool = True) -> List[List[str]]:
    """Parse ``default_qsub_arguments`` text as qsub would.

    Returns a list of ``[option, value]`` pairs in order (``value`` is ``""`` for a flag
    such as ``-V``; ``-ry`` gives ``["-r", "y"]``). With ``check_tolerate`` a
    ``tolerate_node_failures`` item must hold one of :data:`TOLERATE_VALUES`.
    Raises :class:`QsubArgumentsError` for text shlex cannot split, an option qsub does
    not know, a missing option value, a script or command (qsub's default arguments may
    only hold options), or a ``-W`` item that is not ``name=value``.
    """
    try:
        tokens = shlex.split(text or "", posix=True)
    except ValueError as exc:
        raise QsubArgumentsError("cannot split %r like a shell word list: %s" % (text, exc))
    try:
        options, rest = getopt.getopt(tokens, QSUB_OPTSTRING)
    except getopt.GetoptError as exc:
        raise QsubArgumentsError("qsub would refuse %r: %s" % (text, exc))
    if rest:
        raise QsubArgumentsError("%r holds %r after the options; default_qsub_arguments may "
                                 "only hold qsub options" % (text, " ".join(rest)))
    for option, value in options:
        if option != "-W":
            continue
        for item in split_w_items(value):
            name, sep, item_value = item.partition("=")
            if not sep or not name.strip():
                raise QsubArgumentsError("-W %s: qsub needs name=value items (illegal -W "
                                         "value)" % value)
            if check_tolerate and name.strip() == TOLERATE_ATTRIBUTE \
                    and item_value.strip() not in TOLERATE_VALUES:
                raise QsubArgumentsError(
                    "-W %s: tolerate_node_failures must be one of %s, not %r (qsub: illegal "
                    "-W value)" % (value, ", ".join(TOLERATE_VALUES), item_value))
    return [[option, value] for option, value in options]


def tolerate_value(options: Sequence[Sequence[str]]) -> Optional[str]:
    """The effective ``tolerate_node_failures`` of parsed options (the last one given), or
    None when no ``-W`` item sets it."""
    found = None
    for option, value in options:
        if option == "-W":
            for item in split_w_items(value):
                name, sep, item_value = item.partition("=")
                if sep and name.strip() == TOLERATE_ATTRIBUTE:
                    found = item_value.strip()
    return found


def with_tolerate(options: Sequence[Sequence[str]], value: Optional[str]) -> List[List[str]]:
    """New option list with every tolerate item removed and, when ``value`` is not None,
    ``tolerate_node_failures=value`` put where the first one was (or a new ``-W`` at the
    end). Other options and other ``-W`` items keep their order and text."""
    result = []
    placed = value is None
    for option, text in options:
        if option != "-W":
            result.append([option, text])
            continue
        kept = []
        for item in split_w_items(text):
            name, sep, _value = item.partition("=")
            if sep and name.strip() == TOLERATE_ATTRIBUTE:
                if not placed:
                    kept.append("%s=%s" % (TOLERATE_ATTRIBUTE, value))
                    placed = True
                continue
            kept.append(item)
        if kept:
            result.append(["-W", ",".join(kept)])
    if not placed:
        result.append(["-W", "%s=%s" % (TOLERATE_ATTRIBUTE, value)])
    return result


def quote_token(token: str) -> str:
    """``token`` as one shell word: bare when it only holds ``[A-Za-z0-9_.@%+=:,/-]``,
    else in double quotes (as PBS's own ``print server`` shows values). Raises
    :class:`QsubArgumentsError` for text that double quotes cannot hold literally."""
    if _BARE_TOKEN.match(token):
        return token
    if any(char in token for char in _UNQUOTABLE):
        raise QsubArgumentsError("cannot write %r safely as a qsub argument" % token)
    return '"%s"' % token


def render_options(options: Sequence[Sequence[str]]) -> str:
    """Text of an option list: ``-X value`` words joined by single spaces."""
    words = []
    for option, value in options:
        words.append(option)
        if option[1:] + ":" in QSUB_OPTSTRING:
            words.append(quote_token(value))
    return " ".join(words)


def edit_default_qsub_arguments(current: Optional[str], value: Optional[str]) -> Tuple[str, bool]:
    """Return ``(new_text, changed)`` for setting (``value`` in :data:`TOLERATE_VALUES`) or
    removing (``value`` None) the tolerate part of ``current`` (str or None = unset).

    ``new_text`` is ``""`` when nothing is left (the attribute should be unset). The
    current text is parsed without judging its tolerate value (a bogus one is what this
    replaces); the new text must parse back to exactly the intended options with the
    intended value, else :class:`QsubArgumentsError` is raised and nothing may be written.
    When the effective value is already right and no second tolerate item exists, the
    text is returned unchanged.
    """
    if value is not None and value not in TOLERATE_VALUES:
        raise QsubArgumentsError("tolerate_node_failures must be one of %s, not %r"
                                 % (", ".join(TOLERATE_VALUES), value))
    current = current or ""
    options = parse_qsub_arguments(current, check_tolerate=False)
    wanted = with_tolerate(options, value)
    if wanted == options:
        return current, False
    new_text = render_options(wanted)
    try:
        parsed_back = parse_qsub_arguments(new_text, check_tolerate=True)
    except QsubArgumentsError as exc:
        raise QsubArgumentsError("the new default_qsub_arguments %r does not parse back: %s"
                                 % (new_text, exc))
    if parsed_back != wanted or tolerate_value(parsed_back) != value:
        raise QsubArgumentsError("the new default_qsub_arguments %r parses back as %r, not "
                                 "as intended %r" % (new_text, parsed_back, wanted))
    return new_text, new_text != current
