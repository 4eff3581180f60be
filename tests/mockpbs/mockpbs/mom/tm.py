"""``pbsdsh``: run a program on the nodes of the current job through the task manager.

Inside a job (PP-928 interface 8: after ``release_nodes()`` the tasks follow the pruned
node list) ``pbsdsh`` talks to the job's primary mom over TCP (its IM port,
``PBS_MOMPORT``), as the real one does through the TM API:

1. ``tm_nodeinfo`` {jobid, cookie} -> the job's node list (one entry per
   ``PBS_NODEFILE`` line of the current ``exec_host``);
2. ``tm_spawn`` {jobid, cookie, node, argv} per target node -> the task's stdout,
   stderr and exit status, which ``pbsdsh`` writes to its own stdout/stderr.

Behaviour and texts of OpenPBS ``src/cmds/pbsdsh.c``: options ``-c copies``,
``-n node_index``, ``-s``, ``-v``, ``-o``; without ``-c``/``-n`` one copy per node; node
``i`` is ``i % number_of_nodes`` (so ``-n`` past the end wraps around, as in PBS); a task
ending with a non-zero status prints ``<prog>: task 0x0000000N exit status S``; a
failed spawn prints ``<prog>: spawn failed on node N err <TM error name>``; ``pbsdsh``
itself exits 0 once the tasks are done, 1 on usage or set-up errors.
"""
import getopt
import os
import socket
import sys

from mockpbs import wire
from mockpbs.mom.jobstart import TASK_TIMEOUT, TM_EBADENVIRONMENT, TM_ERROR_NAMES, TM_ESYSTEM


def _atoi(text):
    """C ``atoi``: leading optional sign and digits, else 0."""
    text = text.strip()
    digits = ""
    for index, char in enumerate(text):
        if char.isdigit() or (index == 0 and char in "+-"):
            digits += char
        else:
            break
    try:
        return int(digits)
    except ValueError:
        return 0


def _usage(prog, err):
    err.write("Usage: %s [-c copies][-s][-v][-o] -- program [args...]\n" % prog)
    err.write("       %s [-n node_index][-s][-v][-o] -- program [args...]\n" % prog)
    err.write("       %s --version\n" % prog)
    err.write("Where -c copies =  run a copy of \"program\" on the first \"copies\" nodes,\n")
    err.write("      -n node_index = run a copy of \"program\" on the \"node_index\"-th node,\n")
    err.write("      -s = forces synchronous execution,\n")
    err.write("      -v = forces verbose output.\n")
    err.write("      -o = no obits are waited for.\n")
    return 1


def primary_mom_host(env):
    """The job's primary mom host: first line of ``PBS_NODEFILE`` (the primary's node
    comes first), else this host's name."""
    try:
        with open(env.get("PBS_NODEFILE") or "") as handle:
            first = handle.readline().strip()
        if first:
            return first
    except OSError:
        pass
    return socket.gethostname().split(".")[0]


def pbsdsh_main(argv, env=None, resolve=None, prog=None, out=None, err=None):
    """``pbsdsh [-c copies | -n node_index] [-s] [-v] [-o] [--] program [args...]``.

    ``argv`` the arguments after the command name; ``env`` the environment (default
    ``os.environ``; needs ``PBS_ENVIRONMENT``, ``PBS_JOBID``, ``PBS_JOBCOOKIE``);
    ``resolve(host) -> address`` finds the primary mom (default: the resolver).
    Returns the exit code (0, or 1 on usage / set-up errors)."""
    env = os.environ if env is None else env
    resolve = resolve or socket.gethostbyname
    prog = prog or (sys.argv[0] if sys.argv and sys.argv[0] else "pbsdsh")
    out = out or sys.stdout
    err = err or sys.stderr
    if argv[:1] == ["--version"]:
        from mockpbs import PBS_VERSION
        out.write("pbs_version = %s\n" % PBS_VERSION)
        return 0
    ncopies = onenode = -1
    verbose = no_obit = False
    bad = False
    try:
        options, program = getopt.getopt(argv, "c:n:svo")
    except getopt.GetoptError:
        return _usage(prog, err)
    for flag, value in options:
        if flag == "-c":
            ncopies = _atoi(value)
            bad = bad or ncopies < 0
        elif flag == "-n":
            onenode = _atoi(value)
            bad = bad or onenode < 0
        elif flag == "-v":
            verbose = True
        elif flag == "-o":
            no_obit = True
    if bad or (onenode >= 0 and ncopies >= 0) or not program:
        return _usage(prog, err)
    if "PBS_ENVIRONMENT" not in env:
        err.write("%s: not executing under PBS\n" % prog)
        return 1

    jobid, cookie = env.get("PBS_JOBID"), env.get("PBS_JOBCOOKIE")
    port = int(env.get("PBS_MOMPORT") or wire.IM_PORT)
    reply = {"ok": False, "code": TM_EBADENVIRONMENT}
    address = None
    if jobid and cookie:
        try:
            address = resolve(primary_mom_host(env))
            reply = wire.request(address, port, {"op": "tm_nodeinfo", "jobid": jobid, "cookie": cookie})
        except (OSError, wire.WireError):
            reply = {"ok": False, "code": TM_ESYSTEM}
    if not reply.get("ok"):
        code = reply.get("code", TM_ESYSTEM)
        err.write("%s: tm_init failed, rc = %s (%d)\n" % (prog, TM_ERROR_NAMES.get(code, "?"), code))
        return 1
    nodes = reply.get("nodes") or []
    if not nodes:
        err.write("%s: tm_nodeinfo failed, rc = %s (%d)\n" % (prog, TM_ERROR_NAMES[TM_ESYSTEM], TM_ESYSTEM))
        return 1

    if onenode >= 0:
        start, stop = onenode, onenode + 1
    elif ncopies >= 0:
        start, stop = 0, ncopies
    else:
        start, stop = 0, len(nodes)
    for count in range(stop - start):
        node = (start + count) % len(nodes)
        try:
            result = wire.request(address, port, {"op": "tm_spawn", "jobid": jobid, "cookie": cookie,
                                                  "node": node, "argv": list(program)}, timeout=TASK_TIMEOUT)
        except wire.WireError:
            result = {"ok": False, "code": TM_ESYSTEM}
        if not result.get("ok"):
            code = result.get("code", TM_ESYSTEM)
            err.write("%s: spawn failed on node %d err %s\n" % (prog, node, TM_ERROR_NAMES.get(code, "?")))
            continue
        if verbose:
            out.write("%s: spawned task 0x%08X on logical node %d event %d\n" % (prog, count, node, count + 1))
        out.write(result.get("stdout") or "")
        out.flush()
        err.write(result.get("stderr") or "")
        err.flush()
        status = int(result.get("exit_status", 0))
        if not no_obit and (verbose or status != 0):
            out.write("%s: task 0x%08X exit status %d\n" % (prog, count, status))
    out.flush()
    return 0
