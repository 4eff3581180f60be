"""Typed values of the qmgr attributes the collection knows, and the values real OpenPBS
lists after an unset (module_utils.qmgr_attributes), checked through the one place commands
are built (``qmgr.value_problem`` / ``qmgr.set_command``)."""

import os
import pytest
from ansible_collections.hpc.pbs.plugins.module_utils.server import qmgr_attributes
from ansible_collections.hpc.pbs.plugins.module_utils.server.qmgr import (
    QmgrValueError, parse_list_output, set_command, value_problem)


REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                         "reference", "openpbs")


@pytest.mark.parametrize("object_type,attribute,value,operator", [
    ("server", "scheduling", "True", "="), ("server", "scheduling", "f", "="),
    ("server", "scheduling", "Y", "="), ("server", "scheduler_iteration", "1", "="),
    ("server", "scheduler_iteration", "600", "="), ("sched", "scheduler_iteration", "60", "="),
    ("server", "resend_term_delay", "1800", "="), ("server", "resend_term_delay", "0", "="),
    ("server", "max_job_sequence_id", "9999999", "="),
    ("sched", "job_run_wait", "execjob_hook", "="), ("sched", "job_run_wait", "none", "="),
    ("sched", "sched_cycle_length", "00:20:00", "="), ("node", "state", "offline", "="),
    ("node", "state", "offline,down", "="), ("node", "state", "offline", "+="),
    ("node", "state", "free", "="), ("node", "sharing", "force_exclhost", "="),
    ("node", "resources_available.ncpus", "4", "="), ("server", "resources_default.ncpus", "1", "="),
    ("queue", "resources_max.mem", "64gb", "="), ("queue", "resources_max.mem", "1024", "="),
    ("queue", "resources_max.vmem", "2Kw", "="), ("queue", "resources_max.walltime", "01:00:00", "="),
    ("queue", "resources_max.walltime", "3600", "="), ("queue", "resources_default.walltime", "10:00.5", "="),
    ("node", "resources_available.accelerator", "True", "="),
    ("node", "resources_available.my_custom", "anything at all", "="),
    ("server", "default_qsub_arguments", "-r n -W umask=022 -W tolerate_node_failures=job_start", "="),
    ("server", "default_qsub_arguments", "", "="), ("server", "default_queue", "workq", "="),
    ("hook", "enabled", "TRUE", "="), ("hook", "alarm", "30", "="), ("hook", "order", "1000", "="),
    ("pbshook", "order", "-1000", "="), ("pbshook", "order", "2000", "="),
    ("hook", "event", "", "="), ("hook", "event", "queuejob,execjob_launch", "="),
    ("hook", "fail_action", "offline_vnodes,scheduler_restart_cycle", "="),
    ("hook", "user", "pbsuser", "="), ("server", "comment", "any text, even = and #", "="),
    ("server", "rpp_retry", "not typed here", "="),
])
def test_values_pbs_takes_are_accepted(object_type, attribute, value, operator):
    assert value_problem(object_type, attribute, value, operator) is None


