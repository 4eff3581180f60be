"""The bundled cray_atom hook (files/hooks/cray_atom.py): what the other tests leave unchecked.
Its built-in defaults (the other tests give the hook the bundled config file, which repeats
them), the ``pbs.ND_*`` sharing constants real PBS gives (the emulator gives the qmgr words), a
multi-vnode host (vnodes named ``host[N]``, their host in ``resources_available``), a config
file that cannot be read, the mandatory Python modules, the hook's own name in its messages (or
``cray_atom`` when pbs_python gives none), the request lines of the log, a stale registration's
DELETE answering 200 or an error, and the exception a failed registration ends the hook with.

Most tests run the unchanged hook through :mod:`mockpbs.hookrun` against the mock ATOM
service, as test_cray_atom.py does; the constants, the defaults and the missing modules are
checked by loading the hook file in-process as a module, with a stand-in ``pbs`` module (the
hook calls ``main()`` only when run by pbs_python, as ``builtins``).
"""
import json
import os
import sys
import types

import pytest

from mockpbs.atom import faults
from mockpbs.hookrun import run_hook

# the fixtures and helpers of the hook's own tests (their directory, not on sys.path under
# --import-mode=importlib)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_cray_atom import (EXCLUSIVE_TABLE, HOOK_BODY, ME, PLACES, atomd, context,  # noqa: E402,F401  pylint: disable=unused-import
                            messages, requests_seen, run, workdir)  # atomd, workdir: fixtures

# The vnode sharing constants of OpenPBS's pbs module (module_pbs_v1.c: the values of enum
# vnode_sharing in libutil.h; a vnode's ``sharing`` is a pbs.vnode_sharing, an int).
ND_CONSTANTS = {"default_shared": 1, "default_excl": 2, "ignore_excl": 3, "force_excl": 4,
                "default_exclhost": 5, "force_exclhost": 6}
DOCUMENTED_DEFAULTS = {"post_timeout": 30, "delete_timeout": 30, "unix_socket_file": "/var/run/atomd/atomd.sock",
                       "require_socket": False}


@pytest.fixture
def hook(load_hook):
    """cray_atom.py as a module, importing a stand-in ``pbs`` (conftest.py) with the real
    sharing constants."""
    constants = {"ND_" + name.upper(): value for name, value in ND_CONSTANTS.items()}
    return load_hook(HOOK_BODY, get_local_nodename=lambda: "node1", **constants)


def run_named(workdir, event, ctx, service, name, config=None):
    """Run the hook installed under ``name`` (a site may name it anything not starting with PBS)."""
    config_path = os.path.join(workdir, "hook.CF")
    with open(config_path, "w") as handle:
        handle.write(json.dumps(dict({"unix_socket_file": service.socket_path}, **(config or {}))))
    hook = {"name": name, "body": str(HOOK_BODY), "config": config_path, "alarm": 30, "user": "pbsadmin",
            "debug": False}
    return run_hook(hook, event, ctx, workdir)


def raised(result):
    """The exception the hook ended with, as its traceback's last line says it."""
    assert result["exception"] is not None, result
    return result["exception"].strip().splitlines()[-1]


# ---------------------------------------------------------------- config
def test_no_config_file_and_an_empty_config_give_the_documented_defaults(hook):
    # The design's PBS_cray_atom.CF: post_timeout 30, delete_timeout 30, /var/run/atomd/atomd.sock.
    assert hook.load_config() == DOCUMENTED_DEFAULTS
    assert hook.check_config({}) == DOCUMENTED_DEFAULTS


def test_an_unreadable_config_file_is_a_config_error_naming_it(hook, tmp_path):
    missing = str(tmp_path / "cray_atom.CF")
    hook.pbs.hook_config_filename = missing
    with pytest.raises(hook.ConfigError) as caught:
        hook.load_config()
    assert str(caught.value).startswith("cannot read config file %s: " % missing)
    assert "No such file or directory" in str(caught.value)


# ---------------------------------------------------------------- exclusivity
def vnode(sharing, host="node1"):
    return types.SimpleNamespace(sharing=sharing, resources_available={"host": host})


def event_on(place, vnodes):
    resources = {"place": place}
    return types.SimpleNamespace(job=types.SimpleNamespace(Resource_List=resources), vnode_list=vnodes)


ROWS = [(sharing, place, expected) for sharing, row in EXCLUSIVE_TABLE.items() if sharing is not None
        for place, expected in zip(PLACES, row)]


@pytest.mark.parametrize("sharing,place,expected", ROWS, ids=["%s-%s" % (s, p or "unset") for s, p, _unused in ROWS])
def test_the_pbs_sharing_constants_follow_the_scheduler_rule(hook, sharing, place, expected):
    # Real PBS gives vnode.sharing as pbs.ND_*; the other host's vnode says the opposite.
    other = ND_CONSTANTS["ignore_excl" if expected else "force_excl"]
    event = event_on(place, {"node1": vnode(ND_CONSTANTS[sharing]), "node2": vnode(other, host="node2")})
    assert hook.job_is_exclusive(event) is expected


@pytest.mark.parametrize("sharing", sorted(ND_CONSTANTS))
def test_a_sharing_constant_is_named(hook, sharing):
    assert hook.sharing_name(vnode(ND_CONSTANTS[sharing])) == sharing


