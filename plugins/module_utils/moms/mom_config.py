# -*- coding: utf-8 -*-
"""``PBS_HOME/mom_priv/config``: the grammar of its ``$option value`` lines - parse them and
plan the new file text. The grammar of each option's value is in :mod:`mom_config_options`;
pbs_mom itself (pid file, SIGHUP, its log, restart) is driven by :mod:`mom_daemon`.

Facts (reference transcript f_, OpenPBS src/resmom/mom_main.c):

- A line starting with ``$`` is ``$name value``; any other non-comment line is a static
  resource; ``#`` starts a comment line. The mom does NOT strip an inline ``# comment``.
- On SIGHUP the mom re-reads the file; a line it cannot parse, or an unknown ``$name``,
  makes it log ``parse_config, ...`` and exit (the node goes down).
"""

import re
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ansible_collections.hpc.pbs.plugins.module_utils.moms.mom_config_options import same_value

_OPTION_LINE = re.compile(r"^[ \t]*\$(\S+)(?:[ \t]+(.*?))?[ \t]*$")


def split_lines(text: str) -> List[str]:
    """Lines of the file with their line endings kept."""
    return text.splitlines(True)


def option_of(line: str) -> Optional[Tuple[str, str]]:
    """``(name, value)`` of a ``$name value`` line, or None for any other line."""
    match = _OPTION_LINE.match(line.rstrip("\r\n"))
    if not match:
        return None
    return match.group(1), (match.group(2) or "")


def current_options(text: str) -> Dict[str, Union[str, List[str]]]:
    """All ``$options`` of the file: dict name -> value, or list of values when the
    option occurs more than once (in file order)."""
    found = {}
    for line in split_lines(text):
        parsed = option_of(line)
        if parsed:
            found.setdefault(parsed[0], []).append(parsed[1])
    return dict((k, v[0] if len(v) == 1 else v) for k, v in found.items())


def apply_options(text: str, desired: Mapping[str, List[str]], remove: Iterable[str],
                  same: Optional[Callable[[str, str, str], bool]] = None) -> str:
    """Return the new file text.

    ``desired``: dict name -> list of value texts (the exact lines wanted for that option,
    in order); ``remove``: names whose lines are dropped. Existing lines of a desired
    option are replaced in place (surplus ones dropped); missing ones are appended. All
    other lines are kept byte for byte, and so is an existing line whose value equals the
    wanted one: the same text whatever the spacing and line ending, or ``same(name,
    file_value, wanted_value)`` true (e.g. ``yes`` for ``true``).
    """
    lines = split_lines(text)
    newline = "\n"
    for line in lines:
        if line.endswith("\r\n"):
            newline = "\r\n"
            break
    pending = dict((name, list(values)) for name, values in desired.items())
    out = []
    for line in lines:
        parsed = option_of(line)
        if not parsed:
            out.append(line)
            continue
        name = parsed[0]
        if name in remove:
            continue
        if name in pending:
            if pending[name]:
                value = pending[name].pop(0)
                ending = line[len(line.rstrip("\r\n")):] or newline
                if parsed[1] == value or (same is not None and same(name, parsed[1], value)):
                    out.append(line)
                else:
                    out.append("$%s %s%s" % (name, value, ending))
            continue
        out.append(line)
    if out and not out[-1].endswith(("\n", "\r")):
        out[-1] += newline
    for name, values in desired.items():
        for value in pending[name]:
            out.append("$%s %s%s" % (name, value, newline))
    return "".join(out)


def planned_text(text: str, desired: Mapping[str, List[str]], remove: Iterable[str],
                 unchecked: Sequence[str] = ()) -> str:
    """The config ``text`` (str) after :func:`apply_options` with ``desired`` / ``remove``
    as :func:`mom_config_options.plan` gives them; a line whose value already means the
    wanted one (:func:`mom_config_options.same_value`) is kept as it is."""
    return apply_options(text, desired, remove,
                         same=lambda name, old, new: same_value(name, old, new, unchecked))
