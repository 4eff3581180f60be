"""The cray_atom role's probe of the hooks' interpreter (``__cray_atom_probe`` in
roles/cray_atom/vars/main.yml), run here as the role runs it (``python -c PROBE``), with the
role's environment (no user site, empty PYTHONPATH) where the real modules are used and with
stand-in ``requests`` / ``requests_unixsocket`` packages first on sys.path where a failure
is needed: every request goes over the UNIX socket the probe serves itself.

What it must say: the versions of requests, requests_unixsocket and urllib3 it imports, and
whether one GET through ``requests_unixsocket.Session`` reached its server; the error without
the temporary socket path; nothing left behind in the temporary directory; the same on the
Python 3.6 of PBS Professional 2022 (pbs_python of OpenPBS 22.05.11) when that interpreter is
installed here."""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
PROBE = yaml.safe_load((REPO / "roles" / "cray_atom" / "vars" / "main.yml").read_text())["__cray_atom_probe"]
PYTHON36 = "/root/.pyenv/versions/3.6.15/bin/python3.6"

# A stand-in pair: a Session whose get() really talks HTTP/1.0 over the socket named in the
# URL (as requests_unixsocket does), or raises / answers as the scenario file says.
FAKE_REQUESTS = '__version__ = "2.32.3"\n'
FAKE_UNIXSOCKET = '''
import json, os, socket
from urllib.parse import unquote, urlsplit

class Response(object):
    def __init__(self, status_code, text):
        self.status_code, self.text = status_code, text

class Session(object):
    def get(self, url, timeout=None):
        with open(os.environ["FAKE_SCENARIO"]) as handle:
            scenario = json.load(handle)
        parts = urlsplit(url)
        assert parts.scheme == "http+unix", url
        path = unquote(parts.netloc)
        if scenario.get("raise"):
            raise ValueError(scenario["raise"] % {"url": url, "path": path})
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        sock.connect(path)
        sock.sendall(("GET %s HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n" % parts.path).encode())
        data = b""
        while True:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
        sock.close()
        head, _sep, body = data.decode().partition("\\r\\n\\r\\n")
        status = int(head.split()[1])
        return Response(scenario.get("status", status), scenario.get("text", body))

    def close(self):
        pass
'''


def leftovers_in_tmp():
    return sorted(glob.glob("/tmp/cray_atom_probe.*"))


def run_probe(tmp_path, python=sys.executable, fake=None, pythonpath="", tmp=None):
    """Run the probe; ``fake``: the stand-in scenario (None: the interpreter's own modules);
    ``tmp``: its TMPDIR (default: a new short one under /tmp, removed after). Returns its JSON and whatever
    it left in its temporary directory."""
    if tmp is None:
        tmp = Path(tempfile.mkdtemp(prefix="capt.", dir="/tmp"))
        try:
            return run_probe(tmp_path, python, fake, pythonpath, tmp)
        finally:
            shutil.rmtree(str(tmp), ignore_errors=True)
    env = dict(os.environ, PYTHONNOUSERSITE="1", PYTHONPATH=pythonpath, TMPDIR=str(tmp))
    if fake is not None:
        fakes = tmp_path / "fakes"
        (fakes / "requests").mkdir(parents=True, exist_ok=True)
        (fakes / "requests" / "__init__.py").write_text(FAKE_REQUESTS)
        (fakes / "requests_unixsocket").mkdir(exist_ok=True)
        (fakes / "requests_unixsocket" / "__init__.py").write_text(
            'raise ImportError("stand-in: %s")\n' % fake["import_error"] if "import_error" in fake else FAKE_UNIXSOCKET)
        # No __version__ in requests_unixsocket 0.3.0: its version comes from its metadata.
        (fakes / "requests_unixsocket-0.3.0.dist-info").mkdir(exist_ok=True)
        scenario = tmp_path / "scenario.json"
        scenario.write_text(json.dumps(fake))
        env.update(PYTHONPATH=str(fakes), FAKE_SCENARIO=str(scenario))
    proc = subprocess.run([python, "-c", PROBE], capture_output=True, text=True, env=env, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), sorted(os.listdir(tmp))


def test_the_interpreters_own_pair_makes_the_request(tmp_path):
    import requests
    import urllib3
    answer, left = run_probe(tmp_path)
    assert answer["missing"] == []
    assert answer["request"] == {"ok": True, "error": ""}
    assert answer["versions"]["requests"] == requests.__version__
    assert answer["versions"]["urllib3"] == urllib3.__version__
    assert answer["versions"]["requests_unixsocket"] not in ("", "unknown")
    assert left == []


def test_a_pair_that_fails_the_request_is_reported_with_its_versions(tmp_path):
    answer, left = run_probe(tmp_path, fake={"raise": "Not supported URL scheme http+unix"})
    assert answer["missing"] == []
    assert answer["versions"]["requests"] == "2.32.3"
    assert answer["versions"]["requests_unixsocket"] == "0.3.0"
    assert answer["request"] == {"ok": False, "error": "ValueError: Not supported URL scheme http+unix"}
    assert left == []


def test_the_error_does_not_carry_the_temporary_socket_path(tmp_path):
    answer, _left = run_probe(tmp_path, fake={"raise": "cannot reach %(url)s at %(path)s"})
    assert answer["request"]["error"] == "ValueError: cannot reach http+unix://<socket>/rm/v1/jobs/probe at <socket>"


def test_the_stand_in_pair_reaches_the_probes_server(tmp_path):
    # The stand-in really connects: the probe's own server answers over the socket.
    answer, left = run_probe(tmp_path, fake={})
    assert answer["request"] == {"ok": True, "error": ""}
    assert left == []


@pytest.mark.parametrize("scenario,error", [
    ({"status": 404}, "the probe's server answered 404 '{\"probe\": \"cray_atom\"}', not 200 and its text"),
    ({"text": "<html>"}, "the probe's server answered 200 '<html>', not 200 and its text"),
])
def test_an_answer_that_is_not_the_servers_is_a_failure(tmp_path, scenario, error):
    answer, _left = run_probe(tmp_path, fake=scenario)
    assert answer["request"] == {"ok": False, "error": error}


def test_a_tmpdir_too_long_for_a_socket_falls_back_to_tmp(tmp_path):
    long_tmp = tmp_path / ("x" * 90)
    long_tmp.mkdir()
    before = leftovers_in_tmp()
    answer, left = run_probe(tmp_path, fake={}, tmp=long_tmp)
    assert answer["request"] == {"ok": True, "error": ""}
    assert left == [] and leftovers_in_tmp() == before


def test_a_missing_module_makes_no_request(tmp_path):
    answer, left = run_probe(tmp_path, fake={"import_error": "no requests_unixsocket"})
    assert answer["missing"] == ["requests_unixsocket (stand-in: no requests_unixsocket)"]
    assert answer["request"] is None and left == []


@pytest.mark.skipif(not os.path.exists(PYTHON36), reason="needs CPython 3.6 (pyenv 3.6.15), the Python of pbs_python 22.05.11")
def test_python_36(tmp_path):
    answer, left = run_probe(tmp_path, python=PYTHON36, fake={"raise": "Not supported URL scheme http+unix"})
    assert answer["version"] == "3.6"
    assert answer["request"] == {"ok": False, "error": "ValueError: Not supported URL scheme http+unix"}
    answer, left = run_probe(tmp_path, python=PYTHON36, fake={})
    assert answer["request"] == {"ok": True, "error": ""} and left == []
