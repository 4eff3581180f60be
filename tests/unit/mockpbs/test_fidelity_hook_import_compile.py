"""``qmgr import hook <name> application/x-python ...`` of a body that does not compile:
the server refuses it and keeps the old body (OpenPBS mgr_hook_import: "Failed to compile
script", with ", hook '<name>' contents not overwritten" when the hook had a body)."""
from mockpbs.cli import qmgr
from mockpbs.testing import server as testing

GOOD_BODY = "import pbs\npbs.event().accept()\n"
BAD_BODY = "import pbs\ndef broken(:\n"


def _qmgr(line):
    return testing.run_cli(qmgr.main, ["-c", line])


def _import(tmp_path, name, body):
    path = tmp_path / ("%s.py" % name)
    path.write_text(body)
    return _qmgr("import hook %s application/x-python default %s" % (name, path))


def test_bad_body_over_a_good_one_is_refused_and_the_old_body_kept(server, tmp_path):
    assert _qmgr("create hook qj event=queuejob")[0] == 0
    assert _import(tmp_path, "qj", GOOD_BODY)[0] == 0
    rc, out, err = _import(tmp_path, "qj", BAD_BODY)
    assert (rc, out) == (32, "")
    assert err == ("qmgr obj=qj svr=default: Failed to compile script, hook 'qj' contents not overwritten\n"
                   "qmgr: hook error returned from server\n")
    assert server.core.state.read_hook_file("qj", "PY") == GOOD_BODY
    with open(server.core.log.path()) as handle:
        log = handle.read()
    hook_lines = [line.split(";", 4)[4] for line in log.splitlines() if ";Hook;" in line]
    # the request is logged before the body is compiled, as a real server does
    assert hook_lines[-2:] == ["qj;mgr_hook_import at request of root@vm",
                               "mgr_hook_import;Failed to compile script, hook 'qj' contents not overwritten"]


def test_bad_first_body_is_refused_without_the_overwrite_words(server, tmp_path):
    assert _qmgr("create hook qj event=queuejob")[0] == 0
    rc, _unused, err = _import(tmp_path, "qj", BAD_BODY)
    assert rc == 32
    assert err == "qmgr obj=qj svr=default: Failed to compile script\nqmgr: hook error returned from server\n"
    assert server.core.state.read_hook_file("qj", "PY") is None


def test_bad_config_file_is_not_compiled(server, tmp_path):
    assert _qmgr("create hook qj event=queuejob")[0] == 0
    path = tmp_path / "qj.json"
    path.write_text("def broken(:\n")
    assert _qmgr("import hook qj application/x-config default %s" % path)[0] == 0
