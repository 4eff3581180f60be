"""``set hook NAME user = ...`` on the mock server as set_hook_user (OpenPBS
src/lib/Libutil/hook.c) allows it: pbsadmin always; pbsuser only for a hook with an
execjob_prologue, execjob_epilogue or execjob_preterm event; never anything else on a
server ``periodic`` hook; the hook keeps its user when refused."""
from mockpbs.cli import qmgr
from mockpbs.testing import server as testing


def run(command):
    return testing.run_cli(qmgr.main, ["-c", command])


def refused(command):
    rc, out, err = run(command)
    assert rc != 0 and out == "", (rc, out, err)
    return err.splitlines()[0]


def test_pbsuser_needs_one_of_the_user_mom_events(server):
    assert run("create hook h1 event=execjob_begin")[0] == 0
    assert refused("set hook h1 user = pbsuser") == (
        "qmgr obj=h1 svr=default: Can't set hook user value to 'pbsuser': hook event must contain "
        "at least execjob_prologue,execjob_epilogue,execjob_preterm")
    assert run("list hook h1 user") == (0, "Hook h1\n    user = pbsadmin\n\n", "")
    assert run("set hook h1 event = execjob_epilogue")[0] == 0
    assert run("set hook h1 user = pbsuser")[0] == 0
    assert run("list hook h1 user") == (0, "Hook h1\n    user = pbsuser\n\n", "")
    assert run("set hook h1 user = pbsadmin")[0] == 0


def test_only_the_two_users_and_only_pbsadmin_on_a_server_periodic_hook(server):
    assert run("create hook h2 event=execjob_prologue")[0] == 0
    assert refused("set hook h2 user = root") == "qmgr obj=h2 svr=default: user value of a hook must be pbsadmin,pbsuser"
    assert run("create hook h3 event=periodic")[0] == 0
    assert refused("set hook h3 user = pbsuser") == \
        "qmgr obj=h3 svr=default: user value of a server periodic hook must be pbsadmin"
    assert run("set hook h3 user = pbsadmin")[0] == 0
