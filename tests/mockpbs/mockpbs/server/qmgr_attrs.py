"""Attribute lists of qmgr requests, shared by the qmgr handlers of every object type:
which attributes a request names, the listing filtered to them, and ``=``/``+=``/``-=``
applied to an attribute dict."""
from mockpbs import attributes
from mockpbs.server import models


def requested(message):
    """The attribute names a qmgr request (``message``) names, in request order."""
    return [a[0] for a in message.get("attrs") or []]


def filter_items(items, requested):
    """Only the requested attributes, in reverse request order (as qmgr shows them)."""
    if not requested:
        return items
    values = dict(items)
    out = []
    for name in reversed(requested):
        if name in values:
            out.append((name, values[name]))
        else:
            out.extend((k, v) for k, v in items if k.startswith(name + "."))
    return out


def apply_attr(objtype, attrs, name, op, value):
    """Apply ``name op value`` (op ``=``, ``+=`` or ``-=``) to ``attrs`` (the attribute
    dict of an ``objtype`` object): ``=`` stores the checked value, ``+=`` adds to a
    number or appends to a comma list, ``-=`` removes from the list (an emptied list
    goes). Raises PbsError (PBSE_BADATVAL) for a bad value."""
    if op == "=":
        attrs[name] = models.normalize_value(objtype, name, value)
        return
    current = [v for v in attrs.get(name, "").split(",") if v]
    items = [v for v in value.split(",") if v]
    if op == "+=":
        if attributes.attribute_kind(objtype, name) in ("int",) or "." in name:
            base = attrs.get(name, "0")
            attrs[name] = str(int(base) + int(models.normalize_value(objtype, name, value)))
            return
        current += [v for v in items if v not in current]
    else:
        current = [v for v in current if v not in items]
    if current:
        attrs[name] = ",".join(current)
    else:
        attrs.pop(name, None)
