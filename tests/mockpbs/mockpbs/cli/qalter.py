"""``qalter [-W tolerate_node_failures=V] [-l res=val,...] [-N name] job...``: change a job
(transcript d: a bad tolerate value gives ``Illegal attribute or resource value <job>``,
rc 166; a running job may change tolerate_node_failures)."""
import getopt
import sys

from mockpbs.cli import common, jobops


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if common.wants_version(argv):
        return 0
    try:
        opts, ids = getopt.getopt(argv, "W:l:N:")
    except getopt.GetoptError as exc:
        sys.stderr.write("qalter: %s\n" % exc.msg)
        return 2
    attrs = {}
    for opt, value in opts:
        if opt == "-W":
            for item in value.split(","):
                key, _unused, val = item.partition("=")
                attrs[key] = val
        elif opt == "-l":
            for item in value.split(","):
                key, _unused, val = item.partition("=")
                attrs.setdefault("Resource_List", {})[key] = val
        elif opt == "-N":
            attrs["Job_Name"] = value
    return jobops.run_for_jobs("qalter", "alter", ids, attrs=attrs)
