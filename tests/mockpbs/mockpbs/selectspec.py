"""Select specs, exec_vnode / exec_host strings and PBS size values.

Shared by the ``pbs`` emulator, the scheduler and the mom. Everything here is pure string
work with no PBS state.

Shapes:

- select spec ``"[N:]res=val[:res=val...][+[N:]res=val...]"`` parses to a list of
  :class:`Chunk` (``count`` int >= 0, ``resources`` list of ``(name, value)`` in the
  order written). A missing ``N`` means 1 (``Chunk.explicit_count`` records whether it
  was written).
- exec_vnode ``"(vn1:ncpus=1:mem=1048576kb+vn2:ncpus=1)+(vn3:ncpus=2)"`` parses to a list
  of chunks, each a list of ``(vnode_name, [(res, value), ...])``.
- exec_host ``"host/0*3+host2/0"`` parses to a list of ``(host, index, ncpus or None)``.
- sizes (``mem``, ``vmem``...) are ``<int>[b|w][kb|mb|gb|tb|pb]``; :func:`size_to_kb`
  converts them to kilobytes (rounding bytes up, as PBS does).
"""
import math
import re

SIZE_UNITS_KB = {"b": 1.0 / 1024, "kb": 1, "mb": 1024, "gb": 1024 ** 2, "tb": 1024 ** 3, "pb": 1024 ** 4}
_SIZE_RE = re.compile(r"^\s*(\d+)\s*([kmgtp]?b|[kmgtp]?w)?\s*$", re.IGNORECASE)
SIZE_RESOURCES = {"mem", "vmem", "accelerator_memory", "pmem", "pvmem", "file"}


class SelectSpecError(ValueError):
    """A select spec, exec_vnode or exec_host string that does not parse."""


class Chunk:
    """One ``[N:]res=val:...`` element of a select spec."""

    __slots__ = ("count", "resources", "explicit_count")

    def __init__(self, count, resources, explicit_count=True):
        self.count = count
        self.resources = list(resources)
        self.explicit_count = explicit_count

    def resource_text(self):
        """``res=val:res=val`` without the count."""
        return ":".join("%s=%s" % (k, v) for k, v in self.resources)

    def to_string(self, force_count=False):
        text = self.resource_text()
        if self.explicit_count or force_count:
            return "%d:%s" % (self.count, text) if text else str(self.count)
        return text

    def get(self, name, default=None):
        for key, value in self.resources:
            if key == name:
                return value
        return default

    def __repr__(self):
        return "Chunk(%d, %r)" % (self.count, self.resources)

    def __eq__(self, other):
        return isinstance(other, Chunk) and (self.count, self.resources) == (other.count, other.resources)


def parse_chunk(text):
    """Parse one ``[N:]res=val:...`` element; raises SelectSpecError."""
    text = text.strip()
    if not text:
        raise SelectSpecError("empty chunk")
    parts = text.split(":")
    count = 1
    explicit = False
    if "=" not in parts[0]:
        if not parts[0].strip().isdigit():
            raise SelectSpecError("illegal chunk count %r" % parts[0])
        count = int(parts[0])
        explicit = True
        parts = parts[1:]
    resources = []
    for part in parts:
        if "=" not in part:
            raise SelectSpecError("illegal resource %r in chunk %r" % (part, text))
        key, value = part.split("=", 1)
        key = key.strip()
        if not key or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", key) or value == "":
            raise SelectSpecError("illegal resource %r in chunk %r" % (part, text))
        resources.append((key, value))
    return Chunk(count, resources, explicit)


def parse_select(spec):
    """Parse a select spec into a list of :class:`Chunk`; raises SelectSpecError."""
    if spec is None or not str(spec).strip():
        raise SelectSpecError("empty select spec")
    return [parse_chunk(piece) for piece in str(spec).split("+")]


def format_select(chunks, force_count=True):
    """Inverse of :func:`parse_select`; PBS's normalised form writes every count."""
    return "+".join(c.to_string(force_count=force_count) for c in chunks)


def expand_chunks(chunks):
    """One entry per single chunk: ``2:ncpus=1`` gives two ``resources`` lists."""
    out = []
    for chunk in chunks:
        out.extend([list(chunk.resources)] * chunk.count)
    return out


def size_to_kb(value):
    """``"1gb"`` -> 1048576. Bare numbers are bytes. Raises SelectSpecError."""
    match = _SIZE_RE.match(str(value))
    if not match:
        raise SelectSpecError("illegal size %r" % (value,))
    number = int(match.group(1))
    unit = (match.group(2) or "b").lower()
    if unit.endswith("w"):
        unit = unit[:-1] + "b"
        number *= 8
    return int(math.ceil(number * SIZE_UNITS_KB[unit]))


def format_kb(kb):
    """``6291456`` -> ``"6gb"``: the largest unit that keeps the value whole."""
    kb = int(kb)
    for unit, factor in (("pb", 1024 ** 4), ("tb", 1024 ** 3), ("gb", 1024 ** 2), ("mb", 1024)):
        if kb and kb % factor == 0:
            return "%d%s" % (kb // factor, unit)
    return "%dkb" % kb


def parse_exec_vnode(text):
    """``"(a:ncpus=1+b:ncpus=1)+(c:ncpus=2)"`` -> ``[[("a", [("ncpus","1")]), ...], ...]``."""
    chunks = []
    for match in re.finditer(r"\(([^()]*)\)", text or ""):
        vnodes = []
        for piece in match.group(1).split("+"):
            fields = piece.split(":")
            name = fields[0]
            resources = []
            for field in fields[1:]:
                if "=" not in field:
                    raise SelectSpecError("illegal exec_vnode element %r" % piece)
                key, value = field.split("=", 1)
                resources.append((key, value))
            vnodes.append((name, resources))
        chunks.append(vnodes)
    if text and not chunks:
        raise SelectSpecError("illegal exec_vnode %r" % text)
    return chunks


def format_exec_vnode(chunks):
    return "+".join(
        "(" + "+".join(":".join([name] + ["%s=%s" % kv for kv in res]) for name, res in chunk) + ")"
        for chunk in chunks
    )


def parse_exec_host(text):
    """``"h1/0*3+h2/0"`` -> ``[("h1", 0, 3), ("h2", 0, None)]``."""
    out = []
    for piece in (text or "").split("+"):
        if not piece:
            continue
        match = re.match(r"^([^/]+)/(\d+)(?:\*(\d+))?$", piece)
        if not match:
            raise SelectSpecError("illegal exec_host element %r" % piece)
        out.append((match.group(1), int(match.group(2)), int(match.group(3)) if match.group(3) else None))
    return out


def format_exec_host(entries):
    return "+".join(
        "%s/%d%s" % (host, index, "*%d" % ncpus if ncpus not in (None, 1) else "")
        for host, index, ncpus in entries
    )
