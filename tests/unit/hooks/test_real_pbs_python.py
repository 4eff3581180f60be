"""The bundled hooks under the real pbs_python of OpenPBS 23.06.06, and the emulator beside it.

``tests/openpbs/build --where`` names the install root R of the OpenPBS built from the
source tarball; ``R/opt/pbs/bin/pbs_python --hook -i IN -o OUT -l LOG HOOK.py`` runs one hook
on one event as the mom does (``src/tools/pbs_python.c``). IN holds the event as the mom
writes it (``run_hook`` in ``src/resmom/mom_hook_func.c``): ``pbs.event().<attr>=<value>``
lines, recorded in pbs_python_inputs/; OUT is what the mom reads back
(``pbs.event().accept=True``, ``pbs.event().job.exec_vnode=...``); LOG gets the hook's log
lines. pbs_python finds its Python modules through PBS_EXEC, read from the pbs.conf that
``PBS_CONF_FILE`` names (a temporary one here: the host's /etc is never touched), needs
``R/opt/pbs/lib`` for libpbs, and gives the hook ``PBS_HOOK_CONFIG_FILE`` as
``pbs.hook_config_filename``. A hook that crashes pbs_python (SIGSEGV) writes no OUT.

Every case also runs on the ``pbs`` emulator with the same input
(:func:`mockpbs.harness.run_pbs_python_input`) and checks that both agree.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from mockpbs import harness, hookrun
from mockpbs.atom.service import AtomService

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "openpbs"))
import pbs_python as real_pbs_python  # noqa: E402  pylint: disable=wrong-import-position

pytestmark = pytest.mark.real_pbs

REPO = Path(__file__).resolve().parents[3]
HOOKS = REPO / "files" / "hooks"
INPUTS = Path(__file__).resolve().parent / "pbs_python_inputs"
SHAPES = sorted((INPUTS / "release_nodes_shapes").glob("*.py"))
SELECT_SPECS = json.loads((INPUTS / "select_specs.json").read_text())
SITE = "1:ncpus=1+1:ncpus=1"


def _install_root():
    root = real_pbs_python.install_root()
    if root is None:
        pytest.skip("no real OpenPBS build (tests/openpbs/build --where found none)", allow_module_level=True)
    return root


ROOT = _install_root()
PBS_EXEC = ROOT / "opt" / "pbs"


class RealRun:
    """One pbs_python run: ``returncode``; ``output`` the ``(key, value)`` lines of OUT in
    order; ``log`` the LOG lines without their date (``0008;pbs_python;Job;<id>;<msg>``)."""

    def __init__(self, returncode, output_text, log_text):
        self.returncode = returncode
        self.output = [tuple(line.split("=", 1)) for line in output_text.splitlines() if "=" in line]
        self.log = [line.split(";", 1)[1] for line in log_text.splitlines() if ";" in line]

    @property
    def crashed(self):
        return self.returncode == -signal.SIGSEGV

    @property
    def accepted(self):
        return ("pbs.event().accept", "True") in self.output

    def value(self, key):
        """The first value written for ``key`` (e.g. ``pbs.event().job.exec_vnode``), or None."""
        return next((value for name, value in self.output if name == key), None)

    def job_resource(self, resource):
        """``Resource_List[<resource>]`` as written back (pbs_python types it:
        ``Resource_List[select,string]``)."""
        prefixes = ("pbs.event().job.Resource_List[%s]" % resource, "pbs.event().job.Resource_List[%s," % resource)
        return next((value for name, value in self.output if name.startswith(prefixes)), None)

    def __repr__(self):
        return "RealRun(returncode=%r, output=%r, log=%r)" % (self.returncode, self.output, self.log)


@pytest.fixture
def pbs_python(tmp_path):
    """``pbs_python(hook_source, input_text, config=None, pbs_exec=PBS_EXEC, env=None) ->
    RealRun``: one ``pbs_python --hook`` run in ``tmp_path`` (its pbs.conf, PBS_HOME, input,
    output, log and config: a dict as JSON, a str as UTF-8, bytes as they are) by the
    pbs_python of ``pbs_exec``, ``env`` added to its environment."""
    runs = []

    def run(hook_source, input_text, config=None, pbs_exec=PBS_EXEC, env=None):
        number = len(runs)
        paths = {ext: tmp_path / ("run%d.%s" % (number, ext)) for ext in ("PY", "in", "out", "log", "CF")}
        paths["PY"].write_text(hook_source)
        paths["in"].write_text(input_text)
        run_env = dict(real_pbs_python.hook_environment(pbs_exec, tmp_path), **(env or {}))
        if config is not None:
            if not isinstance(config, (str, bytes)):
                config = json.dumps(config)
            paths["CF"].write_bytes(config if isinstance(config, bytes) else config.encode("utf-8"))
            run_env["PBS_HOOK_CONFIG_FILE"] = str(paths["CF"])
        process = subprocess.run(
            real_pbs_python.hook_command(pbs_exec, paths["PY"], paths["in"], paths["out"], paths["log"]),
            env=run_env, cwd=str(tmp_path), capture_output=True, text=True, timeout=120, check=False)
        result = RealRun(process.returncode,
                         paths["out"].read_text() if paths["out"].exists() else "",
                         paths["log"].read_text() if paths["log"].exists() else "")
        runs.append(result)
        return result

    return run


def read_input(name):
    return (INPUTS / name).read_text()


def bundled(name):
    return (HOOKS / ("%s.py" % name)).read_text()


def with_both_sisters_failed(launch_input):
    """The launch input with hostC failed too: only the primary's chunk is healthy."""
    text = launch_input.replace("pbs.event().job.succeeded_mom_list=hostC\n",
                                "pbs.event().job.failed_mom_list=hostC\n")
    return text.replace('pbs.get_local_nodename()=hostA\n',
                        'pbs.event().vnode_list_fail["hostC"].resources_assigned[ncpus]=1\n'
                        'pbs.event().vnode_list_fail["hostC"].resources_assigned[host]=hostC\n'
                        'pbs.get_local_nodename()=hostA\n')


