# -*- coding: utf-8 -*-
"""The one home of the rule by which a pbs_mom derives ``$sister_join_job_alarm`` and
``$job_launch_delay`` when its ``mom_priv/config`` does not set them (PP-928 interfaces 3
and 4), as OpenPBS 22.05.11 and 23.06.06 apply it (the same code in both).

Facts (OpenPBS ``src/resmom/mom_main.c``, ``requests.c``, ``linux/mom_func.c``):

- ``read_config()`` sets both to -1, then to the config line's value (a whole number > 0;
  the last line wins, any other value fails the config read). An option left at -1 is
  derived.
- At the mom's start, after the config read, every ``mom_priv/hooks/*.HK`` is read and the
  alarm of each enabled hook is added: hooks having ``execjob_begin`` to
  ``$sister_join_job_alarm``, hooks having ``execjob_prologue`` to ``$job_launch_delay`` (a
  hook with both events counts for both). Still -1 (no such hook): 30
  (``DEFAULT_JOINJOB_ALARM`` / ``DEFAULT_JOB_LAUNCH_DELAY``). Nothing is logged.
- When the server copies a ``.HK`` file to the mom (a hook created, enabled, disabled, its
  events or alarm changed), the derived options are summed again over the enabled hooks,
  but with ``if ... else if``: while ``$sister_join_job_alarm`` is derived, a hook having
  both events counts for it only. An option with no enabled hook of its event keeps the
  value it had (disabling the last such hook does not bring back 30). The mom logs
  ``joinjob_alarm_time updated to N`` / ``job_launch_delay updated to N``.
- On SIGHUP the config is read again and a derived option becomes 30, whatever the hooks,
  until the next ``.HK`` copy or restart: the hooks are not read again.

Standard library only: this runs on the nodes (Python 3.6-3.12).
"""

from typing import Any, Dict, List, Mapping, Optional, Tuple

# Mom option -> the hook event whose enabled alarms make its derived value.
OPTION_EVENT = {"sister_join_job_alarm": "execjob_begin",
                "job_launch_delay": "execjob_prologue"}
OPTIONS = ("job_launch_delay", "sister_join_job_alarm")
# DEFAULT_JOINJOB_ALARM, DEFAULT_JOB_LAUNCH_DELAY (src/include/pbs_reliable.h).
FALLBACK_SECONDS = 30
# A hook's alarm when its .HK file or listing has none, or none PBS could read.
DEFAULT_HOOK_ALARM = 30
TRUE_WORDS = ("true", "t", "y", "1", "yes")


def hook_enabled(attrs: Mapping[str, Any]) -> bool:
    """Whether the hook (``attrs``: its attributes as listed or in its ``.HK`` file, text or
    bool) is enabled; a hook without the attribute is (PBS's default)."""
    value = attrs.get("enabled", True)
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in TRUE_WORDS


def hook_events(attrs: Mapping[str, Any]) -> List[str]:
    """The hook's events: a list, or the comma-separated text of a listing or ``.HK``."""
    value = attrs.get("event", attrs.get("events", ""))
    if isinstance(value, (list, tuple)):
        return [str(e).strip() for e in value if str(e).strip()]
    return [e.strip() for e in str(value or "").split(",") if e.strip()]


def hook_alarm(attrs: Mapping[str, Any]) -> int:
    """The hook's alarm in seconds (int); a missing or unreadable one counts as 30."""
    value = str(attrs.get("alarm", DEFAULT_HOOK_ALARM)).strip()
    return int(value) if value.isdigit() else DEFAULT_HOOK_ALARM


def enabled_alarms(hooks: Mapping[str, Mapping[str, Any]], event: str) -> List[Tuple[str, int]]:
    """``[(name, alarm seconds)]`` of the enabled hooks (``{name: attrs}``) having
    ``event``, sorted by name."""
    return [(name, hook_alarm(hooks[name])) for name in sorted(hooks)
            if hook_enabled(hooks[name]) and event in hook_events(hooks[name])]


def derived_value(hooks: Mapping[str, Mapping[str, Any]],
                  option: str) -> Tuple[int, List[Tuple[str, int]]]:
    """The value a mom that does not set ``option`` takes at its start: the sum of the
    alarms of the enabled hooks having the option's event, 30 when there is none.
    Returns ``(seconds, [(hook, alarm)])``."""
    alarms = enabled_alarms(hooks, OPTION_EVENT[option])
    if not alarms:
        return FALLBACK_SECONDS, []
    return sum(alarm for _name, alarm in alarms), alarms


def configured_value(config_options: Mapping[str, Any], option: str) -> Optional[str]:
    """The value text of ``option`` in the mom's config (``{name: text or [texts]}``, as
    :func:`mom_config.current_options` gives), the last line's when repeated; None when
    the config has no line."""
    value = config_options.get(option)
    if isinstance(value, list):
        value = value[-1] if value else None
    return None if value is None else str(value).strip()


def _number(text):
    return int(text) if text.isdigit() else text


def describe_hooks(alarms: List[Tuple[str, int]]) -> str:
    """``pbs_cgroups 90 s + PBS_cray_atom 300 s`` for ``[(hook, alarm)]``."""
    return " + ".join("%s %d s" % (name, alarm) for name, alarm in alarms)


