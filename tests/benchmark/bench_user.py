#!/usr/bin/env python
"""The idempotent ``site.yml`` against ``ansible -m ping`` run the way a user runs it.
Not a test: it measures and reports, it asserts nothing (exit 1 only when a run fails).

Usage::

    bench_user.py [--moms 8,32] [--backend mock] [--repeat 3]
                  [--modes checkout,user,user-fresh-cp,user-pipelining,user-no-play-pipelining]
                  [--workdir DIR] [--keep] [--json FILE]

``make bench`` (bench_rollout.py) runs the checkout's playbooks with the repository's
ansible.cfg (pipelining on) and a fresh SSH control directory per run. A user installs the
built collection and runs ``ansible-playbook hpc.pbs.site`` with their own Ansible
settings. This script measures both ways, and variants of the user's way that each change
one thing, side by side on the same cluster, in alternation:

- ``checkout``: as ``make bench``: ``playbooks/site.yml`` of the checkout, the repository's
  ansible.cfg (``ANSIBLE_CONFIG``), a fresh ``ANSIBLE_SSH_CONTROL_PATH_DIR`` per run;
- ``user``: the collection built (``ansible-galaxy collection build``) and installed
  (``ansible-galaxy collection install -p``) into a fresh collections path,
  ``ansible-playbook hpc.pbs.site -f 10`` and ``ansible all -m ansible.builtin.ping -f 10``
  run from an empty directory with no ansible.cfg (Ansible's defaults: pipelining off, SSH
  ``ControlPersist=60s``), one control directory kept for the whole mode, as
  ``~/.ansible/cp`` is kept between a user's runs;
- ``user-fresh-cp``: ``user`` with a fresh control directory per run (what ``make bench``
  does): the share of the connections kept between runs;
- ``user-pipelining``: ``user`` with ``ANSIBLE_PIPELINING=True`` for both runs (what a
  site's ansible.cfg ``[ssh_connection] pipelining = True`` gives);
- ``user-no-play-pipelining``: ``user`` with ``-e hpc_pbs_pipelining=false`` for site.yml:
  the collection's plays without the pipelining they set (playbooks/vars/connection.yml);
  ping is unchanged (the user's own ``ansible`` run).

The cluster's inventory (``tests/integration/cluster up``; ``HPC_PBS_CLUSTER_NET`` is
honoured) sets the interpreter and the SSH host-key options, as a site's inventory would.
For each size: one cluster, ``site.yml`` run once to set it up (untimed), one untimed
``site.yml`` per mode (warm), then ``--repeat`` rounds; each round runs every mode, in an
order rotated from round to round, as an idempotent ``site.yml`` then a ping. A re-run that
changes something is reported.

Figures per mode: the median wall seconds of site.yml and of ping, "÷ ping" (median over
median) and "paired" (the median of each round's site / ping). On a machine that other
work loads, compare the ratios, not the seconds.
"""
import argparse
import datetime
import glob
import json
import os
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CLUSTER = os.path.join(REPO, "tests", "integration", "cluster")
BIN = os.path.dirname(sys.executable)
MODES = ("checkout", "user", "user-fresh-cp", "user-pipelining", "user-no-play-pipelining")
DEFAULT_MODES = MODES[1:]  # checkout: make bench's way; alternated with a build of a live checkout it can flip files
FORKS = "10"
EXEC_LINE = re.compile(r"^<[^>]+> SSH: EXEC ", re.M)
RECAP_LINE = re.compile(r"^(\S+)\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+"
                        r"failed=(\d+)", re.M)
# Settings files a user's run would read besides the ones this script controls.
OTHER_CONFIGS = (os.path.expanduser("~/.ansible.cfg"), "/etc/ansible/ansible.cfg")


class BenchError(Exception):
    """A run or a cluster operation failed."""


# ------------------------------------------------------------------ pure parts

def mode_order(round_number, modes):
    """``modes`` rotated by ``round_number`` (0-based)."""
    modes = tuple(modes)
    shift = round_number % len(modes)
    return modes[shift:] + modes[:shift]


