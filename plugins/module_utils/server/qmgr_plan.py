# -*- coding: utf-8 -*-
"""What ``hpc.pbs.qmgr`` would change on a PBS object, planned without writing: the checks of
the task's names and values, the current attributes (one ``qmgr -c "list ..."``), the
commands in order and the attributes predicted after them. Shared by ``hpc.pbs.qmgr`` (which
then writes) and ``hpc.pbs.cluster_info`` (``plan_objects``: the audit's plans in its one
read of the server). A task that cannot be planned raises
:class:`~refusal.TaskRefused`; a failed qmgr call raises :class:`~qmgr.QmgrError`."""

from ansible_collections.hpc.pbs.plugins.module_utils.server.qmgr import (
    QmgrValueError, attribute_name_problem, bool_word, list_command, object_name_problem,
    set_command, split_list_value, unset_command, value_problem)
from ansible_collections.hpc.pbs.plugins.module_utils.server.qmgr_attributes import (
    listed_default, same_text)
from ansible_collections.hpc.pbs.plugins.module_utils.common.refusal import TaskRefused


def value_text(value):
    """qmgr text of a scalar option value (bool -> True/False)."""
    if isinstance(value, bool):
        return "True" if value else "False"
    return str(value)


def value_items(value, split_strings):
    """Items of a list value; a scalar is one item (split on ``,`` if split_strings)."""
    if isinstance(value, (list, tuple)):
        return [value_text(v) for v in value]
    text = value_text(value)
    return split_list_value(text) if split_strings else [text]


def replace_text(desired):
    """The text written for ``desired`` with list_mode=replace (lists joined with ``,``)."""
    if isinstance(desired, (list, tuple)):
        return ",".join(value_text(v) for v in desired)
    return value_text(desired)


def same_value(object_type, attr, desired, current):
    """Whether desired option value equals the current qmgr text (None = unset)."""
    if current is None:
        return False
    if isinstance(desired, bool):
        return bool_word(current) is desired
    if isinstance(desired, (list, tuple)):
        return set(value_text(v) for v in desired) == set(split_list_value(current))
    return same_text(object_type, attr, value_text(desired), current)


def is_unset(object_type, attr, current):
    """Whether ``attr`` counts as unset in the listing ``current`` (dict): absent, or
    showing the default the server lists after an unset."""
    if attr not in current:
        return True
    return current[attr] == listed_default(object_type, attr)


def task_problems(object_type, names, attributes, state, list_mode):
    """Every reason (list of str) why the task cannot be written as qmgr commands: object
    names, attribute names, and the values that would be written (their form, and their
    type for the attributes this collection knows). Checked before qmgr runs."""
    problems = []
    for name in names:
        problem = object_name_problem(object_type, name)
        if problem and isinstance(name, str) and "," in name:
            problem += "; to change several objects list them in the option names"
        if problem:
            problems.append(problem)
    for attr, desired in attributes.items():
        problem = attribute_name_problem(object_type, attr)
        if problem:
            problems.append(problem)
            continue
        if isinstance(desired, dict):
            problems.append("attribute %s: a dict is not a qmgr value; give a string, "
                            "number, boolean or list" % attr)
            continue
        if state == "absent" or desired is None:
            continue
        if list_mode == "replace":
            writes = [(replace_text(desired), "=")]
        else:
            operator = "+=" if list_mode == "append" else "-="
            writes = [(item, operator) for item in value_items(desired, split_strings=True)]
        for text, operator in writes:
            problem = value_problem(object_type, attr, text, operator)
            if problem:
                problems.append(problem)
    return problems


def plan_changes(object_type, name, attributes, current, state, list_mode):
    """Return ``(commands, predicted)`` for one object.

    ``current``: dict of current attribute text; ``predicted``: the attributes after the
    commands, as far as they can be known without asking the server (an unset attribute
    with a listed default shows that default). Raises QmgrValueError for names or values
    qmgr cannot take.
    """
    commands = []
    predicted = dict(current)
    for attr, desired in attributes.items():
        if state == "absent" or desired is None:
            if not is_unset(object_type, attr, current):
                commands.append(unset_command(object_type, name, attr))
                default = listed_default(object_type, attr)
                if default is None:
                    predicted.pop(attr, None)
                else:
                    predicted[attr] = default
            continue
        if list_mode == "replace":
            if same_value(object_type, attr, desired, current.get(attr)):
                continue
            text = replace_text(desired)
            commands.append(set_command(object_type, name, attr, text))
            predicted[attr] = text
            continue
        have = split_list_value(current.get(attr, ""))
        items = value_items(desired, split_strings=True)
        if list_mode == "append":
            for item in items:
                if item not in have:
                    commands.append(set_command(object_type, name, attr, item, "+="))
                    have.append(item)
        else:
            for item in items:
                if item in have:
                    commands.append(set_command(object_type, name, attr, item, "-="))
                    have.remove(item)
        if have:
            predicted[attr] = ",".join(have)
        else:
            predicted.pop(attr, None)
    return commands, predicted