def effective_values(config_options: Mapping[str, Any],
                     hooks: Mapping[str, Mapping[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """What the mom uses (from its start or the server's last ``.HK`` copy) for each option
    of :data:`OPTIONS`, and where it comes from.

    :param config_options: the ``$options`` of ``mom_priv/config`` (see
        :func:`configured_value`).
    :param hooks: ``{name: attrs}`` of the mom's hooks (``mom_priv/hooks/*.HK``).
    :returns: ``{option: {value, source, line, hooks, default, after_sighup, why}}`` -
        ``source`` is ``mom_config`` (the line wins), ``hooks`` (the sum of the alarms of
        ``hooks``, a list of ``{name, alarm}``) or ``default`` (no enabled hook of the
        event: 30); ``default`` is the derived value whether the line is there or not;
        ``after_sighup`` the value after a reload (SIGHUP), which reads no hook; ``why``
        one line for a person.
    """
    result = {}
    for option in OPTIONS:
        event = OPTION_EVENT[option]
        derived, alarms = derived_value(hooks, option)
        line = configured_value(config_options, option)
        entry = dict(default=derived, hooks=[dict(name=n, alarm=a) for n, a in alarms],
                     line=None)
        if line is not None:
            entry.update(value=_number(line), source="mom_config", after_sighup=_number(line),
                         line="$%s %s" % (option, line),
                         why="mom_priv/config line $%s %s" % (option, line))
        elif alarms:
            entry.update(value=derived, source="hooks", after_sighup=FALLBACK_SECONDS,
                         why="no config line; the sum of the alarms of the enabled %s hooks: %s"
                             % (event, describe_hooks(alarms)))
        else:
            entry.update(value=derived, source="default", after_sighup=FALLBACK_SECONDS,
                         why="no config line and no enabled %s hook: %d s" % (event, FALLBACK_SECONDS))
        result[option] = entry
    return result


def value_after_hook_copy(hooks: Mapping[str, Mapping[str, Any]], option: str, current: Any,
                          derived_options: Any) -> Any:
    """The value a running mom holds for a derived ``option`` after the server copied it a
    ``.HK`` file, the hooks then being ``hooks``: ``req_copy_hookfile()``'s loop, where a
    hook having both events counts for ``$sister_join_job_alarm`` only while that option is
    derived too (in ``derived_options``), and an option no enabled hook counts for keeps
    ``current``."""
    alarms = []
    for name in sorted(hooks):
        attrs = hooks[name]
        if not hook_enabled(attrs):
            continue
        events = hook_events(attrs)
        if "sister_join_job_alarm" in derived_options and OPTION_EVENT["sister_join_job_alarm"] in events:
            if option == "sister_join_job_alarm":
                alarms.append(hook_alarm(attrs))
        elif option == "job_launch_delay" and OPTION_EVENT["job_launch_delay"] in events:
            alarms.append(hook_alarm(attrs))
    return sum(alarms) if alarms else current


def hooks_with_change(hooks: Mapping[str, Mapping[str, Any]], name: str,
                      attrs: Optional[Mapping[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """``hooks`` (``{name: attrs}``, not changed) with hook ``name`` given ``attrs``
    (``events``/``event``, ``enabled``, ``alarm``; a key left out keeps the hook's value,
    a new hook takes PBS's defaults), or removed when ``attrs`` is None."""
    changed = dict(hooks)
    if attrs is None:
        changed.pop(name, None)
        return changed
    merged = {}
    old = hooks.get(name) or {}
    merged["event"] = hook_events(old)
    merged["enabled"] = hook_enabled(old) if name in hooks else True
    merged["alarm"] = hook_alarm(old)
    for key, value in attrs.items():
        if value is None:
            continue
        merged["event" if key == "events" else key] = value
    changed[name] = merged
    return changed


def changes(hooks_before: Mapping[str, Mapping[str, Any]],
            hooks_after: Mapping[str, Mapping[str, Any]],
            changed_hook: str) -> List[Dict[str, Any]]:
    """How a hook change moves the derived values: ``[{option, old, new, running,
    hooks, line}]`` for each option whose value at a mom's start differs (nothing when
    none does), for the moms whose config does not set it.

    ``running`` is what a mom that runs on through the change holds (see
    :func:`value_after_hook_copy`), when it differs from ``new`` (else None); ``line`` one
    line for a person naming the hook, the old and new seconds.
    """
    found = []
    for option in OPTIONS:
        old, dummy = derived_value(hooks_before, option)
        new, alarms = derived_value(hooks_after, option)
        if old == new:
            continue
        running = value_after_hook_copy(hooks_after, option, old, OPTIONS)
        text = ("hook %s: on every mom whose mom_priv/config has no $%s line, $%s goes from "
                "%d s to %d s (%s)" % (
                    changed_hook, option, option, old, new,
                    "the sum of the alarms of the enabled %s hooks: %s" % (
                        OPTION_EVENT[option], describe_hooks(alarms))
                    if alarms else "no enabled %s hook is left" % OPTION_EVENT[option]))
        if running != new:
            text += "; a pbs_mom that keeps running holds %d s until it restarts" % running
        found.append(dict(option=option, old=old, new=new,
                          running=running if running != new else None,
                          hooks=[dict(name=n, alarm=a) for n, a in alarms], line=text))
    return found
