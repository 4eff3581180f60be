"""``qstat``: job and server status (transcripts 00_smoke, d, g, i of reference/openpbs).

``qstat [-x] [-t] [-J] [job ...]`` prints the default table (``-t`` adds the subjobs of
job arrays, ``-J`` shows job arrays only), ``-f`` the full listing (``Job Id:``,
``    attr = value`` in PBS's attribute order, values wrapped at 78 columns with tab
continuation lines), ``-B`` the server table and ``-Bf`` the full server listing. ``-x``
without ``job_history_enable`` prints PBS's "not configured" message.

``-f -F json`` (jobs) and ``-B -f -F json`` (server) print the listing as OpenPBS 23.06's
qstat does (src/cmds/qstat.c ``prt_attr`` with libcjson 1.7, ``cJSON_Print``): one object
``{"timestamp": <epoch>, "pbs_version", "pbs_server", "Jobs"|"Server": {<id>: {...}}}``,
tab-indented, in which

- a resource attribute (``Resource_List.ncpus``) is a member of an object named after the
  attribute (``"Resource_List": {"ncpus": 1}``);
- ``Variable_List`` is an object of its ``name=value`` pieces (split at commas not escaped
  by a backslash, then at the first ``=``);
- ``Job_Name``, ``project`` and ``Account_Name`` are always strings;
- every other value (resource values and Variable_List values included) is what
  ``cJSON_Parse`` makes of its text when that text is one whole JSON value (``21`` -> 21,
  ``007`` -> 7, ``true`` -> true, ``1e5`` -> 100000), else the text as a string;
- the date attributes are their ``ctime`` text, as in the text listing;
- the "Jobs" object is created by the first job operand that qstat lists: the jobs of later
  operands are left out (``qstat -f -F json 1 2`` shows only job 1, as OpenPBS does);
- no "Jobs" member at all when there is no job.

``-F`` without ``-f``, or with ``-w``/``-n``/``-s``/``-1``/``-H``/``-a``, is refused with
``qstat: conflicting options.`` and the usage (exit 2); ``-F dsv`` is not emulated.
"""
import getopt
import sys
import time

from mockpbs import PBS_VERSION
from mockpbs.cli import common
from mockpbs.cli.cjson import cjson_print, json_parsed, variable_list_object

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


def job_attributes(job):
    """``[(attribute, resource or None, value text)]`` of one job as qstat lists them, in
    PBS's order (resource attributes one entry per resource, sorted by resource name)."""
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
                items.append((key, res, str(value[res])))
        elif key == "Variable_List":
            items.append((key, None, ",".join("%s=%s" % kv for kv in value.items())))
        elif key in TIME_ATTRS:
            items.append((key, None, common.ctime_text(value)))
        else:
            items.append((key, None, str(value)))
    return items


def job_items(job):
    """``[(name, value text)]`` of the text listing: resources as ``attribute.resource``."""
    return [("%s.%s" % (name, resource) if resource else name, value)
            for name, resource, value in job_attributes(job)]


def print_full(jobs):
    for job in jobs:
        sys.stdout.write("Job Id: %s\n" % job["id"])
        for name, value in job_items(job):
            sys.stdout.write(format_attr(name, value))
        sys.stdout.write("\n")


# -- -F json: what OpenPBS's qstat builds with libcjson (see mockpbs.cli.cjson) -------------
# Attributes qstat always inserts as strings (qstat.c batch_item_json_type_triage).
JSON_STRING_ATTRS = ("Job_Name", "project", "Account_Name")
JSON_VARIABLE_LIST = "Variable_List"


def json_attributes(triples):
    """The JSON object of one job or server from ``[(attribute, resource, text)]``."""
    out = {}
    for name, resource, value in triples:
        if resource:
            out.setdefault(name, {})[resource] = json_parsed(value)
        elif name == JSON_VARIABLE_LIST:
            out[name] = variable_list_object(value)
        elif name in JSON_STRING_ATTRS:
            out[name] = value
        else:
            out[name] = json_parsed(value)
    return out


def json_document(section, objects):
    """qstat's whole JSON output: the prologue, then ``section`` ("Jobs" or "Server")
    holding ``objects`` (``[(id, triples)]``), left out when there are none."""
    document = {"timestamp": float(int(time.time())), "pbs_version": PBS_VERSION,
                "pbs_server": common.server_name()}
    if objects:
        document[section] = dict((name, json_attributes(triples)) for name, triples in objects)
    return cjson_print(document) + "\n"


