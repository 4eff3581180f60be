"""The openpbs backend of the cluster launcher runs ``pbs_habitat`` again when its data
service set-up failed (a race inside real PBS's own pbs_db_utility), and only then."""
import os
import sys
import types

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "integration"))
from launcher import openpbs  # noqa: E402  pylint: disable=wrong-import-position

HABITAT = "/opt/pbs/libexec/pbs_habitat"
RACE = ("*** Error initializing the PBS dataservice\nError details:\ncreatedb: error: connection to "
        "server on socket \"/var/run/postgresql/.s.PGSQL.15007\" failed: No such file or directory\n")


@pytest.fixture
def habitat(monkeypatch, tmp_path):
    """A pbs_habitat whose runs log and fail as ``outcomes`` says, one entry a run: the text
    it logs before failing, or None for a run that succeeds."""
    fake = types.SimpleNamespace(log=tmp_path / "daemons.log", outcomes=[], runs=[])

    def run(argv, env, log_path):
        assert argv == [HABITAT] and log_path == fake.log
        fake.runs.append(argv)
        failure = fake.outcomes[len(fake.runs) - 1]
        with open(log_path, "a") as handle:
            handle.write("==== %s\n%s" % (HABITAT, failure or "*** End of pbs_postinstall\n"))
        if failure is not None:
            raise openpbs.BackendError("%s exited 1; see %s" % (HABITAT, log_path))

    monkeypatch.setattr(openpbs, "_run", run)
    fake.pauses = []
    monkeypatch.setattr(openpbs.time, "sleep", fake.pauses.append)
    return fake


def test_a_failed_data_service_set_up_is_run_again(habitat):
    habitat.outcomes = [RACE, RACE, None]
    openpbs._run_habitat({}, habitat.log)
    assert len(habitat.runs) == 3
    assert habitat.pauses == [openpbs.HABITAT_PAUSE, 2 * openpbs.HABITAT_PAUSE]  # a longer pause each time


def test_it_gives_up_after_the_last_try(habitat):
    habitat.outcomes = [RACE] * openpbs.HABITAT_TRIES
    with pytest.raises(openpbs.BackendError, match="pbs_habitat exited 1"):
        openpbs._run_habitat({}, habitat.log)
    assert len(habitat.runs) == openpbs.HABITAT_TRIES


def test_another_failure_is_not_run_again(habitat):
    habitat.outcomes = ["*** Error starting pbs server\n"]
    with pytest.raises(openpbs.BackendError):
        openpbs._run_habitat({}, habitat.log)
    assert len(habitat.runs) == 1


def test_only_what_this_run_logged_counts(habitat):
    """A data service failure logged by an earlier start of the node does not make another
    failure look like one."""
    habitat.log.write_text(RACE)
    habitat.outcomes = ["*** Error starting pbs server\n"]
    with pytest.raises(openpbs.BackendError):
        openpbs._run_habitat({}, habitat.log)
    assert len(habitat.runs) == 1