def test_pbs_python_reads_the_inputs_and_the_build_is_the_arbiters():
    version = subprocess.run([str(PBS_EXEC / "bin" / "pbs_python"), "--version"], capture_output=True, text=True,
                             env=dict(os.environ, LD_LIBRARY_PATH=str(PBS_EXEC / "lib")), check=False)
    assert version.stdout.strip() == "pbs_version = 23.06.06", version


# ---------------------------------------------------------------- reliable_job_startup
def test_queuejob_pads_the_select_and_keeps_the_original(pbs_python):
    real = pbs_python(bundled("reliable_job_startup"), read_input("queuejob.in"), config={})
    assert real.returncode == 0 and real.accepted, real
    assert real.job_resource("select") == "1:ncpus=1+2:ncpus=1+2:ncpus=1"
    assert real.job_resource("site") == "1:ncpus=1+1:ncpus=1+1:ncpus=1"
    assert real.value("pbs.event().job.tolerate_node_failures") == "job_start"
    emulated = harness.run_pbs_python_input(bundled("reliable_job_startup"), read_input("queuejob.in"), {})
    assert emulated.accepted
    assert emulated.changes["Resource_List"] == {"select": real.job_resource("select"),
                                                 "site": real.job_resource("site")}


def test_launch_prunes_the_failed_sister_and_exits_0(pbs_python):
    real = pbs_python(bundled("reliable_job_startup"), read_input("execjob_launch.in"), config={})
    assert real.returncode == 0 and real.accepted, real
    assert real.value("pbs.event().job.exec_vnode") == "(hostA:ncpus=1)+(hostC:ncpus=1)"
    assert real.value("pbs.event().job.exec_host") == "hostA/0+hostC/0"
    assert real.value("pbs.event().job.exec_host2") == "hostA:15002/0+hostC:15002/0"
    assert real.value("pbs.event().job.schedselect") == SITE
    assert real.value('pbs.event().vnode_list_fail["hostB"].state') == "offline"
    emulated = harness.run_pbs_python_input(bundled("reliable_job_startup"), read_input("execjob_launch.in"), {})
    assert not emulated.crashed and emulated.accepted
    for name in ("exec_vnode", "exec_host", "exec_host2", "schedselect"):
        assert emulated.changes[name] == real.value("pbs.event().job.%s" % name)
    assert emulated.vnodes["hostB"]["state"] == "offline"
    assert emulated.vnodes["hostB"]["comment"] == real.value('pbs.event().vnode_list_fail["hostB"].comment')


