"""The mock's qmgr/qsub/qstat output compared with the blocks of the real OpenPBS
transcripts in tests/reference/openpbs (host name ``vm``, PBS_HOME
``/var/spool/pbs``; the temporary PBS_HOME is substituted back before comparing)."""
import os
import re

import pytest

from mockpbs.cli import qmgr, qsub, qstat
from mockpbs.server import shipped_hooks
from mockpbs.testing import server as testing

REFERENCE = testing.REFERENCE_DIR


blocks = testing.transcript_blocks


def block(name, command, index=0):
    found = [b for b in blocks(name) if b[0] == command]
    return found[index]


qmgr_c = testing.transcript_qmgr_argument


run_qmgr = testing.run_qmgr_as_in_transcript


def assert_block(server, transcript, command, index=0):
    _unused, out, err, rc = block(transcript, command, index)
    got = run_qmgr(server, qmgr_c(command))
    assert got == (rc, out, err)


@pytest.mark.parametrize("command", [
    'qmgr -c "list server"', 'qmgr -c "print server"', 'qmgr -c "list sched"', 'qmgr -c "print sched"',
    'qmgr -c "list hook"', 'qmgr -c "list pbshook"', 'qmgr -c "print pbshook"',
    'qmgr -c "list sched default"', 'qmgr -c "print queue workq"',
])
def test_fresh_server_listings_match_transcript_a(server, command):
    assert_block(server, "a_qmgr_server_sched_hook_listing.txt", command)


def test_site_hook_lifecycle_matches_transcript_b(server, tmp_path):
    body = tmp_path / "x.py"
    body.write_text('import pbs\ne = pbs.event()\npbs.logmsg(pbs.LOG_DEBUG, "h1 trivial hook ran for event type %s" % e.type)\ne.accept()\n')
    config = tmp_path / "x.json"
    config.write_text('{"alpha": 1, "beta": ["a", "b"], "gamma": {"x": true}}\n')
    bad = tmp_path / "x_bad.json"
    bad.write_text('{"alpha": 1, "beta": [ "a", "b" , }\n')
    (tmp_path / "x.yaml").write_text("alpha: 1\n")
    (tmp_path / "x.json.b64").write_text("eyJhbHBoYSI6IDEsICJiZXRhIjogWyJhIiwgImIiXSwgImdhbW1hIjogeyJ4IjogdHJ1ZX19Cg==\n")
    seen = {}
    for command, out, err, rc in blocks("b_site_hook_lifecycle.txt"):
        if not command.startswith('qmgr -c "'):
            continue
        line = qmgr_c(command)
        if "does_not_exist" in line:
            continue
        line = line.replace("/root/x.yaml", str(tmp_path / "x.yaml")).replace(
            "/root/x.json.b64", str(tmp_path / "x.json.b64")).replace("/root/x_bad.json", str(bad)).replace(
            "/root/x.json", str(config)).replace("/root/x.py", str(body))
        got = run_qmgr(server, line)
        seen[command] = seen.get(command, 0) + 1
        assert got == (rc, out, err), "%s (occurrence %d)" % (command, seen[command])
    assert sum(seen.values()) == 85


def test_missing_import_file_is_reported_by_the_client(server):
    rc, out, err = run_qmgr(server, "import hook pbs_cgroups application/x-python default /root/does_not_exist.py")
    assert (rc, out, err) == (1, "", "/root/does_not_exist.py - No such file or directory\n")


