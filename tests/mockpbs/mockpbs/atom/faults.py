"""Fault injection for the mock ATOM service, per node, through a control file.

The plan lives in ``<socket>.faults`` (JSON, replaced atomically, read and updated under
an exclusive ``flock`` of ``<socket>.faults.lock``), so that tests on the host, a shell in
the node (``python -m mockpbs atomd --inject ...``) and the service itself all see the
same plan. Shape::

    {"no_socket": false,
     "methods": {"POST": [action, ...], "DELETE": [...], "GET": [...]}}

An action is consumed by one request of its method, in order; when a method's list is
empty the service behaves normally. Action keys:

- ``status`` (int 100-599): answer with this code (and a JSON error body) instead of
  doing the request; the registry is not touched.
- ``delay`` (seconds, float >= 0): wait this long first, then answer normally (the job
  is then registered or removed, as a slow real service would), or as ``status``/``drop``
  say. A delay longer than the client's timeout makes the client time out.
- ``drop`` (true): close the connection without an answer.
- ``times`` (int >= 1, or -1 for "every request from now on"; default 1).

``no_socket`` true: the service removes its socket file and stops listening until the
flag is cleared (it checks every :data:`POLL_INTERVAL` seconds).

Text form (``--inject``): ``METHOD=ITEM[,ITEM...]`` where ``ITEM`` is ``CODE``, ``drop``
or ``delay:SECONDS[:CODE|:drop]``, optionally followed by ``*N`` (N times) or ``*``
(forever); e.g. ``POST=400,200``, ``POST=500*``, ``DELETE=delay:40``, ``POST=drop``.
Also ``no-socket``, ``socket`` and ``clear``.
"""
import contextlib
import fcntl
import json
import os
import tempfile

METHODS = ("POST", "DELETE", "GET")
POLL_INTERVAL = 0.05
FOREVER = -1


class FaultSpecError(ValueError):
    """A fault spec (text or dict) that does not follow the rules above."""


def plan_path(sock):
    return sock + ".faults"


def empty_plan():
    return {"no_socket": False, "methods": {}}


