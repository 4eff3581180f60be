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
    """The server could not be contacted."""


def server_name():
    """``PBS_SERVER`` from pbs.conf (or the environment), else this host's name."""
    return pbsconf.load().get("PBS_SERVER") or socket.gethostname()


def server_address():
    """The IPv4 address of the server named in pbs.conf (:func:`server_name`)."""
    return wire.resolve_address(server_name())


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
    try:
        return wire.request(server_address(), wire.SERVER_PORT, message, timeout=REQUEST_TIMEOUT)
    except wire.WireError as exc:
        raise ServerUnreachable(str(exc))


def unreachable(command, exc):
    sys.stderr.write("Connection refused\n%s: cannot connect to server %s (errno=15010)\n" % (command, server_name()))
    return 1


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
