"""``qhold [-h u|o|s] job...``: hold queued jobs (default hold type ``u``)."""
import getopt
import sys

from mockpbs.cli import common, jobops


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if common.wants_version(argv):
        return 0
    opts, ids = getopt.getopt(argv, "h:")
    return jobops.run_for_jobs("qhold", "hold", ids, hold_types=dict(opts).get("-h", "u"))