@pytest.mark.parametrize("place,expected", [(None, False), ("shared", False)])
def test_the_vnodes_of_a_multi_vnode_host_are_found_by_their_host(workdir, atomd, place, expected):
    # A host with several vnodes names them host[N] (their host in resources_available); the
    # job's vnode on the other host would make it exclusive (force_excl) if it counted.
    ctx = context(place=place)
    local = {"name": "node1[0]", "state": "job-busy", "sharing": "default_shared",
             "resources_available": {"host": "node1", "vnode": "node1[0]", "ncpus": "4"}}
    ctx["vnode_list"] = {"node1[0]": local, "node2": dict(ctx["vnode_list"]["node2"], sharing="force_excl")}
    result = run(workdir, "execjob_begin", ctx, service=atomd)
    assert result["accepted"], result
    assert atomd.jobs["5.pbs-server"]["exclusive"] is expected


# ---------------------------------------------------------------- mandatory modules
def test_a_node_without_requests_unixsocket_fails_saying_which_modules_it_needs(hook, monkeypatch):
    monkeypatch.setattr(hook, "site", types.SimpleNamespace(main=lambda: None))
    monkeypatch.setitem(sys.modules, "requests_unixsocket", None)
    with pytest.raises(ImportError, match="needs the Python modules requests and requests_unixsocket: "):
        hook.call("cray_atom", "POST", hook.jobs_url(DOCUMENTED_DEFAULTS), 30, {"jobid": "5.pbs-server"})


# ---------------------------------------------------------------- the hook's name
def test_messages_carry_the_name_the_hook_is_installed_under(workdir, atomd):
    begin = run_named(workdir, "execjob_begin", context(), atomd, "site_atom")
    assert begin["accepted"], begin
    assert "site_atom: registered with ATOM (exclusive=false)" in messages(begin)
    assert "site_atom: POST http+unix://" in messages(begin)
    end = run_named(workdir, "execjob_end", context(), atomd, "site_atom")
    assert end["accepted"], end
    assert "site_atom: removed from ATOM" in messages(end)
    assert "site_atom: DELETE http+unix://" in messages(end)
    assert "cray_atom" not in messages(begin) + messages(end)


def test_without_a_hook_name_the_messages_say_cray_atom(workdir, atomd):
    # pbs_python --hook with an input file that sets no pbs.event().hook_name: it is empty.
    begin = run_named(workdir, "execjob_begin", context(), atomd, "")
    assert begin["accepted"], begin
    assert "cray_atom: registered with ATOM (exclusive=false)" in messages(begin)
    end = run_named(workdir, "execjob_end", context(), atomd, "")
    assert end["accepted"], end
    assert "cray_atom: removed from ATOM" in messages(end)


# ---------------------------------------------------------------- the log of the requests
def test_the_log_shows_the_posted_fields_and_a_delete_without_a_body(workdir, atomd):
    url = "http+unix://%s/rm/v1/jobs" % atomd.socket_path.replace("/", "%2F")
    begin = run(workdir, "execjob_begin", context(), service=atomd)
    line = [text for text in messages(begin).splitlines() if " POST " in text][0]
    sent = line.split("POST %s " % url, 1)[1].split(" -> 200 OK", 1)[0]
    assert json.loads(sent) == {"jobid": "5.pbs-server", "uid": ME.pw_uid, "exclusive": False}
    end = run(workdir, "execjob_end", context(), service=atomd)
    assert "cray_atom: DELETE %s/5.pbs-server -> 204 No Content, response: (empty)" % url in messages(end)


# ---------------------------------------------------------------- a stale registration
@pytest.mark.parametrize("deleted", [200, 202, 204, 404])
def test_a_stale_registration_deleted_is_registered_again(workdir, atomd, deleted):
    # PBS_cray_atom: raise_for_status() on that DELETE, then 404 forgiven: any answer below
    # 400, and 404, lets it POST again.
    faults.set_actions(atomd.socket_path, "POST", [{"status": 400}])
    faults.set_actions(atomd.socket_path, "DELETE", [{"status": deleted}])
    result = run(workdir, "execjob_begin", context(), service=atomd)
    assert result["accepted"] and result["exception"] is None, result
    assert requests_seen(atomd) == [("POST", 400), ("DELETE", deleted), ("POST", 200)]
    assert list(atomd.jobs) == ["5.pbs-server"]


@pytest.mark.parametrize("answer", [400, 401, 500])
def test_a_stale_registration_whose_delete_fails_fails_the_hook(workdir, atomd, answer):
    # PBS_cray_atom: a DELETE answering 400 or above, but 404, is an OfflineError (fail_action).
    faults.set_actions(atomd.socket_path, "POST", [{"status": 400}])
    faults.set_actions(atomd.socket_path, "DELETE", [{"status": answer}])
    result = run(workdir, "execjob_begin", context(), service=atomd)
    assert not result["accepted"]
    assert raised(result).startswith("AtomRegistrationError: cray_atom: job 5.pbs-server not registered: "
                                     "DELETE of the stale registration answered %d: " % answer)
    assert requests_seen(atomd) == [("POST", 400), ("DELETE", answer)]
    assert atomd.jobs == {}


# ---------------------------------------------------------------- how a failed registration ends
def test_a_dropped_connection_ends_the_hook_with_the_registration_error(workdir, atomd):
    faults.set_actions(atomd.socket_path, "POST", [{"drop": True}])
    result = run(workdir, "execjob_begin", context(), service=atomd)
    url = "http+unix://%s/rm/v1/jobs" % atomd.socket_path.replace("/", "%2F")
    assert raised(result).startswith("AtomRegistrationError: cray_atom: job 5.pbs-server not registered: "
                                     "POST %s failed: " % url)


def test_a_missing_socket_with_require_socket_ends_the_hook_with_the_registration_error(workdir):
    missing = os.path.join(workdir, "absent", "atomd.sock")
    result = run(workdir, "execjob_begin", context(), config={"unix_socket_file": missing, "require_socket": True})
    assert raised(result) == ("AtomRegistrationError: cray_atom: job 5.pbs-server not registered: ATOM socket %s "
                              "does not exist (require_socket)" % missing)
