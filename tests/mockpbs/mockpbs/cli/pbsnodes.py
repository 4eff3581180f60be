"""``pbsnodes``: node status and offline marking (transcripts g, i of reference/openpbs).

``-a`` (``-av``) lists every node, ``pbsnodes NAME...`` / ``-v NAME...`` the named ones, in
PBS's format (name line, five-space indented ``attr = value`` lines, blank line); ``-o``
marks nodes offline, ``-r``/``-c`` clear offline, ``-C COMMENT`` sets the comment. Named
nodes are asked for one by one, as OpenPBS does: an unknown one prints ``Node: NAME,
Error: Unknown node `` on stderr (exit 1) and the others are still listed.

``-F json`` prints the listing as OpenPBS 23.06's pbsnodes does (src/cmds/pbsnodes.c
``encode_to_json``, printed with libcjson's ``cJSON_Print``, as qstat's JSON):
``{"timestamp", "pbs_version", "pbs_server", "nodes": {<vnode>: {...}}}``, in which

- ``resources_available`` and ``resources_assigned`` are objects of their resources
  (always present), each value parsed as cJSON does (``1`` -> 1, ``24684092kb`` stays a
  string); a ``resources_assigned`` value that is a number 0 or a string starting with
  ``0`` (``0kb``) is left out;
- ``jobs`` is an array of job ids (``1.srv/0, 1.srv/1`` -> ``["1.srv"]``: blanks and the
  ``/N`` slot dropped, a repeat of the previous id left out);
- the times (``last_state_change_time``, ``last_used_time``) are their epoch seconds;
- an unknown named node is ``"NAME": {"NAME": "Unknown node "}`` and pbsnodes exits 0.

Options may follow the names (``pbsnodes -v mom1 -F json``): pbsnodes parses them with
GNU getopt, which permutes. ``-F dsv`` is not emulated.
"""
import getopt
import sys
import time

from mockpbs import PBS_VERSION
from mockpbs.cli import common
from mockpbs.cli.cjson import cjson_print, json_parsed

TIME_ATTRS = ("last_state_change_time", "last_used_time")
USAGE = """usage:\tpbsnodes [-{o|r}][-C comment][-s server] host host ...
\tpbsnodes -l [-s server]
\tpbsnodes [-s server] -v vnode vnode ...
\tpbsnodes -a[v][S[j][L]][-F format][-D delim][-s server]
\tpbsnodes -[H][S[j][L]][-F format][-D delim] host host ...
\tpbsnodes --version

"""


# pbs_geterrmsg's text for PBSE_UNKNODE, as OpenPBS prints it after a named node.
UNKNOWN_NODE_TEXT = "Unknown node "
PBSE_UNKNODE = 15062
OUTPUT_FORMATS = ("default", "dsv", "json")
RESOURCE_OBJECTS = ("resources_available", "resources_assigned")


def json_resource_value(attribute, text):
    """``(keep, value)`` of one resource: ``pbs_json_insert_parsed`` with ignore_empty
    for ``resources_assigned`` (a number 0 or a string starting with "0" is left out)."""
    value = json_parsed(text)
    if attribute == "resources_assigned":
        if isinstance(value, str) and value.startswith("0"):
            return False, None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0:
            return False, None
    return True, value


def json_job_ids(text):
    """The ``jobs`` array: ``"1.s/0, 1.s/1, 2.s/0"`` -> ``["1.s", "2.s"]``."""
    ids = []
    for piece in text.replace(" ", "").split(","):
        if not piece:
            continue
        jobid = piece.split("/", 1)[0]
        if not ids or ids[-1] != jobid:
            ids.append(jobid)
    return ids


def json_node(items):
    """The JSON object of one node from its listing ``[(attribute, value)]``."""
    out = {}
    for name, value in items:
        attribute, _unused, resource = name.partition(".")
        if attribute in RESOURCE_OBJECTS and resource:
            keep, parsed = json_resource_value(attribute, str(value))
            resources = out.setdefault(attribute, {})
            if keep:
                resources[resource] = parsed
        elif name == "jobs":
            out[name] = json_job_ids(str(value))
        else:
            out[name] = json_parsed(str(value))
    return out


def json_document(entries):
    """pbsnodes' whole JSON output. ``entries``: ``[(name, items or None)]``, None for an
    unknown named node."""
    nodes = {}
    for name, items in entries:
        nodes[name] = json_node(items) if items is not None else {name: UNKNOWN_NODE_TEXT}
    document = {"timestamp": float(int(time.time())), "pbs_version": PBS_VERSION,
                "pbs_server": common.server_name(), "nodes": nodes}
    return cjson_print(document) + "\n"


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
        opts, names = getopt.gnu_getopt(argv, "aovrclC:s:SjLHF:D:")
    except getopt.GetoptError:
        sys.stderr.write(USAGE)
        return 1
    flags = {o for o, _unused in opts}
    comment = dict(opts).get("-C")
    output = dict(opts).get("-F", "default").lower()
    if output not in OUTPUT_FORMATS:
        sys.stderr.write(USAGE)
        return 1
    if output == "dsv":
        sys.stderr.write("pbsnodes: -F dsv is not emulated by the mock PBS\n")
        return 1
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
                                     if reply.get("code") == PBSE_UNKNODE else reply.get("error", "")))
                    rc = 1
            return rc
        if "-a" in flags or not names:
            reply = common.call("stat_nodes", names=None)
            if not reply.get("ok"):
                sys.stderr.write("pbsnodes: %s\n" % reply.get("error", ""))
                return 1
            if not reply["nodes"]:
                sys.stderr.write("pbsnodes: Server has no node list\n")
                return 1
            entries = [(node["name"], node["items"]) for node in reply["nodes"]]
        else:
            entries = stat_named_nodes(names)
    except common.ServerUnreachable as exc:
        if exc.pbs_errno == 15010:
            return common.unreachable("pbsnodes", exc)
        # pbsnodes' own wording when the client library gave up before connecting
        for line in exc.said:
            sys.stderr.write(line + "\n")
        sys.stderr.write("pbsnodes: cannot connect to server %s, error=%d\n" % (exc.server, exc.pbs_errno))
        return 1
    except NodeStatError as exc:
        sys.stderr.write("pbsnodes: %s\n" % exc)
        return 1
    if output == "json":
        sys.stdout.write(json_document(entries))
        return 0
    rc = 0
    for name, items in entries:
        if items is None:
            sys.stderr.write("Node: %s,  Error: %s\n" % (name, UNKNOWN_NODE_TEXT))
            rc = 1
        else:
            print_nodes([{"name": name, "items": items}])
    return rc


class NodeStatError(Exception):
    """The server refused to list a node for another reason than an unknown name."""


def stat_named_nodes(names):
    """``[(name, items or None)]``: each named node asked for on its own (None: unknown).
    Raises NodeStatError on any other refusal, ServerUnreachable without a server."""
    entries = []
    for name in names:
        reply = common.call("stat_nodes", names=[name])
        if reply.get("ok"):
            entries.extend((node["name"], node["items"]) for node in reply["nodes"])
        elif reply.get("code") == PBSE_UNKNODE:
            entries.append((name, None))
        else:
            raise NodeStatError(reply.get("error", ""))
    return entries
