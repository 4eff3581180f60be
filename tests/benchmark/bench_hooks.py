#!/usr/bin/env python
"""Cost of the bundled hooks on the real pbs_python of OpenPBS 23.06.06 (issue 16 point 4).
Not a test: it measures and reports, it asserts nothing.

Usage::

    bench_hooks.py [--runs 20] [--profile] [--json FILE] [--keep]
                   [--queuejob-hook FILE] [--queuejob-config FILE]

Every figure is the wall time of one whole ``pbs_python --hook -i IN -o OUT -l LOG HOOK.py``
process (start, hook, exit), measured from the benchmark's side with ``time.perf_counter``:
what a mom pays per hook event (it starts one such process per event, ``run_hook`` in
``src/resmom/mom_hook_func.c``). The server runs its hooks (queuejob among them) in its own
long-lived interpreter instead, keeping the compiled hook and the imported modules between
events, so for a server hook these figures are an upper bound. Each case runs a hook and its baseline
alternately, ``--runs`` times each, on the same input, so that a load change on a shared
machine hits both sides alike. Three ratios, hook over baseline:

- ``ratio``: median(hook wall) / median(baseline wall), the figure held against the goal;
- ``paired``: the median of the ratios of the hook run and the baseline run of each round
  (the two ran back to back, so a load change between rounds cancels out);
- ``cpu``: median(hook CPU) / median(baseline CPU), CPU being the user + system seconds of
  the pbs_python process (``getrusage(RUSAGE_CHILDREN)``), which waiting for a busy core
  does not inflate. When the three disagree, the machine was busy: run again.

1. **queuejob**: files/hooks/reliable_job_startup.py with its bundled config, on the
   recorded queuejob event of a job whose select ``ncpus=1+ncpus=1+ncpus=1`` the hook pads,
   against an empty hook (``import pbs; pbs.event().accept()``). Goal <= 1.3.
   ``--queuejob-hook`` / ``--queuejob-config`` measure another body or config in its place
   (a scratch copy of the hook with a proposed change: the before/after of that change is
   two runs, one with and one without the option).
2. **execjob_begin**: files/hooks/cray_atom.py, configured for the mock ATOM service
   (:class:`mockpbs.atom.service.AtomService`, started in this process), on the recorded
   execjob_begin event, against a hook that only makes ``requests``/``requests_unixsocket``
   importable (``site.main()``: pbs_python starts without the site module), imports them,
   POSTs the same job record to the same ``/rm/v1/jobs`` URL and accepts. The registry is
   emptied before every run, so that each POST is a first registration (answer 200).
   Goal <= 1.2.

A run fails when pbs_python exits non-zero, does not accept the event, or did not do its
work (the select not padded, the job not registered). The pbs_python set-up is the one of
tests/unit/hooks/test_real_pbs_python.py: a temporary pbs.conf (``PBS_CONF_FILE``) naming
PBS_EXEC and a scratch PBS_HOME, ``LD_LIBRARY_PATH`` = PBS_EXEC/lib, the hook config given
as ``PBS_HOOK_CONFIG_FILE``. The OpenPBS install root comes from ``tests/openpbs/build
--where``.

``--profile`` then runs every hook and baseline ``--runs`` times more inside a wrapper hook
body that compiles the real one, executes its module body and then calls its ``main()``
(a bundled hook runs ``main()`` itself only when its ``__name__`` is ``builtins``), timing
each phase with ``time.process_time`` (CPU of the pbs_python process) and counting the
modules each phase imports; "rest" is the process CPU outside those phases (interpreter
start, ``import pbs``, reading the event, writing the results, exit). It prints the
medians as a second table: where the time goes.

Prints the machine (nproc, CPU model), the date and a markdown table (median, min, max
seconds, the ratios, goal); ``--json FILE`` writes the same figures. Exit code 0 when every run
succeeded, 1 otherwise (2 when there is no OpenPBS build).
"""
import argparse
import ast
import datetime
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

