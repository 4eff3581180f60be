"""The mock PBS commands installed as wrappers under ``$PBS_EXEC/bin`` and ``$PBS_EXEC/sbin``.

Each wrapper is ``exec <python> -m mockpbs <name> "$@"``; ``mockpbs.__main__`` maps the
name to the ``main(argv)`` function listed here (``module:function``).
"""

BIN = {
    "qmgr": "mockpbs.cli.qmgr:main",
    "qsub": "mockpbs.cli.qsub:main",
    "qstat": "mockpbs.cli.qstat:main",
    "qalter": "mockpbs.cli.qalter:main",
    "qdel": "mockpbs.cli.qdel:main",
    "qhold": "mockpbs.cli.qhold:main",
    "qrls": "mockpbs.cli.qrls:main",
    "pbsnodes": "mockpbs.cli.pbsnodes:main",
    "pbsdsh": "mockpbs.mom.tm:pbsdsh_main",
    "pbs_python": "mockpbs.hookrun:pbs_python_main",
}

SBIN = {
    "pbs_server": "mockpbs.server.daemon:main",
    "pbs_mom": "mockpbs.mom.daemon:main",
}

# Site services that are not PBS commands (no wrapper under PBS_EXEC); the cluster
# launcher starts them inside nodes as ``python -m mockpbs <name>``.
SERVICES = {
    "atomd": "mockpbs.atom.service:main",
}


def resolve(name):
    """Return the ``main`` callable for command ``name``; KeyError if unknown."""
    import importlib

    target = BIN.get(name) or SBIN.get(name) or SERVICES[name]
    module_name, func = target.split(":")
    return getattr(importlib.import_module(module_name), func)
