"""hpc.pbs.held_jobs behaviour the other tests leave unchecked.

The tests cover edges of ``plugins/modules/held_jobs.py`` that the other unit tests leave
unchecked: the values RETURN documents as ``returned: always`` (with O(state=listed) too), the
diff of a listing, the per-queue counts, the user of an entry, a qstat whose listing cannot be
parsed, and what the module makes of real ``qrls`` stderr and exit codes (OpenPBS
src/cmds/qrls.c: ``prt_job_err()`` prints ``qrls: <message> <job id>``; a lost connection
prints the ``cnt2server()`` line, such as ``System call failure.``, then ``qrls: cannot connect
to server <server> (errno=<n>)`` without a job id; a security library that cannot start prints
``qrls: unable to initialize security library.`` and exits 1 before releasing anything;
otherwise qrls exits with the errno of its last failure modulo 256), and ids and names given as
YAML numbers. qstat and qrls are faked at the process boundary (``held_jobs_fakes``).
"""
import pytest

from ansible_collections.hpc.pbs.plugins.modules import held_jobs
from held_jobs_fakes import FakePbs, run_held_jobs as run, wired

LOST = "System call failure.\nqrls: cannot connect to server vm (errno=15010)\n"


class ScriptedQrlsPbs(FakePbs):
    """The module tests' fake, whose qrls, when ``qrls_answer`` is set to ``(rc, stderr,
    ids it releases)``, answers that instead of releasing every id it is given."""

    NOT_SCRIPTED = (None, "", ())
    qrls_answer = NOT_SCRIPTED

    def run_command(self, args, **kwargs):
        if args[0] != self.qrls or self.qrls_answer is self.NOT_SCRIPTED:
            return super().run_command(args, **kwargs)
        self.calls.append(list(args))
        rc, err, released = self.qrls_answer
        for job_id in released:
            self.release(self.jobs[job_id], "Q")
        return rc, "", err


@pytest.fixture
def pbs(pbs_install, answer_commands, monkeypatch):
    return wired(ScriptedQrlsPbs, pbs_install, answer_commands, monkeypatch)


# -- listing -------------------------------------------------------------------------------
def test_a_listing_returns_every_documented_value_and_its_diff(pbs):
    """RETURN: released, still_held and commands are ``returned: always`` (empty when
    listing); a listing's diff shows the same held jobs before and after, under headers;
    per_queue counts every held job of a queue; an entry's user is the user part of
    Job_Owner."""
    pbs.held_job("12.vm", owner="alice@vm")
    pbs.held_job("13.vm", owner="bob@vm")
    pbs.held_job("20.vm", queue="bigq", owner="alice@vm")
    code, result = run(pbs, diff=True)
    assert code == 0, result
    assert (result["released"], result["still_held"], result["commands"]) == ([], [], [])
    assert result["changed"] is False and result["count"] == 3
    assert result["per_queue"] == {"workq": {"jobs": 2, "arrays": 0, "subjobs": 0},
                                   "bigq": {"jobs": 1, "arrays": 0, "subjobs": 0}}
    assert [(e["id"], e["user"]) for e in result["jobs"]] == [
        ("12.vm", "alice"), ("13.vm", "bob"), ("20.vm", "alice")]
    assert result["diff"] == {
        "before": "12.vm (failed_starts)\n13.vm (failed_starts)\n20.vm (failed_starts)\n",
        "after": "12.vm\n13.vm\n20.vm\n",
        "before_header": "under a system hold (before)",
        "after_header": "under a system hold (after)"}


def test_state_defaults_to_listed(pbs):
    """DOCUMENTATION: O(state) defaults to C(listed)."""
    pbs.held_job("12.vm")
    code, result = run(pbs)
    assert code == 0, result
    assert result["invocation"]["module_args"]["state"] == "listed"
    assert not pbs.qrls_calls()


def test_unparsable_text_listing_fails_with_its_message(pbs):
    """A qstat without ``-F json`` whose ``qstat -f -t`` output is not qstat's format."""
    pbs.has_json = False
    pbs.text_listing = lambda: "    job_state = H\n"
    code, result = run(pbs)
    assert code == 1, result
    assert result["msg"].startswith("cannot parse the output of qstat -f -t: ")
    assert result["stdout"] == "    job_state = H\n"


