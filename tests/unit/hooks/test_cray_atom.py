"""The bundled cray_atom hook under the ``pbs`` emulator, against a real mock ATOM service.

Seed: shasta-pbs-cray-atom-hook.txt (execjob_begin / execjob_end details, "What happens
if the hook alarms", "Forming the URIs", "Hook Configuration File"). Each test runs the
unchanged hook file in a child process (mockpbs.hookrun, as pbs_python would), talking
HTTP over a UNIX socket to :class:`mockpbs.atom.service.AtomService` in this process.
"""
import json
import os
import pwd
import shutil
import socket
import tempfile
from pathlib import Path

import pytest

from mockpbs.atom import client, faults
from mockpbs.atom.service import AtomService
from mockpbs.hookrun import run_hook

REPO = Path(__file__).resolve().parents[3]
HOOK_BODY = REPO / "files" / "hooks" / "cray_atom.py"
DEFAULT_CONFIG = json.loads((REPO / "files" / "hooks" / "cray_atom.json").read_text())
HOOK_NAME = "cray_atom"
ME = pwd.getpwuid(os.getuid())
HOST = "node1"


@pytest.fixture
def workdir():
    # UNIX socket paths are limited to 107 bytes: pytest's tmp_path can be longer.
    path = tempfile.mkdtemp(prefix="atom", dir="/tmp")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def atomd(workdir):
    with AtomService(os.path.join(workdir, "atomd.sock")) as service:
        yield service


def requests_seen(service):
    """``[(method, status), ...]`` from the service's request log."""
    try:
        with open(service.socket_path + ".log") as handle:
            return [(line["method"], line["status"]) for line in map(json.loads, handle)]
    except FileNotFoundError:
        return []


def context(jobid="5.pbs-server", place=None, sharing=None, euser=ME.pw_name, other_host_sharing=None):
    """A job on HOST (vnode ``node1``) and on a second host ``node2`` (vnode ``node2``)."""
    resources = {"select": "2:ncpus=1", "ncpus": "2", "nodect": "2"}
    if place is not None:
        resources["place"] = place

    def vnode(name, vnode_sharing):
        data = {"name": name, "host": name, "state": "job-busy",
                "resources_available": {"host": name, "vnode": name, "ncpus": "4"},
                "resources_assigned": {"ncpus": "1"}}
        if vnode_sharing is not None:
            data["sharing"] = vnode_sharing
        return data

    job = {"id": jobid, "Job_Name": "STDIN", "Job_Owner": "%s@pbs-server" % euser, "euser": euser,
           "egroup": euser, "queue": "workq", "Resource_List": resources,
           "exec_vnode": "(node1:ncpus=1)+(node2:ncpus=1)", "exec_host": "node1/0+node2/0"}
    return {"job": job, "vnode_list": {"node1": vnode("node1", sharing), "node2": vnode("node2", other_host_sharing)},
            "vnode_list_fail": {}, "in_ms_mom": True, "hostname": HOST, "server": "pbs-server",
            "daemon": "mom", "requestor": "pbs_mom", "requestor_host": HOST}


def run(workdir, event, ctx, service=None, config=None, config_text=None, alarm=30):
    """Run the hook; ``config`` is merged over the bundled default with ``unix_socket_file``
    pointing at ``service``; ``config_text`` is written verbatim instead."""
    config_path = os.path.join(workdir, HOOK_NAME + ".CF")
    if config_text is None:
        merged = dict(DEFAULT_CONFIG)
        if service is not None:
            merged["unix_socket_file"] = service.socket_path
        merged.update(config or {})
        config_text = json.dumps(merged)
    with open(config_path, "w") as handle:
        handle.write(config_text)
    hook = {"name": HOOK_NAME, "body": str(HOOK_BODY), "config": config_path, "alarm": alarm,
            "user": "pbsadmin", "debug": False}
    return run_hook(hook, event, ctx, workdir)


def messages(result):
    return "\n".join(record[3] for record in result["logs"])