def test_pbshook_rules_match_transcript_b_cray_atom(server, tmp_path):
    atom = tmp_path / "cray_atom.json"
    atom.write_text('{"post_timeout": 45, "delete_timeout": 45, "unix_socket_file": "/var/run/atomd/atomd.sock"}\n')
    body = tmp_path / "x.py"
    body.write_text("import pbs\n")
    (tmp_path / "x.json").write_text('{"alpha": 1}\n')
    (tmp_path / "x_bad.json").write_text('{"alpha": 1, "beta": [ "a", "b" , }\n')
    shipped = tmp_path / "PBS_cray_atom.CF"
    shipped.write_text(shipped_hooks.PBS_CRAY_ATOM_CF)
    checked = 0
    for command, out, err, rc in blocks("b_pbshook_cray_atom_and_cgroups.txt"):
        if not command.startswith('qmgr -c "') or "|" in command:
            continue
        line = qmgr_c(command).replace("/root/cray_atom.json", str(atom)).replace("/root/x.py", str(body))
        line = line.replace("/opt/pbs/lib/python/altair/pbs_hooks/PBS_cray_atom.CF", str(shipped))
        line = line.replace("/root/", str(tmp_path) + "/")
        assert run_qmgr(server, line) == (rc, out, err), command
        checked += 1
    assert checked == 40


def test_pbshook_hk_file_after_changes_matches_transcript_b(server):
    for line in ("set pbshook PBS_cray_atom enabled=true", "set pbshook PBS_cray_atom alarm=100",
                 "set pbshook PBS_cray_atom order=5", "set pbshook PBS_cray_atom event=execjob_begin",
                 "set pbshook PBS_cray_atom fail_action=none", "set pbshook PBS_cray_atom enabled=false"):
        assert run_qmgr(server, line)[0] == 0
    path = server.core.state.hook_path("PBS_cray_atom", "HK")
    expected = block("b_pbshook_cray_atom_and_cgroups.txt",
                     "cat /var/spool/pbs/server_priv/hooks/PBS_cray_atom.HK; echo; "
                     "cat /var/spool/pbs/server_priv/hooks/PBS_cray_atom.CF")[1].split("\n\n")[0] + "\n"
    assert open(path).read() == expected
    assert oct(os.stat(path).st_mode & 0o777) == "0o644"


def test_shipped_and_site_hook_files_match_transcript_c(server, tmp_path):
    listing = block("c_hooks_on_disk.txt",
                    "for f in /var/spool/pbs/server_priv/hooks/*.HK; do echo \"### $f\"; cat $f; echo; done")[1]
    expected = dict(re.findall(r"### /var/spool/pbs/server_priv/hooks/(\S+)\.HK\n(.*?)\n(?=###|$)", listing, re.S))
    for line in ("create hook h1 event=queuejob", "set hook h1 event = 'queuejob,execjob_prologue'",
                 "set hook h1 alarm=45", "set hook h1 order=5", "set hook h1 fail_action=offline_vnodes",
                 "set hook h1 user=pbsuser"):
        assert run_qmgr(server, line)[0] == 0
    for name, text in expected.items():
        assert open(server.core.state.hook_path(name, "HK")).read() == text.rstrip("\n") + "\n", name


@pytest.mark.parametrize("command", [
    'qmgr -c "set server comment = hello world"', 'qmgr -c "set server no_such_attr = 1"',
    'qmgr -c "set server scheduler_iteration = abc"', 'qmgr -c "create queue workq"',
    'qmgr -c "list queue nosuchq"',
])
def test_qmgr_errors_match_transcript_k(server, command):
    assert_block(server, "k_qmgr_quoting_and_formats.txt", command)


def test_qmgr_quoting_sequence_matches_transcript_k(server):
    compared = 0
    for command, out, err, rc in blocks("k_qmgr_quoting_and_formats.txt"):
        if not command.startswith('qmgr -c "') or '" -c' in command or "|" in command or ";" in command:
            continue
        line = qmgr_c(command).replace('\\\\"', '\\"')
        assert run_qmgr(server, line) == (rc, out, err), command
        compared += 1
    assert compared == 24


def test_stdin_mode_and_last_c_wins_match_transcript_k(server):
    _unused, out, err, rc = block("k_qmgr_quoting_and_formats.txt",
                                  'printf "list server default_queue\\nlist sched default job_run_wait\\n" | qmgr')
    got = testing.run_cli(qmgr.main, [], stdin="list server default_queue\nlist sched default job_run_wait\n")
    assert got == (rc, out, err)
    _unused, out, err, rc = block("k_qmgr_quoting_and_formats.txt", 'qmgr -c "list server default_queue" -c "list sched"')
    rc2, out2, err2 = testing.run_cli(qmgr.main, ["-c", "list server default_queue", "-c", "list sched"])
    home = server.core.state.pbs_home
    assert (rc2, out2.replace(home, "/var/spool/pbs"), err2) == (rc, out, err)


