"""``pbsnodes``: node status and offline marking (transcripts g, i of reference/openpbs).

``-a`` (``-av``) lists every node, ``pbsnodes NAME...`` / ``-v NAME...`` the named ones, in
PBS's format (name line, five-space indented ``attr = value`` lines, blank line); ``-o``
marks nodes offline, ``-r``/``-c`` clear offline, ``-C COMMENT`` sets the comment.
"""
import getopt
import sys

from mockpbs.cli import common

TIME_ATTRS = ("last_state_change_time", "last_used_time")
USAGE = """usage:\tpbsnodes [-{o|r}][-C comment][-s server] host host ...
\tpbsnodes -l [-s server]
\tpbsnodes [-s server] -v vnode vnode ...
\tpbsnodes -a[v][S[j][L]][-F format][-D delim][-s server]
\tpbsnodes -[H][S[j][L]][-F format][-D delim] host host ...
\tpbsnodes --version

"""


def print_nodes(nodes):
    for node in nodes:
        sys.stdout.write("%s\n" % node["name"])
        for name, value in node["items"]:
            if name in TIME_ATTRS:
                value = common.ctime_text(value)
            sys.stdout.write("     %s = %s\n" % (name, value))
        sys.stdout.write("\n")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if common.wants_version(argv):
        return 0
    try:
        opts, names = getopt.getopt(argv, "aovrclC:s:SjLHF:D:")
    except getopt.GetoptError:
        sys.stderr.write(USAGE)
        return 1
    flags = {o for o, _ in opts}
    comment = dict(opts).get("-C")
    marking = flags & {"-o", "-r", "-c"} or comment is not None
    if marking and "-v" in flags or ("-o" in flags and flags & {"-r", "-c"}):
        sys.stderr.write(USAGE)
        return 1
    try:
        if marking:
            if not names:
                sys.stderr.write(USAGE)
                return 1
            action = "offline" if "-o" in flags else ("clear" if flags & {"-r", "-c"} else None)
            rc = 0
            for name in names:
                reply = common.call("node_mark", names=[name], action=action, comment=comment)
                if not reply.get("ok"):
                    sys.stderr.write("Error marking node %s - %s \n" % (name, "Unknown node"
                                     if reply.get("code") == 15062 else reply.get("error", "")))
                    rc = 1
            return rc
        if "-a" in flags or not names:
            reply = common.call("stat_nodes", names=None)
        else:
            reply = common.call("stat_nodes", names=names)
    except common.ServerUnreachable as exc:
        return common.unreachable("pbsnodes", exc)
    if not reply.get("ok"):
        sys.stderr.write("pbsnodes: %s\n" % reply.get("error", ""))
        return 1
    if not reply["nodes"]:
        sys.stderr.write("pbsnodes: Server has no node list\n")
        return 1
    print_nodes(reply["nodes"])
    return 0