def assert_registration_failed(result, *expected_text):
    """A hook *error* (exception), not a plain reject: that is what makes PBS apply
    fail_action=offline_vnodes."""
    assert not result["accepted"]
    assert result["exception"] is not None and "AtomRegistrationError" in result["exception"], result
    for text in expected_text:
        assert text in result["exception"], result["exception"]
    assert result["vnodes"] == {}


# ---------------------------------------------------------------- exclusive
# The scheduler's rule, written out row by row: (vnode sharing, job place) -> exclusive.
PLACES = (None, "free", "scatter:excl", "pack:exclhost", "shared", "scatter:shared")
EXCLUSIVE_TABLE = {
    None: (False, False, True, True, False, False),
    "default_shared": (False, False, True, True, False, False),
    "default_excl": (True, True, True, True, False, False),
    "default_exclhost": (True, True, True, True, False, False),
    "ignore_excl": (False, False, False, False, False, False),
    "force_excl": (True, True, True, True, True, True),
    "force_exclhost": (True, True, True, True, True, True),
}
ROWS = [(sharing, place, expected) for sharing, row in EXCLUSIVE_TABLE.items()
        for place, expected in zip(PLACES, row)]


@pytest.mark.parametrize("sharing,place,expected", ROWS,
                         ids=["%s-%s" % (s or "unset", p or "unset") for s, p, _unused in ROWS])
def test_exclusive_follows_the_scheduler_rule(workdir, atomd, sharing, place, expected):
    # The other host's vnode says the opposite: only this host's vnodes count.
    other = "force_excl" if not expected else "ignore_excl"
    result = run(workdir, "execjob_begin", context(place=place, sharing=sharing, other_host_sharing=other),
                 service=atomd)
    assert result["accepted"], result
    assert atomd.jobs["5.pbs-server"]["exclusive"] is expected


# ---------------------------------------------------------------- execjob_begin
def test_begin_200_registers_the_job_with_its_uid_and_logs_the_answer(workdir, atomd):
    result = run(workdir, "execjob_begin", context(place="scatter:excl"), service=atomd)
    assert result["accepted"] and result["exception"] is None
    assert atomd.jobs["5.pbs-server"]["uid"] == ME.pw_uid
    assert requests_seen(atomd) == [("POST", 200)]
    log = messages(result)
    assert "POST http+unix://%s/rm/v1/jobs" % atomd.socket_path.replace("/", "%2F") in log
    assert "-> 200 OK, response: {" in log and '"jobid": "5.pbs-server"' in log


def test_begin_400_for_a_registered_job_deletes_and_posts_again(workdir, atomd):
    status, _unused, _unused = client.request(atomd.socket_path, "POST", client.job_path(),
                                              {"jobid": "5.pbs-server", "uid": 4242, "exclusive": False})
    assert status == 200
    result = run(workdir, "execjob_begin", context(place="excl"), service=atomd)
    assert result["accepted"], result
    assert requests_seen(atomd)[1:] == [("POST", 400), ("DELETE", 204), ("POST", 200)]
    assert list(atomd.jobs) == ["5.pbs-server"]
    assert atomd.jobs["5.pbs-server"]["uid"] == ME.pw_uid and atomd.jobs["5.pbs-server"]["exclusive"] is True
    assert "-> 400 Bad Request, response:" in messages(result)


def test_begin_400_for_an_unknown_job_accepts_the_404_of_the_delete(workdir, atomd):
    faults.set_actions(atomd.socket_path, "POST", [{"status": 400}])
    result = run(workdir, "execjob_begin", context(), service=atomd)
    assert result["accepted"], result
    assert requests_seen(atomd) == [("POST", 400), ("DELETE", 404), ("POST", 200)]
    assert list(atomd.jobs) == ["5.pbs-server"]


def test_begin_400_twice_is_a_registration_failure(workdir, atomd):
    faults.set_actions(atomd.socket_path, "POST", [{"status": 400, "times": 2}])
    result = run(workdir, "execjob_begin", context(), service=atomd)
    assert_registration_failed(result, "POST answered 400")
    assert requests_seen(atomd) == [("POST", 400), ("DELETE", 404), ("POST", 400)]


