"""The bundled cgroup_resize hook (files/hooks/cgroup_resize.py): what the other tests leave
unchecked. Its built-in defaults (the other tests give the hook the full bundled config file),
PBS sizes in every unit, where a vnode's host comes from when the event's vnode_list or the
job's exec_host lacks it, the failure texts of a bad config or mount table, the hook's own name
in its rejections, the walk up to the mom through /proc/<pid>/stat (proc(5)) and the
kill_timeout wait.

Most tests load the hook file in-process as a module, with a stand-in ``pbs`` module (the
hook calls ``main()`` only when run by pbs_python, as ``builtins``); the whole-event ones run
it through :mod:`mockpbs.harness` as the other cgroup_resize tests do.
"""
import errno
import io
import types
from pathlib import Path

import pytest

from mockpbs.harness import run_hook

REPO = Path(__file__).resolve().parents[3]
HOOK_FILE = REPO / "files" / "hooks" / "cgroup_resize.py"
KB = 1024


@pytest.fixture
def hook(load_hook):
    """The hook file as a module, importing a minimal stand-in ``pbs`` (conftest.py)."""
    return load_hook(HOOK_FILE)


# ---------------------------------------------------------------- config
def test_an_empty_config_gives_the_documented_defaults(hook):
    assert hook.check_config({}) == {"root": "/sys/fs/cgroup", "prefix": "pbs_jobs",
                                     "mounts_file": "/proc/self/mounts", "exclude_cpus": [],
                                     "kill_timeout": 10}


@pytest.mark.parametrize("timeout", [0, 0.5])
def test_a_kill_timeout_of_zero_or_under_a_second_is_valid(hook, timeout):
    # cgroup_resize.schema.json: "type": "number", "minimum": 0.
    assert hook.check_config({"kill_timeout": timeout})["kill_timeout"] == timeout


@pytest.mark.parametrize("config, kind", [([], "list"), ("x", "str"), (3, "int")])
def test_a_config_that_is_not_an_object_is_refused_naming_its_type(hook, config, kind):
    with pytest.raises(hook.ConfigError, match="the config must be a JSON object, not %s$" % kind):
        hook.check_config(config)


def test_an_unreadable_config_file_is_refused_naming_it(hook, tmp_path):
    missing = tmp_path / "cgroup_resize.CF"
    hook.pbs.hook_config_filename = str(missing)
    with pytest.raises(hook.ConfigError, match="cannot read config file %s: " % missing):
        hook.load_config()


def test_a_missing_mount_table_is_reported_naming_it(hook, tmp_path):
    missing = tmp_path / "mounts"
    config = hook.check_config({"root": str(tmp_path), "mounts_file": str(missing)})
    with pytest.raises(hook.CgroupError, match="cannot read the mount table %s: " % missing):
        hook.Hierarchy(config)


# ---------------------------------------------------------------- sizes
@pytest.mark.parametrize("text, size", [
    ("100", 100), ("100b", 100), ("3kb", 3 * KB), ("3mb", 3 * KB ** 2), ("3gb", 3 * KB ** 3),
    ("3tb", 3 * KB ** 4), ("3pb", 3 * KB ** 5), ("2w", 16), ("2kw", 2 * KB * 8), ("1TB", KB ** 4),
])
def test_pbs_sizes_in_bytes(hook, text, size):
    # PBS sizes: b/w suffix, k m g t p factors of 1024, a word of 8 bytes on 64-bit hosts.
    assert hook.size_to_bytes(text) == size


@pytest.mark.parametrize("text", ["1xb", "", "gb", "-1kb"])
def test_an_illegal_size_is_a_value_error_naming_it(hook, text):
    with pytest.raises(ValueError, match="illegal size %r" % text):
        hook.size_to_bytes(text)


# ---------------------------------------------------------------- hosts of vnodes
class Vnode:
    def __init__(self, host):
        self.resources_available = {"host": host}


def event_of(exec_vnode, exec_host=None, vnode_list=None):
    job = types.SimpleNamespace(id="7.pbs-server", exec_vnode=exec_vnode, exec_host=exec_host)
    return types.SimpleNamespace(job=job, vnode_list=vnode_list or {})


def test_a_vnodes_host_resource_places_it_when_the_job_has_no_exec_host(hook):
    event = event_of("(vn-a:ncpus=2:mem=1gb)+(vn-b:ncpus=3)",
                     vnode_list={"vn-a": Vnode("n2"), "vn-b": Vnode("n3")})
    assert hook.local_assignment(event, "n2") == {"ncpus": 2, "mem": KB ** 3, "vnodes": ["vn-a"]}
    assert hook.local_assignment(event, "n3.example.com") == {"ncpus": 3, "mem": None, "vnodes": ["vn-b"]}


