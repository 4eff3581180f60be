"""Helpers of the PP-928 cluster-level tests: jobs, hooks, logs and mom settings on a
running :class:`conftest.MockCluster`, all through the mock's own commands run inside
the nodes (``cluster exec``).

Everything returns plain Python values; a command that must succeed and does not raises
AssertionError with its output (the test then fails, naming the command).
"""
import json
import os
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import polling  # noqa: E402  (wait_for, WaitTimeout)
import rjs_demo  # noqa: E402  (the qstat -f parsers and record_fields are shared)

SERVER = "pbs-server"
JOB_USER = "pbsuser"
PBS_HOME = "/var/spool/pbs"
REPO = rjs_demo.REPO
BUNDLED_HOOK = os.path.join(REPO, "files", "hooks", "reliable_job_startup.py")
parse_qstat_f = rjs_demo.parse_qstat_f
parse_qstat_jobs = rjs_demo.parse_qstat_jobs
record_fields = rjs_demo.record_fields


WaitTimeout = polling.WaitTimeout
wait_for = polling.wait_for


def run(cluster, node, argv, user=None, input=None, check=True):
    """``argv`` inside ``node``; CompletedProcess. ``check``: raise on rc != 0."""
    proc = cluster.exec(node, argv, user=user, input=input)
    if check and proc.returncode != 0:
        raise AssertionError("%s on %s failed (rc %d):\nstdout: %s\nstderr: %s"
                             % (argv, node, proc.returncode, proc.stdout, proc.stderr))
    return proc


def sh(cluster, node, script, input=None, check=True):
    """A shell snippet inside ``node`` as root (``sh -c``); CompletedProcess."""
    return run(cluster, node, ["sh", "-c", script], input=input, check=check)


def qmgr(cluster, directive, check=True):
    """``qmgr -c DIRECTIVE`` on the server as root; CompletedProcess."""
    return run(cluster, SERVER, ["qmgr", "-c", directive], check=check)


def write_node_file(cluster, node, path, text, mode="0644"):
    """Write ``text`` to ``path`` inside ``node`` (its private /etc, /var/spool, ...)."""
    sh(cluster, node, "cat > %s && chmod %s %s" % (shlex.quote(path), mode, shlex.quote(path)), input=text)


# ------------------------------------------------------------------ hooks

def install_hook(cluster, name, events, body, config=None, alarm=None, order=None, enabled=True):
    """Create (or re-create) site hook ``name`` for ``events`` (list of event names)
    with ``body`` (Python source text) and optional ``config`` (dict, imported as JSON),
    ``alarm``/``order`` (ints), as an admin does with qmgr. A hook that is not to be
    ``enabled`` is disabled before it gets its events, so that no job meets it meanwhile
    (PBS creates a hook enabled)."""
    qmgr(cluster, "delete hook %s" % name, check=False)
    create_hook(cluster, name)
    if not enabled:
        qmgr(cluster, "set hook %s enabled = false" % name)
    qmgr(cluster, 'set hook %s event = "%s"' % (name, ",".join(events)))
    body_path = "%s/server_priv/hooks/tmp/%s.import.py" % (PBS_HOME, name)
    write_node_file(cluster, SERVER, body_path, body)
    qmgr(cluster, "import hook %s application/x-python default %s" % (name, body_path))
    if config is not None:
        import_hook_config(cluster, name, config)
    if alarm is not None:
        qmgr(cluster, "set hook %s alarm = %d" % (name, alarm))
    if order is not None:
        qmgr(cluster, "set hook %s order = %d" % (name, order))


def import_hook_config(cluster, name, config):
    """Import ``config`` (dict, as JSON) as site hook ``name``'s config file, as an admin
    does with qmgr; the hook itself is left as it is."""
    import_hook_config_text(cluster, name, json.dumps(config), suffix=".json")


def import_hook_config_text(cluster, name, text, suffix=""):
    """Import ``text`` as site hook ``name``'s config file from a file named with ``suffix``.
    Real PBS loads a ``.json`` file with the json module in pbs_server's hook interpreter
    before it takes it (``mgr_hook_import``); hpc.pbs.hook imports from a file without
    suffix, which PBS takes as it is."""
    config_path = "%s/server_priv/hooks/tmp/%s.import%s" % (PBS_HOME, name, suffix)
    write_node_file(cluster, SERVER, config_path, text)
    qmgr(cluster, "import hook %s application/x-config default %s" % (name, config_path))


def create_hook(cluster, name, timeout=60):
    """``qmgr -c "create hook NAME"``, again while real PBS still holds the name of a
    hook just deleted ("hook name '...' is pending delete, try another name": the server
    keeps it until the moms have dropped their copies, longer on a loaded machine)."""
    def created():
        proc = qmgr(cluster, "create hook %s" % name, check=False)
        if proc.returncode == 0:
            return proc
        if "pending delete" not in proc.stderr:
            raise AssertionError("create hook %s failed (rc %d):\nstdout: %s\nstderr: %s"
                                 % (name, proc.returncode, proc.stdout, proc.stderr))
        return None
    return wait_for(created, timeout, "the name of hook %s, pending delete, to be free" % name, interval=1)