@contextlib.contextmanager
def _locked(sock):
    directory = os.path.dirname(os.path.abspath(sock))
    os.makedirs(directory, exist_ok=True)
    with open(plan_path(sock) + ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _read(sock):
    try:
        with open(plan_path(sock)) as handle:
            plan = json.load(handle)
    except FileNotFoundError:
        return empty_plan()
    except ValueError as err:
        raise FaultSpecError("fault plan %s is not valid JSON: %s" % (plan_path(sock), err))
    return check_plan(plan)


def _write(sock, plan):
    path = plan_path(sock)
    handle, temp = tempfile.mkstemp(prefix=".faults.", dir=os.path.dirname(os.path.abspath(path)))
    with os.fdopen(handle, "w") as out:
        json.dump(plan, out, indent=1, sort_keys=True)
    os.replace(temp, path)


def check_action(action):
    """Validate one action dict; return it normalized (``times`` filled in)."""
    if not isinstance(action, dict):
        raise FaultSpecError("a fault action must be a dict, not %r" % (action,))
    unknown = set(action) - {"status", "delay", "drop", "times"}
    if unknown:
        raise FaultSpecError("unknown fault action key(s) %s in %r" % (", ".join(sorted(unknown)), action))
    if not {"status", "delay", "drop"} & set(action):
        raise FaultSpecError("a fault action needs status, delay or drop: %r" % (action,))
    result = dict(action)
    if "status" in result:
        status = result["status"]
        if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
            raise FaultSpecError("status must be an HTTP code 100-599, not %r" % (status,))
    if "delay" in result:
        delay = result["delay"]
        if isinstance(delay, bool) or not isinstance(delay, (int, float)) or delay < 0:
            raise FaultSpecError("delay must be seconds >= 0, not %r" % (delay,))
    if "drop" in result and result["drop"] is not True:
        raise FaultSpecError("drop must be true, not %r" % (result["drop"],))
    if "status" in result and "drop" in result:
        raise FaultSpecError("an action cannot both answer a status and drop the connection")
    times = result.setdefault("times", 1)
    if isinstance(times, bool) or not isinstance(times, int) or (times < 1 and times != FOREVER):
        raise FaultSpecError("times must be >= 1 or -1 (forever), not %r" % (times,))
    return result


def check_plan(plan):
    """Validate a whole plan dict; return it normalized."""
    if not isinstance(plan, dict) or set(plan) - {"no_socket", "methods"}:
        raise FaultSpecError("a fault plan is {\"no_socket\": bool, \"methods\": {...}}, not %r" % (plan,))
    methods = plan.get("methods") or {}
    if not isinstance(methods, dict):
        raise FaultSpecError("methods must be a dict of lists, not %r" % (methods,))
    checked = {}
    for method, actions in methods.items():
        if method not in METHODS:
            raise FaultSpecError("unknown method %r (known: %s)" % (method, ", ".join(METHODS)))
        if not isinstance(actions, list):
            raise FaultSpecError("actions of %s must be a list, not %r" % (method, actions))
        checked[method] = [check_action(a) for a in actions]
    return {"no_socket": bool(plan.get("no_socket", False)), "methods": checked}


def parse_item(text):
    """``"500"``, ``"drop"``, ``"delay:40"``, ``"delay:2:500"``, ``"500*3"``, ``"500*"`` -> action."""
    text = text.strip()
    times = 1
    if "*" in text:
        text, _unused, count = text.partition("*")
        try:
            times = FOREVER if count == "" else int(count)
        except ValueError:
            raise FaultSpecError("bad repeat count %r" % (count,)) from None
    action = {}
    parts = text.split(":")
    if parts[0] == "delay":
        if len(parts) not in (2, 3):
            raise FaultSpecError("delay is delay:SECONDS[:CODE|:drop], not %r" % (text,))
        try:
            action["delay"] = float(parts[1])
        except ValueError:
            raise FaultSpecError("bad delay %r" % (parts[1],)) from None
        parts = parts[2:]
    if parts:
        if len(parts) != 1:
            raise FaultSpecError("bad fault item %r" % (text,))
        if parts[0] == "drop":
            action["drop"] = True
        else:
            try:
                action["status"] = int(parts[0])
            except ValueError:
                raise FaultSpecError("bad fault item %r: not a code, drop or delay" % (text,)) from None
    action["times"] = times
    return check_action(action)


def parse_spec(text):
    """``"POST=400,200"`` -> ``("POST", [actions])``; ``no-socket``/``socket``/``clear``
    -> ``(that word, None)``. Raises FaultSpecError."""
    text = text.strip()
    if text in ("no-socket", "socket", "clear"):
        return text, None
    method, sep, items = text.partition("=")
    method = method.strip().upper()
    if not sep or method not in METHODS:
        raise FaultSpecError("a fault spec is METHOD=ITEM[,ITEM...] (METHOD one of %s), no-socket, "
                             "socket or clear; not %r" % (", ".join(METHODS), text))
    if not items.strip():
        return method, []
    return method, [parse_item(item) for item in items.split(",")]


# ---------------------------------------------------------------- client side
def set_actions(sock, method, actions):
    """Replace the actions of ``method`` (``"POST"``...) with ``actions`` (list of dicts)."""
    if method not in METHODS:
        raise FaultSpecError("unknown method %r" % (method,))
    checked = [check_action(a) for a in actions]
    with _locked(sock):
        plan = _read(sock)
        plan["methods"][method] = checked
        _write(sock, plan)


def set_no_socket(sock, flag):
    """Make the service drop (``True``) or restore (``False``) its socket."""
    with _locked(sock):
        plan = _read(sock)
        plan["no_socket"] = bool(flag)
        _write(sock, plan)


def clear(sock):
    """No faults: every method answers normally and the socket is served."""
    with _locked(sock):
        _write(sock, empty_plan())


def read_plan(sock):
    """The current plan (what is left of it)."""
    with _locked(sock):
        return _read(sock)


# ---------------------------------------------------------------- service side
def take_action(sock, method):
    """Consume and return the next action for ``method``, or None (behave normally)."""
    if not os.path.exists(plan_path(sock)):
        return None
    with _locked(sock):
        plan = _read(sock)
        actions = plan["methods"].get(method) or []
        if not actions:
            return None
        action = dict(actions[0])
        if action["times"] != FOREVER:
            action["times"] -= 1
            if action["times"] <= 0:
                actions.pop(0)
            else:
                actions[0] = dict(actions[0], times=action["times"])
            plan["methods"][method] = actions
            _write(sock, plan)
        return action


def no_socket_wanted(sock):
    """True when the plan asks the service to have no socket."""
    try:
        with open(plan_path(sock)) as handle:
            return bool(json.load(handle).get("no_socket"))
    except (OSError, ValueError):
        return False
