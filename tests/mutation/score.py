"""Print the score of the last ``make mutation`` run and fail below the target.

Reads mutmut 2.x caches (``--cache``, SQLite, repeatable; ``make mutation`` keeps one per
product file; default ``.mutmut-cache`` in the current directory) and prints
one row per mutated path (``plugins/module_utils``, ``plugins/modules``, ``files/hooks``)
and a total: mutants killed, survived, timed out, suspicious (killed, but slowly), skipped
and untested (``--by-file``: one row per mutated file). The score is killed / tested,
where tested excludes the skipped and the untested (a run stopped early), in percent;
"suspicious" counts as killed (the tests failed). Exit status: 0 at or above ``--target`` percent (default 90),
1 below it, 2 when the cache is missing or holds no tested mutant.
"""
import argparse
import collections
import os
import sqlite3
import sys

STATUSES = ("ok_killed", "ok_suspicious", "bad_survived", "bad_timeout", "skipped", "untested")
KILLED = ("ok_killed", "ok_suspicious")


def counts_by_path(cache, by_file=False):
    """Map: directory (or, ``by_file``, path) of the mutated file -> Counter of statuses."""
    query = ("SELECT SourceFile.filename, Mutant.status FROM Mutant"
             " JOIN Line ON Mutant.line = Line.id JOIN SourceFile ON Line.sourcefile = SourceFile.id")
    counts = collections.defaultdict(collections.Counter)
    with sqlite3.connect(cache) as db:
        for filename, status in db.execute(query):
            path = os.path.normpath(filename)
            counts[path if by_file else os.path.dirname(path)][status] += 1
    return counts


def score(counter):
    """Percent of the mutants tested (neither skipped nor untested) that were killed; None
    if none was tested."""
    tested = sum(n for status, n in counter.items() if status not in ("skipped", "untested"))
    return None if not tested else 100.0 * sum(counter[s] for s in KILLED) / tested


def print_table(counts):
    header = ["path"] + list(STATUSES) + ["score %"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    total = collections.Counter()
    for path in sorted(counts):
        total.update(counts[path])
        print_row(path, counts[path])
    print_row("total", total)
    return total


def print_row(label, counter):
    value = score(counter)
    cells = [label] + [str(counter[s]) for s in STATUSES] + ["-" if value is None else "%.1f" % value]
    print("| " + " | ".join(cells) + " |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", action="append",
                        help="a mutmut cache (SQLite); repeat for several (default .mutmut-cache)")
    parser.add_argument("--target", type=float, default=90.0, help="minimum score, percent")
    parser.add_argument("--by-file", action="store_true", help="one row per mutated file")
    args = parser.parse_args(argv)
    caches = args.cache or [".mutmut-cache"]
    missing = [c for c in caches if not os.path.exists(c)]
    if missing:
        print("no %s: run `make mutation` first" % ", ".join(missing), file=sys.stderr)
        return 2
    counts = collections.defaultdict(collections.Counter)
    for cache in caches:
        for path, counter in counts_by_path(cache, args.by_file).items():
            counts[path].update(counter)
    total_score = score(print_table(counts))
    if total_score is None:
        print("no mutant was tested", file=sys.stderr)
        return 2
    if total_score < args.target:
        print("mutation score %.1f%% is below the target %.1f%%" % (total_score, args.target), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