def test_launch_with_the_old_shape_crashes_and_loses_the_pruning(pbs_python):
    fixed_call = "    pruned = release_nodes_kept(job, keep_select)\n"
    assert bundled("reliable_job_startup").count(fixed_call) == 1
    unfixed = bundled("reliable_job_startup").replace(fixed_call,
                                                      "    pruned = job.release_nodes(keep_select=keep_select)\n")
    real = pbs_python(unfixed, read_input("execjob_launch.in"), config={})
    assert real.crashed, real
    assert real.value("pbs.event().job.exec_vnode") is None
    # The hook's own line says it pruned; the mom never learns it.
    assert any("pruned to select %s" % SITE in line for line in real.log)
    assert harness.run_pbs_python_input(unfixed, read_input("execjob_launch.in"), {}).crashed


def test_launch_that_cannot_prune_holds_requeues_and_rejects(pbs_python):
    launch = with_both_sisters_failed(read_input("execjob_launch.in"))
    real = pbs_python(bundled("reliable_job_startup"), launch, config={})
    assert real.returncode == 0 and not real.accepted, real
    assert "could not prune job 20.pbs-server back to its original select" in real.value("pbs.event().reject_msg")
    assert real.value("pbs.event().job.Hold_Types") == "s"
    assert real.value("pbs.event().job._rerun") == "True"
    assert real.value("pbs.event().job.exec_vnode") is None
    emulated = harness.run_pbs_python_input(bundled("reliable_job_startup"), launch, {})
    assert not emulated.accepted and emulated.rerun and emulated.changes["Hold_Types"] == "s"
    assert emulated.reject_message == real.value("pbs.event().reject_msg")


def test_launch_of_a_job_that_was_not_padded_changes_nothing(pbs_python):
    launch = read_input("execjob_launch.in").replace("pbs.event().job.Resource_List[site]=%s\n" % SITE, "")
    real = pbs_python(bundled("reliable_job_startup"), launch, config={})
    assert real.returncode == 0 and real.accepted, real
    assert real.value("pbs.event().job.exec_vnode") is None
    assert real.value('pbs.event().vnode_list_fail["hostB"].state') is None
    emulated = harness.run_pbs_python_input(bundled("reliable_job_startup"), launch, {})
    assert emulated.accepted and emulated.changes == {} and emulated.vnodes == {}


def test_launch_with_a_bad_config_holds_requeues_and_rejects(pbs_python):
    real = pbs_python(bundled("reliable_job_startup"), read_input("execjob_launch.in"), config={"increment": 0})
    assert real.returncode == 0 and not real.accepted, real
    assert "increment must be >= 1, not 0" in real.value("pbs.event().reject_msg")
    assert real.value("pbs.event().job.Hold_Types") == "s"
    assert real.value("pbs.event().job._rerun") == "True"
    emulated = harness.run_pbs_python_input(bundled("reliable_job_startup"), read_input("execjob_launch.in"),
                                            {"increment": 0})
    assert not emulated.accepted and emulated.rerun and emulated.changes == {"Hold_Types": "s"}


MODULES_HOOK = ("import sys\nimport pbs\n"
                "pbs.logmsg(pbs.LOG_ERROR, 'modules ' + ' '.join(sorted(sys.modules)))\n")


def _plain_modules(names):
    """``names`` without PBS's own modules (pbs, _pbs_v1, swig_runtime_data4, ...), the
    emulator's (mockpbs.*) and encodings.*."""
    return set(name for name in names
               if not name.startswith(("pbs", "_pbs", "swig_runtime", "mockpbs", "encodings")))


