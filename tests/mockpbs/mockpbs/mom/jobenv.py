"""The job program's environment on a mom: its user, working directory, output files,
``PBS_NODEFILE`` (``PBS_HOME/aux/<jobid>``), the login-like environment variables and the
program itself (the shell running the script, or ``PROGRAM ARGS`` of a
``qsub -- PROGRAM ARGS`` job; a subjob gets ``PBS_ARRAY_INDEX``/``PBS_ARRAY_ID``).

Tasks (:mod:`mockpbs.mom.tm`) get the same environment without ``PBS_NODEFILE``
(PP-928 interface 8)."""
import grp
import os
import pwd
import re
import shutil

from mockpbs import selectspec, wire


def nodefile_lines(job):
    """PBS_NODEFILE lines: one per exec_host entry (repeated ``mpiprocs`` times when its
    schedselect chunk sets it; chunks with ``ncpus=0`` left out)."""
    entries = selectspec.parse_exec_host(job.get("exec_host", ""))
    chunk_resources = []
    try:
        chunk_resources = selectspec.expand_chunks(selectspec.parse_select(job.get("schedselect", "")))
    except selectspec.SelectSpecError:
        pass
    lines = []
    for position, (host, _index, _ncpus) in enumerate(entries):
        resources = dict(chunk_resources[position]) if len(chunk_resources) == len(entries) else {}
        if resources.get("ncpus") == "0":
            continue
        repeat = int(resources.get("mpiprocs", "1") or 1)
        lines.extend([host] * repeat)
    return lines


EXECUTABLE_RE = re.compile(r"<jsdl-hpcpa:Executable>(.*?)</jsdl-hpcpa:Executable>", re.S)
ARGUMENT_RE = re.compile(r"<jsdl-hpcpa:Argument>(.*?)</jsdl-hpcpa:Argument>", re.S)


def executable_argv(job):
    """argv of a job submitted as ``qsub -- PROGRAM ARGS...``: ``[PROGRAM, ARGS...]`` decoded
    from the job's ``executable`` (``<jsdl-hpcpa:Executable>P</jsdl-hpcpa:Executable>``) and
    ``argument_list`` (one ``<jsdl-hpcpa:Argument>A</jsdl-hpcpa:Argument>`` per argument)
    attributes, as OpenPBS's ``decode_xml_arg_list()`` does; None for a job with a script."""
    match = EXECUTABLE_RE.search(job.get("executable") or "")
    if match is None:
        return None
    return [match.group(1)] + ARGUMENT_RE.findall(job.get("argument_list") or "")


def resolve_program(progname, env):
    """``progname`` itself when it holds a ``/``, else its first match on the ``PATH`` of
    ``env`` (what execvp would run); unchanged when nothing matches (the exec then fails
    with ENOENT, as it would in PBS)."""
    if "/" in progname:
        return progname
    return shutil.which(progname, path=env.get("PATH", os.defpath)) or progname


def job_user(job):
    """The passwd entry of the job's ``euser``; this process's user when there is none."""
    try:
        return pwd.getpwnam(job.get("euser") or "")
    except KeyError:
        return pwd.getpwuid(os.getuid())


def user_groups(user):
    """Group ids of the supplementary groups ``user`` (a passwd entry) is a member of."""
    return [g.gr_gid for g in grp.getgrall() if user.pw_name in g.gr_mem]


def job_cwd(user):
    """Where the job's programs start: the home of ``user``, or ``/`` when it has none."""
    return user.pw_dir if os.path.isdir(user.pw_dir) else "/"


def write_nodefile(pbs_home, job):
    """Write ``PBS_HOME/aux/<jobid>`` (:func:`nodefile_lines`); returns its path."""
    aux = os.path.join(pbs_home, "aux")
    os.makedirs(aux, exist_ok=True)
    path = os.path.join(aux, job["id"])
    with open(path, "w") as handle:
        handle.write("".join(line + "\n" for line in nodefile_lines(job)))
    os.chmod(path, 0o644)
    return path


def job_environment(job, user, nodefile, cookie=None):
    """Login-like environment of the job program of ``user`` (a passwd entry, see the
    module docstring); ``nodefile`` None leaves ``PBS_NODEFILE`` out (tasks, PP-928
    interface 8: an execjob_launch hook tells the job's own start from a task by its
    presence). A subjob (``array_index``
    set) also gets ``PBS_ARRAY_INDEX`` and ``PBS_ARRAY_ID`` (its array's id,
    ``N[].server``); its ``PBS_JOBID`` is the subjob id ``N[i].server``."""
    env = {}
    for key, value in (job.get("Variable_List") or {}).items():
        env[key] = value
    env.update({
        "HOME": user.pw_dir, "USER": user.pw_name, "LOGNAME": user.pw_name,
        "SHELL": user.pw_shell or "/bin/sh", "PATH": "/usr/local/bin:/usr/bin:/bin",
        "PBS_JOBID": job["id"], "PBS_JOBNAME": job.get("Job_Name", ""),
        "PBS_QUEUE": job.get("queue", ""), "PBS_NODEFILE": nodefile,
        "PBS_ENVIRONMENT": "PBS_BATCH", "PBS_NODENUM": "0", "PBS_TASKNUM": "1",
        "PBS_MOMPORT": str(wire.IM_PORT), "PBS_JOBDIR": user.pw_dir,
    })
    if cookie:
        env["PBS_JOBCOOKIE"] = cookie
    if job.get("array_index") is not None:
        env["PBS_ARRAY_INDEX"] = str(job["array_index"])
        env["PBS_ARRAY_ID"] = str(job.get("array_id", ""))
    if nodefile is None:
        del env["PBS_NODEFILE"]
    return env


def job_program(job, user, pbs_home, env=None):
    """argv of the top program of ``user`` (a passwd entry): ``[PROGRAM, ARGS...]`` for
    a ``qsub -- PROGRAM ARGS`` job (PROGRAM looked up on the job's ``PATH`` from ``env``
    when it has no ``/``), else the user's shell running the job script (written to
    ``PBS_HOME/mom_priv/jobs/<jobid>.SC`` under ``pbs_home``)."""
    command = executable_argv(job)
    if command is not None:
        return [resolve_program(command[0], env or {})] + command[1:]
    jobs_dir = os.path.join(pbs_home, "mom_priv", "jobs")
    os.makedirs(jobs_dir, exist_ok=True)
    script = os.path.join(jobs_dir, "%s.SC" % job["id"])
    with open(script, "w") as handle:
        handle.write(job.get("script") or "")
    os.chmod(script, 0o755)
    if os.getuid() == 0:
        os.chown(script, user.pw_uid, user.pw_gid)
    return [user.pw_shell or "/bin/sh", script]


def output_files(job, user):
    """(stdout path, stderr path) of the job program of ``user`` (``Output_Path``,
    ``Error_Path`` without their host part, ``Join_Path``; default ``<home>/<name>.o<num>``)."""
    def path_part(value, default):
        value = value or default
        return value.split(":", 1)[1] if ":" in value else value
    home = user.pw_dir
    jobnum = job["id"].split(".")[0]
    out = path_part(job.get("Output_Path"), os.path.join(home, "%s.o%s" % (job.get("Job_Name", "STDIN"), jobnum)))
    err = path_part(job.get("Error_Path"), os.path.join(home, "%s.e%s" % (job.get("Job_Name", "STDIN"), jobnum)))
    join = job.get("Join_Path", "n")
    if join == "oe":
        err = out
    elif join == "eo":
        out = err
    return out, err