from mockpbs import atom
from mockpbs.atom.service import AtomService

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "openpbs"))
import pbs_python as real_pbs_python  # noqa: E402  pylint: disable=wrong-import-position
HOOKS = REPO / "files" / "hooks"
INPUTS = REPO / "tests" / "unit" / "hooks" / "pbs_python_inputs"
RUN_TIMEOUT = 120  # seconds one pbs_python run may take before it counts as failed

EMPTY_HOOK = "import pbs\npbs.event().accept()\n"
# The baseline of the ATOM hook: what any hook that talks to ATOM must do. ``site.main()``
# is part of it: without it requests is not importable under pbs_python.
ATOM_BASELINE_HOOK = '''import site
site.main()
import requests
import requests_unixsocket
import pbs
session = requests_unixsocket.Session()
response = session.request("POST", %(url)r, json=%(payload)r, timeout=30)
session.close()
if response.status_code != 200:
    raise RuntimeError("POST answered %%d: %%s" %% (response.status_code, response.text))
pbs.event().accept()
'''
# Runs the hook ``%(hook)r`` in phases (module docstring, --profile) and appends the CPU
# seconds of each, and the number of modules each imported, as one Python literal line to
# ``%(report)r``. It imports nothing the hook might import: the hook pays for its own.
PROFILE_WRAPPER = '''import sys
import time
clock = time.process_time
compile("", "warm-up", "exec")  # the first compile() of a process costs ~2 ms, whatever the source
started = clock()
with open(%(hook)r) as handle:
    code = compile(handle.read(), %(hook)r, "exec")
compiled = clock()
ends = {}  # phase -> (clock, len(sys.modules)) at its end
modules_at_start = len(sys.modules)
try:  # accept() and reject() end the hook with SystemExit
    namespace = {"__name__": "profiled_hook"}
    exec(code, namespace)
    ends["body"] = (clock(), len(sys.modules))
    if "main" in namespace:
        namespace["main"]()
finally:
    ends["main"] = (clock(), len(sys.modules))
    ends.setdefault("body", ends["main"])
    with open(%(report)r, "a") as handle:
        handle.write(repr({"compile": compiled - started, "module body": ends["body"][0] - compiled,
                           "main()": ends["main"][0] - ends["body"][0],
                           "body imports": ends["body"][1] - modules_at_start,
                           "main() imports": ends["main"][1] - ends["body"][1]}) + "\\n")
'''
PROFILE_PHASES = ("compile", "module body", "main()")
ATOM_JOB_ID = "21.pbs-server"  # the job of execjob_begin.in
ATOM_PAYLOAD = {"jobid": ATOM_JOB_ID, "uid": 0, "exclusive": True}  # as cray_atom sends it for that job


class RunFailed(Exception):
    """One pbs_python run failed: non-zero exit, event not accepted, or the work not done."""


class PbsPython:
    """Runs hooks under the real pbs_python, one process per run, in ``workdir``.

    ``pbs_exec``: PBS_EXEC of the OpenPBS build (holds bin/pbs_python and lib/)."""

    def __init__(self, pbs_exec, workdir):
        self.pbs_exec = Path(pbs_exec)
        self.workdir = Path(workdir)
        self.base_env = real_pbs_python.hook_environment(self.pbs_exec, self.workdir)

    def write(self, name, text):
        """Write ``text`` to ``workdir/name``; return the path."""
        path = self.workdir / name
        path.write_text(text)
        return path

    def run(self, hook_path, input_path, config_path=None, extra_env=None):
        """One ``pbs_python --hook`` run. Returns ``(wall seconds, CPU seconds, output text,
        log text)``, both for the whole process, CPU = user + system. Raises RunFailed when it
        exits non-zero or does not accept the event."""
        out_path, log_path = self.workdir / "run.out", self.workdir / "run.log"
        for path in (out_path, log_path):
            if path.exists():
                path.unlink()
        env = dict(self.base_env, **(extra_env or {}))
        if config_path is not None:
            env["PBS_HOOK_CONFIG_FILE"] = str(config_path)
        command = real_pbs_python.hook_command(self.pbs_exec, hook_path, input_path, out_path, log_path)
        cpu_before = children_cpu_seconds()
        started = time.perf_counter()
        process = subprocess.run(command, env=env, cwd=str(self.workdir), capture_output=True, text=True,
                                 timeout=RUN_TIMEOUT, check=False)
        seconds = time.perf_counter() - started
        cpu_seconds = children_cpu_seconds() - cpu_before
        output = out_path.read_text() if out_path.exists() else ""
        log = log_path.read_text() if log_path.exists() else ""
        if process.returncode != 0 or "pbs.event().accept=True" not in output.splitlines():
            raise RunFailed("%s exited %d, output %r, log %r, stderr %r"
                            % (Path(hook_path).name, process.returncode, output, log, process.stderr[-2000:]))
        return seconds, cpu_seconds, output, log