def delete_hook(cluster, name):
    qmgr(cluster, "delete hook %s" % name, check=False)


def install_bundled_hook(cluster, config=None, name="reliable_job_startup"):
    """The bundled ``files/hooks/reliable_job_startup.py`` for ``queuejob,execjob_launch``
    as roles/reliable_job_startup installs it, with ``config`` (dict) or its defaults."""
    with open(BUNDLED_HOOK) as handle:
        body = handle.read()
    install_hook(cluster, name, ["queuejob", "execjob_launch"], body,
                 config=config if config is not None else {"increment": 1, "tolerate": "job_start"})


def wait_hook_on_moms(cluster, moms, name, timeout=20):
    """Wait until every mom of ``moms`` has ``mom_priv/hooks/<name>.PY``."""
    def present():
        return all(run(cluster, mom, ["test", "-f", "%s/mom_priv/hooks/%s.PY" % (PBS_HOME, name)],
                       check=False).returncode == 0 for mom in moms)
    wait_for(present, timeout, "hook %s copied to %s" % (name, moms))


# ------------------------------------------------------------------ moms

def mom_pid(cluster, mom):
    return sh(cluster, mom, "cat %s/mom_priv/mom.lock" % PBS_HOME).stdout.split()[0]


def log_text(cluster, node, kind="mom_logs"):
    """All of ``PBS_HOME/<kind>/*`` of ``node`` (mom_logs, server_logs, sched_logs)."""
    return sh(cluster, node, "cat %s/%s/* 2>/dev/null" % (PBS_HOME, kind), check=False).stdout


def log_lines(cluster, node, needle=None, kind="mom_logs"):
    """Log lines of ``node`` containing ``needle`` (all lines when None)."""
    return [l for l in log_text(cluster, node, kind).splitlines() if needle is None or needle in l]


def job_log_lines(cluster, node, jobid, kind="mom_logs"):
    """Log lines of ``node`` about ``jobid`` (``;<jobid>;`` in the line)."""
    return log_lines(cluster, node, ";%s;" % jobid, kind)


def set_mom_config(cluster, mom, options, vnodes=None):
    """Rewrite ``mom_priv/config`` of ``mom`` with ``$clienthost`` plus ``options``
    (``{"sister_join_job_alarm": 4, ...}``; an empty dict leaves only ``$clienthost``) and,
    when ``vnodes`` is given (``{vnode: {"ncpus": "4", "mem": "8gb"}}``), a vnode definition
    file ``config.d/pp928_vnodes`` ($configversion 2); then SIGHUP the mom and wait until it
    has re-read its config (a new ``initialize;pcpus=`` line, the last one a reload logs)
    and, with ``vnodes``, until the server lists them with those resources."""
    lines = ["$clienthost %s" % SERVER] + ["$%s %s" % (k, v) for k, v in options.items()]
    if getattr(cluster, "backend", "mock").startswith("openpbs"):
        lines.append("$usecp *:/home/ /home/")  # as the launcher set up the real mom
    write_node_file(cluster, mom, "%s/mom_priv/config" % PBS_HOME, "\n".join(lines) + "\n")
    if vnodes is not None:
        definition = ["$configversion 2"]
        for vnode, resources in vnodes.items():
            definition += ["%s: resources_available.%s = %s" % (vnode, k, v) for k, v in resources.items()]
        sh(cluster, mom, "mkdir -p %s/mom_priv/config.d" % PBS_HOME)
        write_node_file(cluster, mom, "%s/mom_priv/config.d/pp928_vnodes" % PBS_HOME, "\n".join(definition) + "\n")
    reloads = len(log_lines(cluster, mom, "initialize;pcpus="))
    sh(cluster, mom, "kill -HUP %s" % mom_pid(cluster, mom))
    wait_for(lambda: len(log_lines(cluster, mom, "initialize;pcpus=")) > reloads,
             20, "%s to re-read its config" % mom)
    if vnodes:
        def server_has_them():
            listing = run(cluster, SERVER, ["pbsnodes", "-av"], check=False).stdout
            return all(("\n%s\n" % vnode) in "\n" + listing and all(
                "resources_available.%s = %s" % (k, v) in listing for k, v in resources.items())
                for vnode, resources in vnodes.items())
        wait_for(server_has_them, 30, "the server to list %s's vnodes %s" % (mom, sorted(vnodes)))


# ------------------------------------------------------------------ nodes

def pbsnodes(cluster, node):
    """``pbsnodes NODE`` as ``{attribute: value}`` (rc != 0 -> AssertionError)."""
    out = run(cluster, SERVER, ["pbsnodes", node]).stdout
    attrs = {}
    for line in out.splitlines():
        if " = " in line and line.startswith(" "):
            key, value = line.strip().split(" = ", 1)
            attrs[key] = value
    return attrs


def node_state(cluster, node):
    return pbsnodes(cluster, node).get("state")


