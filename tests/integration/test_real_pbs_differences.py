"""What a real OpenPBS 23.06 showed that the mock once did not, asserted on both backends.

Each test states the real behaviour (measured on the ``openpbs`` backend, the arbiter) and
runs on the mock too, so the mock cannot drift from it again.  The differences that need a
whole scenario are asserted where that scenario lives:

- ``pbs_python`` crashing after a dropped ``release_nodes()`` result: the emulator test in
  ``tests/unit/hooks`` and every pruning test here (the walkthrough, the demo);
- a job held after too many failed starts under ``job_run_wait = execjob_hook`` (comment
  overwritten, hold ``s`` and ``run_count`` tell): ``test_held_jobs.py``;
- Debian 12's externally managed Python and its ``python3-requests*`` packages:
  ``test_cray_atom.py``.
"""
import pytest

import pbsjobs

pytestmark = [pytest.mark.integration, pytest.mark.cluster_moms(1)]


def qmgr(cluster, directive):
    return pbsjobs.run(cluster, pbsjobs.SERVER, ["qmgr", "-c", directive], check=False)


def test_unset_attribute_with_a_default_is_still_listed(pbs_cluster):
    """After ``unset server scheduler_iteration`` the listing shows its default, 600."""
    assert qmgr(pbs_cluster, "set server scheduler_iteration = 300").returncode == 0
    assert qmgr(pbs_cluster, "unset server scheduler_iteration").returncode == 0
    listing = qmgr(pbs_cluster, "list server scheduler_iteration")
    assert listing.returncode == 0
    assert "    scheduler_iteration = 600" in listing.stdout.splitlines(), listing.stdout


def test_list_of_a_missing_sched_and_queue(pbs_cluster):
    """``list sched nosuch``: rc 0 and nothing; ``list queue nosuchq``: rc 1 and two lines."""
    sched = qmgr(pbs_cluster, "list sched nosuch")
    assert (sched.returncode, sched.stdout.strip(), sched.stderr.strip()) == (0, "", "")
    queue = qmgr(pbs_cluster, "list queue nosuchq")
    assert queue.returncode == 1
    text = queue.stdout + queue.stderr
    assert "qmgr obj=nosuchq svr=default: Unknown queue" in text, text
    assert "qmgr: Error (15018) returned from server" in text, text


def test_bad_default_qsub_arguments_break_qsub_until_fixed(pbs_cluster):
    """``-W foo`` in ``default_qsub_arguments``: qsub fails with ``qsub: directive error:
    -W foo``; once unset, qsub works again (the first try may still fail with the
    background qsub's ``Failed to recv data from background qsub``)."""
    assert qmgr(pbs_cluster, 'set server default_qsub_arguments = "-W foo"').returncode == 0
    try:
        bad = pbsjobs.qsub(pbs_cluster, ["--", "/bin/true"], check=False)
        assert bad.returncode != 0
        assert "qsub: directive error: -W foo" in bad.stderr, bad.stderr
    finally:
        assert qmgr(pbs_cluster, "unset server default_qsub_arguments").returncode == 0
    results = [pbsjobs.qsub(pbs_cluster, ["--", "/bin/true"], check=False) for _unused in range(2)]
    if results[0].returncode != 0:
        assert "Failed to recv data from background qsub" in results[0].stderr, results[0].stderr
    assert results[-1].returncode == 0, results[-1].stderr


def test_pbs_cgroups_ships_disabled_with_execjob_resize(pbs_cluster):
    """OpenPBS 23.06's ``pbs_cgroups`` is a site hook, disabled, with ``execjob_resize``."""
    listing = qmgr(pbs_cluster, "list hook pbs_cgroups")
    assert listing.returncode == 0, listing.stderr
    attrs = {}
    for line in listing.stdout.replace(",\n\t", ",").splitlines():
        if " = " in line:
            key, value = line.strip().split(" = ", 1)
            attrs[key] = value
    assert attrs.get("type") == "site"
    assert attrs.get("enabled") == "false"
    assert "execjob_resize" in attrs.get("event", "").split(","), attrs
