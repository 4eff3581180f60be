"""The job child: the process a mom forks for a job, which runs the job's execjob_launch
hooks and then becomes the job's program (OpenPBS ``finish_exec()``).

Real PBS runs execjob_launch hooks in the forked job child, just before it execs the job's
top shell, so a hook acting on "its parent process" (``os.getppid()``: a cgroup hook moving
the process PBS is about to exec into the job's cgroups) acts on the job, never on the mom.
The mock does the same: :class:`JobChild` starts ``python -m mockpbs.mom.jobchild REPORT_FD``
as root in a new session; the mom keeps the
PP-928 logic (``vnode_list_fail``, ``release_nodes()`` pruning, ``update_job``...) and only
asks the child to run each hook, so every hook process is the child's child.

Protocol, JSON lines, mom -> child on the child's stdin, child -> mom on ``REPORT_FD``:

- ``{"op": "hook", "hook", "event", "context", "pbs_home"}``: the child runs it with
  :func:`mockpbs.hookrun.run_hook` and answers the result dict.
- ``{"op": "exec", "progname", "argv", "env", "cwd", "uid", "gid", "groups", "stdout",
  "stderr"}``: stdin from /dev/null, stdout/stderr appended to those paths (created owned
  by uid/gid; the same path once for both), setgroups/setgid/setuid, chdir, ``execve``;
  the report fd is close-on-exec, so the mom reads EOF on success, or ``{"error": text}``
  (then exit 254, as a mom's job child that cannot exec).
- ``{"op": "abort"}`` or EOF: the child exits 0 without running anything.
"""
import json
import os
import subprocess
import sys

EXEC_FAILED_STATUS = 254


class JobChildGone(Exception):
    """The job child died or closed its report pipe before answering."""


class JobChild:
    """Mom side of one job child. ``pbs_home``: the mom's PBS_HOME (working directory of
    the hooks). The job's output files are only created when the program is started."""

    def __init__(self, pbs_home):
        self.pbs_home = pbs_home
        read_fd, write_fd = os.pipe()
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "mockpbs.mom.jobchild", str(write_fd)],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(write_fd,),
                start_new_session=True, cwd="/")
        finally:
            os.close(write_fd)
        self.reports = os.fdopen(read_fd, "r")

    @property
    def pid(self):
        return self.process.pid

    def _send(self, message):
        try:
            self.process.stdin.write((json.dumps(message) + "\n").encode())
            self.process.stdin.flush()
        except (BrokenPipeError, ValueError, OSError) as exc:
            raise JobChildGone("job child %d: %s" % (self.process.pid, exc))

    def run_hook(self, hook, event, context):
        """Run one hook in the child (same result dict as ``mockpbs.hookrun.run_hook``).
        A dead child gives a rejecting result with ``exception`` saying so."""
        try:
            self._send({"op": "hook", "hook": hook, "event": event, "context": context,
                        "pbs_home": self.pbs_home})
            line = self.reports.readline()
            if not line:
                raise JobChildGone("job child %d exited while running hook %s" % (self.process.pid, hook.get("name")))
            return json.loads(line)
        except (JobChildGone, ValueError) as exc:
            return {"accepted": False, "reject_msg": None, "exception": str(exc), "alarm": False,
                    "job": {}, "rerun": False, "vnodes": {}, "logs": []}

    def execute(self, progname, argv, env, cwd, uid, gid, groups, stdout, stderr):
        """Make the child exec the program (``stdout``/``stderr``: output file paths).
        Returns None once it did (the process is now the job), or the error text when it
        could not (the child then exits 254)."""
        self._send({"op": "exec", "progname": progname, "argv": list(argv), "env": env, "cwd": cwd,
                    "uid": uid, "gid": gid, "groups": list(groups), "stdout": stdout, "stderr": stderr})
        line = self.reports.readline()
        self._close()
        if not line:
            return None
        try:
            return json.loads(line).get("error") or line.strip()
        except ValueError:
            return line.strip()

    def abort(self):
        """Tell the child to exit without running anything; wait for it."""
        try:
            self._send({"op": "abort"})
        except JobChildGone:
            pass
        self._close()
        self.process.wait()

    def _close(self):
        for handle in (self.process.stdin, self.reports):
            try:
                handle.close()
            except OSError:
                pass


def _exec(message, report):
    try:
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        for fd, path in ((1, message["stdout"]), (2, message["stderr"])):
            if fd == 2 and path == message["stdout"]:
                os.dup2(1, 2)
                continue
            handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            if os.getuid() == 0:
                try:
                    os.fchown(handle, message["uid"], message["gid"])
                except OSError:
                    pass
            os.dup2(handle, fd)
            os.close(handle)
        if os.getuid() == 0 and message["uid"] != 0:
            os.setgroups(message["groups"])
            os.setgid(message["gid"])
            os.setuid(message["uid"])
        os.chdir(message["cwd"])
        os.execve(message["progname"], message["argv"], message["env"])
    except OSError as exc:
        report.write(json.dumps({"error": "%s: %s" % (message["progname"], exc.strerror or exc)}) + "\n")
        report.flush()
        os._exit(EXEC_FAILED_STATUS)


def main(argv):
    from mockpbs import hookrun
    report_fd = int(argv[0])
    os.set_inheritable(report_fd, False)   # closed by execve: EOF tells the mom it worked
    report = os.fdopen(report_fd, "w")
    requests = os.fdopen(os.dup(0), "r")
    for line in requests:
        message = json.loads(line)
        if message.get("op") == "hook":
            result = hookrun.run_hook(message["hook"], message["event"], message["context"], message["pbs_home"])
            report.write(json.dumps(result) + "\n")
            report.flush()
        elif message.get("op") == "exec":
            requests.close()
            _exec(message, report)
        else:
            break
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