def mode_list(text):
    """argparse type: a comma-separated list of MODES."""
    values = [v.strip() for v in text.split(",") if v.strip()]
    unknown = [v for v in values if v not in MODES]
    if not values or unknown:
        raise argparse.ArgumentTypeError("modes are %s: %r" % (", ".join(MODES), text))
    return values


def int_list(text):
    """argparse type: comma-separated numbers >= 1."""
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        values = []
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("a comma-separated list of numbers >= 1: %r" % text)
    return values


def positive_int(text):
    """argparse type: an int >= 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1, not %d" % value)
    return value


def summarize(rounds, modes):
    """``{mode: {"site": [s], "ping": [s], "site_median", "ping_median", "ratio", "paired",
    "cpu_ratio", "changed"}}`` from ``rounds``: a list of ``{mode: {"site": s, "ping": s,
    "changed": n, "site_cpu": s, "ping_cpu": s}}`` (CPU: the controller's, user + system
    seconds of the run's process tree; cpu_ratio: median over median, None without CPU)."""
    figures = {}
    for mode in modes:
        runs = [r[mode] for r in rounds if mode in r]
        site = [run["site"] for run in runs]
        ping = [run["ping"] for run in runs]
        figures[mode] = dict(site=site, ping=ping, changed=max([run["changed"] for run in runs] or [0]),
                             site_median=statistics.median(site) if site else None,
                             ping_median=statistics.median(ping) if ping else None)
        figures[mode]["ratio"] = (figures[mode]["site_median"] / figures[mode]["ping_median"]
                                  if site else None)
        figures[mode]["paired"] = (statistics.median(run["site"] / run["ping"] for run in runs)
                                   if runs else None)
        cpu = [(run["site_cpu"], run["ping_cpu"]) for run in runs if "site_cpu" in run]
        figures[mode]["cpu_ratio"] = (statistics.median(c[0] for c in cpu) / statistics.median(c[1] for c in cpu)
                                      if cpu else None)
    return figures


def markdown(results):
    lines = ["- Machine: %s; %s; ansible-core %s" % (results["machine"], results["date"], results["ansible_core"]),
             "- Command: `%s`" % results["command"], ""]
    for size in results["sizes"]:
        failed = " (FAILED: %s)" % size["error"] if size["error"] else ""
        lines += ["### %d moms, backend %s%s" % (size["moms"], size["backend"], failed),
                  "", "| mode | site.yml median s | ping median s | ÷ ping | paired | CPU ÷ ping | site runs s "
                  "| ping runs s | SSH executions site / ping | changed |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: |"]
        for mode, item in size["figures"].items():
            if item["site_median"] is None:
                continue
            counts = size.get("ssh_executions", {}).get(mode) or {}
            lines.append("| %s | %.2f | %.2f | %.2f | %.2f | %s | %s | %s | %s / %s | %d |" % (
                mode, item["site_median"], item["ping_median"], item["ratio"], item["paired"],
                "-" if item.get("cpu_ratio") is None else "%.2f" % item["cpu_ratio"],
                ", ".join("%.2f" % s for s in item["site"]), ", ".join("%.2f" % s for s in item["ping"]),
                counts.get("site", "-"), counts.get("ping", "-"), item["changed"]))
        lines.append("")
    return "\n".join(lines)


# ------------------------------------------------------------------ cluster and collection

def launcher(workdir, *args):
    proc = subprocess.run([sys.executable, CLUSTER] + list(args) + ["--workdir", workdir],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False)
    if proc.returncode != 0:
        raise BenchError("cluster %s failed (rc %d): %s" % (" ".join(args), proc.returncode,
                                                            proc.stderr[-3000:]))
    return proc.stdout


def clean_env():
    """os.environ without any ANSIBLE_* setting, with the venv's bin first on PATH."""
    env = dict((k, v) for k, v in os.environ.items() if not k.startswith("ANSIBLE_"))
    env.update(ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0",
               PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    return env


def install_collection(root):
    """Build the checkout's collection and install it under ``root/installed``: that
    collections path."""
    build_dir = os.path.join(root, "artifact")
    os.makedirs(build_dir)
    argv = [os.path.join(BIN, "ansible-galaxy"), "collection", "build", "--output-path", build_dir, REPO]
    proc = subprocess.run(argv, cwd=root, env=clean_env(), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise BenchError("%s failed: %s%s" % (shlex.join(argv), proc.stdout, proc.stderr))
    artifact = glob.glob(os.path.join(build_dir, "hpc-pbs-*.tar.gz"))[0]
    path = os.path.join(root, "installed")
    argv = [os.path.join(BIN, "ansible-galaxy"), "collection", "install", "--offline", "-p", path, artifact]
    proc = subprocess.run(argv, cwd=root, env=clean_env(), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise BenchError("%s failed: %s%s" % (shlex.join(argv), proc.stdout, proc.stderr))
    return path


class Modes:
    """The command lines and environments of the modes (module docstring)."""

    def __init__(self, root, inventory, collections):
        self.root, self.inventory, self.collections = root, inventory, collections
        self.cwd = os.path.join(root, "user-cwd")  # empty: no ansible.cfg
        os.makedirs(self.cwd, exist_ok=True)
        self.kept_cp = {}

    def control_dir(self, mode):
        """The mode's kept control directory, or None for a fresh one per run."""
        if mode in ("checkout", "user-fresh-cp"):
            return None
        if mode not in self.kept_cp:
            self.kept_cp[mode] = tempfile.mkdtemp(prefix="cp-%s-" % mode, dir=self.root)
        return self.kept_cp[mode]

    def command(self, mode, kind):
        """``(argv, env, cwd)`` of ``kind`` ("site" or "ping") in ``mode``."""
        env = clean_env()
        if kind == "ping":
            argv = [os.path.join(BIN, "ansible"), "-i", self.inventory, "all", "-m", "ansible.builtin.ping"]
        elif mode == "checkout":
            argv = [os.path.join(BIN, "ansible-playbook"), "-i", self.inventory,
                    os.path.join(REPO, "playbooks", "site.yml")]
        else:
            argv = [os.path.join(BIN, "ansible-playbook"), "-i", self.inventory, "hpc.pbs.site"]
        if mode == "checkout":
            env["ANSIBLE_CONFIG"] = os.path.join(REPO, "ansible.cfg")
            link = os.path.join(REPO, "build", "collections")
            if os.path.isdir(os.path.join(link, "ansible_collections", "hpc", "pbs")):
                env["ANSIBLE_COLLECTIONS_PATH"] = link
            return argv, env, REPO
        argv += ["-f", FORKS]
        if mode == "user-no-play-pipelining" and kind == "site":
            argv += ["-e", "hpc_pbs_pipelining=false"]
        env["ANSIBLE_COLLECTIONS_PATH"] = self.collections
        if mode == "user-pipelining":
            env["ANSIBLE_PIPELINING"] = "True"
        return argv, env, self.cwd

    def run(self, mode, kind, verbose=False):
        """One run: ``(seconds, changed, controller CPU seconds, SSH executions)``; the
        executions are counted only with ``verbose`` (the run gets ``-vvv``), else None.
        Raises BenchError."""
        argv, env, cwd = self.command(mode, kind)
        if verbose:
            argv = argv + ["-vvv"]
        kept = self.control_dir(mode)
        with tempfile.TemporaryDirectory(prefix="cp-", dir=self.root) as fresh:
            env["ANSIBLE_SSH_CONTROL_PATH_DIR"] = kept or fresh
            usage = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.monotonic()
            proc = subprocess.run(argv, cwd=cwd, env=env, text=True, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, check=False)
            seconds = time.monotonic() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = after.ru_utime + after.ru_stime - usage.ru_utime - usage.ru_stime
        if proc.returncode != 0:
            raise BenchError("%s (%s) failed (rc %d):\n%s"
                             % (shlex.join(argv[1:]), mode, proc.returncode, proc.stdout[-3000:]))
        changed = sum(int(m.group(3)) for m in RECAP_LINE.finditer(proc.stdout))
        return seconds, changed, cpu, len(EXEC_LINE.findall(proc.stdout)) if verbose else None


def bench_size(backend, moms, args, keep=False):
    size = dict(backend=backend, moms=moms, error=None, figures={}, rounds=[], ssh_executions={})
    root = tempfile.mkdtemp(prefix="hpc-pbs-bench-user-")
    try:
        inventory = launcher(args.workdir, "up", "--pbs", backend, "--moms", str(moms)).strip()
        modes = Modes(root, inventory, install_collection(root))
        modes.run("checkout", "site")  # the first run: sets the cluster up
        size["ssh_executions"] = {}
        for mode in args.modes:  # warm, untimed: each mode's first runs, counted with -vvv
            size["ssh_executions"][mode] = dict(
                (kind, modes.run(mode, kind, verbose=True)[3]) for kind in ("site", "ping"))
        for round_number in range(args.repeat):
            figures = {}
            for mode in mode_order(round_number, args.modes):
                site, changed, site_cpu, _unused = modes.run(mode, "site")
                ping, _unused, ping_cpu, _unused = modes.run(mode, "ping")
                figures[mode] = dict(site=round(site, 3), ping=round(ping, 3), changed=changed,
                                     site_cpu=round(site_cpu, 3), ping_cpu=round(ping_cpu, 3))
                sys.stderr.write("%d moms, round %d, %s: site %.2f s, ping %.2f s (%.2f), CPU %.2f / %.2f s\n"
                                 % (moms, round_number + 1, mode, site, ping, site / ping, site_cpu, ping_cpu))
            size["rounds"].append(figures)
    except BenchError as exc:
        size["error"] = str(exc)
        sys.stderr.write("bench_user: %s\n" % exc)
    finally:
        if not keep:
            try:
                launcher(args.workdir, "down")
            except BenchError as exc:
                sys.stderr.write("bench_user: %s\n" % exc)
        shutil.rmtree(root, ignore_errors=True)
    size["figures"] = summarize(size["rounds"], args.modes)
    return size


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--moms", type=int_list, default=[8], help="cluster sizes, e.g. 8,32")
    parser.add_argument("--backend", default="mock", choices=("mock", "openpbs"))
    parser.add_argument("--repeat", type=positive_int, default=3, help="rounds (each mode once per round)")
    parser.add_argument("--modes", type=mode_list, default=list(DEFAULT_MODES),
                        help="comma-separated, of: %s" % ", ".join(MODES))
    parser.add_argument("--workdir", default=os.environ.get("HPC_PBS_CLUSTER_DIR")
                        or os.path.join(REPO, ".cluster"))
    parser.add_argument("--keep", action="store_true", help="leave the last cluster running")
    parser.add_argument("--json", help="also write the figures as JSON to this file")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    for path in OTHER_CONFIGS:
        if os.path.exists(path):
            sys.stderr.write("bench_user: note: %s exists and is read by the user modes\n" % path)
    version = subprocess.run([os.path.join(BIN, "ansible"), "--version"], capture_output=True, text=True,
                             env=clean_env(), check=False).stdout
    match = re.search(r"core ([0-9][^\]\s]*)", version)
    with open("/proc/cpuinfo") as handle:
        model = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), "unknown")
    results = dict(date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                   command="bench_user.py " + shlex.join(sys.argv[1:] if argv is None else argv),
                   machine="%d cores (nproc), %s" % (os.cpu_count(), model),
                   ansible_core=match.group(1) if match else "unknown", sizes=[])
    for moms in args.moms:
        results["sizes"].append(bench_size(args.backend, moms, args, keep=args.keep and moms == args.moms[-1]))
    print(markdown(results))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2, sort_keys=True)
    return 1 if any(size["error"] for size in results["sizes"]) else 0


if __name__ == "__main__":
    sys.exit(main())
