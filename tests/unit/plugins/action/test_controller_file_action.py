"""The hpc.pbs.controller_file action plugin: a text file written on the controller, atomically,
without a connection or a module run."""
import os
import stat
from unittest import mock

import pytest
from ansible.errors import AnsibleActionFail

from ansible_collections.hpc.pbs.plugins.action import controller_file


def run_action(args, check_mode=False, diff=False):
    task = mock.MagicMock(args=args, action="hpc.pbs.controller_file", async_val=0,
                          check_mode=check_mode, diff=diff)
    connection = mock.MagicMock()
    action = controller_file.ActionModule(task, connection, mock.MagicMock(), mock.MagicMock(),
                                          mock.MagicMock(), mock.MagicMock())
    result = action.run(task_vars={})
    assert connection.method_calls == [] and connection.exec_command.call_count == 0
    return result


def mode_of(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def leftovers(directory):
    return sorted(name for name in os.listdir(directory) if name.startswith("."))


def test_a_new_file_is_written_with_its_mode_and_no_temporary_file_is_left(tmp_path):
    path = tmp_path / "report.json"
    result = run_action({"path": str(path), "content": "{\"a\": 1}\n", "mode": "0640"})
    assert result["changed"] is True and result["path"] == str(path) and result["mode"] == "0640"
    assert path.read_text() == "{\"a\": 1}\n" and mode_of(path) == 0o640
    assert leftovers(tmp_path) == []


def test_the_same_content_and_mode_change_nothing_and_keep_the_file(tmp_path):
    path = tmp_path / "report.json"
    path.write_text("same\n")
    path.chmod(0o644)
    inode = os.stat(path).st_ino
    result = run_action({"path": str(path), "content": "same\n"})
    assert result["changed"] is False and os.stat(path).st_ino == inode


def test_new_content_replaces_the_file_by_a_rename(tmp_path):
    path = tmp_path / "report.json"
    path.write_text("old\n")
    path.chmod(0o600)
    reader = open(path)
    result = run_action({"path": str(path), "content": "new\n", "mode": 0o644})
    assert result["changed"] is True and path.read_text() == "new\n" and mode_of(path) == 0o644
    assert reader.read() == "old\n", "an open reader keeps the whole old file"
    reader.close()


def test_only_the_mode_differing_sets_the_mode(tmp_path):
    path = tmp_path / "report.json"
    path.write_text("same\n")
    path.chmod(0o600)
    inode = os.stat(path).st_ino
    result = run_action({"path": str(path), "content": "same\n", "mode": "644"}, diff=True)
    assert result["changed"] is True and mode_of(path) == 0o644 and os.stat(path).st_ino == inode
    assert result["diff"]["before"] == "mode 0600\n" and result["diff"]["after"] == "mode 0644\n"


def test_check_mode_writes_nothing_and_says_what_would_change(tmp_path):
    path = tmp_path / "report.json"
    path.write_text("old\n")
    result = run_action({"path": str(path), "content": "new\n"}, check_mode=True, diff=True)
    assert result["changed"] is True and path.read_text() == "old\n"
    assert result["diff"]["before"] == "old\n" and result["diff"]["after"] == "new\n"
    assert leftovers(tmp_path) == []


def test_a_relative_path_is_taken_from_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run_action({"path": "out.txt", "content": "x"})
    assert result["path"] == str(tmp_path / "out.txt") and (tmp_path / "out.txt").read_text() == "x"


@pytest.mark.parametrize("mode", ["rw-r--r--", "0999", 0o10000, -1, True, ""])
def test_a_bad_mode_is_refused_naming_the_option_and_writes_nothing(tmp_path, mode):
    path = tmp_path / "report.json"
    with pytest.raises(AnsibleActionFail, match=r"mode: .* accepted: an octal string such as '0644'"):
        run_action({"path": str(path), "content": "x", "mode": mode})
    assert os.listdir(tmp_path) == []


def test_a_missing_directory_fails_naming_the_path(tmp_path):
    path = tmp_path / "missing" / "report.json"
    with pytest.raises(AnsibleActionFail, match="path: cannot write %s on the controller" % path):
        run_action({"path": str(path), "content": "x"})


def test_a_directory_at_the_path_is_refused(tmp_path):
    with pytest.raises(AnsibleActionFail, match="is not a regular file"):
        run_action({"path": str(tmp_path), "content": "x"})


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "report.json"
    path.write_text("old\n")

    def failing_replace(src, dst):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(controller_file.os, "replace", failing_replace)
    with pytest.raises(AnsibleActionFail, match="No space left on device"):
        run_action({"path": str(path), "content": "new\n"})
    assert path.read_text() == "old\n" and leftovers(tmp_path) == []


def test_a_missing_option_is_refused_by_the_argument_spec(tmp_path):
    with pytest.raises(AnsibleActionFail, match="content"):
        run_action({"path": str(tmp_path / "x")})
