"""One hook run under the real ``pbs_python`` of the OpenPBS build, as a mom runs one per
hook event (``pbs_python --hook -i IN -o OUT -l LOG HOOK.py``, ``run_hook`` in
``src/resmom/mom_hook_func.c``).

Shared by ``tests/unit/hooks/test_real_pbs_python.py`` and ``tests/benchmark/bench_hooks.py``.
pbs_python finds its Python modules through PBS_EXEC, read from the pbs.conf that
``PBS_CONF_FILE`` names (a scratch one here: the host's /etc is never read or written),
needs PBS_EXEC/lib for libpbs, and gives the hook the file ``PBS_HOOK_CONFIG_FILE`` names
as its config.
"""
import os
import subprocess
from pathlib import Path

BUILD_SCRIPT = Path(__file__).resolve().parent / "build"


def install_root(version=None):
    """The OpenPBS install root R (R/opt/pbs is PBS_EXEC) that ``tests/openpbs/build
    --where`` prints (``--version VERSION`` with ``version``, e.g. "22.05.11"; else the
    default release), or None when there is no build."""
    argv = [str(BUILD_SCRIPT)] + (["--version", version] if version else []) + ["--where"]
    where = subprocess.run(argv, capture_output=True, text=True, check=False)
    return Path(where.stdout.strip()) if where.returncode == 0 and where.stdout.strip() else None


def hook_environment(pbs_exec, workdir):
    """The environment of ``pbs_python --hook`` runs in ``workdir`` (a Path): writes
    ``workdir/pbs.conf`` naming ``pbs_exec`` and a scratch ``workdir/pbs_home``; returns
    os.environ without PYTHONPATH, PYTHONHOME and PBS_HOOK_CONFIG_FILE, plus PBS_CONF_FILE
    and LD_LIBRARY_PATH. PBS_SERVER must resolve: pbs_python exits 255 without a word
    otherwise, hence ``localhost``."""
    home = workdir / "pbs_home"
    home.mkdir(parents=True, exist_ok=True)
    conf = workdir / "pbs.conf"
    conf.write_text("PBS_EXEC=%s\nPBS_HOME=%s\nPBS_SERVER=localhost\nPBS_START_SERVER=0\n"
                    "PBS_START_MOM=0\nPBS_START_SCHED=0\nPBS_START_COMM=0\n" % (pbs_exec, home))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PBS_HOOK_CONFIG_FILE")}
    env.update(PBS_CONF_FILE=str(conf), LD_LIBRARY_PATH=str(Path(pbs_exec) / "lib"))
    return env


def hook_command(pbs_exec, hook_path, input_path, output_path, log_path):
    """The argv of one ``pbs_python --hook`` run (paths as str or Path)."""
    return [str(Path(pbs_exec) / "bin" / "pbs_python"), "--hook", "-i", str(input_path), "-o", str(output_path),
            "-l", str(log_path), str(hook_path)]
