"""``qstat``: job and server status (transcripts 00_smoke, d, g, i of reference/openpbs).

``qstat [-x] [-t] [-J] [job ...]`` prints the default table (``-t`` adds the subjobs of
job arrays, ``-J`` shows job arrays only), ``-f`` the full listing (``Job Id:``,
``    attr = value`` in PBS's attribute order, values wrapped at 78 columns with tab
continuation lines), ``-B`` the server table and ``-Bf`` the full server listing. ``-x``
without ``job_history_enable`` prints PBS's "not configured" message.
"""
import getopt
import sys

from mockpbs.cli import common

LINESIZE = 78
JOB_ORDER = (
    "Job_Name", "Job_Owner", "resources_used", "job_state", "queue", "server", "Account_Name",
    "Checkpoint", "ctime", "Error_Path", "exec_host", "exec_vnode", "Hold_Types", "Join_Path",
    "Keep_Files", "Mail_Points", "Mail_Users", "mtime", "Output_Path", "Priority", "qtime",
    "Rerunable", "Resource_List", "schedselect", "stime", "obittime", "session_id",
    "Shell_Path_List", "substate", "Variable_List", "euser", "egroup", "hashname", "queue_rank",
    "queue_type", "comment", "etime", "run_count", "Exit_status", "Submit_arguments",
    "executable", "argument_list", "array", "array_state_count", "array_indices_submitted",
    "array_indices_remaining", "array_id", "array_index", "project", "run_version",
    "tolerate_node_failures", "Submit_Host",
)
TIME_ATTRS = {"ctime", "mtime", "qtime", "stime", "etime", "obittime"}
HIDDEN = {"id", "script", "exec_vnode_acct", "exec_host_acct"}


def format_attr(name, value):
    """One ``qstat -f`` attribute, wrapped as PBS's prt_attr does: comma-separated pieces
    are kept whole while they fit in 78 columns, longer ones are cut at the column."""
    out = ["    %s = " % name]
    start = len(name) + 7
    pieces = value.split(",")
    first = True
    for index, piece in enumerate(pieces):
        if len(piece) + start < LINESIZE:
            out.append(piece)
            start += len(piece)
        else:
            if not first:
                out.append("\n\t")
                start = 9
            for char in piece:
                out.append(char)
                start += 1
                if start > LINESIZE:
                    start = 8
                    out.append("\n\t")
        if index < len(pieces) - 1:
            first = False
            out.append(",")
    return "".join(out) + "\n"


# A running subjob's listing has no Checkpoint and no Hold_Types = n (transcript h).
SUBJOB_HIDDEN = {"Checkpoint"}


def job_items(job):
    items = []
    seen = set()
    keys = list(JOB_ORDER) + [k for k in job if k not in JOB_ORDER]
    for key in keys:
        if key in HIDDEN or key not in job or key in seen:
            continue
        if job.get("array_id") and (key in SUBJOB_HIDDEN or (key == "Hold_Types" and job[key] == "n")):
            continue
        seen.add(key)
        value = job[key]
        if key in ("Resource_List", "resources_used"):
            for res in sorted(value):
                items.append(("%s.%s" % (key, res), value[res]))
        elif key == "Variable_List":
            items.append((key, ",".join("%s=%s" % kv for kv in value.items())))
        elif key in TIME_ATTRS:
            items.append((key, common.ctime_text(value)))
        else:
            items.append((key, str(value)))
    return items


def print_full(jobs):
    for job in jobs:
        sys.stdout.write("Job Id: %s\n" % job["id"])
        for name, value in job_items(job):
            sys.stdout.write(format_attr(name, value))
        sys.stdout.write("\n")


def print_table(jobs):
    if not jobs:
        return
    sys.stdout.write("Job id            Name             User              Time Use S Queue\n")
    sys.stdout.write("----------------  ---------------- ----------------  -------- - -----\n")
    for job in jobs:
        user = job.get("Job_Owner", "").split("@")[0]
        used = job.get("resources_used", {}).get("cput", "0")
        sys.stdout.write("%-16.16s  %-16.16s %-16.16s  %8.8s %1.1s %-5.5s\n"
                         % (job["id"], job.get("Job_Name", ""), user, used, job.get("job_state", ""),
                            job.get("queue", "")))


def print_server(reply, full):
    items = dict(reply["items"])
    if full:
        sys.stdout.write("Server: %s\n" % reply["name"])
        for name, value in reply["items"]:
            sys.stdout.write(format_attr(name, value))
        sys.stdout.write("\n")
        return
    counts = dict(part.split(":") for part in items.get("state_count", "").split())
    sys.stdout.write("Server             Max   Tot   Que   Run   Hld   Wat   Trn   Ext Status\n")
    sys.stdout.write("---------------- ----- ----- ----- ----- ----- ----- ----- ----- -----------\n")
    sys.stdout.write("%-16.16s %5s %5s %5s %5s %5s %5s %5s %5s %-10s\n" % (
        reply["name"], items.get("max_running", "0"), items.get("total_jobs", "0"),
        counts.get("Queued", "0"), counts.get("Running", "0"), counts.get("Held", "0"),
        counts.get("Waiting", "0"), counts.get("Transit", "0"), counts.get("Exiting", "0"),
        items.get("server_state", "")))


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if common.wants_version(argv):
        return 0
    try:
        opts, ids = getopt.getopt(argv, "fxBtJHw1nsaQF:")
    except getopt.GetoptError as exc:
        sys.stderr.write("qstat: %s\nusage: qstat [-f] [-x] [-B] [job_identifier...]\n" % exc.msg)
        return 2
    flags = {o for o, _ in opts}
    try:
        if "-B" in flags:
            print_server(common.call("stat_server"), "-f" in flags)
            return 0
        history = "-x" in flags or "-H" in flags
        rc = 0
        jobs = []
        if ids:
            for jobid in ids:
                reply = common.call("stat_jobs", ids=[jobid], history=history)
                if not reply.get("ok"):
                    sys.stderr.write("qstat: %s\n" % reply.get("error", ""))
                    rc = common.exit_code(reply.get("code", 1))
                    continue
                jobs.extend(reply["jobs"])
        else:
            reply = common.call("stat_jobs", ids=None, history=history, subjobs="-t" in flags,
                                arrays_only="-J" in flags)
            jobs = reply.get("jobs", [])
            if history and not reply.get("history_enabled"):
                sys.stderr.write("qstat: PBS is not configured to maintain job history \n")
    except common.ServerUnreachable as exc:
        return common.unreachable("qstat", exc)
    if "-f" in flags:
        print_full(jobs)
    else:
        print_table(jobs)
    return rc
