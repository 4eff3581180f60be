# Copyright: hpc.pbs developers
# Apache License 2.0
"""The bundled hooks of the collection, on the controller: the one place that knows where
``files/hooks`` is and what a bundled hook is made of.

A bundled hook ``<hook>`` is the three files ``files/hooks/<hook>.py`` (the body PBS runs),
``<hook>.json`` (its default config) and ``<hook>.schema.json`` (the JSON Schema of its
config). The directory is found from this file (``<collection>/plugins/plugin_utils``), so
it is the same in a checkout and in an installed collection.
"""

from __future__ import annotations

import json
import os

HOOKS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                         "files", "hooks")
# part -> file name suffix
PARTS = {"body": ".py", "config": ".json", "schema": ".schema.json"}


class BundledHookError(ValueError):
    """No such bundled hook or part, or its file cannot be read (the message says which)."""


def bundled_hook_names():
    """The names of the bundled hooks: those with all three files, sorted."""
    names = []
    for entry in sorted(os.listdir(HOOKS_DIR)):
        name = entry[:-len(PARTS["body"])]
        if entry.endswith(PARTS["body"]) and all(os.path.isfile(os.path.join(HOOKS_DIR, name + suffix))
                                                 for suffix in PARTS.values()):
            names.append(name)
    return names


def bundled_hook_path(hook, part):
    """The path of ``part`` (``body``, ``config`` or ``schema``) of the bundled hook ``hook``."""
    if part not in PARTS:
        raise BundledHookError("part must be one of %s, not %r" % (", ".join(PARTS), part))
    names = bundled_hook_names()
    if hook not in names:
        raise BundledHookError("%r is not a bundled hook; the bundled hooks (files/hooks) are %s"
                               % (hook, ", ".join(names)))
    return os.path.join(HOOKS_DIR, hook + PARTS[part])


def bundled_hook_part(hook, part):
    """``part`` of the bundled hook ``hook``: the body's text, or the parsed config or schema."""
    path = bundled_hook_path(hook, part)
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        return text if part == "body" else json.loads(text)
    except (OSError, ValueError) as err:
        raise BundledHookError("cannot read %s: %s" % (path, err))