def test_a_hook_starts_with_the_modules_of_the_real_pbs_python(pbs_python):
    real = pbs_python(MODULES_HOOK, read_input("queuejob.in"))
    logged = [line for line in real.log if ";modules " in line]
    assert len(logged) == 1, real
    real_modules = _plain_modules(logged[0].split(";modules ", 1)[1].split())
    assert real_modules == hookrun.PBS_PYTHON_MODULES
    assert "json" not in real_modules and "re" not in real_modules
    emulated = harness.run_pbs_python_input(MODULES_HOOK, read_input("queuejob.in"))
    messages = [record[3] for record in emulated.records if record[3].startswith("modules ")]
    assert _plain_modules(messages[0].split()[1:]) <= hookrun.PBS_PYTHON_MODULES, messages


# Config files that are not JSON, as an admin's hand edit leaves them. Where json.decoder is
# not imported yet (pbs_python imports no json), CPython 3.10 and 3.11's C scanner raises
# SystemError on the first two instead of a JSONDecodeError; the third ends its text early.
NOT_JSON = [
    ('{"increment": 2 "tolerate": "all"}', "Expecting ',' delimiter: line 1 column 17"),
    ("{not json", "Expecting property name enclosed in double quotes: line 1 column 2"),
    ('{"increment": 2,', "Expecting property name enclosed in double quotes: line 1 column 17"),
]


@pytest.mark.parametrize("text, why", NOT_JSON)
def test_a_config_that_is_not_json_rejects_queuejob_naming_the_file(pbs_python, text, why):
    real = pbs_python(bundled("reliable_job_startup"), read_input("queuejob.in"), config=text)
    assert real.returncode == 0 and not real.accepted, real
    assert "run0.CF is not valid JSON: %s" % why in real.value("pbs.event().reject_msg"), real
    emulated = harness.run_pbs_python_input(bundled("reliable_job_startup"), read_input("queuejob.in"), text)
    assert not emulated.accepted and "is not valid JSON: %s" % why in emulated.reject_message


@pytest.mark.parametrize("text, why", NOT_JSON)
def test_a_config_that_is_not_json_holds_and_requeues_at_launch(pbs_python, text, why):
    real = pbs_python(bundled("reliable_job_startup"), read_input("execjob_launch.in"), config=text)
    assert real.returncode == 0 and not real.accepted, real
    assert "is not valid JSON: %s" % why in real.value("pbs.event().reject_msg"), real
    assert real.value("pbs.event().job.Hold_Types") == "s"
    assert real.value("pbs.event().job._rerun") == "True"
    emulated = harness.run_pbs_python_input(bundled("reliable_job_startup"), read_input("execjob_launch.in"), text)
    assert not emulated.accepted and emulated.rerun and emulated.changes == {"Hold_Types": "s"}
    assert "is not valid JSON: %s" % why in emulated.reject_message


# A config file's encoding. JSON is UTF-8; pbs_python reads a file in the locale's encoding,
# ASCII under the C locale for the CPython 3.6 of 22.05.11 (a daemon started without LANG).
ROOT_22 = real_pbs_python.install_root("22.05.11")
BUILDS = [pytest.param(PBS_EXEC, id="23.06.06"),
          pytest.param(ROOT_22 / "opt" / "pbs" if ROOT_22 else None, id="22.05.11",
                       marks=pytest.mark.skipif(ROOT_22 is None, reason="no OpenPBS 22.05.11 build"))]
C_LOCALE = {"LC_ALL": "C", "LANG": "C"}


@pytest.mark.parametrize("pbs_exec", BUILDS)
def test_a_utf8_config_is_read_as_utf8_under_the_c_locale(pbs_python, pbs_exec):
    config = '{"queues": ["workq", "w\u00f6rkq"]}'
    real = pbs_python(bundled("reliable_job_startup"), read_input("queuejob.in"), config=config,
                      pbs_exec=pbs_exec, env=C_LOCALE)
    assert real.returncode == 0 and real.accepted, real
    assert real.job_resource("select") == "1:ncpus=1+2:ncpus=1+2:ncpus=1"


