"""Attribute tables of server, sched, queue, node and hook objects as OpenPBS 23.06 defines
them: each attribute's kind (``bool``, ``int``, ``str``, ``list`` (comma array), ``ro``
(read-only)), the order qmgr and pbsnodes list them in, and the words PBS reads as booleans.

Shared ground: the qmgr language (client side) checks attribute names against these
tables; the server checks values and orders its listings with them.
"""
from mockpbs import hookdefs

SERVER_ATTRS = [
    ("server_state", "ro"), ("server_host", "ro"), ("scheduling", "bool"), ("max_running", "int"),
    ("total_jobs", "ro"), ("state_count", "ro"), ("acl_host_enable", "bool"), ("acl_hosts", "list"),
    ("acl_user_enable", "bool"), ("acl_users", "list"), ("acl_roots", "list"), ("comment", "str"),
    ("default_queue", "str"), ("flatuid", "bool"), ("log_events", "int"), ("mailer", "str"),
    ("mail_from", "str"), ("managers", "list"), ("max_user_run", "int"), ("max_group_run", "int"),
    ("operators", "list"), ("query_other_jobs", "bool"), ("resources_available", "str"),
    ("resources_default", "str"), ("default_chunk", "str"), ("resources_max", "str"),
    ("resources_assigned", "ro"), ("scheduler_iteration", "int"), ("resv_enable", "bool"),
    ("node_fail_requeue", "int"), ("max_array_size", "int"), ("resend_term_delay", "int"),
    ("default_qsub_arguments", "str"), ("pbs_license_min", "int"), ("pbs_license_max", "int"),
    ("pbs_license_linger_time", "int"), ("license_count", "ro"), ("pbs_version", "ro"),
    ("eligible_time_enable", "bool"), ("job_history_enable", "bool"),
    ("job_history_duration", "str"), ("max_concurrent_provision", "int"),
    ("clear_topjob_estimates_enable", "bool"), ("power_provisioning", "ro"),
    ("max_job_sequence_id", "int"), ("job_requeue_timeout", "str"), ("rpp_retry", "int"),
    ("single_signon_password_enable", "bool"), ("python_restart_max_hooks", "int"),
    ("python_restart_max_objects", "int"), ("python_restart_min_interval", "str"),
    ("max_queued", "str"), ("max_run", "str"), ("node_group_enable", "bool"),
    ("node_group_key", "str"), ("backfill_depth", "int"), ("job_sort_formula", "str"),
]
SERVER_KIND = dict(SERVER_ATTRS)
SERVER_ORDER = [name for name, _unused in SERVER_ATTRS]
RESOURCE_PREFIXES = {"resources_available", "resources_default", "default_chunk", "resources_max",
                     "resources_assigned", "resources_min"}

SCHED_ATTRS = [
    ("sched_host", "str"), ("sched_cycle_length", "str"), ("throughput_mode", "bool"),
    ("job_run_wait", "str"), ("partition", "str"), ("sched_priv", "str"), ("sched_log", "str"),
    ("scheduling", "bool"), ("scheduler_iteration", "int"), ("state", "str"),
    ("preempt_queue_prio", "int"), ("preempt_prio", "str"), ("preempt_order", "str"),
    ("preempt_sort", "str"), ("log_events", "int"), ("server_dyn_res_alarm", "int"),
    ("comment", "str"), ("do_not_span_psets", "bool"), ("only_explicit_psets", "bool"),
    ("opt_backfill_fuzzy", "str"), ("pbs_version", "ro"),
]
SCHED_KIND = dict(SCHED_ATTRS)
SCHED_ORDER = [name for name, _unused in SCHED_ATTRS]
JOB_RUN_WAIT_VALUES = ("none", "runjob_hook", "execjob_hook")

QUEUE_ATTRS = [
    ("queue_type", "str"), ("Priority", "int"), ("total_jobs", "ro"), ("state_count", "ro"),
    ("max_queued", "str"), ("max_run", "str"), ("acl_user_enable", "bool"), ("acl_users", "list"),
    ("resources_max", "str"), ("resources_min", "str"), ("resources_default", "str"),
    ("default_chunk", "str"), ("resources_assigned", "ro"), ("comment", "str"),
    ("max_running", "int"), ("enabled", "bool"), ("started", "bool"),
]
QUEUE_KIND = dict(QUEUE_ATTRS)
QUEUE_ORDER = [name for name, _unused in QUEUE_ATTRS]

NODE_ATTRS = [
    ("Mom", "str"), ("Port", "int"), ("pbs_version", "ro"), ("ntype", "ro"), ("state", "str"),
    ("pcpus", "ro"), ("jobs", "ro"), ("resources_available", "str"), ("resources_assigned", "ro"),
    ("comment", "str"), ("resv_enable", "bool"), ("sharing", "str"), ("queue", "str"),
    ("license", "ro"), ("last_state_change_time", "ro"), ("last_used_time", "ro"),
    ("priority", "int"),
]
NODE_KIND = dict(NODE_ATTRS)
NODE_ORDER = [name for name, _unused in NODE_ATTRS]
NODE_ASSIGNED_SHOWN = ("accelerator_memory", "hbmem", "mem", "naccelerators", "ncpus", "vmem")
NODE_STATES = ("free", "offline", "down", "job-busy", "job-exclusive", "state-unknown")

HOOK_ATTR_NAMES = hookdefs.HOOK_ATTRIBUTE_ORDER

KINDS = {"server": SERVER_KIND, "sched": SCHED_KIND, "queue": QUEUE_KIND, "node": NODE_KIND}
ORDERS = {"server": SERVER_ORDER, "sched": SCHED_ORDER, "queue": QUEUE_ORDER, "node": NODE_ORDER}

TRUE_WORDS = ("true", "t", "y", "1")
FALSE_WORDS = ("false", "f", "n", "0")


def attribute_known(objtype, name):
    """True if ``name`` (``attr`` or ``attr.resource``) is an attribute of ``objtype``
    (server, sched, queue, node, hook, pbshook)."""
    if objtype in ("hook", "pbshook"):
        return name in HOOK_ATTR_NAMES
    base = name.split(".", 1)[0]
    kind = KINDS[objtype].get(base)
    if kind is None:
        return False
    if "." in name:
        return base in RESOURCE_PREFIXES
    return True


def attribute_kind(objtype, name):
    """The kind of attribute ``name`` of ``objtype``: ``res`` for ``attr.resource``, ``str``
    for a name the table does not know."""
    base = name.split(".", 1)[0]
    if "." in name:
        return "res"
    return KINDS[objtype].get(base, "str")


def ordered_items(objtype, attrs):
    """``attrs`` (dict) as a list of (name, value) in PBS's listing order: definition order,
    resources of one prefix sorted by name, unknown names last."""
    order = ORDERS[objtype]
    position = {name: index for index, name in enumerate(order)}

    def key(item):
        name = item[0]
        base, _unused, resource = name.partition(".")
        return (position.get(base, len(order)), base, resource)

    return sorted(attrs.items(), key=key)
