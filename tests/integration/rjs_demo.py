"""The reliable-job-startup demo: test cluster up (mock or real OpenPBS), site.yml over SSH (twice), a sister mom
frozen, a padded job submitted as the non-root user, and the evidence that it started
pruned (PP-928 "Case of Reliable Job Startup").

Used by ``tests/integration/demo`` (``make demo``) and by the integration test that
asserts each piece of evidence. Everything goes through the cluster launcher, real
``ansible-playbook`` and the mock's own commands run inside the nodes.
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import polling  # noqa: E402  pylint: disable=wrong-import-position

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLUSTER = os.path.join(REPO, "tests", "integration", "cluster")
DEMO_VARS = os.path.join(REPO, "tests", "integration", "demo_vars.yml")
SERVER = "pbs-server"
JOB_USER = "pbsuser"
FROZEN_SISTER = "mom2"
JOB_SCRIPT = 'echo "PBS_NODEFILE=$PBS_NODEFILE"\ncat "$PBS_NODEFILE"\nsleep 6\necho END\n'
RECAP_RE = re.compile(r"^(\S+)\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M)


class DemoError(RuntimeError):
    """The demo could not produce a piece of evidence."""


# The demo's --pbs: a backend, or the real one with an OpenPBS release (openpbs-RELEASE).
DEMO_BACKENDS = ("mock", "openpbs", "openpbs-22.05.11", "openpbs-23.06.06")


def backend_title(pbs):
    """``mock PBS``, ``real OpenPBS 23.06.06``...: what the demo ran on (``pbs``: one of
    :data:`DEMO_BACKENDS`). 22.05.11 reports ``pbs_version = 20.0.0`` itself (its
    configure.ac was never bumped): the release named here is the source's tag."""
    if pbs == "mock":
        return "mock PBS"
    return "real OpenPBS %s" % (pbs.partition("-")[2] or "23.06.06")


