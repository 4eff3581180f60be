"""``qrls [-h u|o|s] job...``: release holds; without ``-h`` only the user hold (``u``, as
``pbs_rlsjob()`` sends). ``qrls -h s <array>`` releases the system-held subjobs of the array,
then the array (interface 3 of the OpenPBS design "Changes to run_count attribute, hold
and release operation of subjob(s) in a Job Array")."""
import getopt
import sys

from mockpbs.cli import common, jobops


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if common.wants_version(argv):
        return 0
    opts, ids = getopt.getopt(argv, "h:")
    return jobops.run_for_jobs("qrls", "release", ids, hold_types=dict(opts).get("-h", "u"))
