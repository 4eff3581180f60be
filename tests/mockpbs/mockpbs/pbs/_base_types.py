"""The value types of the ``pbs`` hook module (pbs_python's ``pbs/v1/_base_types.py``):
``select`` (with PP-928 interface 7's ``increment_chunks``), ``hold_types``,
``exec_vnode``, ``exec_host``, ``place``, ``pbs_env``; and which job attributes and
resources hold them."""
import math

from mockpbs import selectspec
from mockpbs.pbs._exc_types import BadAttributeValueError, BadResourceValueError

_C_SPACE = " \t\n\v\f\r"
_C_DIGITS = "0123456789"
_C_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_C_ALNUM = _C_DIGITS + _C_LETTERS


def _select_value_end(text, pos):
    """Scan a resource value of a select spec from ``pos`` (just after ``=``), as
    ``decode_select`` does. Returns ``(position after the value's separator, new chunk)``:
    ``(None, _)`` when the spec is bad, ``(len(text), False)`` at the end of the spec."""
    end = len(text)
    while pos < end:
        char = text[pos]
        if char in "'\"":               # a quoted substring: anything up to the same quote
            close = text.find(char, pos + 1)
            if close < 0:
                return None, False
            pos = close + 1
        elif char in ":+":
            pos += 1
            return (pos, char == "+") if pos < end else (None, False)
        elif " " <= char <= "~":        # C isprint()
            pos += 1
        else:
            return None, False
    return end, False


def select_syntax_ok(text):
    """True when OpenPBS accepts ``text`` as a select spec: the rules of its
    ``decode_select`` (``src/lib/Libattr/attr_resc_func.c``), which ``pbs.select()`` applies
    through ``_pbs_v1.validate_input("resc", "select", ...)``. ASCII only, as C's ctype:

    - leading white space is skipped; an empty spec is bad;
    - a chunk starts with a letter or digit: digits (any count, ``0`` included) are its
      count, followed by the end of the spec, ``+`` and another chunk, or ``:``;
    - then ``name=value`` pairs joined by ``:``: a name starts with a letter and goes on
      with letters, digits, ``-`` and ``_``; a value is printable characters (``=`` and
      spaces included) and quoted substrings (``'...'``/``"..."``, closed, anything
      inside); it may be empty only when a ``:`` or ``+`` follows;
    - ``:`` and ``+`` must be followed by something.
    """
    pos, end = 0, len(text)
    while pos < end and text[pos] in _C_SPACE:
        pos += 1
    if pos == end:
        return False
    new_chunk = True
    while pos < end:
        if text[pos] not in _C_ALNUM:
            return False
        if new_chunk and text[pos] in _C_DIGITS:
            while pos < end and text[pos] in _C_DIGITS:
                pos += 1
            if pos == end:
                return True
            if text[pos] == "+":
                pos += 1
                if pos == end:
                    return False
                continue
            if text[pos] != ":":
                return False
            pos += 1
        if pos == end or text[pos] not in _C_LETTERS:
            return False
        while pos < end and (text[pos] in _C_ALNUM or text[pos] in "-_"):
            pos += 1
        if pos == end or text[pos] != "=" or pos + 1 == end:
            return False
        pos, new_chunk = _select_value_end(text, pos + 1)
        if pos is None:
            return False
    return True


