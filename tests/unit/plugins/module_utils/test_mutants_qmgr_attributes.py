"""Edges of the typed qmgr attribute values that mutation testing found untested
(docs/testing.md, "Mutation testing").

Each test kills mutants of ``plugins/module_utils/qmgr_attributes.py`` that the other unit
tests let survive: a hook boolean compared with its opposite, the range ends OpenPBS 23.06
checks (``set_max_job_sequence_id()`` 9999999 to PBS_SEQNUMTOP 999999999999,
``svr_max_conc_prov_action()`` refusing a value <= 0, ``node_fail_requeue`` 0 meaning
"never requeue" in node_manager.c, a TCP port 1 to 65535), single-valued choices, the
"accepted" text of a number of any sign, and which problem a bad node state reports.
"""
import pytest

from ansible_collections.hpc.pbs.plugins.module_utils import qmgr_attributes
from ansible_collections.hpc.pbs.plugins.module_utils.qmgr import value_problem


# -- hook booleans (hook.c reads true|t|y|1 and false|f|n|0 in any case) ---------------------

@pytest.mark.parametrize("desired, listed", [
    ("true", "false"), ("T", "f"), ("y", "N"), ("1", "0"),
    ("false", "true"), ("F", "t"), ("n", "Y"), ("0", "1"),
])
def test_a_hook_boolean_never_matches_its_opposite(desired, listed):
    """qmgr lists ``enabled = false``: a task wanting it true must change it (and back)."""
    assert qmgr_attributes.same_text("hook", "enabled", desired, listed) is False
    assert qmgr_attributes.same_text("pbshook", "debug", desired, listed) is False


@pytest.mark.parametrize("desired, listed", [("TRUE", "true"), ("t", "true"),
                                             ("N", "false"), ("0", "false")])
def test_a_hook_boolean_matches_its_own_truth_in_any_spelling(desired, listed):
    assert qmgr_attributes.same_text("hook", "enabled", desired, listed) is True


def test_hook_boolean_truth_values():
    assert [qmgr_attributes.HOOK_BOOL.truth(w) for w in ("True", "y", "1")] == [True] * 3
    assert [qmgr_attributes.HOOK_BOOL.truth(w) for w in ("FALSE", "n", "0")] == [False] * 3
    assert qmgr_attributes.HOOK_BOOL.truth("yes") is None


# -- range ends the server checks -------------------------------------------------------------

@pytest.mark.parametrize("object_type, attribute, value", [
    ("server", "max_job_sequence_id", "999999999999"),   # PBS_SEQNUMTOP
    ("server", "max_concurrent_provision", "1"),         # > 0
    ("server", "node_fail_requeue", "0"),                # 0: jobs of a down node stay
    ("node", "Port", "1"),
    ("node", "Port", "65535"),
])
def test_the_last_value_pbs_takes_is_accepted(object_type, attribute, value):
    assert value_problem(object_type, attribute, value) is None


@pytest.mark.parametrize("object_type, attribute, value, accepted", [
    ("server", "max_job_sequence_id", "1000000000000", "from 9999999 to 999999999999"),
    ("server", "max_concurrent_provision", "0", ">= 1"),
    ("server", "node_fail_requeue", "-1", ">= 0 (seconds)"),
    ("node", "Port", "0", "from 1 to 65535"),
    ("node", "Port", "65536", "from 1 to 65535"),
])
def test_the_first_value_past_the_end_is_refused(object_type, attribute, value, accepted):
    problem = value_problem(object_type, attribute, value)
    assert problem == "%s attribute %s: %s is out of range; accepted: a whole number %s" % (
        object_type, attribute, value, accepted)


def test_a_number_of_any_sign_says_so():
    """preempt_queue_prio is a plain long: no bound, and the message says it."""
    assert value_problem("sched", "preempt_queue_prio", "-5") is None
    assert value_problem("sched", "preempt_queue_prio", "high") == (
        "sched attribute preempt_queue_prio: 'high' is not a whole number; "
        "accepted: a whole number (any sign)")


# -- choices ----------------------------------------------------------------------------------

@pytest.mark.parametrize("object_type, attribute, value", [
    ("node", "sharing", "default_shared,default_excl"),
    ("sched", "job_run_wait", "none,runjob_hook"),
    ("hook", "user", "pbsadmin,pbsuser"),
])
def test_a_single_valued_choice_refuses_a_list(object_type, attribute, value):
    problem = value_problem(object_type, attribute, value)
    assert problem and "%r is not accepted" % value in problem and "accepted: one of " in problem, problem


def test_a_bad_node_state_beside_free_is_named_as_the_problem():
    """The unknown state is the error to fix, not the combination with free."""
    problem = value_problem("node", "state", "free,bogus", "=")
    assert problem.startswith("node attribute state: 'bogus' is not accepted;"), problem