def test_without_vnode_list_the_chunks_exec_host_entry_places_it(hook):
    event = event_of("(vn-a:ncpus=2)+(vn-b:ncpus=1+vn-c:ncpus=1)", exec_host="n1/0*2+n2/0*2")
    assert hook.local_assignment(event, "n2") == {"ncpus": 2, "mem": None, "vnodes": ["vn-b", "vn-c"]}
    assert hook.local_assignment(event, "n1") == {"ncpus": 2, "mem": None, "vnodes": ["vn-a"]}


def test_without_either_a_vnode_name_without_its_index_is_the_host(hook):
    event = event_of("(n2[0]:ncpus=1+n2[1]:ncpus=1)+(n3:ncpus=4)")
    assert hook.local_assignment(event, "n2") == {"ncpus": 2, "mem": None, "vnodes": ["n2[0]", "n2[1]"]}
    assert hook.local_assignment(event, "n3")["ncpus"] == 4


def test_a_resize_that_would_empty_the_cpuset_names_the_vnodes_kept(tmp_path):
    """A host left with only memory after release_nodes() keeps its cpuset until execjob_end;
    the rejection names the vnodes the job still has there."""
    root = tmp_path / "cgroup"
    root.mkdir()
    (root / "cgroup.subtree_control").write_text("")
    (root / "cgroup.procs").write_text("")
    (root / "cpuset.cpus.effective").write_text("0-3\n")
    (root / "cpuset.mems.effective").write_text("0\n")
    mounts = tmp_path / "mounts"
    mounts.write_text("cgroup2 %s cgroup2 rw 0 0\n" % root)
    config = {"root": str(root), "mounts_file": str(mounts)}
    source = HOOK_FILE.read_text()
    job = {"id": "7.pbs-server", "exec_vnode": "(n1:ncpus=1)+(n2:ncpus=2:mem=1gb)",
           "exec_host": "n1/0+n2/0*2", "tolerate_node_failures": "job_start"}
    begun = run_hook(source, event="execjob_begin", job=job, local_host="n2", hook_config=config,
                     hook_name="site_cgroups")
    assert begun.accepted, begun.reject_message
    job.update(exec_vnode="(n1:ncpus=1)+(n2:mem=1gb)", exec_host="n1/0+n2/0")
    result = run_hook(source, event="execjob_resize", job=job, local_host="n2", hook_config=config,
                      hook_name="site_cgroups")
    assert result.exception is None, result.exception
    assert not result.accepted
    # The hook's own name, as pbs.event().hook_name gives it, starts the message.
    assert result.reject_message.startswith("site_cgroups: job 7.pbs-server on n2: ")
    assert result.reject_message.endswith("while it still has vnodes n2")


# ---------------------------------------------------------------- the mom's lineage
def test_a_process_name_holding_a_parenthesis_does_not_stop_the_walk_to_the_mom(hook, monkeypatch):
    # proc(5): the comm field of /proc/<pid>/stat is in parentheses and may itself hold ") ";
    # the fields after it start after the last ")".
    stats = {40: "40 (pbs_python) S 30 40 1 0",
             30: "30 (mom) wrapper) S 20 30 1 0",
             20: "20 (pbs_mom) S 1 20 1 0",
             1: "1 (systemd) S 0 1 1 0"}

    def fake_open(path, *args, **kwargs):
        pid = int(path.split("/")[2])
        if pid not in stats:
            raise IOError(errno.ENOENT, "No such file or directory")
        return io.StringIO(stats[pid])

    monkeypatch.setattr(hook.os, "getpid", lambda: 40)
    monkeypatch.setattr(hook, "open", fake_open, raising=False)
    assert {40, 30, 20} <= hook.own_lineage()


# ---------------------------------------------------------------- kill_timeout
@pytest.mark.parametrize("timeout", [0.3, 0.5])
def test_a_busy_cgroup_is_given_up_once_kill_timeout_has_passed(hook, monkeypatch, tmp_path, timeout):
    """The kernel refuses rmdir with EBUSY while a process is in a cgroup: removal fails
    once kill_timeout seconds have passed, not much later."""
    clock = [1000.0]
    monkeypatch.setattr(hook.time, "time", lambda: clock[0])

    def sleep(seconds):
        clock[0] += seconds
        assert clock[0] - 1000.0 < 100 * (timeout + 1), "still polling long after kill_timeout"

    monkeypatch.setattr(hook.time, "sleep", sleep)

    def busy(path):
        raise OSError(errno.EBUSY, "Device or resource busy")

    monkeypatch.setattr(hook.os, "rmdir", busy)
    directory = tmp_path / "7.pbs-server"
    directory.mkdir()
    with pytest.raises(hook.CgroupError, match="cannot remove cgroup %s: " % directory):
        hook.Hierarchy._remove_tree(None, str(directory), clock[0] + timeout)
    assert timeout <= clock[0] - 1000.0 <= timeout + 0.2