def attributes_text(attributes):
    """``attribute = value`` lines, in the order of the dict."""
    return "".join("%s = %s\n" % (k, v) for k, v in attributes.items())


def describe(object_type, name):
    """``"sched default"``, ``"server"``: the object as the diff headers name it."""
    return "%s %s" % (object_type, name) if name else object_type


def read_objects(qmgr, object_type, names):
    """``{name: attributes}`` of every named object from ONE ``qmgr -c "list ..."`` call
    (``names``: list of str, or ``[None]`` for the default server). Raises QmgrError when
    qmgr fails, TaskRefused naming the objects that do not exist."""
    ref = names if names != [None] else None
    if len(names) == 1:
        listed = qmgr.list_object(object_type, ref[0] if ref else None)
        found = {names[0]: listed[2]} if listed else {}
    else:
        found = qmgr.list_objects(object_type, names)
    missing = [n for n in names if n not in found]
    if missing:
        shown = ", ".join("%s %s" % (object_type, n) if n else object_type for n in missing)
        raise TaskRefused("%s does not exist (qmgr listed no such object). This module "
                          "changes attributes of existing objects only; create the "
                          "object first (hooks: hpc.pbs.hook)." % shown,
                          cmd=[qmgr.path, "-c", str(list_command(object_type, ref))], rc=1)
    return found


def check_task(object_type, names, attributes, state="present", list_mode="replace"):
    """Raise TaskRefused (``problems``: every reason) unless the task can be written as qmgr
    commands; needs no PBS."""
    if not attributes:
        raise TaskRefused("attributes is empty: name at least one attribute")
    problems = task_problems(object_type, [n for n in names if n is not None], attributes,
                             state, list_mode)
    if problems:
        raise TaskRefused("%s. Nothing was changed." % "; ".join(problems), problems=problems)


def plan_objects(qmgr, object_type, names, attributes, state="present", list_mode="replace"):
    """``(before, commands, after)`` for the objects ``names`` (as :func:`read_objects`):
    ``before`` / ``after`` are ``{name: {attribute: text}}``, ``commands`` the qmgr write
    commands (QmgrCommand) in order, empty when nothing would change. ``attributes``:
    ``{attribute: value}`` (str, int, bool, list; None unsets). Raises TaskRefused for
    names or values qmgr cannot take (before qmgr runs) and for missing objects,
    QmgrError when qmgr fails."""
    check_task(object_type, names, attributes, state, list_mode)
    before = read_objects(qmgr, object_type, names)
    commands = []
    after = {}
    try:
        for name in names:
            planned, after[name] = plan_changes(object_type, name, attributes, before[name],
                                                state, list_mode)
            commands.extend(planned)
    except QmgrValueError as exc:
        raise TaskRefused("%s. Nothing was changed." % exc)
    return before, commands, after


def attribute_changes(label, before, after):
    """The attributes whose text differs between ``before`` and ``after`` (dicts attribute
    -> qmgr text, as listed and as predicted): a list of ``{"object": label, "item":
    attribute, "before": text, "after": text}``, None for an attribute not listed on that
    side; in the order of ``after``, then the attributes only ``before`` lists."""
    names = list(after) + [name for name in before if name not in after]
    return [dict(object=label, item=name, before=before.get(name), after=after.get(name))
            for name in names if before.get(name) != after.get(name)]


def object_diffs(object_type, names, before, after):
    """The ``--diff`` of a plan: one dict per object (``before``/``after`` as
    ``attribute = value`` lines for a person, ``changes`` the same as data - see
    :func:`attribute_changes`, the object named as :func:`describe` does), a single dict
    for a single object."""
    diffs = [dict(before=attributes_text(before[name]), after=attributes_text(after[name]),
                  before_header="%s (before)" % describe(object_type, name),
                  after_header="%s (after)" % describe(object_type, name),
                  changes=attribute_changes(describe(object_type, name), before[name],
                                            after[name]))
             for name in names]
    return diffs[0] if len(diffs) == 1 else diffs