def children_cpu_seconds():
    """User + system CPU seconds of this process's waited-for children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Side:
    """One side of a case: a hook file, its config, and ``check(output, log)`` that raises
    RunFailed when the run did not do its work; ``before()`` runs untimed before each run."""

    def __init__(self, label, hook_path, config_path=None, check=None, before=None):
        self.label = label
        self.hook_path = hook_path
        self.config_path = config_path
        self.check = check or (lambda output, log: None)
        self.before = before or (lambda: None)
        self.seconds = []  # wall seconds of each run, in order
        self.cpu_seconds = []  # CPU seconds of each run, in order

    def run_once(self, runner, input_path):
        self.before()
        seconds, cpu_seconds, output, log = runner.run(self.hook_path, input_path, self.config_path)
        self.check(output, log)
        self.seconds.append(seconds)
        self.cpu_seconds.append(cpu_seconds)


class Case:
    """A hook against its baseline on one event input, with the goal for their ratio."""

    def __init__(self, name, input_path, hook, baseline, goal):
        self.name, self.input_path, self.hook, self.baseline, self.goal = name, input_path, hook, baseline, goal

    def measure(self, runner, runs):
        """``runs`` runs of each side, alternating (hook first on even rounds, baseline first on
        odd ones). Raises RunFailed at the first failed run."""
        for round_number in range(runs):
            sides = (self.hook, self.baseline) if round_number % 2 == 0 else (self.baseline, self.hook)
            for side in sides:
                side.run_once(runner, self.input_path)

    def ratios(self):
        """``{"ratio", "paired", "cpu"}``: the three hook / baseline ratios (module docstring)."""
        hook, baseline = self.hook, self.baseline
        return {"ratio": statistics.median(hook.seconds) / statistics.median(baseline.seconds),
                "paired": statistics.median(h / b for h, b in zip(hook.seconds, baseline.seconds)),
                "cpu": statistics.median(hook.cpu_seconds) / statistics.median(baseline.cpu_seconds)}

    def figures(self):
        """``{"case", "goal", "ratio", "paired", "cpu", "hook": side figures, "baseline": side
        figures}``, seconds and ratios as floats."""
        figures = {"case": self.name, "goal": self.goal}
        figures.update((name, round(value, 3)) for name, value in self.ratios().items())
        figures.update(hook=side_figures(self.hook), baseline=side_figures(self.baseline))
        return figures


def side_figures(side):
    """``{"label", "runs", "median", "min", "max", "cpu_median"}``, in seconds."""
    return {"label": side.label, "runs": len(side.seconds), "median": round(statistics.median(side.seconds), 4),
            "min": round(min(side.seconds), 4), "max": round(max(side.seconds), 4),
            "cpu_median": round(statistics.median(side.cpu_seconds), 4)}


# ---------------------------------------------------------------- profile
def profile_side(runner, side, input_path, runs):
    """Run ``side``'s hook ``runs`` times under PROFILE_WRAPPER. Returns the medians in
    milliseconds: ``{"label", "process", "compile", "module body", "main()", "rest",
    "body imports", "main() imports"}`` (imports: module counts). Raises RunFailed."""
    hook_path = Path(side.hook_path)
    report_path = runner.workdir / ("profile_%s.txt" % hook_path.stem)
    wrapper = runner.write("profile_%s.py" % hook_path.stem,
                           PROFILE_WRAPPER % {"hook": str(hook_path), "report": str(report_path)})
    profiled = Side(side.label, wrapper, side.config_path, side.check, side.before)
    for _unused in range(runs):
        profiled.run_once(runner, input_path)
    phases = [ast.literal_eval(line) for line in report_path.read_text().splitlines()]
    for run, process_seconds in zip(phases, profiled.cpu_seconds):
        run["process"] = process_seconds
        run["rest"] = process_seconds - sum(run[name] for name in PROFILE_PHASES)
    medians = {"label": side.label}
    for name in ("process",) + PROFILE_PHASES + ("rest",):
        medians[name] = round(1000 * statistics.median(run[name] for run in phases), 2)
    for name in ("body imports", "main() imports"):
        medians[name] = phases[-1][name]
    return medians


def profile_cases(runner, cases, runs):
    """``[{"case", "sides": [profile_side() of the hook, of the baseline]}]``."""
    return [{"case": case.name, "sides": [profile_side(runner, side, case.input_path, runs)
                                          for side in (case.hook, case.baseline)]}
            for case in cases]


def profile_table(profiles):
    lines = ["| event | run | process CPU ms | compile ms | module body ms | main() ms | rest ms "
             "| modules imported (body + main) |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for profile in profiles:
        for side in profile["sides"]:
            lines.append("| %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %d + %d |"
                         % (profile["case"], side["label"], side["process"], side["compile"], side["module body"],
                            side["main()"], side["rest"], side["body imports"], side["main() imports"]))
    return "\n".join(lines)


# ---------------------------------------------------------------- the two cases
def require_line(wanted, what):
    """A check: the OUT text must contain a line starting with ``wanted``."""
    def check(output, _log):
        if not any(line.startswith(wanted) for line in output.splitlines()):
            raise RunFailed("%s: no %r line in the output %r" % (what, wanted, output))
    return check


QUEUEJOB_GOAL = 1.3  # reliable_job_startup.py at queuejob over the empty hook
ATOM_GOAL = 1.2  # cray_atom.py at execjob_begin over the bare ATOM client


def queuejob_case(runner, hook_path=None, config_path=None):
    """reliable_job_startup.py (or ``hook_path``) with its bundled config (or
    ``config_path``) against the empty hook."""
    hook_path = Path(hook_path or HOOKS / "reliable_job_startup.py")
    hook = Side(hook_path.name, hook_path, config_path or HOOKS / "reliable_job_startup.json",
                check=require_line("pbs.event().job.Resource_List[select", "the select was not padded"))
    baseline = Side("empty hook", runner.write("empty_hook.py", EMPTY_HOOK))
    return Case("queuejob", INPUTS / "queuejob.in", hook, baseline, goal=QUEUEJOB_GOAL)


def atom_url(socket_path):
    return "http+unix://%s/rm/v1/jobs" % urllib.parse.quote(socket_path, safe="")


def requests_logged(service):
    """How many requests ``service`` has answered so far (the lines of its request log)."""
    try:
        with open(atom.log_path(service.socket_path)) as handle:
            return sum(1 for _line in handle)
    except FileNotFoundError:
        return 0


def atom_case(runner, service):
    """cray_atom.py against the bare requests POST, both on ``service``."""
    config = json.loads((HOOKS / "cray_atom.json").read_text())
    config["unix_socket_file"] = service.socket_path
    config_path = runner.write("cray_atom.json", json.dumps(config))

    requests_before = []

    def forget_jobs():
        with service.lock:
            service.jobs.clear()
        requests_before[:] = [requests_logged(service)]

    def registered(_output, _log):
        """The job is registered, by exactly one request (a first POST, answered 200)."""
        if ATOM_JOB_ID not in service.jobs:
            raise RunFailed("job %s not registered with the mock ATOM service" % ATOM_JOB_ID)
        sent = requests_logged(service) - requests_before[0]
        if sent != 1:
            raise RunFailed("%d requests reached the mock ATOM service instead of 1 POST" % sent)

    hook = Side("cray_atom.py", HOOKS / "cray_atom.py", config_path, check=registered, before=forget_jobs)
    baseline_source = ATOM_BASELINE_HOOK % {"url": atom_url(service.socket_path), "payload": ATOM_PAYLOAD}
    baseline = Side("site.main() + import requests, requests_unixsocket + 1 POST",
                    runner.write("atom_baseline.py", baseline_source), check=registered, before=forget_jobs)
    return Case("execjob_begin", INPUTS / "execjob_begin.in", hook, baseline, goal=ATOM_GOAL)


# ---------------------------------------------------------------- report
def machine():
    """``{"nproc", "cpu", "date"}`` of this machine now."""
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as handle:
            cpu = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), cpu)
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpu": cpu,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


def markdown_table(cases):
    lines = ["| event | run | median s | min s | max s | CPU s | ratio | paired | CPU ratio | goal | met |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for case in cases:
        figures = case.figures()
        for key in ("hook", "baseline"):
            side = figures[key]
            ratios = (["%.2f" % figures[name] for name in ("ratio", "paired", "cpu")] + ["<= %.1f" % case.goal]
                      + ["yes" if figures["ratio"] <= case.goal else "no"])
            lines.append("| %s | %s | %.3f | %.3f | %.3f | %.3f | %s |"
                         % (case.name, side["label"], side["median"], side["min"], side["max"], side["cpu_median"],
                            " | ".join(ratios if key == "hook" else [""] * len(ratios))))
    return "\n".join(lines)


def positive_int(text):
    """argparse type: an int >= 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1, not %d" % value)
    return value


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--runs", type=positive_int, default=20,
                        help="runs of each hook and each baseline (default 20)")
    parser.add_argument("--profile", action="store_true",
                        help="then profile every hook and baseline (--runs runs each): where the time goes")
    parser.add_argument("--json", metavar="FILE", help="write the figures to FILE as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (inputs, outputs, logs)")
    parser.add_argument("--queuejob-hook", metavar="FILE",
                        help="measure this hook body in place of files/hooks/reliable_job_startup.py")
    parser.add_argument("--queuejob-config", metavar="FILE",
                        help="its config file (default files/hooks/reliable_job_startup.json)")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    root = real_pbs_python.install_root()
    if root is None:
        sys.stderr.write("bench_hooks: no OpenPBS build (tests/openpbs/build --where failed)\n")
        return 2
    # UNIX socket paths are limited to 107 bytes: a short directory under /tmp.
    workdir = tempfile.mkdtemp(prefix="bench_hooks", dir="/tmp")
    about = machine()
    print("machine: %d cores, %s; %s; pbs_python of %s" % (about["nproc"], about["cpu"], about["date"], root))
    try:
        runner = PbsPython(root / "opt" / "pbs", workdir)
        with AtomService(os.path.join(workdir, "atomd.sock")) as service:
            cases = [queuejob_case(runner, args.queuejob_hook, args.queuejob_config), atom_case(runner, service)]
            for case in cases:
                case.measure(runner, args.runs)
            profiles = profile_cases(runner, cases, args.runs) if args.profile else None
    except (RunFailed, subprocess.TimeoutExpired) as err:
        sys.stderr.write("bench_hooks: a run failed: %s\n" % err)
        return 1
    finally:
        if args.keep:
            print("work directory kept: %s" % workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    print(markdown_table(cases))
    if profiles:
        print("\nwhere the time goes (medians, CPU of the pbs_python process):\n")
        print(profile_table(profiles))
    if args.json:
        figures = {"machine": about, "runs": args.runs, "cases": [case.figures() for case in cases]}
        if profiles:
            figures["profile"] = profiles
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
