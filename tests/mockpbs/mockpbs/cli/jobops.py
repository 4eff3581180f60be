"""Shared body of ``qalter``, ``qdel``, ``qhold`` and ``qrls``: one request per job id,
errors printed as PBS does (``<cmd>: <message> <jobid>``), exit code = errno % 256."""
import sys

from mockpbs.cli import common


def run_for_jobs(command, op, job_ids, **fields):
    if not job_ids:
        sys.stderr.write("usage: %s job_identifier...\n" % command)
        return 2
    rc = 0
    for jobid in job_ids:
        try:
            reply = common.call(op, jobid=jobid, **fields)
        except common.ServerUnreachable as exc:
            return common.unreachable(command, exc)
        if not reply.get("ok"):
            error = reply.get("error", "")
            if reply.get("code") != 15001:
                error = "%s %s" % (error, jobid)
            sys.stderr.write("%s: %s\n" % (command, error))
            rc = common.exit_code(reply.get("code", 1))
    return rc
