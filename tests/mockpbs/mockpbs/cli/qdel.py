"""``qdel job...``: delete jobs (a running job is killed through its primary mom)."""
import sys

from mockpbs.cli import common, jobops


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if common.wants_version(argv):
        return 0
    ids = [a for a in argv if not a.startswith("-")]
    return jobops.run_for_jobs("qdel", "delete", ids)
