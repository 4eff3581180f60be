"""What every mock client command shares: finding the server, the caller's identity,
talking to the server, ``--version`` and PBS's time format."""
import grp
import os
import pwd
import socket
import sys
import time

from mockpbs import PBS_VERSION, pbsconf, wire

# Client-side timeout of one request, seconds (queuejob hooks may run up to their alarm).
REQUEST_TIMEOUT = 120.0


class ServerUnreachable(Exception):
    """The server could not be contacted. ``pbs_errno``: 15010 (refused), 15008 (its name
    does not resolve: ``Unknown Host.``) or 0 (no pbs.conf); ``server``: the name tried
    ("" without pbs.conf); ``said``: what the client library printed before the command's
    own line (list of str)."""

    def __init__(self, message, pbs_errno=15010, server=None, said=None):
        Exception.__init__(self, message)
        self.pbs_errno = pbs_errno
        self.server = server_name() if server is None else server
        self.said = list(said if said is not None else ["Connection refused"])


class PbsConfMissing(Exception):
    """No pbs.conf (``$PBS_CONF_FILE`` or ``/etc/pbs.conf``) and not every variable it would
    give in the environment: ``str()`` is pbs_loadconf's own line."""


# pbs_loadconf fails unless these come from pbs.conf or the environment.
REQUIRED_CONF = ("PBS_HOME", "PBS_EXEC", "PBS_SERVER")


def check_pbs_conf():
    """Raise :class:`PbsConfMissing` as a real client's pbs_loadconf fails: pbs.conf cannot
    be read and the environment lacks some of :data:`REQUIRED_CONF`."""
    try:
        with open(pbsconf.conf_path()):
            return
    except OSError:
        pass
    missing = [key for key in REQUIRED_CONF if not os.environ.get(key)]
    if missing:
        raise PbsConfMissing("pbsconf error: pbs conf variables not found: %s" % " ".join(missing))


def server_name():
    """``PBS_SERVER`` from pbs.conf (or the environment), else this host's name."""
    return pbsconf.load().get("PBS_SERVER") or socket.gethostname()


def server_address():
    """The IPv4 address of the server named in pbs.conf (:func:`server_name`). Raises
    :class:`ServerUnreachable` when there is no pbs.conf or the name does not resolve,
    with what a real client prints then."""
    try:
        check_pbs_conf()
    except PbsConfMissing as exc:
        raise ServerUnreachable(str(exc), 0, "", [str(exc), "No such file or directory"])
    name = server_name()
    try:
        return socket.gethostbyname(name)
    except OSError:
        raise ServerUnreachable("Unknown Host.", 15008, name, ["Unknown Host."])


def identity():
    """``{"user", "group", "host"}`` of the calling process (real uid/gid)."""
    try:
        user = pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        user = str(os.getuid())
    try:
        group = grp.getgrgid(os.getgid()).gr_name
    except KeyError:
        group = str(os.getgid())
    return {"user": user, "group": group, "host": socket.gethostname().split(".")[0]}


def call(op, **fields):
    """Send one request to the server; returns the reply dict. Raises ServerUnreachable."""
    message = {"op": op}
    message.update(identity())
    message.update(fields)
    address = server_address()
    try:
        return wire.request(address, wire.SERVER_PORT, message, timeout=REQUEST_TIMEOUT)
    except wire.WireError as exc:
        raise ServerUnreachable(str(exc))


def unreachable(command, exc):
    """Print what ``command`` (qstat, qsub, qrls...) prints when it cannot reach the server
    (:class:`ServerUnreachable` ``exc``); returns its exit code: 255 for qstat, as the real
    one exits when its connection fails, else 1."""
    for line in exc.said:
        sys.stderr.write(line + "\n")
    sys.stderr.write("%s: cannot connect to server %s (errno=%d)\n" % (command, exc.server, exc.pbs_errno))
    return 255 if command == "qstat" and exc.pbs_errno != 15010 else 1


def wants_version(argv):
    if "--version" in argv:
        print("pbs_version = %s" % PBS_VERSION)
        return True
    return False


def ctime_text(epoch):
    """PBS's date format in ``qstat -f``: ``Sat Nov 21 19:21:36 2026``."""
    try:
        return time.ctime(int(epoch))
    except (TypeError, ValueError):
        return str(epoch)


def exit_code(pbs_errno):
    """PBS commands exit with the error number modulo 256 (15014 -> 166)."""
    return int(pbs_errno) % 256
