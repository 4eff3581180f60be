"""``pbs.conf`` discovery, as PBS does it: ``$PBS_CONF_FILE`` or ``/etc/pbs.conf``.

Environment variables of the same name (``PBS_HOME``, ``PBS_EXEC``, ``PBS_SERVER``...)
override the file, as in PBS's ``pbs_loadconf``.
"""
import os

DEFAULTS = {"PBS_HOME": "/var/spool/pbs", "PBS_EXEC": "/opt/pbs"}


def conf_path():
    return os.environ.get("PBS_CONF_FILE") or "/etc/pbs.conf"


def load(path=None):
    """Return a dict of the ``KEY=VALUE`` lines of pbs.conf, env overrides applied."""
    values = dict(DEFAULTS)
    try:
        with open(path or conf_path()) as handle:
            for line in handle:
                line = line.strip()
                if not line or line.startswith("#") or "=" not in line:
                    continue
                key, value = line.split("=", 1)
                values[key.strip()] = value.strip()
    except FileNotFoundError:
        pass
    for key in list(values) + ["PBS_SERVER", "PBS_MOM_NODE_NAME"]:
        if key in os.environ and key != "PBS_CONF_FILE":
            values[key] = os.environ[key]
    return values
