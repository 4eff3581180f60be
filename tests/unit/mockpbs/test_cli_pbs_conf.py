"""The mock's clients find their server as real ones do: through ``$PBS_CONF_FILE`` or
``/etc/pbs.conf`` only. Texts and exit codes as a real OpenPBS 23.06.06 printed them on the
test cluster's real backend, with no pbs.conf at all, and with a pbs.conf whose
``PBS_SERVER`` does not resolve:

    pbsconf error: pbs conf variables not found: PBS_HOME PBS_EXEC PBS_SERVER
    Failed to load pbs.conf file                                  (qmgr, rc 2)
    No such file or directory
    qstat: cannot connect to server  (errno=0)                    (qstat, rc 255)
    Unknown Host.
    qmgr: cannot connect to server                                (qmgr, rc 3)
    qstat: cannot connect to server pbs-retired (errno=15008)     (qstat, rc 255)
    /opt/pbs/bin/pbsnodes: cannot connect to server pbs-retired, error=15008   (rc 1)

(the mock's pbsnodes names itself ``pbsnodes``: it does not know the path it was run by).
A server that is up and named by the conf file the client was given answers.
"""
import pytest

from mockpbs.cli import pbsnodes, qmgr, qstat
from mockpbs.testing import server as testing

NO_CONF = "pbsconf error: pbs conf variables not found: PBS_HOME PBS_EXEC PBS_SERVER\n"


@pytest.fixture
def no_environment(monkeypatch):
    for key in ("PBS_CONF_FILE", "PBS_SERVER", "PBS_HOME", "PBS_EXEC"):
        monkeypatch.delenv(key, raising=False)
    return monkeypatch


def test_without_any_pbs_conf_the_clients_fail_as_real_ones(no_environment, tmp_path):
    no_environment.setenv("PBS_CONF_FILE", str(tmp_path / "absent.conf"))
    assert testing.run_cli(qmgr.main, ["-c", "list server"]) == (
        2, "", NO_CONF + "Failed to load pbs.conf file\n")
    assert testing.run_cli(qstat.main, ["-f"]) == (
        255, "", NO_CONF + "No such file or directory\nqstat: cannot connect to server  (errno=0)\n")
    assert testing.run_cli(pbsnodes.main, ["-a", "-F", "json"]) == (
        1, "", NO_CONF + "No such file or directory\npbsnodes: cannot connect to server , error=0\n")


def test_a_server_name_that_does_not_resolve_is_an_unknown_host(no_environment, tmp_path):
    conf = tmp_path / "pbs.conf"
    conf.write_text("PBS_SERVER=pbs-retired.invalid\nPBS_HOME=%s\nPBS_EXEC=/opt/pbs\n" % tmp_path)
    no_environment.setenv("PBS_CONF_FILE", str(conf))
    assert testing.run_cli(qmgr.main, ["-c", "list server"]) == (
        3, "", "Unknown Host.\nqmgr: cannot connect to server \n")
    assert testing.run_cli(qstat.main, ["-f"]) == (
        255, "", "Unknown Host.\nqstat: cannot connect to server pbs-retired.invalid (errno=15008)\n")
    assert testing.run_cli(pbsnodes.main, ["-a", "-F", "json"]) == (
        1, "", "Unknown Host.\npbsnodes: cannot connect to server pbs-retired.invalid, error=15008\n")


def test_the_conf_file_given_names_the_server_that_answers(server, tmp_path, monkeypatch):
    # start_server points PBS_CONF_FILE at its own pbs.conf: the clients reach it.
    rc, out, err = testing.run_cli(qmgr.main, ["-c", "list server scheduling"])
    assert (rc, err) == (0, "") and "scheduling = True" in out