def server_attributes(reply):
    """``[(attribute, resource, text)]`` of ``stat_server`` items
    (``resources_default.ncpus`` -> ``("resources_default", "ncpus", ...)``)."""
    triples = []
    for name, value in reply["items"]:
        attribute, _unused, resource = name.partition(".")
        triples.append((attribute, resource or None, str(value)))
    return triples


def print_table(jobs):
    if not jobs:
        return
    sys.stdout.write("Job id            Name             User              Time Use S Queue\n")
    sys.stdout.write("----------------  ---------------- ----------------  -------- - -----\n")
    for job in jobs:
        user = job.get("Job_Owner", "").split("@")[0]
        used = job.get("resources_used", {}).get("cput", "0")
        # OpenPBS qstat.c: "%-17s %-16s %-16s  %8s %1s %-16s" (the queue padded to 16).
        sys.stdout.write("%-16.16s  %-16.16s %-16.16s  %8.8s %1.1s %-16.16s\n"
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


USAGE = """usage:\x20
qstat [-f] [-J] [-p] [-t] [-x] [-E] [-F format | -w] [-D delim] [ job_identifier... | destination... ]
qstat [-a|-i|-r|-H|-T] [-J] [-t] [-u user] [-n] [-s] [-G|-M] [-1] [-w]
\t[ job_identifier... | destination... ]
qstat -Q [-f] [-F format] [-D delim] [ destination... ]
qstat -q [-G|-M] [ destination... ]
qstat -B [-f] [-F format] [-D delim] [ server_name... ]
qstat --version
"""
OUTPUT_FORMATS = ("default", "dsv", "json")
# Options that select one of qstat's alternate displays: none goes with -F.
ALTERNATE_DISPLAYS = ("-a", "-H", "-n", "-s", "-1", "-w")


def output_format(opts):
    """``(format, error text)``: the ``-F`` format (``default`` without -F), or the text
    qstat prints before refusing the options (exit 2)."""
    flags = {o for o, _unused in opts}
    chosen = "default"
    for option, value in opts:
        if option == "-F":
            if value.lower() not in OUTPUT_FORMATS:
                return None, USAGE
            chosen = value.lower()
    if chosen != "default" and ("-f" not in flags or flags.intersection(ALTERNATE_DISPLAYS)):
        return None, "qstat: conflicting options.\n" + USAGE
    if chosen == "dsv":
        return None, "qstat: -F dsv is not emulated by the mock PBS\n"
    return chosen, None


def stat_listed_jobs(ids, flags):
    """``(jobs of each operand that qstat lists [[job, ...], ...], rc)``; errors are
    written to stderr as qstat does."""
    history = "-x" in flags or "-H" in flags
    if not ids:
        reply = common.call("stat_jobs", ids=None, history=history, subjobs="-t" in flags,
                            arrays_only="-J" in flags)
        if history and not reply.get("history_enabled"):
            sys.stderr.write("qstat: PBS is not configured to maintain job history \n")
        return [reply.get("jobs", [])], 0
    rc = 0
    listed = []
    for jobid in ids:
        reply = common.call("stat_jobs", ids=[jobid], history=history)
        if not reply.get("ok"):
            sys.stderr.write("qstat: %s\n" % reply.get("error", ""))
            rc = common.exit_code(reply.get("code", 1))
            continue
        listed.append(reply["jobs"])
    return listed, rc


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if common.wants_version(argv):
        return 0
    try:
        opts, ids = getopt.getopt(argv, "fxBtJHw1nsaQF:")
    except getopt.GetoptError as exc:
        sys.stderr.write("qstat: %s\nusage: qstat [-f] [-x] [-B] [job_identifier...]\n" % exc.msg)
        return 2
    flags = {o for o, _unused in opts}
    chosen, error = output_format(opts)
    if error:
        sys.stderr.write(error)
        return 2
    try:
        if "-B" in flags:
            reply = common.call("stat_server")
            if chosen == "json":
                sys.stdout.write(json_document("Server", [(reply["name"], server_attributes(reply))]))
            else:
                print_server(reply, "-f" in flags)
            return 0
        listed, rc = stat_listed_jobs(ids, flags)
    except common.ServerUnreachable as exc:
        return common.unreachable("qstat", exc)
    if chosen == "json":
        # Only the first listed operand reaches the "Jobs" object (see the module docstring).
        first = next((jobs for jobs in listed if jobs), [])
        sys.stdout.write(json_document("Jobs", [(job["id"], job_attributes(job)) for job in first]))
        return rc
    jobs = [job for operand in listed for job in operand]
    if "-f" in flags:
        print_full(jobs)
    else:
        print_table(jobs)
    return rc
