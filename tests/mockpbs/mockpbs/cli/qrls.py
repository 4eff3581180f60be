"""``qrls [-h u|o|s] job...``: release holds; without ``-h`` only the user hold (``u``, as
``pbs_rlsjob()`` sends). ``qrls -h s <array>`` releases the system-held subjobs of the array,
then the array (seeds/job-array-subjob-run-count-hold-release.txt interface 3)."""
import getopt
import sys

from mockpbs.cli import common, jobops


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if common.wants_version(argv):
        return 0
    opts, ids = getopt.getopt(argv, "h:")
    return jobops.run_for_jobs("qrls", "release", ids, hold_types=dict(opts).get("-h", "u"))
