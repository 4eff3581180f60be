"""The mock ATOM service (mockpbs.atom): its REST behaviour, fault injection, and the
``python -m mockpbs atomd`` command (daemon, foreground, --inject, --jobs, --stop)."""
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest

from mockpbs.atom import client, faults
from mockpbs.atom.service import AtomService

JOB = {"jobid": "7.pbs-server", "uid": 1000, "exclusive": False}


@pytest.fixture
def workdir():
    path = tempfile.mkdtemp(prefix="atomd", dir="/tmp")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def service(workdir):
    with AtomService(os.path.join(workdir, "run", "atomd.sock")) as atomd:
        yield atomd


def wait_until(predicate, seconds=10.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def atomd_command(*args, env=None):
    return subprocess.run([sys.executable, "-m", "mockpbs", "atomd"] + list(args), capture_output=True,
                          text=True, env=env, timeout=60, check=False)


# ---------------------------------------------------------------- REST behaviour
def test_post_registers_and_get_lists(service):
    status, body, _unused = client.request(service.socket_path, "POST", client.job_path(), JOB)
    assert status == 200 and body["jobid"] == "7.pbs-server" and body["uid"] == 1000
    second = dict(JOB, jobid="8.pbs-server", exclusive=True)
    assert client.request(service.socket_path, "POST", client.job_path(), second)[0] == 200
    jobs = client.list_jobs(service.socket_path)
    assert [(j["jobid"], j["uid"], j["exclusive"]) for j in jobs] == [
        ("7.pbs-server", 1000, False), ("8.pbs-server", 1000, True)]
    status, body, _unused = client.request(service.socket_path, "GET", client.job_path("8.pbs-server"))
    assert status == 200 and body["exclusive"] is True


def test_post_of_a_registered_job_is_400_and_keeps_the_first(service):
    client.request(service.socket_path, "POST", client.job_path(), JOB)
    status, body, _unused = client.request(service.socket_path, "POST", client.job_path(), dict(JOB, uid=5))
    assert status == 400 and "already registered" in body["error"]
    assert service.jobs["7.pbs-server"]["uid"] == 1000


@pytest.mark.parametrize("body", [{"jobid": "", "uid": 1, "exclusive": False}, {"jobid": "1.s", "uid": "1", "exclusive": False},
                                  {"jobid": "1.s", "uid": 1, "exclusive": "no"}, {"jobid": "1.s", "uid": 1}, [1]])
def test_malformed_post_is_400(service, body):
    assert client.request(service.socket_path, "POST", client.job_path(), body)[0] == 400
    assert service.jobs == {}


def test_delete_is_204_then_404(service):
    client.request(service.socket_path, "POST", client.job_path(), JOB)
    status, body, text = client.request(service.socket_path, "DELETE", client.job_path("7.pbs-server"))
    assert (status, text) == (204, "")
    status, body, _unused = client.request(service.socket_path, "DELETE", client.job_path("7.pbs-server"))
    assert status == 404 and "not found" in body["error"]


def test_job_ids_are_percent_decoded(service):
    jobid = "12[3].pbs-server"
    client.request(service.socket_path, "POST", client.job_path(), dict(JOB, jobid=jobid))
    assert client.job_path(jobid) == "/rm/v1/jobs/12%5B3%5D.pbs-server"
    assert client.request(service.socket_path, "GET", client.job_path(jobid))[0] == 200
    assert client.request(service.socket_path, "DELETE", client.job_path(jobid))[0] == 204
    assert service.jobs == {}


def test_unknown_paths_and_methods(service):
    assert client.request(service.socket_path, "GET", "/rm/v2/jobs")[0] == 404
    assert client.request(service.socket_path, "DELETE", client.job_path())[0] == 405
    assert client.request(service.socket_path, "PUT", client.job_path("1.s"), JOB)[0] == 405


def test_requests_are_logged_one_json_line_each(service):
    client.request(service.socket_path, "POST", client.job_path(), JOB)
    client.request(service.socket_path, "DELETE", client.job_path("nope.s"))
    with open(service.socket_path + ".log") as handle:
        lines = [json.loads(line) for line in handle]
    assert [(l["method"], l["jobid"], l["status"], l["fault"]) for l in lines] == [
        ("POST", "7.pbs-server", 200, None), ("DELETE", "nope.s", 404, None)]


# ---------------------------------------------------------------- faults
def test_scripted_codes_are_consumed_in_order_then_normal(service):
    faults.set_actions(service.socket_path, "POST", [{"status": 500}, {"status": 503, "times": 2}])
    codes = [client.request(service.socket_path, "POST", client.job_path(), JOB)[0] for _unused in range(4)]
    assert codes == [500, 503, 503, 200]
    assert faults.read_plan(service.socket_path)["methods"]["POST"] == []
    assert list(service.jobs) == ["7.pbs-server"]


def test_injected_status_leaves_the_registry_alone(service):
    faults.set_actions(service.socket_path, "POST", [{"status": 200}])
    assert client.request(service.socket_path, "POST", client.job_path(), JOB)[0] == 200
    assert service.jobs == {}


def test_forever_fault_stays_until_cleared(service):
    faults.set_actions(service.socket_path, "DELETE", [{"status": 500, "times": faults.FOREVER}])
    codes = [client.request(service.socket_path, "DELETE", client.job_path("x.s"))[0] for _unused in range(3)]
    assert codes == [500, 500, 500]
    faults.clear(service.socket_path)
    assert client.request(service.socket_path, "DELETE", client.job_path("x.s"))[0] == 404


def test_faults_are_per_method(service):
    faults.set_actions(service.socket_path, "DELETE", [{"status": 500}])
    assert client.request(service.socket_path, "POST", client.job_path(), JOB)[0] == 200
    assert client.request(service.socket_path, "DELETE", client.job_path("7.pbs-server"))[0] == 500


def test_delay_longer_than_the_timeout_times_the_client_out(service):
    faults.set_actions(service.socket_path, "POST", [{"delay": 2}])
    with pytest.raises(socket.timeout):
        client.request(service.socket_path, "POST", client.job_path(), JOB, timeout=0.3)
    # The slow request is still carried out, as by a slow real service.
    assert wait_until(lambda: "7.pbs-server" in service.jobs)


def test_drop_closes_the_connection_without_an_answer(service):
    faults.set_actions(service.socket_path, "POST", [{"drop": True}])
    with pytest.raises(http.client.RemoteDisconnected):
        client.request(service.socket_path, "POST", client.job_path(), JOB)
    assert service.jobs == {}


def test_no_socket_removes_and_restores_the_socket(service):
    faults.set_no_socket(service.socket_path, True)
    assert wait_until(lambda: not os.path.exists(service.socket_path))
    with pytest.raises(FileNotFoundError):
        client.request(service.socket_path, "GET", client.job_path())
    faults.set_no_socket(service.socket_path, False)
    assert wait_until(lambda: os.path.exists(service.socket_path))
    assert client.request(service.socket_path, "GET", client.job_path())[0] == 200


@pytest.mark.parametrize("spec,expected", [
    ("POST=400,200", ("POST", [{"status": 400, "times": 1}, {"status": 200, "times": 1}])),
    ("post=500*", ("POST", [{"status": 500, "times": -1}])),
    ("DELETE=delay:40", ("DELETE", [{"delay": 40.0, "times": 1}])),
    ("POST=delay:2:503*3,drop", ("POST", [{"delay": 2.0, "status": 503, "times": 3}, {"drop": True, "times": 1}])),
    ("GET=", ("GET", [])),
    ("no-socket", ("no-socket", None)),
])
def test_parse_spec(spec, expected):
    assert faults.parse_spec(spec) == expected


@pytest.mark.parametrize("spec", ["PATCH=500", "POST=abc", "POST=99", "POST=delay:x", "POST=500*x",
                                  "POST=delay:1:drop:2", "500"])
def test_parse_spec_refuses_nonsense(spec):
    with pytest.raises(faults.FaultSpecError):
        faults.parse_spec(spec)


# ---------------------------------------------------------------- the atomd command
def test_daemon_start_inject_jobs_stop(workdir):
    sock = os.path.join(workdir, "var", "run", "atomd", "atomd.sock")
    started = atomd_command("--socket", sock)
    assert started.returncode == 0, started.stderr
    try:
        assert os.path.exists(sock)  # listening by the time the command returned
        with open(sock + ".pid") as handle:
            pid = int(handle.read())
        os.kill(pid, 0)
        assert atomd_command("--socket", sock, "--inject", "POST=503").returncode == 0
        assert client.request(sock, "POST", client.job_path(), JOB)[0] == 503
        assert client.request(sock, "POST", client.job_path(), JOB)[0] == 200
        listed = atomd_command("--socket", sock, "--jobs")
        assert listed.returncode == 0 and [j["jobid"] for j in json.loads(listed.stdout)] == ["7.pbs-server"]
        gone = atomd_command("--socket", sock, "--inject", "no-socket")
        assert gone.returncode == 0 and not os.path.exists(sock)
        back = atomd_command("--socket", sock, "--inject", "socket")
        assert back.returncode == 0 and os.path.exists(sock)
        # The registry survives the socket's absence.
        assert [j["jobid"] for j in client.list_jobs(sock)] == ["7.pbs-server"]
        second = atomd_command("--socket", sock)
        assert second.returncode == 1 and "already listens" in second.stderr
    finally:
        stopped = atomd_command("--socket", sock, "--stop")
    assert stopped.returncode == 0, stopped.stderr
    assert not os.path.exists(sock) and not os.path.exists(sock + ".pid")


def test_socket_from_the_environment_and_bad_inject(workdir):
    sock = os.path.join(workdir, "env.sock")
    env = dict(os.environ, ATOMD_SOCKET=sock)
    bad = atomd_command("--inject", "POST=teapot", env=env)
    assert bad.returncode == 1 and "bad fault item" in bad.stderr
    assert not os.path.exists(sock + ".faults")
    assert atomd_command("--inject", "DELETE=500*", env=env).returncode == 0
    assert faults.read_plan(sock)["methods"]["DELETE"] == [{"status": 500, "times": -1}]


def test_foreground_serves_until_sigterm(workdir):
    sock = os.path.join(workdir, "fg.sock")
    process = subprocess.Popen([sys.executable, "-m", "mockpbs", "atomd", "--foreground", "--socket", sock],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert wait_until(lambda: os.path.exists(sock))
        assert client.request(sock, "POST", client.job_path(), JOB)[0] == 200
        with open(sock + ".pid") as handle:
            assert int(handle.read()) == process.pid
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0
    assert not os.path.exists(sock)


def test_stale_socket_file_is_replaced(workdir):
    sock = os.path.join(workdir, "stale.sock")
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(sock)
    dead.close()
    with AtomService(sock) as atomd:
        assert client.request(atomd.socket_path, "GET", client.job_path())[0] == 200
