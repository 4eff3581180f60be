"""Server state: attributes of server, sched, queues, nodes and jobs, hooks, persistence
(the errors the server answers with are in :mod:`mockpbs.server.errors`, the attribute
tables in :mod:`mockpbs.attributes`).

Everything lives in one :class:`State`; ``PBS_HOME/server_priv/mockpbs_state.json`` holds
attributes, nodes, jobs and the job sequence, while hooks are kept in PBS's own layout
``PBS_HOME/server_priv/hooks/NAME.{HK,PY,CF}`` (mode 0644, ``.HK`` leaving defaults out,
transcript c). Attribute values are PBS's attribute text (strings) throughout.
"""
import json
import os
import threading

from mockpbs import PBS_VERSION, attributes, hookdefs
from mockpbs.server import shipped_hooks
from mockpbs.server.errors import PBSE_BADATVAL, PbsError

# ---------------------------------------------------------------------------
# attribute values (the tables of names and kinds are in mockpbs.attributes)


def sort_listed_events(events):
    """``events`` de-duplicated, in the order qmgr lists them."""
    return hookdefs.sort_events(events)


def normalize_value(objtype, name, value):
    """Check ``value`` for attribute ``name`` of ``objtype`` and return PBS's stored form.
    Raises PbsError(15014)."""
    kind = attributes.attribute_kind(objtype, name)
    if kind == "ro":
        raise PbsError(PBSE_BADATVAL, "Cannot set attribute, read only or insufficient permission")
    if kind == "bool":
        word = value.strip().lower()
        if word in attributes.TRUE_WORDS:
            return "True"
        if word in attributes.FALSE_WORDS:
            return "False"
        raise PbsError(PBSE_BADATVAL)
    if kind == "int":
        text = value.strip()
        if not text.lstrip("-").isdigit():
            raise PbsError(PBSE_BADATVAL)
        return str(int(text))
    return value


# Server attributes pbs_server writes back right after ``qmgr unset`` (mgr_server_unset()
# in OpenPBS src/server/req_manager.c), so that ``list server`` still shows them; any other
# unset attribute disappears from the listing (default_queue, node_fail_requeue, ...).
SERVER_UNSET_RESTORED = (
    "scheduling", "log_events", "mailer", "mail_from", "query_other_jobs",
    "resources_default.ncpus", "scheduler_iteration", "resv_enable", "max_array_size",
    "max_concurrent_provision", "eligible_time_enable", "pbs_license_linger_time",
    "pbs_license_max", "pbs_license_min", "clear_topjob_estimates_enable",
)


def default_server_attrs(host):
    """The values ``qmgr unset server ATTR`` puts back (and ``list server`` then shows), by
    attribute: those of :data:`SERVER_UNSET_RESTORED`, as a fresh server lists them."""
    fresh = fresh_server_attrs(host)
    return {name: fresh[name] for name in SERVER_UNSET_RESTORED}


def fresh_server_attrs(host):
    """The server attributes of a fresh installation (transcript a_, ``list server``)."""
    return {
        "server_state": "Active", "server_host": host, "scheduling": "True",
        "default_queue": "workq", "log_events": "511", "mailer": "/usr/sbin/sendmail",
        "mail_from": "adm", "query_other_jobs": "True", "resources_default.ncpus": "1",
        "default_chunk.ncpus": "1", "scheduler_iteration": "600", "resv_enable": "True",
        "node_fail_requeue": "310", "max_array_size": "10000", "resend_term_delay": "5",
        "pbs_license_min": "0", "pbs_license_max": "2147483647",
        "pbs_license_linger_time": "31536000",
        "license_count": "Avail_Global:1000000 Avail_Local:1000000 Used:0 High_Use:0",
        "pbs_version": PBS_VERSION, "eligible_time_enable": "False",
        "max_concurrent_provision": "5", "clear_topjob_estimates_enable": "False",
        "power_provisioning": "False", "max_job_sequence_id": "9999999",
    }


def default_sched_attrs(host, pbs_home):
    return {
        "sched_host": host, "sched_cycle_length": "00:20:00", "throughput_mode": "True",
        "job_run_wait": "runjob_hook", "partition": "pbs-default",
        "sched_priv": os.path.join(pbs_home, "sched_priv"),
        "sched_log": os.path.join(pbs_home, "sched_logs"), "scheduling": "True",
        "scheduler_iteration": "600", "state": "idle", "preempt_queue_prio": "150",
        "preempt_prio": "express_queue, normal_jobs", "preempt_order": "SCR",
        "preempt_sort": "min_time_since_start", "log_events": "767",
        "server_dyn_res_alarm": "30",
    }


def default_queue_attrs():
    return {"queue_type": "Execution", "enabled": "True", "started": "True"}


# ---------------------------------------------------------------------------
# hooks