# -- numbers given in YAML -----------------------------------------------------------------
def test_a_job_id_given_as_a_yaml_number_is_the_job_id(pbs):
    """``job_ids: [12]`` - the documented form C(N), which YAML reads as a number."""
    pbs.held_job("12.vm")
    pbs.held_job("13.vm")
    code, result = run(pbs, job_ids=[12])
    assert code == 0, result
    assert [e["id"] for e in result["jobs"]] == ["12.vm"]


def test_a_user_given_as_a_yaml_number_is_the_user_name(pbs):
    pbs.held_job("12.vm", owner="1001@vm")
    pbs.held_job("13.vm", owner="bob@vm")
    code, result = run(pbs, users=[1001])
    assert code == 0, result
    assert [(e["id"], e["user"]) for e in result["jobs"]] == [("12.vm", "1001")]


def test_a_queue_given_as_a_yaml_number_is_read_as_a_name(pbs):
    """A PBS queue name starts with a letter (qmgr's check_list()), so a number names no
    queue: nothing is selected, and the module does not break on it."""
    pbs.held_job("12.vm")
    code, result = run(pbs, queues=[7])
    assert code == 0, result
    assert result["jobs"] == [] and result["count"] == 0


# -- what qrls says ------------------------------------------------------------------------
def released(pbs, **args):
    pbs.held_job("12.vm")
    pbs.held_job("13.vm")
    return run(pbs, state="released", **args)


@pytest.mark.parametrize("rc, stderr, reasons", [
    # qrls refuses 12.vm (its line names it) and cannot reach the server for 13.vm (its
    # lines name no job): each failure is given its own text only.
    (162, "qrls: Unauthorized Request 12.vm\n" + LOST,
     "12.vm: Unauthorized Request; 13.vm: System call failure.; qrls: cannot connect to "
     "server vm (errno=15010)"),
    # The connection lines for 12.vm come first; the refusal of 13.vm after them is still
    # read as its own.
    (159, LOST + "qrls: Unauthorized Request 13.vm\n",
     "12.vm: System call failure.; qrls: cannot connect to server vm (errno=15010); 13.vm: "
     "Unauthorized Request"),
], ids=["refusal-then-lost-connection", "lost-connection-then-refusal"])
def test_a_refusal_and_a_lost_connection_are_each_reported_with_their_own_text(pbs, rc, stderr, reasons):
    pbs.qrls_answer = (rc, stderr, [])
    code, result = released(pbs)
    assert code == 1, result
    assert result["msg"] == "qrls refused to release 2 of 2 jobs: %s. The others were released." % reasons
    assert result["failed_ids"] == ["12.vm", "13.vm"]


def test_qrls_exiting_1_without_releasing_is_a_failure(pbs):
    """qrls exits 1 when its security library does not start; nothing was released."""
    pbs.qrls_answer = (1, "qrls: unable to initialize security library.\n", [])
    code, result = released(pbs)
    assert code == 1, result
    assert result["failed_ids"] == ["12.vm", "13.vm"] and result["released"] == []
    assert "12.vm: qrls: unable to initialize security library." in result["msg"]


def test_a_job_held_again_after_a_successful_qrls_is_still_held_not_a_failure(pbs):
    """qrls exits 0; a job the next listing shows under a system hold again (held anew
    after release) is returned in still_held, and the run does not fail."""
    pbs.qrls_answer = (0, "", ["12.vm"])
    code, result = released(pbs)
    assert code == 0, result
    assert result["still_held"] == ["13.vm"] and result["released"] == ["12.vm", "13.vm"]
    assert result["changed"] is True


def test_release_batches_split_the_ids_without_losing_one(pbs, monkeypatch):
    """Ids are given to qrls in batches of at most QRLS_BATCH, in order, each once."""
    monkeypatch.setattr(held_jobs, "QRLS_BATCH", 2)
    for number in range(12, 17):
        pbs.held_job("%d.vm" % number)
    code, result = run(pbs, state="released")
    assert code == 0, result
    assert [c[3:] for c in pbs.qrls_calls()] == [["12.vm", "13.vm"], ["14.vm", "15.vm"],
                                                 ["16.vm"]]
    assert result["commands"] == pbs.qrls_calls() and result["still_held"] == []
    assert all(j["job_state"] == "Q" for j in pbs.jobs.values())
