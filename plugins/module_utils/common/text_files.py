# -*- coding: utf-8 -*-
# Copyright: hpc.pbs developers
# Apache License 2.0
"""Reading a text file on a node the same way under every locale."""


def read_utf8(path: str, errors: str = "replace") -> str:
    """The text of the file ``path`` read as UTF-8 whatever the locale. Python 3.6 (RHEL 8,
    SLES 15) reads a file in the locale's encoding, ASCII under the C locale of an SSH
    session that sets no ``LANG``, and then raises UnicodeDecodeError at the first other
    byte (a comment ``# géré par ...`` in pbs.conf).

    ``errors``: what becomes of bytes that are not UTF-8, as for ``bytes.decode``:
    ``"replace"`` (U+FFFD) or ``"strict"`` (UnicodeDecodeError, a ValueError). Raises
    OSError (IOError) when the file cannot be read."""
    with open(path, "rb") as handle:
        return handle.read().decode("utf-8", errors)
