"""Driver of ``make mutation``: mutmut 2.x over the product files, one file at a time, on
several worker copies of the tree at once.

mutmut 2.x tests one mutant after another in one process. This driver gives each of
``--jobs`` workers its own copy of the working tree (mutmut rewrites the file it mutates),
hands them the product files largest first, and runs ``mutmut run --paths-to-mutate FILE``
in the worker's copy with FILE's own tests as the runner, so the baseline run is that
file's tests, not the whole unit suite. Each product file has its own mutmut cache
(``caches/<file>.sqlite`` under ``--dir``), copied into the worker before the run and back
after it: a later run retests only the mutants of changed lines, and the survivors when a
test file changed, whichever worker takes the file. Logs: ``logs/<file>.log``.

Exit status: that of ``score.py`` over the caches of the files of this run (0 at or above
the target, 1 below, 2 when nothing was tested).
"""
import argparse
import os
import queue
import shutil
import sqlite3
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import mutmut_config  # noqa: E402  (beside this file)
import score  # noqa: E402

SETTINGS = ("setup.cfg", "mutmut_config.py")


def product_files(paths):
    """Sorted non-empty ``*.py`` files under ``paths`` (files or directories), relative."""
    found = set()
    for path in paths:
        path = os.path.normpath(path)
        candidates = [path] if path.endswith(".py") else mutmut_config._python_files(path)
        found.update(p for p in candidates if os.path.getsize(p) > 0)
    return sorted(found)


def slug(path):
    return path.replace(os.sep, "__")


def copy_tree(destination):
    """A fresh copy of the files git would commit (tracked and new, not ignored)."""
    shutil.rmtree(destination, ignore_errors=True)
    os.makedirs(destination)
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           check=True, capture_output=True).stdout.split(b"\0")
    for name in filter(None, files):
        name = os.fsdecode(name)
        if os.path.isfile(name):
            os.makedirs(os.path.join(destination, os.path.dirname(name)), exist_ok=True)
            shutil.copy2(name, os.path.join(destination, name))
    for name in SETTINGS:
        shutil.copy2(os.path.join(HERE, name), destination)


def mutate(worker, path, args, out):
    """Run mutmut on product file ``path`` in the worker copy ``worker``."""
    cache = os.path.join(out, "caches", slug(path) + ".sqlite")
    worker_cache = os.path.join(worker, ".mutmut-cache")
    if os.path.exists(cache):
        shutil.copy2(cache, worker_cache)
    elif os.path.exists(worker_cache):
        os.remove(worker_cache)
    # The worker's copy is the tree as it was when the run started: test files added since
    # are tested on the next run.
    tests = [t for t in mutmut_config.tests_for(path) if os.path.exists(os.path.join(worker, t))]
    command = ["mutmut", "run", "--no-progress", "--paths-to-mutate", path,
               "--runner", mutmut_config.runner(tests or mutmut_config.TEST_DIRS)] + args.mutmut_args
    with open(os.path.join(out, "logs", slug(path) + ".log"), "w") as log:
        code = subprocess.call(command, cwd=worker, stdout=log, stderr=subprocess.STDOUT)
        # mutmut 2.5.1 now and then leaves a survivor of an earlier run untested (its
        # status keeps the old tests' hash): test each such mutant alone, as `mutmut run ID`.
        for mutant_id in not_retested(worker_cache) if code != 1 else ():
            subprocess.call(command[:2] + [str(mutant_id)] + command[2:], cwd=worker,
                            stdout=log, stderr=subprocess.STDOUT)
    if os.path.exists(worker_cache):
        shutil.copy2(worker_cache, cache + ".new")
        os.replace(cache + ".new", cache)
    return code


def not_retested(cache):
    """Ids of the mutants of ``cache`` not killed and not tested against the current tests."""
    if not os.path.exists(cache):
        return []
    with sqlite3.connect(cache) as db:
        current = dict(db.execute("SELECT key, value FROM MiscData")).get("hash_of_tests")
        return [row[0] for row in db.execute(
            "SELECT id FROM Mutant WHERE status NOT IN ('ok_killed', 'ok_suspicious')"
            " AND (tested_against_hash IS NULL OR tested_against_hash != ?)", (current,))]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="build/mutation", help="worker copies, caches, logs")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--target", type=float, default=90.0)
    parser.add_argument("paths", nargs="*", default=list(mutmut_config.PRODUCT_DIRS),
                        help="product files or directories (default: the three product paths)")
    parser.add_argument("--mutmut-args", default="", help="more mutmut run options, one string")
    args = parser.parse_args(argv)
    args.mutmut_args = args.mutmut_args.split()
    out = os.path.abspath(args.dir)
    for sub in ("caches", "logs"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    files = product_files(args.paths)
    todo = queue.Queue()
    for path in sorted(files, key=os.path.getsize, reverse=True):
        todo.put(path)
    lock = threading.Lock()

    def work(index):
        worker = os.path.join(out, "worker-%d" % index)
        copy_tree(worker)
        while True:
            try:
                path = todo.get_nowait()
            except queue.Empty:
                return
            code = mutate(worker, path, args, out)
            with lock:
                print("mutmut %s: exit %d (log %s)" % (path, code, os.path.join(args.dir, "logs", slug(path) + ".log")),
                      flush=True)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(max(1, min(args.jobs, len(files))))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    caches = [os.path.join(out, "caches", slug(p) + ".sqlite") for p in files]
    return score.main(["--target", str(args.target), "--by-file"]
                      + ["--cache=%s" % c for c in caches if os.path.exists(c)])


if __name__ == "__main__":
    sys.exit(main())
