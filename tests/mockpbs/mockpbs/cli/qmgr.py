"""``qmgr``: the mock's PBS administrator command (transcripts a, b, k of reference/openpbs).

``qmgr [-a] [-c "DIRECTIVE"]`` runs one directive (only the last of several ``-c`` runs);
without ``-c`` directives are read from stdin after ``Max open servers: 49`` is printed.
Exit codes: 0 ok; 1 list/print of a missing object or unreadable import file; 3/4 syntax
errors; 32 hook errors; otherwise the server's error number modulo 256 (15014 -> 166).
Without ``-a`` every directive runs and the exit code is that of the last one. With ``-a``
(as main() in OpenPBS src/cmds/qmgr.c) qmgr stops at the first directive that fails: exit
1 for a syntax error, 2 for a request the server refused (a directive naming several
objects stops at the first object refused). ``-e``, ``-n`` and ``-z`` are accepted and
have no effect here.

``list sched NAME`` / ``print sched NAME`` ask for every scheduler and show the one named,
as qmgr's display() does: an unknown scheduler prints nothing and exits 0.
"""
import base64
import getopt
import os
import sys

from mockpbs.cli import common, qmgr_lang

HOOK_ERROR_RC = 32


def _error(objtype, name, reply, command):
    # obj= is the name given (none for a server or sched named by default); a server
    # named on the command line is also the svr= (real qmgr 23.06).
    server = name if objtype == "server" and name else "default"
    sys.stderr.write("qmgr obj=%s svr=%s: %s\n" % (name or "", server, reply.get("error", "")))
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


SYNTAX_ERROR_ABORT_RC = 1
REQUEST_ERROR_ABORT_RC = 2


def run(line, abort=False):
    """Run one directive line; returns ``(exit code, stop?)``. ``abort`` (``-a``): a syntax
    error gives 1 and a refused request 2, and both stop qmgr."""
    try:
        command = qmgr_lang.parse(line)
    except qmgr_lang.QmgrSyntaxError as exc:
        sys.stderr.write("qmgr: Syntax error\n" + qmgr_lang.syntax_error_text(line.rstrip("\n"), exc.position))
        return (SYNTAX_ERROR_ABORT_RC, True) if abort else (exc.rc, False)
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
            return (REQUEST_ERROR_ABORT_RC, True) if abort else (1, False)
        content_b64 = base64.b64encode(content).decode()
    # As qmgr's execute(): one request per object name, in turn; a failed object is reported
    # and the next one still runs (the exit code is the last failure's), unless -a stops it.
    rc = 0
    for each in command.per_object():
        each_rc = _run_one(each, content_b64)
        if each_rc and abort:
            return REQUEST_ERROR_ABORT_RC, True
        rc = each_rc or rc
    return rc, False


def _run_one(command, content_b64):
    """Send one single-object directive and print its result; returns the exit code."""
    message = command.to_message()
    shown_sched = None
    if command.objtype == "sched" and command.verb in ("list", "print") and command.name:
        # pbs_statsched() takes no name: qmgr shows only the scheduler asked for
        shown_sched, message["name"] = command.name, None
    if content_b64 is not None:
        message["content_b64"] = content_b64
    fields = {k: v for k, v in message.items() if k != "op"}
    try:
        reply = common.call("qmgr", **fields)
    except common.ServerUnreachable as exc:
        for line in exc.said[:-1] if exc.pbs_errno == 15010 else exc.said:
            sys.stderr.write(line + "\n")
        if exc.pbs_errno == 15008:
            # The real qmgr names no server after an unknown host (its name is not set yet).
            sys.stderr.write("qmgr: cannot connect to server \n")
        else:
            sys.stderr.write("qmgr: cannot connect to server %s (errno=%d)\n" % (exc.server, exc.pbs_errno))
        return 3
    if not reply.get("ok"):
        return _error(command.objtype, command.name, reply, command.verb)
    for line_text in reply.get("stderr") or []:
        sys.stderr.write(line_text + "\n")
    out = sys.stdout
    if shown_sched is not None and shown_sched != qmgr_lang.DEFAULT_SCHED:
        return 0
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
    try:
        common.check_pbs_conf()
    except common.PbsConfMissing as exc:
        sys.stderr.write("%s\nFailed to load pbs.conf file\n" % exc)
        return 2
    try:
        options, _servers = getopt.gnu_getopt(argv, "ac:enz")
    except getopt.GetoptError as exc:
        sys.stderr.write("qmgr: %s\nUsage: qmgr [-a] [-c command] [-e] [-n] [-z] [server...]\n"
                         "       qmgr --version\n" % exc)
        return 1
    abort = any(flag == "-a" for flag, _unused in options)
    commands = [value for flag, value in options if flag == "-c"]
    if commands:
        rc, _unused = run(commands[-1], abort)
        sys.stdout.flush()
        return rc
    sys.stdout.write("Max open servers: 49\n")
    rc = 0
    for line in sys.stdin:
        if not line.strip() or line.lstrip().startswith("#"):
            continue  # qmgr's get_request() skips blank and comment lines
        rc, stop = run(line, abort)
        if stop:
            break
    sys.stdout.flush()
    return rc