class Cluster:
    """Thin wrapper over the launcher ``tests/integration/cluster``."""

    def __init__(self, workdir, python=sys.executable, pbs="mock"):
        self.workdir = workdir
        self.python = python
        self.pbs = pbs

    def _cmd(self, *args):
        return [self.python, CLUSTER] + list(args) + ["--workdir", self.workdir]

    def up(self, moms):
        backend, _dash, release = self.pbs.partition("-")
        args = ["up", "--moms", str(moms), "--pbs", backend] + (["--pbs-version", release] if release else [])
        out = subprocess.run(self._cmd(*args), check=True, stdout=subprocess.PIPE, text=True).stdout
        return out.strip().splitlines()[-1]

    def down(self):
        subprocess.run(self._cmd("down"), check=False)

    def stop_mom(self, node, freeze=False):
        subprocess.run(self._cmd("stop-mom", node, *(["--freeze"] if freeze else [])), check=True)

    def start_mom(self, node):
        subprocess.run(self._cmd("start-mom", node), check=True)

    def run(self, node, argv, user=None, stdin=None, check=True):
        cmd = [self.python, CLUSTER, "exec", node, "--workdir", self.workdir]
        if user:
            cmd += ["--user", user]
        proc = subprocess.run(cmd + ["--"] + list(argv), input=stdin, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
        if check and proc.returncode != 0:
            raise DemoError("%s on %s failed (rc %d): %s" % (" ".join(argv), node, proc.returncode, proc.stderr))
        return proc


def run_playbook(inventory, playbook="playbooks/site.yml", extra_vars_file=DEMO_VARS):
    """Run ansible-playbook for real; returns (rc, output text, {host: recap dict})."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_FORCE_COLOR="0")
    bindir = os.path.dirname(sys.executable)
    cmd = [os.path.join(bindir, "ansible-playbook"), "-i", inventory, playbook]
    if extra_vars_file:
        cmd += ["-e", "@" + extra_vars_file]
    proc = subprocess.run(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    recap = {}
    for match in RECAP_RE.finditer(proc.stdout):
        recap[match.group(1)] = {"ok": int(match.group(2)), "changed": int(match.group(3)),
                                 "unreachable": int(match.group(4)), "failed": int(match.group(5))}
    return proc.returncode, proc.stdout, recap


QSTAT_ATTRIBUTE_RE = re.compile(r"^ +(\S+) =(?: (.*))?$")


def parse_qstat_jobs(text):
    """``qstat -f [-t]`` output -> ``{job id: {attribute: value}}``, in qstat's order.

    A wrapped value is joined again (each continuation line without its leading tab); an
    attribute printed with an empty value (``Submit_arguments = ``) maps to ``""``. The
    attribute lines may be indented by any number of blanks (qstat uses four, ``pbsnodes
    NAME`` five: test_cray_atom reads a vnode's attributes with it)."""
    jobs, current, last = {}, None, None
    for line in text.splitlines():
        if line.startswith("Job Id:"):
            current, last = jobs.setdefault(line.split(":", 1)[1].strip(), {}), None
        elif line.startswith("\t") and current is not None and last:
            current[last] += line[1:]
        else:
            match = QSTAT_ATTRIBUTE_RE.match(line)
            if match and current is not None:
                last = match.group(1)
                current[last] = match.group(2) or ""
    return jobs


def parse_qstat_f(text):
    """``qstat -f JOBID`` output -> that job's ``{attribute: value}`` with its ``"Job Id"``
    (:func:`parse_qstat_jobs`); ``{}`` when the text has no job."""
    for job_id, attrs in parse_qstat_jobs(text).items():
        return dict(attrs, **{"Job Id": job_id})
    return {}


def accounting_records(cluster, jobid):
    """Accounting records of ``jobid`` on the server: list of (type, line)."""
    proc = cluster.run(SERVER, ["sh", "-c", "cat /var/spool/pbs/server_priv/accounting/*"])
    records = []
    for line in proc.stdout.splitlines():
        fields = line.split(";", 3)
        if len(fields) == 4 and fields[2] == jobid:
            records.append((fields[1], line))
    return records


def record_fields(line):
    """``key=value`` pairs of an accounting record's message part."""
    message = line.split(";", 3)[3]
    return dict(item.split("=", 1) for item in message.split() if "=" in item)


def wait_for(predicate, timeout, what, interval=0.5):
    """:func:`polling.wait_for`, whose timeout is the demo's own failure (DemoError)."""
    try:
        return polling.wait_for(predicate, timeout, what, interval)
    except polling.WaitTimeout as exc:
        raise DemoError(str(exc)) from None


def submit_and_collect(cluster, moms=5):
    """Freeze a sister, submit the padded job, and gather the evidence (a dict)."""
    evidence = {}
    cluster.stop_mom(FROZEN_SISTER, freeze=True)
    evidence["frozen_sister"] = FROZEN_SISTER
    proc = cluster.run(SERVER, ["qsub", "-l", "select=ncpus=1+ncpus=1+ncpus=1", "-l", "place=scatter"],
                       user=JOB_USER, stdin=JOB_SCRIPT)
    jobid = proc.stdout.strip()
    evidence["jobid"] = jobid

    def started_record():
        types = [t for t, _unused in accounting_records(cluster, jobid)]
        return "S" in types

    wait_for(started_record, 60, "job %s to be sent to its moms (S record)" % jobid)

    def pruned_running():
        # The s record first, then qstat: the server writes the record when it applies the
        # pruned attributes, so a qstat taken after it shows them.
        pruned = [line for t, line in accounting_records(cluster, jobid) if t == "s"]
        if not pruned:
            return None
        proc = cluster.run(SERVER, ["qstat", "-f", jobid], check=False)
        attrs = parse_qstat_f(proc.stdout)
        return attrs if attrs.get("job_state") == "R" else None

    evidence["qstat_f"] = wait_for(pruned_running, 90, "job %s running pruned (s record)" % jobid)
    records = accounting_records(cluster, jobid)
    evidence["S"] = [line for t, line in records if t == "S"][0]
    evidence["s"] = [line for t, line in records if t == "s"][0]
    log = cluster.run("mom1", ["sh", "-c", "cat /var/spool/pbs/mom_logs/*"]).stdout
    evidence["primary_mom_log"] = [line for line in log.splitlines() if ";%s;" % jobid in line]

    seq = jobid.split(".")[0]
    output_file = "/home/%s/STDIN.o%s" % (JOB_USER, seq)

    def job_output():
        proc = cluster.run(SERVER, ["cat", output_file], check=False)
        return proc.stdout if proc.returncode == 0 and "END" in proc.stdout else None

    evidence["output"] = wait_for(job_output, 90, "job output %s" % output_file)
    nodefile = [line for line in evidence["output"].splitlines()
                if line and not line.startswith("PBS_NODEFILE=") and line != "END"]
    evidence["nodefile"] = nodefile
    evidence["pbsnodes_frozen"] = cluster.run(SERVER, ["pbsnodes", FROZEN_SISTER], check=False).stdout
    cluster.start_mom(FROZEN_SISTER)
    wait_for(lambda: "E" in [t for t, _unused in accounting_records(cluster, jobid)], 90,
             "job %s to end (E record)" % jobid)
    return evidence


REPORT_PLAYBOOK = "playbooks/report.yml"


def collect_report(inventory, workdir, evidence):
    """playbooks/report.yml over the last hour, after the job ended: its JSON document
    (``evidence["report"]``) and the table it printed (``evidence["report_table"]``)."""
    path = os.path.join(os.path.abspath(workdir), "report.json")
    if os.path.exists(path):
        os.unlink(path)
    vars_file = os.path.join(os.path.abspath(workdir), "report_vars.json")
    with open(vars_file, "w") as handle:
        json.dump({"report_json_path": path, "report_window_days": 1.0 / 24}, handle)
    rc, text, _recap = run_playbook(inventory, REPORT_PLAYBOOK, vars_file)
    if rc != 0:
        raise DemoError("%s failed (rc %d):\n%s" % (REPORT_PLAYBOOK, rc, text))
    with open(path) as handle:
        evidence["report"] = json.load(handle)
    start = text.find("TASK [Show the report]")
    table = text[start:text.find("PLAY RECAP", start)] if start >= 0 else ""
    evidence["report_table"] = [line.strip().strip(",")[1:-1] for line in table.splitlines()
                                if line.strip().startswith('"') and not line.strip().startswith('"msg"')]
    return evidence


def check_evidence(evidence, moms=5):
    """Return a list of problems (empty when the job started pruned as PP-928 says)."""
    problems = []
    start = record_fields(evidence["S"])
    prune = record_fields(evidence["s"])
    if start.get("Resource_List.select") != "1:ncpus=1+2:ncpus=1+2:ncpus=1":
        problems.append("padded select is %r, expected 1:ncpus=1+2:ncpus=1+2:ncpus=1" % start.get("Resource_List.select"))
    if start.get("Resource_List.site") != "1:ncpus=1+1:ncpus=1+1:ncpus=1":
        problems.append("saved site is %r" % start.get("Resource_List.site"))
    start_hosts = [h.split("/")[0] for h in start.get("exec_host", "").split("+") if h]
    if len(start_hosts) != moms:
        problems.append("job started on %d hosts (%s), expected %d" % (len(start_hosts), start_hosts, moms))
    pruned_hosts = [h.split("/")[0] for h in prune.get("exec_host", "").split("+") if h]
    if len(pruned_hosts) != 3 or evidence["frozen_sister"] in pruned_hosts:
        problems.append("pruned exec_host %r: expected 3 hosts without %s" % (prune.get("exec_host"), evidence["frozen_sister"]))
    qstat_hosts = [h.split("/")[0] for h in evidence["qstat_f"].get("exec_host", "").split("+") if h]
    if qstat_hosts != pruned_hosts:
        problems.append("qstat -f exec_host %r differs from the s record %r" % (qstat_hosts, pruned_hosts))
    if [h.split(".")[0] for h in evidence["nodefile"]] != pruned_hosts:
        problems.append("PBS_NODEFILE %r does not list the kept hosts %r" % (evidence["nodefile"], pruned_hosts))
    if not any("sister_join_job_alarm wait time" in line for line in evidence["primary_mom_log"]):
        problems.append("primary mom did not log that it stopped waiting for %s to join"
                        % evidence["frozen_sister"])
    if not any("pruned to exec_vnode=" in line for line in evidence["primary_mom_log"]):
        problems.append("primary mom did not log 'pruned to exec_vnode='")
    report = evidence.get("report")
    if report is not None:
        saved = [row for row in report["jobs"] if row["job"] == evidence["jobid"]]
        if (report["totals"]["saved_jobs"], report["totals"]["failed_sisters"]) != (1, 1) or not saved \
                or saved[0]["failed_sisters"] != [evidence["frozen_sister"]]:
            problems.append("the report does not show job %s saved by its padding with %s as its failed "
                            "sister: totals %s" % (evidence["jobid"], evidence["frozen_sister"], report["totals"]))
        if report["problems"]:
            problems.append("the report found accounting lines it could not read: %s" % report["problems"])
    return problems


def print_evidence(evidence, out=sys.stdout):
    start = record_fields(evidence["S"])
    write = out.write
    write("\n=== Evidence for job %s (sister %s frozen) ===\n" % (evidence["jobid"], evidence["frozen_sister"]))
    write("padded select (S record): %s\n" % start.get("Resource_List.select"))
    write("saved original  (site):   %s\n" % start.get("Resource_List.site"))
    write("started on:               %s\n" % start.get("exec_host"))
    write("\nprimary mom log lines:\n")
    for line in evidence["primary_mom_log"]:
        if any(word in line for word in ("job_start_error", "ignoring error", "sister_join_job_alarm", "pruned")):
            write("  %s\n" % line)
    write("\nqstat -f while running:\n")
    for key in ("job_state", "exec_host", "exec_vnode", "Resource_List.select", "Resource_List.site",
                "Resource_List.nodect", "tolerate_node_failures"):
        write("  %s = %s\n" % (key, evidence["qstat_f"].get(key)))
    write("\nPBS_NODEFILE:\n")
    for host in evidence["nodefile"]:
        write("  %s\n" % host)
    write("\ns accounting record:\n  %s\n" % evidence["s"])
    if evidence.get("report_table"):
        write("\nplaybooks/report.yml (hpc.pbs.report), the last hour:\n")
        for line in evidence["report_table"]:
            write("  %s\n" % line)


def run_demo(workdir, moms=5, keep=False, out=sys.stdout, pbs="mock"):
    """The whole demo on backend ``pbs`` (``mock`` or ``openpbs``, the real OpenPBS).
    Returns (evidence, problems, playbook recaps)."""
    cluster = Cluster(workdir, pbs=pbs)
    try:
        out.write("--- bringing up 1 server + %d moms (%s)\n" % (moms, backend_title(pbs)))
        out.flush()
        inventory = cluster.up(moms)
        recaps = []
        for attempt in ("first", "second (idempotence)"):
            out.write("--- ansible-playbook playbooks/site.yml, %s run\n" % attempt)
            out.flush()
            rc, text, recap = run_playbook(inventory)
            out.write(text[text.find("PLAY RECAP"):] if "PLAY RECAP" in text else text)
            if rc != 0:
                out.write(text)
                raise DemoError("site.yml failed (rc %d) on the %s run" % (rc, attempt))
            recaps.append(recap)
        evidence = submit_and_collect(cluster, moms)
        out.write("--- ansible-playbook %s (the last hour)\n" % REPORT_PLAYBOOK)
        out.flush()
        collect_report(inventory, workdir, evidence)
        print_evidence(evidence, out)
        problems = check_evidence(evidence, moms)
        if any(r["changed"] for r in recaps[1].values()):
            problems.append("second site.yml run changed something: %s" % recaps[1])
        return evidence, problems, recaps
    finally:
        if not keep:
            cluster.down()