def wait_nodes_free(cluster, nodes, timeout=30):
    wait_for(lambda: all(node_state(cluster, n) == "free" for n in nodes), timeout,
             "nodes %s free" % (nodes,))


def clear_offline(cluster, nodes):
    """``pbsnodes -r`` (clear offline) on ``nodes``."""
    run(cluster, SERVER, ["pbsnodes", "-r"] + list(nodes))


# ------------------------------------------------------------------ jobs

def qsub(cluster, args, script=None, user=JOB_USER, check=True):
    """``qsub ARGS`` as ``user`` with ``script`` on stdin; the job id (``check``) or the
    CompletedProcess (``check=False``)."""
    proc = run(cluster, SERVER, ["qsub"] + list(args), user=user, input=script, check=check)
    return proc.stdout.strip() if check else proc


def qstat_f(cluster, jobid):
    """``qstat -f JOBID`` as a dict (``{}`` when the job is unknown). An attribute printed
    with an empty value (``Submit_arguments = ``) maps to ``""``."""
    proc = run(cluster, SERVER, ["qstat", "-f", jobid], check=False)
    return parse_qstat_f(proc.stdout) if proc.returncode == 0 else {}


def wait_job(cluster, jobid, predicate, timeout, what):
    """Poll ``qstat -f`` until ``predicate(attrs)``; returns the attrs."""
    def check():
        attrs = qstat_f(cluster, jobid)
        return attrs if attrs and predicate(attrs) else None
    return wait_for(check, timeout, "job %s %s" % (jobid, what))


def job_ids(cluster):
    """Ids of the jobs ``qstat`` lists (first column of its job lines)."""
    out = run(cluster, SERVER, ["qstat"], check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line[:1].isdigit()]


def qdel(cluster, jobid):
    run(cluster, SERVER, ["qdel", jobid], check=False)


def wait_job_gone(cluster, jobid, timeout=30):
    wait_for(lambda: run(cluster, SERVER, ["qstat", jobid], check=False).returncode != 0,
             timeout, "job %s to leave the server" % jobid)


def accounting(cluster, jobid):
    """Accounting records of ``jobid``: list of (record type, full line)."""
    text = sh(cluster, SERVER, "cat %s/server_priv/accounting/* 2>/dev/null" % PBS_HOME, check=False).stdout
    out = []
    for line in text.splitlines():
        fields = line.split(";", 3)
        if len(fields) == 4 and fields[2] == jobid:
            out.append((fields[1], line))
    return out


def record_types(cluster, jobid):
    return [t for t, _unused in accounting(cluster, jobid)]


def running_pruned(cluster, jobid, substate=None):
    """``qstat -f`` of ``jobid`` once it runs on the exec_host of its last pruning (``s``
    accounting record), else None; with ``substate`` (e.g. ``"42"``), only in that substate.

    The accounting is read before qstat: the server applies the pruned exec_host and
    exec_vnode, then writes the ``s`` record, so a qstat taken after the record shows them
    (taken before it, it can show the padded job beside a fresh record). A run requeued
    after its pruning starts again padded; it counts only once pruned again."""
    pruned = [line for kind, line in accounting(cluster, jobid) if kind == "s"]
    if not pruned:
        return None
    attrs = qstat_f(cluster, jobid)
    if (attrs.get("job_state") != "R" or (substate is not None and attrs.get("substate") != substate)
            or attrs.get("exec_host") != record_fields(pruned[-1]).get("exec_host")):
        return None
    return attrs


def wait_running_pruned(cluster, jobid, timeout=90, substate=None):
    """:func:`running_pruned`, polled until true; returns the job's ``qstat -f`` attrs."""
    return wait_for(lambda: running_pruned(cluster, jobid, substate), timeout,
                    "job %s running pruned (s record)" % jobid)


def hosts_of(exec_host):
    """``mom1/0*3+mom3/0*2`` -> ``["mom1", "mom3"]``."""
    return [entry.split("/")[0] for entry in exec_host.split("+") if entry]


def job_output(cluster, jobid, name="STDIN", user=JOB_USER, suffix="o"):
    """Text of the job's output file in the user's home, or None when absent."""
    path = "/home/%s/%s.%s%s" % (user, name, suffix, jobid.split(".")[0])
    proc = run(cluster, SERVER, ["cat", path], check=False)
    return proc.stdout if proc.returncode == 0 else None


def wait_output(cluster, jobid, marker="END", timeout=60, name="STDIN"):
    """Wait for the job's output file to contain ``marker``; returns its text."""
    def output_with_marker():
        text = job_output(cluster, jobid, name)
        return text if text and marker in text else None
    return wait_for(output_with_marker, timeout, "output of job %s containing %r" % (jobid, marker))


def restore_cluster(cluster, moms):
    """Undo what a test may have left: every mom in ``moms`` running again, none of their
    vnodes offline, and every job deleted."""
    for mom in moms:
        cluster.start_mom(mom)
    clear_offline(cluster, moms)
    for jobid in job_ids(cluster):
        qdel(cluster, jobid)
