"""``qmgr``: the mock's PBS administrator command (transcripts a, b, k of reference/openpbs).

``qmgr -c "DIRECTIVE"`` runs one directive (only the last of several ``-c`` runs);
without ``-c`` directives are read from stdin after ``Max open servers: 49`` is printed.
Exit codes: 0 ok; 1 list/print of a missing object or unreadable import file; 3/4 syntax
errors; 32 hook errors; otherwise the server's error number modulo 256 (15014 -> 166).
"""
import base64
import os
import sys

from mockpbs.cli import common
from mockpbs.server import qmgr_lang

HOOK_ERROR_RC = 32


def _error(objtype, name, reply, command):
    obj = "" if objtype in ("server", "sched") else (name or "")
    sys.stderr.write("qmgr obj=%s svr=default: %s\n" % (obj, reply.get("error", "")))
    if reply.get("hook_error"):
        sys.stderr.write("qmgr: hook error returned from server\n")
        rc = HOOK_ERROR_RC
    else:
        sys.stderr.write("qmgr: Error (%d) returned from server\n" % reply.get("code", 0))
        rc = common.exit_code(reply.get("code", 1))
    return 1 if command in ("list", "print") else rc


def _read_import(filename):
    if filename == "-":
        return sys.stdin.buffer.read()
    with open(filename, "rb") as handle:
        return handle.read()


def run(line):
    """Run one directive line; returns (exit code, quit?)."""
    try:
        command = qmgr_lang.parse(line)
    except qmgr_lang.QmgrSyntaxError as exc:
        sys.stderr.write("qmgr: Syntax error\n" + qmgr_lang.syntax_error_text(line.rstrip("\n"), exc.position))
        return exc.rc, False
    if command is None:
        return 0, False
    if command.verb == "quit":
        return 0, True
    content_b64 = None
    if command.verb == "import":
        try:
            content = _read_import(command.filename)
        except OSError as exc:
            sys.stderr.write("%s - %s\n" % (command.filename, os.strerror(exc.errno or 2)))
            return 1, False
        content_b64 = base64.b64encode(content).decode()
    # As qmgr's execute(): one request per object name, in turn; a failed object is reported
    # and the next one still runs; the exit code is the last failure's.
    rc = 0
    for each in command.per_object():
        each_rc = _run_one(each, content_b64)
        rc = each_rc or rc
    return rc, False


def _run_one(command, content_b64):
    """Send one single-object directive and print its result; returns the exit code."""
    message = command.to_message()
    if content_b64 is not None:
        message["content_b64"] = content_b64
    fields = {k: v for k, v in message.items() if k != "op"}
    try:
        reply = common.call("qmgr", **fields)
    except common.ServerUnreachable as exc:
        sys.stderr.write("qmgr: cannot connect to server %s (errno=15010)\n" % common.server_name())
        return 3
    if not reply.get("ok"):
        return _error(command.objtype, command.name, reply, command.verb)
    for line_text in reply.get("stderr") or []:
        sys.stderr.write(line_text + "\n")
    out = sys.stdout
    if command.verb == "list":
        objects = reply.get("objects") or []
        for obj in objects:
            out.write(qmgr_lang.format_list(obj["label"], obj["name"], obj["items"]))
        return (reply.get("empty_rc", 0) if not objects else 0)
    if command.verb == "print":
        if command.objtype == "server":
            out.write(qmgr_lang.format_print_server(reply["queues"], reply["server"]))
        elif command.objtype == "queue":
            out.write("#\n# Create queues and set their attributes.\n#\n")
            out.write("".join(qmgr_lang.format_print_queue(n, items) for n, items in reply["queues"]))
        elif command.objtype == "sched":
            out.write(qmgr_lang.format_print_sched("default", reply["sched"]))
        elif command.objtype == "node":
            out.write(qmgr_lang.format_print_nodes(reply["nodes"]))
        else:
            objects = reply.get("objects") or []
            if not objects:
                return reply.get("empty_rc", 0)
            out.write(qmgr_lang.format_print_hooks(objects))
        return 0
    if command.verb == "export":
        content = base64.b64decode(reply.get("content_b64") or "")
        if command.encoding == "base64" and content:
            content = base64.b64encode(content) + b"\n"
        if command.filename and command.filename != "-":
            with open(command.filename, "wb") as handle:
                handle.write(content)
        else:
            out.flush()
            sys.stdout.buffer.write(content)
            sys.stdout.buffer.flush()
        return 0
    return 0


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if common.wants_version(argv):
        return 0
    commands = []
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg == "-c":
            if index + 1 >= len(argv):
                sys.stderr.write("qmgr: option requires an argument -- 'c'\n")
                return 1
            commands.append(argv[index + 1])
            index += 2
            continue
        if arg.startswith("-c") and len(arg) > 2:
            commands.append(arg[2:])
        index += 1
    if commands:
        rc, _ = run(commands[-1])
        sys.stdout.flush()
        return rc
    sys.stdout.write("Max open servers: 49\n")
    last_rc = 0
    for line in sys.stdin:
        rc, stop = run(line)
        if rc:
            last_rc = rc
        if stop:
            break
    sys.stdout.flush()
    return last_rc