@pytest.mark.parametrize("object_type,attribute,value,operator,wrong,accepted", [
    ("server", "scheduling", "yes", "=", "not a PBS boolean", "True or False"),
    ("server", "scheduling", "tRue", "=", "not a PBS boolean", "True or False"),
    ("server", "scheduling", "", "=", "not a PBS boolean", "True or False"),
    ("server", "scheduler_iteration", "-5", "=", "out of range", ">= 1"),
    ("server", "scheduler_iteration", "0", "=", "out of range", ">= 1"),
    ("sched", "scheduler_iteration", "abc", "=", "not a whole number", ">= 1"),
    ("server", "scheduler_iteration", "1.5", "=", "not a whole number", ">= 1"),
    ("server", "resend_term_delay", "1801", "=", "out of range", "from 0 to 1800"),
    ("server", "max_job_sequence_id", "99", "=", "out of range", "from 9999999"),
    ("sched", "job_run_wait", "sometimes", "=", "not accepted", "none, runjob_hook, execjob_hook"),
    ("sched", "job_run_wait", "RUNJOB_HOOK", "=", "not accepted", "runjob_hook"),
    ("node", "state", "bogus", "=", "not accepted", "free, offline"),
    ("node", "state", "bogus", "+=", "not accepted", "free, offline"),
    ("node", "state", "free,offline", "=", "cannot be combined", "free, offline"),
    ("node", "sharing", "shared", "=", "not accepted", "default_shared"),
    ("node", "resources_available.ncpus", "abc", "=", "not a whole number", ">= 0"),
    ("node", "resources_available.ncpus", "-1", "=", "out of range", ">= 0"),
    ("queue", "resources_max.mem", "4.5gb", "=", "not a size", "kb, mb"),
    ("queue", "resources_max.mem", "4gbx", "=", "not a size", "kb, mb"),
    ("queue", "resources_max.walltime", "1h", "=", "not a duration", "[[HH:]MM:]SS"),
    ("queue", "resources_max.walltime", "1:2:3:4", "=", "not a duration", "[[HH:]MM:]SS"),
    ("server", "default_qsub_arguments", "-W tolerate_node_failures=bogus", "=",
     "tolerate_node_failures must be one of", "qsub options only"),
    ("server", "default_qsub_arguments", "-W foo", "=", "name=value", "qsub options only"),
    ("server", "default_qsub_arguments", "-Z", "=", "qsub would refuse", "qsub options only"),
    ("server", "default_qsub_arguments", "-r n /bin/sleep", "=", "only hold qsub options",
     "qsub options only"),
    ("server", "default_queue", "workq, scheduling = False", "=", "queue name",
     "the queue must also exist"),
    ("hook", "enabled", "maybe", "=", "not a hook boolean", "true or false"),
    ("hook", "alarm", "0", "=", "out of range", ">= 1"),
    ("hook", "order", "1001", "=", "out of range", "from 1 to 1000"),
    ("pbshook", "order", "2001", "=", "out of range", "from -1000 to 2000"),
    ("hook", "event", "queuejob,nosuch", "=", "'nosuch' is not accepted", "execjob_launch"),
    ("hook", "user", "root", "=", "not accepted", "pbsadmin, pbsuser"),
])
def test_values_of_the_wrong_type_are_refused_saying_what_is_accepted(
        object_type, attribute, value, operator, wrong, accepted):
    problem = value_problem(object_type, attribute, value, operator)
    assert problem and wrong in problem and accepted in problem, problem
    assert problem.startswith("%s attribute %s" % (object_type, attribute))
    with pytest.raises(QmgrValueError):
        set_command(object_type, "x" if object_type != "server" else None, attribute, value,
                    operator)


def test_resource_kinds_apply_only_to_resource_attributes_of_resource_objects():
    assert qmgr_attributes.attribute_kind("node", "resources_available.ncpus") is not None
    assert qmgr_attributes.attribute_kind("node", "resources_assigned.ncpus") is None
    assert qmgr_attributes.attribute_kind("hook", "resources_available.ncpus") is None
    assert qmgr_attributes.attribute_kind("server", "no_such_attribute") is None


def test_booleans_compare_by_truth():
    assert qmgr_attributes.same_text("server", "scheduling", "1", "True")
    assert qmgr_attributes.same_text("server", "scheduling", "f", "False")
    assert not qmgr_attributes.same_text("server", "scheduling", "True", "False")
    assert not qmgr_attributes.same_text("server", "scheduling", "True", None)
    assert qmgr_attributes.same_text("hook", "enabled", "True", "true")
    assert not qmgr_attributes.same_text("server", "comment", "a", "A")


def _transcript_listing(filename, command):
    """The objects ``qmgr -c COMMAND`` printed in a reference transcript."""
    with open(os.path.join(REFERENCE, filename)) as handle:
        text = handle.read()
    marker = '$ qmgr -c "%s"\n--- stdout ---\n' % command
    start = text.index(marker) + len(marker)
    return parse_list_output(text[start:text.index("--- stderr ---", start)])


@pytest.mark.parametrize("object_type,command", [("server", "list server"),
                                                 ("sched", "list sched")])
def test_listed_defaults_are_what_a_fresh_openpbs_lists(object_type, command):
    listed = _transcript_listing("a_qmgr_server_sched_hook_listing.txt", command)[0][2]
    defaults = qmgr_attributes.LISTED_DEFAULTS[object_type]
    assert defaults
    for attribute, value in defaults.items():
        assert listed[attribute] == value, attribute


def test_attributes_without_a_listed_default_disappear_after_unset():
    # mgr_server_unset() puts these back; node_fail_requeue / default_queue it does not.
    assert qmgr_attributes.listed_default("server", "scheduler_iteration") == "600"
    assert qmgr_attributes.listed_default("server", "node_fail_requeue") is None
    assert qmgr_attributes.listed_default("server", "default_queue") is None
    assert qmgr_attributes.listed_default("hook", "alarm") == "30"
    assert qmgr_attributes.listed_default("queue", "max_run") is None


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