@pytest.mark.parametrize("pbs_exec", BUILDS)
@pytest.mark.parametrize("name, input_name", [("reliable_job_startup", "queuejob.in"), ("cray_atom", "execjob_begin.in"),
                                              ("cgroup_resize", "execjob_resize.in")])
def test_a_config_that_is_not_utf8_is_refused_naming_the_file(pbs_python, pbs_exec, name, input_name):
    config = b'{"queues": ["w\xf6rkq"]}'  # Latin-1
    real = pbs_python(bundled(name), read_input(input_name), config=config, pbs_exec=pbs_exec)
    assert real.returncode == 0 and not real.accepted, real
    assert real.value("pbs.event().reject_msg").startswith("%s: cannot read config file " % name), real
    assert real.value("pbs.event().reject_msg").endswith(
        ".CF: 'utf-8' codec can't decode byte 0xf6 in position 14: invalid start byte"), real
    emulated = harness.run_pbs_python_input(bundled(name), read_input(input_name), config)
    assert not emulated.accepted and emulated.reject_message.endswith("invalid start byte"), emulated.exception


@pytest.mark.parametrize("path", SHAPES, ids=[p.stem for p in SHAPES])
def test_release_nodes_result_kept_or_freed(pbs_python, path):
    """Which hook shapes crash pbs_python (the job release_nodes() returned freed before the
    hook ends), as each shape's first line records, and the emulator says the same."""
    crashes = path.read_text().splitlines()[0] == "# pbs_python: crashes"
    real = pbs_python(path.read_text(), read_input("execjob_launch.in"))
    assert real.crashed is crashes, real
    assert real.returncode == (-signal.SIGSEGV if crashes else 0), real
    assert harness.run_pbs_python_input(path.read_text(), read_input("execjob_launch.in")).crashed is crashes


# ---------------------------------------------------------------- cray_atom
@pytest.fixture
def atomd():
    # UNIX socket paths are limited to 107 bytes: pytest's tmp_path can be longer.
    workdir = tempfile.mkdtemp(prefix="atom", dir="/tmp")
    try:
        with AtomService(os.path.join(workdir, "atomd.sock")) as service:
            yield service
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def test_cray_atom_registers_at_begin_and_removes_at_end(pbs_python, atomd):
    config = {"unix_socket_file": atomd.socket_path}
    begin = pbs_python(bundled("cray_atom"), read_input("execjob_begin.in"), config=config)
    assert begin.returncode == 0 and begin.accepted, begin
    assert [(jobid, job["uid"], job["exclusive"]) for jobid, job in atomd.jobs.items()] == [("21.pbs-server", 0, True)]
    assert "0008;pbs_python;Job;21.pbs-server;cray_atom: registered with ATOM (exclusive=true)" in begin.log
    end = pbs_python(bundled("cray_atom"), read_input("execjob_end.in"), config=config)
    assert end.returncode == 0 and end.accepted, end
    assert atomd.jobs == {}
    assert "0008;pbs_python;Job;21.pbs-server;cray_atom: removed from ATOM" in end.log


def test_cray_atom_without_a_socket_logs_and_accepts(pbs_python, tmp_path):
    config = {"unix_socket_file": str(tmp_path / "none.sock")}
    real = pbs_python(bundled("cray_atom"), read_input("execjob_begin.in"), config=config)
    assert real.returncode == 0 and real.accepted, real
    assert any("ATOM socket %s does not exist; nothing to do, accepting" % config["unix_socket_file"] in line
               for line in real.log)
    emulated = harness.run_pbs_python_input(bundled("cray_atom"), read_input("execjob_begin.in"), config)
    assert emulated.accepted and emulated.log[0].split(";", 1)[1] == real.log[0]