class select(str):
    """A select spec ``[N:]res=val[:res=val][+...]``; the text is kept as written.

    Accepts exactly what OpenPBS's select type accepts (:func:`select_syntax_ok`: a chunk
    count of ``0`` included, e.g. ``"0:ncpus=1+1:ncpus=2"``). Raises TypeError for a value
    that is not a string and :class:`BadResourceValueError` (PBS's text ``input value <v>
    not of the right format for 'select'``) for a bad spec."""

    def __new__(cls, value):
        if not isinstance(value, str):
            raise TypeError("validate_input() argument 3 must be str, not %s" % type(value).__name__)
        if not select_syntax_ok(value):
            raise BadResourceValueError("input value %s not of the right format for 'select'" % (value,))
        return super().__new__(cls, value)

    def increment_chunks(self, increment_spec):
        """Add chunks to every chunk but the primary mom's single one (PP-928 interface 7).

        ``increment_spec``: an int (bool counts as int), a numeric string, a
        ``"<number>%"`` string (rounded up), or a dict ``{chunk index (int): int or str}``.
        Returns a :class:`select` with every count written. Errors, exactly as OpenPBS:
        ``ValueError("bad increment specs")`` for a zero increment (unless no chunk has an
        adjustable count), a dict missing an index, or another type; ``ValueError`` /
        ``OverflowError`` from ``int()``/``float()``/``ceil()`` for bad strings;
        ``UnboundLocalError`` for a non int/str dict value on the first chunk (a later
        chunk silently reuses the previous chunk's count); :class:`BadResourceValueError`
        when the result has a negative count (negative increments are not checked; a
        count of 0 is a valid select, as in OpenPBS)."""
        amount = None
        factor = None
        per_chunk = None
        if isinstance(increment_spec, int):
            amount = increment_spec
        elif isinstance(increment_spec, str):
            if increment_spec.endswith("%"):
                factor = _percent_factor(increment_spec)
            else:
                amount = int(increment_spec)
        elif isinstance(increment_spec, dict):
            per_chunk = increment_spec
        else:
            raise ValueError("bad increment specs")

        no_count = object()
        count = no_count
        pieces = []
        for index, chunk_text in enumerate(str(self).split("+")):
            fields = chunk_text.split(":")
            if fields[0].isdigit():
                adjustable = int(fields[0])
                resources = fields[1:]
            else:
                adjustable = 1
                resources = fields
            if index == 0:
                adjustable -= 1  # the primary mom's single chunk is never incremented
            # Truth tests, not None tests: OpenPBS treats an increment of 0 (or a 0.0
            # factor from "-100%") as missing and ends in "bad increment specs".
            if adjustable <= 0:
                count = 0
            elif amount:
                count = adjustable + amount
            elif factor:
                count = int(math.ceil(adjustable * factor))
            elif per_chunk is not None and index in per_chunk:
                value = per_chunk[index]
                if isinstance(value, int):
                    count = adjustable + value
                elif isinstance(value, str):
                    if value.endswith("%"):
                        count = int(math.ceil(adjustable * _percent_factor(value)))
                    else:
                        count = adjustable + int(value)
                # any other value type leaves ``count`` as the previous chunk set it
            else:
                raise ValueError("bad increment specs")
            if count is no_count:
                raise UnboundLocalError(
                    "cannot access local variable 'num' where it is not associated with a value")
            if index == 0:
                count += 1
            pieces.append(":".join([str(count)] + resources))
        return select("+".join(pieces))


def _percent_factor(text):
    return float(text[:-1]) / 100 + 1.0


class hold_types(str):
    """``Hold_Types`` value: letters from ``u``, ``o``, ``s``, ``p`` or ``n``."""

    def __new__(cls, value):
        text = str(value)
        if not text or any(c not in "uospn" for c in text):
            raise BadAttributeValueError("illegal Hold_Types value '%s'" % text)
        return super().__new__(cls, text)


class _ParsedString(str):
    """A string attribute value PBS checks on assignment: ``_parse`` (a selectspec
    parser) must accept it, else BadAttributeValueError with the parser's message."""

    _parse = None

    def __new__(cls, value):
        text = str(value)
        try:
            cls._parse(text)
        except selectspec.SelectSpecError as exc:
            raise BadAttributeValueError(str(exc)) from None
        return super().__new__(cls, text)


class exec_vnode(_ParsedString):
    """An ``exec_vnode`` value ``(vn:res=val+...)+(...)``."""

    _parse = staticmethod(selectspec.parse_exec_vnode)


class exec_host(_ParsedString):
    """An ``exec_host`` value ``host/N[*C][+...]``."""

    _parse = staticmethod(selectspec.parse_exec_host)


class place(str):
    pass


class pbs_env(dict):
    """``pbs.event().env`` of execjob_launch: PBS's own variables are read-only in a site hook."""

    READONLY = frozenset({
        "PBS_ENVIRONMENT", "PBS_JOBDIR", "PBS_JOBID", "PBS_JOBNAME", "PBS_NODEFILE", "TMPDIR",
        "PBS_O_HOME", "PBS_O_HOST", "PBS_O_LANG", "PBS_O_LOGNAME", "PBS_O_MAIL", "PBS_O_PATH",
        "PBS_O_QUEUE", "PBS_O_SHELL", "PBS_O_SYSTEM", "PBS_O_TZ", "PBS_O_WORKDIR", "PBS_QUEUE",
    })

    def __setitem__(self, name, value):
        if name in self.READONLY:
            raise BadAttributeValueError("env variable '%s' is readonly" % (name,))
        super().__setitem__(name, value)


_TYPED_JOB_ATTRIBUTES = {"schedselect": select, "exec_vnode": exec_vnode, "exec_host": exec_host,
                         "exec_host2": exec_host, "Hold_Types": hold_types}
_INT_JOB_ATTRIBUTES = {"run_count", "Priority", "run_version", "Execution_Time"}
_TYPED_RESOURCES = {"select": select, "place": place}


def _to_text(value):
    if value is None:
        return None
    if isinstance(value, bool):
        return "True" if value else "False"
    return str(value)