class Hook:
    """One hook: ``attrs`` holds only explicitly stored values (what ``.HK`` keeps);
    :meth:`effective` fills in the defaults. ``pristine_hk`` is the shipped ``.HK`` text
    of a built-in hook nobody changed yet (written back verbatim)."""

    def __init__(self, name, attrs=None, pristine_hk=None):
        self.name = name
        self.attrs = dict(attrs or {})
        self.pristine_hk = pristine_hk

    @property
    def type(self):
        return self.attrs.get("type", "site")

    def effective(self):
        values = hookdefs.effective(self.attrs)
        values["event"] = ",".join(sort_listed_events(e for e in values.get("event", "").split(",") if e))
        return values

    def events(self):
        return [e for e in self.effective()["event"].split(",") if e]

    def hk_text(self):
        if self.pristine_hk is not None:
            return self.pristine_hk
        lines = {"hook_name": self.name}
        effective = self.effective()
        for key in ("type", "enabled", "debug", "user", "fail_action", "event", "order", "alarm", "freq"):
            value = effective.get(key)
            if value is None:
                continue
            if key == "event":
                value = self.attrs.get("event", "")
            if hookdefs.SITE_HOOK_DEFAULTS.get(key) == value:
                continue
            lines[key] = value
        return hookdefs.format_hk(lines)

    def listing(self):
        """(name, value) pairs in ``qmgr list hook`` order; freq only when set."""
        effective = self.effective()
        out = []
        for key in hookdefs.HOOK_ATTRIBUTE_ORDER:
            if key == "freq" and "freq" not in self.attrs:
                continue
            value = effective.get(key, "")
            if key == "event" and value == "":
                value = '""'
            out.append((key, value))
        return out


# ---------------------------------------------------------------------------
# the state

class State:
    """All server state plus its persistence. Callers hold :attr:`lock` while mutating."""

    STATE_FILE = "mockpbs_state.json"

    def __init__(self, pbs_home, host):
        self.pbs_home = pbs_home
        self.host = host
        self.lock = threading.RLock()
        self.server = fresh_server_attrs(host)
        self.sched = default_sched_attrs(host, pbs_home)
        self.queues = {"workq": default_queue_attrs()}
        self.nodes = {}          # name -> attrs dict (insertion order = creation order)
        self.jobs = {}           # id -> job dict (PROTOCOL.md shape plus private "_" keys)
        self.next_seq = 0
        self.hooks = {}          # name -> Hook
        self.script_versions = {}  # hook name -> times its .PY was written (this run)
        self.pending_delete = set()
        # changes whenever default_qsub_arguments changes; qsub's cache presents the
        # version it holds and gets PBSE_FORCE_QSUB_UPDATE when it is stale
        self.qsub_args_version = "0"

    # paths -----------------------------------------------------------------
    @property
    def priv(self):
        return os.path.join(self.pbs_home, "server_priv")

    @property
    def hooks_dir(self):
        return os.path.join(self.priv, "hooks")

    def hook_path(self, name, ext):
        return os.path.join(self.hooks_dir, "%s.%s" % (name, ext))

    # persistence -----------------------------------------------------------
    def load_or_init(self):
        """Read saved state, or create a fresh server (shipped hooks written to disk)."""
        os.makedirs(self.hooks_dir, exist_ok=True)
        path = os.path.join(self.priv, self.STATE_FILE)
        if os.path.exists(path):
            with open(path) as handle:
                data = json.load(handle)
            self.server = data["server"]
            self.server["server_host"] = self.host
            self.sched = data["sched"]
            self.queues = data["queues"]
            self.nodes = data["nodes"]
            self.jobs = data["jobs"]
            self.next_seq = data["next_seq"]
            self.qsub_args_version = data.get("qsub_args_version", "0")
            for name, entry in data["hooks"].items():
                self.hooks[name] = Hook(name, entry["attrs"], entry.get("pristine_hk"))
            return False
        for name, files in shipped_hooks.SHIPPED.items():
            hook = Hook(name, hookdefs.parse_hk(files["HK"]), pristine_hk=files["HK"])
            self.hooks[name] = hook
            for ext in ("HK", "PY", "CF"):
                if ext in files:
                    self.write_hook_file(name, ext, files[ext])
        self.save()
        return True

    def save(self):
        data = {
            "server": self.server, "sched": self.sched, "queues": self.queues,
            "nodes": self.nodes, "jobs": self.jobs, "next_seq": self.next_seq,
            "qsub_args_version": self.qsub_args_version,
            "hooks": {n: {"attrs": h.attrs, "pristine_hk": h.pristine_hk} for n, h in self.hooks.items()},
        }
        os.makedirs(self.priv, exist_ok=True)
        path = os.path.join(self.priv, self.STATE_FILE)
        tmp = path + ".new"
        with open(tmp, "w") as handle:
            json.dump(data, handle, indent=1)
        os.replace(tmp, path)

    # hook files --------------------------------------------------------------
    def write_hook_file(self, name, ext, text):
        if ext == "PY":  # a script imported anew is compiled anew (server/hook_interpreter.py)
            self.script_versions[name] = self.script_versions.get(name, 0) + 1
        path = self.hook_path(name, ext)
        with open(path, "w") as handle:
            handle.write(text)
        os.chmod(path, 0o644)

    def read_hook_file(self, name, ext):
        try:
            with open(self.hook_path(name, ext)) as handle:
                return handle.read()
        except FileNotFoundError:
            return None

    def remove_hook_file(self, name, ext):
        try:
            os.unlink(self.hook_path(name, ext))
        except FileNotFoundError:
            pass

    def save_hook(self, hook):
        self.write_hook_file(hook.name, "HK", hook.hk_text())
        self.save()

    def hook_files(self, name):
        """``{"HK": text, "PY": text, "CF": text}`` of the files that exist."""
        files = {}
        for ext in ("HK", "PY", "CF"):
            text = self.read_hook_file(name, ext)
            if text is not None:
                files[ext] = text
        return files
