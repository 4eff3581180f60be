"""module_utils.hooks: reading a hooks directory (server_priv/hooks, mom_priv/hooks) and the
enabled hooks' alarms of an event (PP-928 interfaces 3 and 4)."""
from ansible_collections.hpc.pbs.plugins.module_utils.cluster import effective_timeouts
from ansible_collections.hpc.pbs.plugins.module_utils.hooks import hooks


def write_hook(directory, name, hk_text, body=b"import pbs\n"):
    (directory / (name + ".HK")).write_bytes(hk_text)
    (directory / (name + ".PY")).write_bytes(body)


def test_every_hk_file_of_a_directory_is_read_whatever_lies_between(tmp_path):
    # A hooks directory holds NAME.HK, NAME.PY and NAME.CF of each hook: a.PY sorts before b.HK.
    write_hook(tmp_path, "a", b"hook_name=a\nevent=execjob_begin\n")
    (tmp_path / "a.CF").write_bytes(b"{}")
    write_hook(tmp_path, "b", b"hook_name=b\nevent=execjob_prologue\n")
    assert sorted(hooks.read_hook_dir(str(tmp_path))) == ["a", "b"]


def test_an_unreadable_hk_file_is_skipped_and_the_next_ones_read(tmp_path):
    write_hook(tmp_path, "a", b"hook_name=a\nevent=\xff\xfe\n")       # not UTF-8
    write_hook(tmp_path, "b", b"hook_name=b\nevent=execjob_begin\nalarm=45\n")
    found = hooks.read_hook_dir(str(tmp_path))
    assert list(found) == ["b"] and found["b"]["alarm"] == "45"


def test_a_disabled_hook_does_not_hide_the_enabled_ones_after_it():
    listed = {"a": {"enabled": "false", "event": "execjob_begin", "alarm": "10"},
              "b": {"enabled": "true", "event": "execjob_begin", "alarm": "45"}}
    assert effective_timeouts.enabled_alarms(listed, "execjob_begin") == [("b", 45)]


def test_an_alarm_that_is_not_a_number_counts_as_pbs_default_30_s():
    listed = {"a": {"enabled": "true", "event": "execjob_begin,execjob_end", "alarm": "soon"}}
    assert effective_timeouts.enabled_alarms(listed, "execjob_begin") == [("a", 30)]
