"""The pure parts of tests/benchmark/bench_user.py (site.yml against ping, run the way a
user runs the installed collection): the modes' command lines and settings, the rotation
and the figures."""
import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tests", "benchmark"))
import bench_user  # noqa: E402


def test_mode_order_rotates():
    modes = ("a", "b", "c")
    assert [bench_user.mode_order(n, modes)[0] for n in range(4)] == ["a", "b", "c", "a"]


def test_mode_list_and_int_list_refuse_unknown_values():
    assert bench_user.mode_list("user, checkout") == ["user", "checkout"]
    for bad in ("user,nope", ""):
        with pytest.raises(Exception, match="modes are"):
            bench_user.mode_list(bad)
    assert bench_user.int_list("8,32") == [8, 32]
    for bad in ("0", "x", ""):
        with pytest.raises(Exception, match="numbers >= 1"):
            bench_user.int_list(bad)


@pytest.fixture
def modes(tmp_path, monkeypatch):
    monkeypatch.setenv("ANSIBLE_CONFIG", "/somewhere/ansible.cfg")
    monkeypatch.setenv("ANSIBLE_PIPELINING", "True")
    return bench_user.Modes(str(tmp_path), "/inv.ini", "/c/user")


def test_user_mode_runs_the_installed_playbook_with_no_ansible_settings_of_its_own(modes):
    argv, env, cwd = modes.command("user", "site")
    assert argv[1:] == ["-i", "/inv.ini", "hpc.pbs.site", "-f", "10"]
    assert env["ANSIBLE_COLLECTIONS_PATH"] == "/c/user"
    assert "ANSIBLE_CONFIG" not in env and "ANSIBLE_PIPELINING" not in env
    assert os.listdir(cwd) == []  # no ansible.cfg where the user runs it
    ping, _env, _cwd = modes.command("user", "ping")
    assert ping[1:] == ["-i", "/inv.ini", "all", "-m", "ansible.builtin.ping", "-f", "10"]


def test_variants_change_one_thing_each(modes):
    assert modes.command("user-pipelining", "site")[1]["ANSIBLE_PIPELINING"] == "True"
    assert modes.command("user-pipelining", "ping")[1]["ANSIBLE_PIPELINING"] == "True"
    argv, env, _cwd = modes.command("user-no-play-pipelining", "site")
    assert argv[-2:] == ["-e", "hpc_pbs_pipelining=false"] and env["ANSIBLE_COLLECTIONS_PATH"] == "/c/user"
    assert modes.command("user-no-play-pipelining", "ping")[0] == modes.command("user", "ping")[0]
    argv, env, cwd = modes.command("checkout", "site")
    assert argv[-1] == os.path.join(REPO, "playbooks", "site.yml") and "-f" not in argv
    assert env["ANSIBLE_CONFIG"] == os.path.join(REPO, "ansible.cfg") and cwd == REPO
    assert modes.control_dir("checkout") is None and modes.control_dir("user-fresh-cp") is None
    kept = modes.control_dir("user")
    assert kept and modes.control_dir("user") == kept != modes.control_dir("user-pipelining")


def test_summarize_medians_and_paired_ratios():
    rounds = [{"user": {"site": 6.0, "ping": 4.0, "changed": 0, "site_cpu": 4.0, "ping_cpu": 2.0},
               "checkout": {"site": 5.0, "ping": 4.0, "changed": 0}},
              {"user": {"site": 9.0, "ping": 5.0, "changed": 1, "site_cpu": 5.0, "ping_cpu": 2.5},
               "checkout": {"site": 5.0, "ping": 5.0, "changed": 0}},
              {"user": {"site": 6.6, "ping": 4.4, "changed": 0, "site_cpu": 3.0, "ping_cpu": 3.0},
               "checkout": {"site": 5.5, "ping": 5.0, "changed": 0}}]
    figures = bench_user.summarize(rounds, ["user", "checkout"])
    assert figures["user"]["site_median"] == 6.6 and figures["user"]["ping_median"] == 4.4
    assert figures["user"]["ratio"] == pytest.approx(1.5)
    assert figures["user"]["paired"] == pytest.approx(1.5)  # 1.5, 1.8, 1.5
    assert figures["user"]["changed"] == 1
    assert figures["checkout"]["paired"] == pytest.approx(1.1)
    assert figures["user"]["cpu_ratio"] == pytest.approx(4.0 / 2.5)
    assert figures["checkout"]["cpu_ratio"] is None
    text = bench_user.markdown({"machine": "m", "date": "d", "ansible_core": "2.19", "command": "c",
                                "sizes": [{"moms": 8, "backend": "mock", "error": None, "figures": figures,
                                           "ssh_executions": {"user": {"site": 40, "ping": 27}}}]})
    assert "| user | 6.60 | 4.40 | 1.50 | 1.50 | 1.60 | 6.00, 9.00, 6.60 | 4.00, 5.00, 4.40 | 40 / 27 | 1 |" in text
    assert "| checkout | 5.00 | 5.00 | 1.00 | 1.10 | - |" in text


def test_exec_line_counts_one_remote_execution_per_ssh_exec_line():
    output = ("<127.0.7.11> ESTABLISH SSH CONNECTION FOR USER: root\n"
              "<127.0.7.11> SSH: EXEC ssh -C -o ControlMaster=auto 127.0.7.11 '/bin/sh -c ...'\n"
              "<127.0.7.12> SSH: EXEC sftp -b - -C 127.0.7.12\n"
              "ok: [mom1] SSH: EXEC in a message\n")
    assert len(bench_user.EXEC_LINE.findall(output)) == 2
