"""The task manager (TM) of a job: its moms' side and ``pbsdsh``, which runs a program on
the nodes of the current job through it.

The mom side (:class:`TaskManager`): the job's primary mom answers ``tm_nodeinfo`` and
``tm_spawn``; it runs a task itself or forwards ``spawn_task`` to the sister owning the
node; a sister only runs tasks for a job whose current ``exec_host`` names it. Every task
runs the execjob_launch hooks of its mom first, without ``PBS_NODEFILE`` in its
environment (PP-928 interface 8).

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
import shutil
import socket
import sys
import tempfile

from mockpbs import pbslog, wire
from mockpbs.mom import jobenv
from mockpbs.mom.imclient import im_request
from mockpbs.mom.jobchild import JobChild
from mockpbs.mom.jobevents import HookRejected, primary_hook_context
from mockpbs.mom.jobrecord import exec_hosts

TASK_TIMEOUT = 24 * 3600  # seconds the primary waits for a task forwarded to a sister
# Task manager error numbers and names (OpenPBS include/tm_.h, get_ecname()).
TM_ESYSTEM = 17000
TM_EBADENVIRONMENT = 17005
TM_ENOTFOUND = 17006
TM_ERROR_NAMES = {17000: "TM_ESYSTEM", 17001: "TM_ENOEVENT", 17002: "TM_ENOTCONNECTED",
                  17003: "TM_EUNKNOWNCMD", 17004: "TM_ENOTIMPLEMENTED",
                  17005: "TM_EBADENVIRONMENT", 17006: "TM_ENOTFOUND", 17007: "TM_BADINIT"}


class TaskManager:
    """The task manager of the jobs of one mom over ``jobs`` (a MomJobs): each public
    method but :meth:`run_task` serves one IM request and returns its reply dict. ``mom``
    provides: ``log``, ``host_name``, ``pbs_home``, ``address_of(host)``."""

    def __init__(self, jobs):
        self.jobs = jobs
        self.mom = jobs.mom
        self.events = jobs.events

    def _primary_record(self, message):
        record = self.jobs.get(message.get("jobid"))
        if record is None or not record.primary or record.cookie != message.get("cookie"):
            return None
        return record

    def nodeinfo(self, message):
        """IM ``tm_nodeinfo`` {jobid, cookie} on the primary: ``{"ok": true, "nodes":
        [host, ...]}``, the job's task nodes (its PBS_NODEFILE lines, from the current,
        possibly pruned, exec_host); else ``{"ok": false, "code": 17000}``."""
        record = self._primary_record(message)
        if record is None:
            return {"ok": False, "code": TM_ESYSTEM, "error": TM_ERROR_NAMES[TM_ESYSTEM]}
        return {"ok": True, "nodes": jobenv.nodefile_lines(record.job)}

    def spawn(self, message):
        """IM ``tm_spawn`` {jobid, cookie, node (int index into tm_nodeinfo's list), argv}
        on the primary: runs ``argv`` on that node (itself, or ``spawn_task`` to the
        sister) as the job's user and waits for it. Reply ``{"ok": true, "stdout": str,
        "stderr": str, "exit_status": int}`` or ``{"ok": false, "code": <TM error>}``
        (17006 TM_ENOTFOUND: no such node / the sister has not the job's node there)."""
        record = self._primary_record(message)
        if record is None:
            return {"ok": False, "code": TM_ESYSTEM, "error": TM_ERROR_NAMES[TM_ESYSTEM]}
        nodes = jobenv.nodefile_lines(record.job)
        node = message.get("node")
        if not isinstance(node, int) or not 0 <= node < len(nodes):
            return {"ok": False, "code": TM_ENOTFOUND, "error": TM_ERROR_NAMES[TM_ENOTFOUND]}
        argv = [str(a) for a in message.get("argv") or []]
        if not argv:
            return {"ok": False, "code": TM_ESYSTEM, "error": TM_ERROR_NAMES[TM_ESYSTEM]}
        host = nodes[node]
        if host == self.mom.host_name:
            return self.run_task(record, argv, node)
        try:
            return im_request(self.mom, host, {"op": "spawn_task", "jobid": record.job["id"], "cookie": record.cookie,
                                               "argv": argv, "node": node}, TASK_TIMEOUT)
        except wire.WireError:
            return {"ok": False, "code": TM_ESYSTEM, "error": TM_ERROR_NAMES[TM_ESYSTEM]}

    def spawn_task(self, message):
        """IM ``spawn_task`` {jobid, cookie, argv, node}: run one task of the job here, if
        this host is still in the job's current exec_host (after ``update_job``)."""
        record = self.jobs.get(message["jobid"])
        if record is None or record.cookie != message.get("cookie"):
            return {"ok": False, "code": TM_ENOTFOUND, "error": TM_ERROR_NAMES[TM_ENOTFOUND]}
        if self.mom.host_name not in exec_hosts(record.job):
            return {"ok": False, "code": TM_ENOTFOUND, "error": TM_ERROR_NAMES[TM_ENOTFOUND]}
        return self.run_task(record, message.get("argv") or [], int(message.get("node", 0)))

    def run_task(self, record, argv, node):
        """Run one task of the job here as the job's user and wait for it; its stdout and
        stderr are captured. As in PBS, the task's process first runs this mom's
        execjob_launch hooks (PP-928 interface 8: with the task's environment, which has no
        ``PBS_NODEFILE``, and ``progname``/``argv`` of the task; a hook may change them).
        Returns the ``tm_spawn`` reply: ``{"ok": true, "stdout", "stderr", "exit_status"}``
        (254 and the error text on stderr when the program cannot be executed), or
        ``{"ok": false, "code": 17000}`` when a launch hook rejected the task."""
        job = record.job
        jobid = job["id"]
        user = self.jobs.user_of(job)
        env = jobenv.job_environment(job, user, None, record.cookie)
        env["PBS_NODENUM"] = str(node)
        extra = primary_hook_context(record, env) if record.primary else {"in_ms_mom": False, "env": env}
        extra["progname"], extra["argv"] = argv[0], list(argv)
        self.mom.log.job(pbslog.PBSEVENT_DEBUG, jobid, "task spawn: %s" % " ".join(argv))
        child = JobChild(self.mom.pbs_home)
        try:
            self.events.run_event("execjob_launch", job, record.vnodes, extra, runner=child.run_hook)
        except HookRejected:
            child.abort()
            return {"ok": False, "code": TM_ESYSTEM, "error": TM_ERROR_NAMES[TM_ESYSTEM]}
        except BaseException:
            child.abort()
            raise
        env = dict(extra.get("env") or env)
        argv = list(extra.get("argv") or argv)
        progname = jobenv.resolve_program(extra.get("progname") or argv[0], env)
        groups = jobenv.user_groups(user)
        cwd = jobenv.job_cwd(user)
        spool = tempfile.mkdtemp(prefix="task-", dir=self._spool_dir())
        out_path, err_path = os.path.join(spool, "out"), os.path.join(spool, "err")
        try:
            error = child.execute(progname, argv, env, cwd, user.pw_uid, user.pw_gid, groups, out_path, err_path)
            status = child.process.wait()
            stdout, stderr = _read_text(out_path), _read_text(err_path)
        finally:
            shutil.rmtree(spool, ignore_errors=True)
        if error:
            stderr += error + "\n"
        status = status if status >= 0 else 256 - status
        return {"ok": True, "stdout": stdout, "stderr": stderr, "exit_status": status}

    def _spool_dir(self):
        path = os.path.join(self.mom.pbs_home, "spool")
        os.makedirs(path, exist_ok=True)
        return path


def _read_text(path):
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


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
