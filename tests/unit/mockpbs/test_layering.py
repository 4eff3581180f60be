"""The floors of mockpbs (issue 15): no module imports a floor above its own, and the
client, the server, the mom and the ATOM service do not import each other.

Floors, lowest first:

- ground: every module of ``mockpbs`` outside the packages below (``wire``, ``attributes``,
  ``arrays``, ``selectspec``, ``hookrun``, ...), the ``pbs`` package's modules included
  (``mockpbs.pbs._svr_types``...); it imports only ground.
- peers: ``mockpbs.cli``, ``mockpbs.server``, ``mockpbs.mom``, ``mockpbs.atom``; each
  imports ground and itself, never another peer.
- ``mockpbs.testing``: in-process helpers for unit tests; they may import anything, and
  nothing of mockpbs imports them.

Imports are read from the source with :mod:`ast`, those inside functions included.
"""
import ast
from pathlib import Path

import mockpbs

PACKAGE_DIR = Path(mockpbs.__file__).resolve().parent
GROUND, PEERS, TESTING = 0, 1, 2
PEER_PACKAGES = ("cli", "server", "mom", "atom")


def module_name(path):
    """``mockpbs.server.jobs`` for ``<package>/server/jobs.py``; a package is named by its
    ``__init__.py`` (``mockpbs.server``)."""
    parts = list(path.relative_to(PACKAGE_DIR).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["mockpbs"] + parts)


def mockpbs_modules():
    """``{module name: path}`` of every ``.py`` file of the package."""
    return {module_name(path): path for path in sorted(PACKAGE_DIR.rglob("*.py"))
            if "__pycache__" not in path.parts}


def floor_of(name):
    """``(floor, peer package or None)`` of module ``name`` (a dotted ``mockpbs...`` name)."""
    parts = name.split(".")
    top = parts[1] if len(parts) > 1 else ""
    if top == "testing":
        return TESTING, None
    if top in PEER_PACKAGES:
        return PEERS, top
    return GROUND, None


def imported_modules(source, name, known):
    """The ``mockpbs`` modules that the code ``source`` of module ``name`` imports, as
    dotted names. ``from P import X`` counts as ``P.X`` when that is a module of ``known``
    (the set of module names), else as ``P``; relative imports are resolved."""
    package = name if name in known and _is_package(name, known) else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            for alias in node.names:
                candidate = "%s.%s" % (base, alias.name)
                found.add(candidate if candidate in known else base)
    return sorted(m for m in found if m == "mockpbs" or m.startswith("mockpbs."))


def _is_package(name, known):
    return any(other.startswith(name + ".") for other in known)


def _absolute(node, package):
    if not node.level:
        return node.module
    parts = package.split(".")
    base = ".".join(parts[:len(parts) - node.level + 1])
    return "%s.%s" % (base, node.module) if node.module else base


def layering_violation(importer, imported):
    """Why ``importer`` may not import ``imported`` (module names), or None when it may."""
    importer_floor, importer_peer = floor_of(importer)
    imported_floor, imported_peer = floor_of(imported)
    if imported_floor > importer_floor:
        return "%s imports %s, a higher floor" % (importer, imported)
    if importer_floor == PEERS and imported_floor == PEERS and importer_peer != imported_peer:
        return "%s imports %s: mockpbs.%s and mockpbs.%s do not import each other" % (
            importer, imported, importer_peer, imported_peer)
    return None


def all_violations():
    """Every layering violation in the package, as texts."""
    modules = mockpbs_modules()
    known = set(modules)
    out = []
    for name, path in modules.items():
        for imported in imported_modules(path.read_text(), name, known):
            reason = layering_violation(name, imported)
            if reason:
                out.append("%s: %s" % (path.relative_to(PACKAGE_DIR), reason))
    return out


def test_no_module_imports_a_higher_floor_or_another_peer():
    assert all_violations() == []


def test_the_scan_sees_every_floor_and_peer():
    floors = {floor_of(name) for name in mockpbs_modules()}
    assert {(GROUND, None), (TESTING, None)} | {(PEERS, peer) for peer in PEER_PACKAGES} <= floors


def test_the_scan_finds_absolute_relative_and_late_imports():
    known = {"mockpbs", "mockpbs.wire", "mockpbs.server", "mockpbs.server.models", "mockpbs.cli",
             "mockpbs.cli.common"}
    source = ("import mockpbs\nfrom mockpbs import PBS_VERSION, wire\nfrom . import common\n"
              "def f():\n    from mockpbs.server import models\n")
    assert imported_modules(source, "mockpbs.cli.qmgr", known) == [
        "mockpbs", "mockpbs.cli.common", "mockpbs.server.models", "mockpbs.wire"]


def test_violations_name_higher_floors_and_peers():
    assert layering_violation("mockpbs.wire", "mockpbs.server.daemon") is not None
    assert layering_violation("mockpbs.server.jobs", "mockpbs.testing.server") is not None
    assert layering_violation("mockpbs.cli.qmgr", "mockpbs.server.models") is not None
    assert layering_violation("mockpbs.mom.daemon", "mockpbs.atom.client") is not None
    assert layering_violation("mockpbs.server.jobs", "mockpbs.server.nodes") is None
    assert layering_violation("mockpbs.cli.qsub", "mockpbs.arrays") is None
    assert layering_violation("mockpbs.testing.server", "mockpbs.cli.common") is None