# ---------------------------------------------------------------- cgroup_resize
def cgroup_v2_tree(base, jobid, cpus, mem_bytes):
    """A cgroup v2 hierarchy as plain files, the job's cgroup already made at begin."""
    root = base / "cgroup"
    job_dir = root / "pbs_jobs" / jobid
    job_dir.mkdir(parents=True)
    for directory in (root, root / "pbs_jobs"):
        (directory / "cgroup.subtree_control").write_text("+cpuset +memory")
        (directory / "cgroup.procs").write_text("")
    (root / "cpuset.cpus.effective").write_text("0-7\n")
    (root / "cpuset.mems.effective").write_text("0\n")
    (root / "pbs_jobs" / "cpuset.cpus").write_text("0-7\n")
    (job_dir / "cpuset.cpus").write_text(cpus + "\n")
    (job_dir / "cpuset.mems").write_text("0\n")
    (job_dir / "memory.max").write_text("%d\n" % mem_bytes)
    (job_dir / "cgroup.procs").write_text("")
    (base / "mounts").write_text("cgroup2 %s cgroup2 rw,nosuid,nodev,noexec,relatime 0 0\n" % root)
    return {"root": str(root), "mounts_file": str(base / "mounts")}, job_dir


def test_cgroup_resize_shrinks_the_jobs_cgroup_to_its_pruned_chunk(pbs_python, tmp_path):
    # hostC had (hostC:ncpus=2:mem=2gb); release_nodes() kept (hostC:ncpus=1:mem=1048576kb).
    config, job_dir = cgroup_v2_tree(tmp_path / "real", "22.pbs-server", "0-1", 2 * 1024 ** 3)
    real = pbs_python(bundled("cgroup_resize"), read_input("execjob_resize.in"), config=config)
    assert real.returncode == 0 and real.accepted, real
    assert (job_dir / "cpuset.cpus").read_text().strip() == "0"
    assert (job_dir / "memory.max").read_text().strip() == str(1024 ** 3)
    assert any("cgroup_resize: cgroups on hostC resized: cpus 0-1 -> 0, mem=%d bytes" % 1024 ** 3 in line
               for line in real.log), real.log
    config, job_dir = cgroup_v2_tree(tmp_path / "emulated", "22.pbs-server", "0-1", 2 * 1024 ** 3)
    emulated = harness.run_pbs_python_input(bundled("cgroup_resize"), read_input("execjob_resize.in"), config)
    assert emulated.accepted, emulated.exception
    assert (job_dir / "cpuset.cpus").read_text().strip() == "0"
    assert [line.split(";", 1)[1] for line in emulated.log] == real.log


# ---------------------------------------------------------------- pbs.select and job.delete()
SELECT_PROBE = '''import pbs
import json
specs = json.loads(%r)
for spec in specs["accepted"] + specs["refused"]:
    try:
        pbs.select(spec)
        pbs.logmsg(pbs.LOG_DEBUG, "accepted %%r" %% (spec,))
    except Exception as err:
        pbs.logmsg(pbs.LOG_DEBUG, "refused %%r %%s: %%s" %% (spec, type(err).__name__, err))
for spec, increment, _expected in specs["increment_chunks"]:
    try:
        pbs.logmsg(pbs.LOG_DEBUG, "incremented %%r" %% (str(pbs.select(spec).increment_chunks(increment)),))
    except Exception as err:
        pbs.logmsg(pbs.LOG_DEBUG, "increment failed %%s" %% (type(err).__name__,))
pbs.event().job.delete()
'''


def test_select_specs_and_delete_as_the_emulator_has_them(pbs_python):
    probe = SELECT_PROBE % json.dumps(SELECT_SPECS)
    real = pbs_python(probe, read_input("execjob_begin.in"))
    assert real.returncode == 0 and real.accepted, real
    messages = [line.split(";", 4)[4] for line in real.log]
    expected = ["accepted %r" % spec for spec in SELECT_SPECS["accepted"]]
    expected += ["refused %r BadResourceValueError: input value %s not of the right format for 'select'"
                 % (spec, spec) for spec in SELECT_SPECS["refused"]]
    expected += ["increment failed %s" % result if result == "BadResourceValueError" else "incremented %r" % result
                 for _spec, _increment, result in SELECT_SPECS["increment_chunks"]]
    assert messages == expected
    assert real.value("pbs.event().job._delete") == "True"
    emulated = harness.run_pbs_python_input(probe, read_input("execjob_begin.in"))
    assert [line.split(";", 5)[5] for line in emulated.log] == messages
    assert emulated.delete is True