@pytest.mark.parametrize("code", [500, 404, 503, 201])
def test_begin_other_codes_fail_the_hook(workdir, atomd, code):
    faults.set_actions(atomd.socket_path, "POST", [{"status": code}])
    result = run(workdir, "execjob_begin", context(), service=atomd)
    assert_registration_failed(result, "POST answered %d" % code)
    assert "-> %d " % code in messages(result) and "injected fault %d" % code in messages(result)
    assert atomd.jobs == {}


def test_begin_post_timeout_fails_the_hook(workdir, atomd):
    faults.set_actions(atomd.socket_path, "POST", [{"delay": 3, "status": 200}])
    result = run(workdir, "execjob_begin", context(), service=atomd, config={"post_timeout": 0.5})
    assert_registration_failed(result, "timed out after 0.5 s")
    assert "not registered" in messages(result)


def test_begin_dropped_connection_fails_the_hook(workdir, atomd):
    faults.set_actions(atomd.socket_path, "POST", [{"drop": True}])
    result = run(workdir, "execjob_begin", context(), service=atomd)
    assert_registration_failed(result, "failed")
    assert atomd.jobs == {}


def test_begin_refused_connection_fails_the_hook(workdir):
    stale = os.path.join(workdir, "stale.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(stale)
    listener.close()  # the file stays, nobody listens: ECONNREFUSED
    result = run(workdir, "execjob_begin", context(), config={"unix_socket_file": stale})
    assert_registration_failed(result, "failed")


def test_begin_alarm_ends_the_hook(workdir, atomd):
    faults.set_actions(atomd.socket_path, "POST", [{"delay": 4}])
    result = run(workdir, "execjob_begin", context(), service=atomd, alarm=1)
    assert result["alarm"] and not result["accepted"]


def test_begin_unknown_euser_fails_the_hook(workdir, atomd):
    result = run(workdir, "execjob_begin", context(euser="no_such_user_zz9"), service=atomd)
    assert_registration_failed(result, "user no_such_user_zz9 unknown on this host")
    assert requests_seen(atomd) == []


def test_begin_missing_socket_is_logged_and_accepted(workdir):
    missing = os.path.join(workdir, "absent", "atomd.sock")
    result = run(workdir, "execjob_begin", context(), config={"unix_socket_file": missing})
    assert result["accepted"] and result["exception"] is None
    assert "ATOM socket %s does not exist; nothing to do, accepting" % missing in messages(result)


def test_begin_missing_socket_fails_with_require_socket(workdir):
    missing = os.path.join(workdir, "absent", "atomd.sock")
    result = run(workdir, "execjob_begin", context(), config={"unix_socket_file": missing, "require_socket": True})
    assert_registration_failed(result, "does not exist (require_socket)")


def test_service_without_socket_is_a_missing_socket(workdir, atomd):
    faults.set_no_socket(atomd.socket_path, True)
    deadline = 200
    while os.path.exists(atomd.socket_path) and deadline:
        deadline -= 1
        __import__("time").sleep(0.05)
    assert not os.path.exists(atomd.socket_path)
    result = run(workdir, "execjob_begin", context(), service=atomd)
    assert result["accepted"] and "does not exist" in messages(result)


def test_job_id_needing_percent_encoding_arrives_intact(workdir, atomd):
    jobid = "12[3].pbs-server"
    begin = run(workdir, "execjob_begin", context(jobid=jobid), service=atomd)
    assert begin["accepted"], begin
    assert list(atomd.jobs) == [jobid]
    with open(atomd.socket_path + ".log") as handle:
        lines = [json.loads(line) for line in handle]
    end = run(workdir, "execjob_end", context(jobid=jobid), service=atomd)
    assert end["accepted"], end
    with open(atomd.socket_path + ".log") as handle:
        delete = [json.loads(line) for line in handle][len(lines)]
    assert delete["path"] == "/rm/v1/jobs/12%5B3%5D.pbs-server" and delete["status"] == 204
    assert atomd.jobs == {}


# ---------------------------------------------------------------- execjob_end
def test_end_delete_204_accepts_and_removes_the_job(workdir, atomd):
    assert run(workdir, "execjob_begin", context(), service=atomd)["accepted"]
    result = run(workdir, "execjob_end", context(), service=atomd)
    assert result["accepted"] and result["exception"] is None
    assert atomd.jobs == {}
    assert requests_seen(atomd) == [("POST", 200), ("DELETE", 204)]
    assert "-> 204 No Content, response: (empty)" in messages(result)


def test_end_delete_timeout_rejects_without_offlining(workdir, atomd):
    assert run(workdir, "execjob_begin", context(), service=atomd)["accepted"]
    faults.set_actions(atomd.socket_path, "DELETE", [{"delay": 3}])
    result = run(workdir, "execjob_end", context(), service=atomd, config={"delete_timeout": 0.5})
    assert not result["accepted"]
    assert result["exception"] is None and not result["alarm"]  # a plain reject: no fail_action
    assert "timed out after 0.5 s" in result["reject_msg"]
    assert result["vnodes"] == {}


@pytest.mark.parametrize("code", [404, 500, 200])
def test_end_other_codes_reject(workdir, atomd, code):
    faults.set_actions(atomd.socket_path, "DELETE", [{"status": code}])
    result = run(workdir, "execjob_end", context(), service=atomd)
    assert not result["accepted"] and result["exception"] is None
    assert "DELETE answered %d" % code in result["reject_msg"]


def test_end_for_an_unregistered_job_rejects_with_the_404(workdir, atomd):
    result = run(workdir, "execjob_end", context(), service=atomd)
    assert not result["accepted"] and "DELETE answered 404" in result["reject_msg"]


def test_end_missing_socket_accepts_unless_required(workdir):
    missing = os.path.join(workdir, "absent.sock")
    assert run(workdir, "execjob_end", context(), config={"unix_socket_file": missing})["accepted"]
    required = run(workdir, "execjob_end", context(), config={"unix_socket_file": missing, "require_socket": True})
    assert not required["accepted"] and required["exception"] is None
    assert "does not exist (require_socket)" in required["reject_msg"]


# ---------------------------------------------------------------- config
@pytest.mark.parametrize("event", ["execjob_begin", "execjob_end"])
@pytest.mark.parametrize("config_text,problem", [
    ('{"post_timeout": 30,', "is not valid JSON"),
    ('{"post_timeout": 0}', "post_timeout must be a number of seconds > 0, not 0"),
    ('{"delete_timeout": "30"}', "delete_timeout must be a number of seconds > 0"),
    ('{"unix_socket_file": "atomd.sock"}', "unix_socket_file must be an absolute path"),
    ('{"version_uri": "/rm/v2"}', "unknown key(s) version_uri"),
    ('{"require_socket": "yes"}', "require_socket must be true or false"),
    ('[1, 2]', "must be a JSON object"),
])
def test_broken_config_rejects_naming_the_file(workdir, atomd, event, config_text, problem):
    result = run(workdir, event, context(), service=atomd, config_text=config_text)
    config_path = os.path.join(workdir, HOOK_NAME + ".CF")
    assert not result["accepted"] and result["exception"] is None
    assert config_path in result["reject_msg"] and problem in result["reject_msg"]
    assert any(config_path in record[3] and problem in record[3] for record in result["logs"])
    assert requests_seen(atomd) == []


def test_config_keys_left_out_take_the_defaults(workdir, atomd):
    # Only the socket given: the timeouts default to 30 s; a 1 s delay is then fine.
    faults.set_actions(atomd.socket_path, "POST", [{"delay": 1}])
    result = run(workdir, "execjob_begin", context(), config_text=json.dumps({"unix_socket_file": atomd.socket_path}))
    assert result["accepted"], result
