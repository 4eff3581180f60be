"""Hook events, attributes and the on-disk ``.HK`` format, as OpenPBS 23.06 has them.

``EVENTS`` is the order of the error for a bad event name. ``qmgr list hook`` shows a
hook's events in ``LIST_ORDER`` whatever order they were given in: the server events in
``EVENTS`` order, then the mom events in hook-mask order, which puts execjob_launch and
its successors before exechost_periodic (transcripts a and b).
"""

EVENTS = (
    "queuejob", "postqueuejob", "modifyjob", "modifyvnode", "management", "resvsub",
    "modifyresv", "movejob", "jobobit", "runjob", "provision", "periodic", "resv_confirm",
    "resv_begin", "resv_end", "execjob_begin", "execjob_prologue", "execjob_epilogue",
    "execjob_preterm", "execjob_end", "exechost_periodic", "execjob_launch",
    "exechost_startup", "execjob_attach", "execjob_resize", "execjob_abort",
    "execjob_postsuspend", "execjob_preresume",
)

MOM_EVENTS = frozenset(e for e in EVENTS if e.startswith("exec"))
SERVER_EVENTS = frozenset(EVENTS) - MOM_EVENTS

LIST_ORDER = tuple(e for e in EVENTS if e in SERVER_EVENTS) + (
    "execjob_begin", "execjob_prologue", "execjob_epilogue", "execjob_preterm", "execjob_end",
    "execjob_launch", "execjob_attach", "execjob_resize", "execjob_abort",
    "execjob_postsuspend", "execjob_preresume", "exechost_periodic", "exechost_startup",
)

BAD_EVENT_MESSAGE = (
    "invalid argument (%s) to event. Should be one or more of: "
    + ",".join(EVENTS) + ' or "" for no event'
)

# Attribute order of ``qmgr list hook`` / ``print hook`` and the defaults of a new site hook.
HOOK_ATTRIBUTE_ORDER = ("type", "enabled", "event", "user", "alarm", "freq", "order", "debug", "fail_action")
SITE_HOOK_DEFAULTS = {
    "type": "site",
    "enabled": "true",
    "event": "",
    "user": "pbsadmin",
    "alarm": "30",
    "order": "1",
    "debug": "false",
    "fail_action": "none",
}
FAIL_ACTIONS = ("none", "offline_vnodes", "clear_vnodes_upon_recovery", "scheduler_restart_cycle")
HOOK_USERS = ("pbsadmin", "pbsuser")
# The events of which a hook must have one to run as pbsuser (hook.h USER_MOM_EVENTS).
USER_MOM_EVENTS = frozenset(("execjob_prologue", "execjob_epilogue", "execjob_preterm"))


def sort_events(events):
    """Return ``events`` (iterable of names) de-duplicated, in the order qmgr lists them."""
    wanted = set(events)
    return [e for e in LIST_ORDER if e in wanted]


def parse_hk(text):
    """Parse a ``.HK`` file (``key=value`` lines) into a dict of strings."""
    values = {}
    for line in text.splitlines():
        if "=" in line:
            key, value = line.split("=", 1)
            values[key.strip()] = value.strip()
    return values


def format_hk(values):
    """Write ``values`` (dict, insertion order kept) as ``.HK`` text."""
    return "".join("%s=%s\n" % (k, v) for k, v in values.items())


def effective(values):
    """Hook attributes with defaults filled in (a ``.HK`` file leaves defaults out)."""
    merged = dict(SITE_HOOK_DEFAULTS)
    merged.update(values)
    return merged


def enabled_alarm_sum(hooks, event):
    """Sum of ``alarm`` over enabled hooks (``{name: attrs}``) having ``event``.

    This is the default of ``$sister_join_job_alarm`` (event execjob_begin) and
    ``$job_launch_delay`` (event execjob_prologue), PP-928 interfaces 3 and 4; the caller
    falls back to 30 when no such hook exists (returns None then)."""
    total = 0
    found = False
    for attrs in hooks.values():
        attrs = effective(attrs)
        if attrs.get("enabled", "true").lower() != "true":
            continue
        if event in [e for e in attrs.get("event", "").split(",") if e]:
            total += int(attrs.get("alarm", "30"))
            found = True
    return total if found else None