def test_default_qsub_arguments_listing_matches_transcript_d(server):
    compared = 0
    for command, out, err, rc in blocks("d_default_qsub_arguments_tolerate_node_failures.txt"):
        if not command.startswith('qmgr -c "') or "|" in command or ";" in command:
            continue
        assert run_qmgr(server, qmgr_c(command)) == (rc, out, err), command
        compared += 1
    assert compared == 24
    run_qmgr(server, "set server default_qsub_arguments = '-W tolerate_node_failures=job_start'")
    print_lines = run_qmgr(server, "print server")[1].splitlines()
    assert print_lines[26] == 'set server default_qsub_arguments = "-W tolerate_node_failures=job_start"'


def test_qsub_illegal_w_value_matches_transcript_d(server):
    _unused, out, err, rc = block("d_default_qsub_arguments_tolerate_node_failures.txt",
                                  "su - pbsuser -c 'qsub -W tolerate_node_failures=bogus -- /bin/sleep 5'")
    assert testing.run_cli(qsub.main, ["-W", "tolerate_node_failures=bogus", "--", "/bin/sleep", "5"]) == (rc, out, err)


def test_server_default_qsub_arguments_reach_the_job_as_in_transcript_d(server):
    run_qmgr(server, "set server default_qsub_arguments = '-W tolerate_node_failures=job_start'")
    rc, out, _unused = testing.run_cli(qsub.main, ["--", "/bin/sleep", "1"])
    assert rc == 0
    _unused, full, _unused = testing.run_cli(qstat.main, ["-f", out.strip()])
    expected = block("d_default_qsub_arguments_tolerate_node_failures.txt",
                     "qstat -f 10.vm | grep -E 'tolerate_node_failures|Submit_arguments'")[1]
    assert "".join(l + "\n" for l in full.splitlines() if re.search("tolerate_node_failures|Submit_arguments", l)) == expected


def test_qstat_full_attribute_order_matches_transcript_d(server):
    rc, out, _unused = testing.run_cli(qsub.main, ["-W", "tolerate_node_failures=all", "--", "/bin/sleep", "30"])
    _unused, full, _unused = testing.run_cli(qstat.main, ["-f", out.strip()])
    reference = block("d_default_qsub_arguments_tolerate_node_failures.txt", "qstat -f 1.vm")[1]

    def names(text):
        return re.findall(r"^    (\S+) = ", text, re.M)
    mine = names(full)
    # the mock's job is still queued: keep the transcript's order for the attributes both show
    assert [n for n in names(reference) if n in mine] == [n for n in mine if n in names(reference)]
    assert {"Job_Name", "Resource_List.select", "Variable_List", "tolerate_node_failures"} <= set(mine)


def test_qstat_wrapping_reproduces_transcript_d_variable_list():
    reference = block("d_default_qsub_arguments_tolerate_node_failures.txt", "qstat -f 1.vm")[1]
    text = re.search(r"(    Variable_List = .*?\n)(?=    euser)", reference, re.S).group(1)
    value = text[len("    Variable_List = "):].replace("\n\t", "").rstrip("\n")
    assert qstat.format_attr("Variable_List", value) == text


def test_qstat_history_message_and_server_table_match_00_smoke(server):
    _unused, out, err, rc = block("00_smoke.txt", "qstat -x")
    assert testing.run_cli(qstat.main, ["-x"]) == (rc, out, err)
    _unused, out, err, rc = block("00_smoke.txt", "qstat -B")
    assert testing.run_cli(qstat.main, ["-B"]) == (rc, out, err)


def test_version_option_matches_transcript_i():
    for main in (qmgr.main, qstat.main, qsub.main):
        assert testing.run_cli(main, ["--version"]) == (0, "pbs_version = 23.06.06\n", "")
