"""Test doubles at the process boundary of the hpc.pbs modules.

- :func:`run_module` runs a module's ``main()`` with module args and returns its JSON.
- :class:`FakeQmgr` replaces ``AnsibleModule.run_command`` and answers like OpenPBS 23.06
  qmgr does in the reference transcripts (list format with wrapped lists, ``Max open
  servers`` in stdin mode, error texts and exit codes, ``-a`` abort on first error, hook
  files written to ``server_priv/hooks``). It records every call.
- :data:`FAKE_MOM_SOURCE` is a real process standing in for pbs_mom: on SIGHUP it parses
  ``mom_priv/config`` by the real mom's rules and logs like it (transcript f_). Its second
  argument picks a behaviour: ``normal``; ``silent`` (logs only ``catch_hup``);
  ``frozen`` (alive, logs nothing); ``stale`` (logs the values of the file it started
  with, so its log can disagree with the file).
"""
import contextlib
import io
import json
import os
import re

from unittest import mock

from ansible.module_utils import _internal as module_utils_internal
from ansible.module_utils.common import warnings as module_warnings
from ansible.module_utils.testing import patch_module_args

# The mock PBS's hook event names (the order of qmgr's bad-event error) and the order
# qmgr lists a hook's events in: one definition for the mock and this fake.
from mockpbs.hookdefs import BAD_EVENT_MESSAGE, EVENTS, FAIL_ACTIONS, LIST_ORDER, USER_MOM_EVENTS

HOOK_ATTRS = ("type", "enabled", "event", "user", "alarm", "freq", "order", "debug", "fail_action")
NEW_HOOK = {"type": "site", "enabled": "true", "event": "", "user": "pbsadmin",
            "alarm": "30", "order": "1", "debug": "false", "fail_action": "none"}
HEADER = {"server": "Server", "sched": "Sched", "queue": "Queue", "node": "Node",
          "hook": "Hook", "pbshook": "Hook"}
SERVER_ATTRS = {"scheduling", "default_queue", "log_events", "mailer", "mail_from",
                "query_other_jobs", "resources_default.ncpus", "default_chunk.ncpus",
                "scheduler_iteration", "resv_enable", "node_fail_requeue", "max_array_size",
                "comment", "managers", "operators", "default_qsub_arguments", "rpp_retry"}
# qmgr verbs that change the server; list, print and export only read.
WRITE_VERBS = ("set", "unset", "create", "delete", "import")
# Attributes the server decodes as whole numbers (decode_l): anything else is 15014.
LONG_ATTRS = {"scheduler_iteration", "rpp_retry", "log_events", "max_array_size"}
SCHED_ATTRS = {"sched_host", "sched_cycle_length", "throughput_mode", "job_run_wait",
               "partition", "scheduling", "scheduler_iteration", "preempt_prio",
               "preempt_order", "log_events"}
# What OpenPBS lists again right after ``unset`` of these attributes (transcript a_ values;
# the server writes them back): the rest disappear from the listing.
UNSET_LISTED = {
    "server": {"scheduler_iteration": "600", "log_events": "511", "scheduling": "True",
               "query_other_jobs": "True", "resources_default.ncpus": "1"},
    "sched": {"scheduler_iteration": "600", "job_run_wait": "runjob_hook",
              "log_events": "767"},
}


def run_module(main, args, check_mode=False, diff=False, tmpdir=None):
    """Run ``main()`` of a module with ``args``; return ``(exit_code, result_dict)``."""
    full = dict(args)
    full["_ansible_check_mode"] = check_mode
    full["_ansible_diff"] = diff
    if tmpdir is not None:
        full["_ansible_tmpdir"] = str(tmpdir)
    out = io.StringIO()
    code = 0
    # A module process starts with no warnings: those of earlier runs in this test process
    # (ansible keeps them in one global list) are not this run's.
    module_warnings._global_warnings.clear()
    module_warnings._global_deprecations.clear()
    # Importing controller code (other tests do) flips is_controller, which would send
    # module warnings to the controller display instead of the module result.
    with patch_module_args(full), contextlib.redirect_stdout(out), \
            mock.patch.object(module_utils_internal, "is_controller", False):
        try:
            main()
        except SystemExit as exc:
            code = exc.code or 0
    result = json.loads(out.getvalue())
    # ansible-core 2.19 emits warnings as WarningSummary objects; tests want the texts.
    result["warnings"] = [w["event"]["msg"] if isinstance(w, dict) else w
                          for w in result.get("warnings", [])]
    return code, result


def render_listing(kind, name, attrs):
    """qmgr ``list`` text of one object; long comma lists wrap as qmgr does (the first
    line filled up to 80 columns, then one item per tab-indented line)."""
    lines = ["%s %s" % (HEADER[kind], name)]
    for attr, value in attrs.items():
        shown = '""' if value == "" else value
        prefix = "    %s = " % attr
        if len(prefix + shown) <= 80 or "," not in value:
            lines.append(prefix + shown)
            continue
        items = value.split(",")
        first = prefix
        index = 0
        while index < len(items) and len(first + items[index] + ",") <= 80:
            first += items[index] + ","
            index += 1
        lines.append(first)
        rest = items[index:]
        for pos, item in enumerate(rest):
            lines.append("\t" + item + ("," if pos < len(rest) - 1 else ""))
    return "\n".join(lines) + "\n\n"


class CannedModule(object):
    """An AnsibleModule stand-in whose ``run_command`` gives every call the same
    ``(rc, stdout, stderr)``; ``calls`` records each ``(args, kwargs)``."""

    def __init__(self, rc=0, out="", err=""):
        self.calls = []
        self.answer = (rc, out, err)

    def run_command(self, args, **kwargs):
        self.calls.append((args, kwargs))
        return self.answer


class QmgrFailure(Exception):
    def __init__(self, rc_c, rc_a, stderr):
        Exception.__init__(self, stderr)
        self.rc_c = rc_c   # exit code in -c mode
        self.rc_a = rc_a   # exit code with -a (1 syntax, 2 server rejected)
        self.stderr = stderr


def syntax_error(command, column):
    return QmgrFailure(4, 1, "qmgr: Syntax error\n%s\n%s^\n" % (command, " " * column))


def hook_error(name, text):
    return QmgrFailure(32, 2, "qmgr obj=%s svr=default: %s\nqmgr: hook error returned from "
                              "server\n" % (name, text))


def parse_value(command, text):
    """qmgr value parsing: bare word, "..." or '...' (no escapes); nothing may follow."""
    text = text.strip()
    if text[:1] in ("'", '"'):
        end = text.find(text[0], 1)
        if end < 0:
            raise syntax_error(command, len(command))
        value, rest = text[1:end], text[end + 1:]
    else:
        parts = text.split(None, 1)
        value, rest = (parts[0] if parts else ""), (parts[1] if len(parts) > 1 else "")
    if rest.strip():
        raise syntax_error(command, command.rfind(rest.strip()))
    return value


class FakeQmgr(object):
    """Stateful stand-in for qmgr. ``objects``: {(kind, name): dict of attribute text}
    (kind ``hook`` and ``pbshook`` share one namespace as on the server)."""

    def __init__(self, qmgr_path, pbs_home):
        self.qmgr_path = qmgr_path
        self.hooks_dir = os.path.join(pbs_home, "server_priv", "hooks")
        os.makedirs(self.hooks_dir, exist_ok=True)
        self.objects = {}
        self.calls = []

    # -- seeding -----------------------------------------------------------------------
    def add(self, kind, name, attrs, body=None, config=None):
        self.objects[(kind, name)] = dict(attrs)
        for ext, data in (("PY", body), ("CF", config)):
            if data is not None:
                with open(os.path.join(self.hooks_dir, "%s.%s" % (name, ext)), "wb") as f:
                    f.write(data)

    def hook_file(self, name, ext):
        path = os.path.join(self.hooks_dir, "%s.%s" % (name, ext))
        if not os.path.exists(path):
            return None
        with open(path, "rb") as handle:
            return handle.read()

    # -- call accounting ---------------------------------------------------------------
    @staticmethod
    def directives(call):
        """The qmgr directives of a recorded ``(args, stdin)`` call: the ``-c`` text, or
        the non-blank lines given on stdin."""
        args, data = call
        if "-c" in args:
            return [args[args.index("-c") + 1]]
        return [line for line in (data or "").splitlines() if line.strip()]

    @classmethod
    def is_write(cls, call):
        """Whether a call holds a directive that changes the server (by its verb)."""
        return any(d.split()[0] in WRITE_VERBS for d in cls.directives(call))

    def reads(self):
        """Calls whose directives only read (list, print, export), however they were sent."""
        return [c for c in self.calls if not self.is_write(c)]

    def writes(self):
        """Calls holding at least one set/unset/create/delete/import directive."""
        return [c for c in self.calls if self.is_write(c)]

    # -- AnsibleModule.run_command replacement -----------------------------------------
    def run_command(self, module, args, data=None, binary_data=False, **kwargs):
        assert isinstance(args, list), "commands must be argument lists, never a shell string"
        assert args[0] == self.qmgr_path, args
        self.calls.append((list(args), data))
        if "-c" in args:
            command = args[args.index("-c") + 1]
            self.partial_output = ""
            try:
                return 0, self.execute(command), self.stderr_notes()
            except QmgrFailure as exc:
                return exc.rc_c, self.partial_output, exc.stderr
        abort = "-a" in args
        if data and not binary_data:
            data += "\n"
        out = ["Max open servers: 49\n"]
        err = []
        rc = 0
        for command in (data or "").splitlines():
            if not command.strip():
                continue
            self.notes = []
            try:
                out.append(self.execute(command))
                err.append(self.stderr_notes())
                rc = 0
            except QmgrFailure as exc:
                err.append(exc.stderr)
                rc = exc.rc_c
                if abort:
                    return exc.rc_a, "".join(out), "".join(err)
        return rc, "".join(out), "".join(err)

    def stderr_notes(self):
        notes = getattr(self, "notes", [])
        self.notes = []
        return "".join(n + "\n" for n in notes)

    # -- qmgr language -----------------------------------------------------------------
    def execute(self, command):
        self.notes = getattr(self, "notes", [])
        words = command.split()
        verb = words[0]
        if verb == "list":
            return self.do_list(command, words)
        if verb == "create":
            return self.do_create(command, words)
        if verb == "delete":
            return self.do_delete(words)
        if verb in ("set", "unset"):
            return self.do_set(command, words)
        if verb == "import":
            return self.do_import(words)
        if verb == "export":
            return self.do_export(words)
        raise syntax_error(command, 0)

    def lookup(self, kind, name):
        if kind == "server":
            return next(((k, v) for k, v in self.objects.items() if k[0] == "server"), None)
        key = (kind, name)
        if key in self.objects:
            return key, self.objects[key]
        return None

    def do_list(self, command, words):
        kind = words[1]
        name = words[2] if len(words) > 2 else None
        if name is not None and "," in name:
            # qmgr runs the directive once per name; a missing one fails after the others
            out = []
            missing = []
            for each in name.split(","):
                try:
                    out.append(self.do_list(command, [words[0], kind, each]))
                except QmgrFailure:
                    missing.append(each)
            if missing:
                self.partial_output = "".join(out)
                raise QmgrFailure(1, 2, "qmgr obj=%s svr=default: Unknown node\nqmgr: "
                                        "Error (15062) returned from server\n" % missing[-1])
            return "".join(out)
        if kind in ("hook", "pbshook") and name is None:
            return "".join(render_listing(k, n, attrs) for (k, n), attrs
                           in sorted(self.objects.items()) if k == kind)
        if kind == "sched" and name is None:
            name = "default"
        found = self.lookup(kind, name)
        if found is None:
            if kind == "hook":
                raise QmgrFailure(1, 2, "qmgr obj=%s svr=default: hook not found\nqmgr: hook "
                                        "error returned from server\n" % name)
            raise QmgrFailure(1, 2, "")
        (kind_, name_), attrs = found
        return render_listing(kind_, name_, attrs)

    def do_create(self, command, words):
        if words[1] == "pbshook":
            raise QmgrFailure(156, 2, "qmgr obj=%s svr=default: Invalid request\nqmgr: Error "
                                      "(15004) returned from server\n" % words[2])
        name = words[2]
        if name[0].isdigit():
            raise syntax_error(command, command.index(name))
        if name.startswith("PBS"):
            raise hook_error(name, "hook_name '%s', cannot use PBS as a prefix it is "
                                   "reserved for pbs hooks" % name)
        if ("hook", name) in self.objects or ("pbshook", name) in self.objects:
            raise hook_error(name, "hook name '%s' already registered, try another name" % name)
        self.objects[("hook", name)] = dict(NEW_HOOK)
        return ""

    def do_delete(self, words):
        kind, name = words[1], words[2]
        if kind == "pbshook":
            raise QmgrFailure(156, 2, "qmgr obj=%s svr=default: Invalid request\n" % name)
        if ("hook", name) not in self.objects:
            raise hook_error(name, "%s does not exist!" % name)
        del self.objects[("hook", name)]
        for ext in ("PY", "CF", "HK"):
            path = os.path.join(self.hooks_dir, "%s.%s" % (name, ext))
            if os.path.exists(path):
                os.unlink(path)
        return ""

    def do_set(self, command, words):
        verb, kind = words[0], words[1]
        if kind == "server":
            rest = command.split(None, 2)[2]
            name = None
        else:
            name = words[2]
            rest = command.split(None, 3)[3]
        found = self.lookup(kind, name)
        if found is None:
            raise hook_error(name, "%s does not exist!" % name)
        key, attrs = found
        match = re.match(r"^([A-Za-z0-9_.]+)\s*(\+=|-=|=)?\s*(.*)$", rest)
        attr, op, value_text = match.group(1), match.group(2), match.group(3)
        known = {"server": SERVER_ATTRS, "sched": SCHED_ATTRS, "hook": set(HOOK_ATTRS),
                 "pbshook": set(HOOK_ATTRS)}.get(kind, None)
        if known is not None and attr not in known:
            raise syntax_error(command, command.index(attr) + len(attr) + 1)
        if verb == "unset":
            attrs.pop(attr, None)
            if attr in UNSET_LISTED.get(kind, {}):
                attrs[attr] = UNSET_LISTED[kind][attr]
            return ""
        value = parse_value(command, value_text)
        if kind in ("hook", "pbshook"):
            self.set_hook_attr(key, attrs, attr, op, value)
            return ""
        current = [v for v in attrs.get(attr, "").split(",") if v]
        if op == "+=":
            current += [v for v in value.split(",") if v not in current]
            attrs[attr] = ",".join(current)
        elif op == "-=":
            attrs[attr] = ",".join(v for v in current if v not in value.split(","))
            if not attrs[attr]:
                del attrs[attr]
        else:
            if attr in LONG_ATTRS and not value.lstrip("-").isdigit():
                raise QmgrFailure(166, 2, "qmgr obj= svr=default: Illegal attribute or "
                                          "resource value\nqmgr: Error (15014) returned "
                                          "from server\n")
            attrs[attr] = value
        return ""

    def set_hook_attr(self, key, attrs, attr, op, value):
        name = key[1]
        if attr == "event":
            names = [v for v in value.split(",") if v]
            for event in names:
                if event not in EVENTS:
                    raise hook_error(name, BAD_EVENT_MESSAGE % event)
            events_before = attrs.get("event", "").split(",")
            attrs["event"] = ",".join(e for e in LIST_ORDER if e in names)
            # hook_func.c side effects of setting event
            if not any(e.startswith("exec") for e in names):
                attrs["user"] = "pbsadmin"
                attrs["fail_action"] = "none"
            if "exechost_periodic" in events_before and "exechost_periodic" not in names:
                attrs.pop("freq", None)
            return
        if attr == "enabled":
            if value.lower() not in ("true", "t", "y", "1", "false", "f", "n", "0"):
                raise hook_error(name, "unexpected value '%s', must be (not case sensitive) "
                                       "true|t|y|1|false|f|n|0" % value)
            value = "true" if value.lower() in ("true", "t", "y", "1") else "false"
            if key[0] == "pbshook" and value == "false":
                self.notes.append("WARNING: Disabling a PBS hook results in an unsupported "
                                  "configuration!")
        if attr == "alarm" and (not value.isdigit() or int(value) < 1):
            raise hook_error(name, "set_hook_alarm: alarm value '%s' of a hook must be > 0" % value)
        if attr == "order" and key[0] == "hook" and not 1 <= int(value) <= 1000:
            raise hook_error(name, "order given (%s) is outside the acceptable range of "
                                   "[1, 1000] for type 'site'." % value)
        if attr == "freq" and not any(e in attrs.get("event", "").split(",")
                                      for e in ("periodic", "exechost_periodic")):
            raise hook_error(name, "set_hook_freq: Can't set hook freq value: hook event "
                                   "must contain at least'exechost_periodic' or 'periodic'")
        if attr == "type":
            raise hook_error(name, "not allowed to set hook to 'pbs' type")
        if attr == "user":
            self.check_hook_user(name, attrs.get("event", "").split(","), value)
        if attr == "fail_action":
            # hook_fail_action_as_string lists the actions in this order, whatever the order set
            value = ",".join(a for a in FAIL_ACTIONS if a in value.split(",")) or value
        attrs[attr] = value
        ordered = dict((a, attrs[a]) for a in HOOK_ATTRS if a in attrs)
        attrs.clear()
        attrs.update(ordered)

    @staticmethod
    def check_hook_user(name, events, value):
        """set_hook_user (src/lib/Libutil/hook.c): pbsadmin always; pbsuser only for a hook
        whose events include one of USER_MOM_EVENTS and that is not a server periodic hook."""
        if value == "pbsadmin":
            return
        if "periodic" in events:
            raise hook_error(name, "user value of a server periodic hook must be pbsadmin")
        if value != "pbsuser":
            raise hook_error(name, "user value of a hook must be pbsadmin,pbsuser")
        if not set(events) & USER_MOM_EVENTS:
            raise hook_error(name, "Can't set hook user value to 'pbsuser': hook event must contain at least %s"
                             % ",".join(e for e in LIST_ORDER if e in USER_MOM_EVENTS))

    def do_import(self, words):
        kind, name, content_type, encoding, path = words[1:6]
        if path[:1] in ("'", '"'):
            path = path[1:-1]
        key = (kind, name)
        if key not in self.objects:
            raise hook_error(name, "%s does not exist!" % name)
        if kind == "pbshook" and content_type != "application/x-config":
            raise hook_error(name, "<content-type> must be application/x-config")
        with open(path, "rb") as handle:
            data = handle.read()
        ext = "PY" if content_type == "application/x-python" else "CF"
        target = os.path.join(self.hooks_dir, "%s.%s" % (name, ext))
        if os.path.exists(target):
            self.notes.append("hook '%s' contents overwritten" % name)
        with open(target, "wb") as handle:
            handle.write(data)
        return ""

    def do_export(self, words):
        kind, name, content_type = words[1:4]
        if (kind, name) not in self.objects:
            raise hook_error(name, "%s does not exist!" % name)
        data = self.hook_file(name, "PY" if content_type == "application/x-python" else "CF")
        return (data or b"").decode("utf-8")


def kill_stand_in_mom(pid, script):
    """SIGKILL ``pid`` if it still is a stand-in mom running ``script``: a PID read from
    mom.lock may by now belong to any process of the machine (even a test cluster's node)."""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as handle:
            argv = handle.read().decode(errors="replace").split("\0")
    except OSError:
        return
    if str(script) in argv:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass


FAKE_MOM_SOURCE = r'''
import os, signal, sys, time

HOME = sys.argv[1]
MODE = sys.argv[2] if len(sys.argv) > 2 else "normal"
KNOWN = {"restrict_user_maxsysid", "clienthost", "job_launch_delay",
         "sister_join_job_alarm", "logevent", "usecp", "restricted"}


def log(event, obj, msg):
    now = time.localtime()
    path = os.path.join(HOME, "mom_logs", time.strftime("%Y%m%d", now))
    with open(path, "a") as handle:
        handle.write("%s;%s;pbs_mom;%s;%s\n" % (time.strftime("%m/%d/%Y %H:%M:%S", now),
                                               event, obj, msg))


def read_config():
    try:
        with open(os.path.join(HOME, "mom_priv", "config")) as handle:
            return handle.read().splitlines()
    except FileNotFoundError:
        return []


# "stale": a mom that logs the values of the file it started with, not the file's now.
STARTUP_LINES = read_config()


def on_hup(signum, frame):
    if MODE == "frozen":
        return
    log("0002", "n/a", "catch_hup;caught signal 1")
    if MODE == "silent":
        return
    log("0100", "Svr", "parse_config;file config")
    lines = STARTUP_LINES if MODE == "stale" else read_config()
    for number, line in enumerate(lines, 1):
        if not line.startswith("$"):
            continue
        parts = line[1:].split(None, 1)
        name, value = parts[0], (parts[1] if len(parts) > 1 else "")
        if name not in KNOWN:
            log("0001", "Svr", "pbs_mom;parse_config, command name %s not found" % name)
            log("0002", "Svr", "Log;Log closed")
            os._exit(1)
        if name in ("job_launch_delay", "sister_join_job_alarm"):
            log("0002", "Svr", "%s;%s" % (name, value))
            if not value.isdigit() or int(value) < 1:
                log("0001", "Svr", 'pbs_mom;parse_config, config[%d] command "%s" failed, '
                                   'aborting' % (number, line))
                log("0002", "Svr", "Log;Log closed")
                os._exit(1)


signal.signal(signal.SIGHUP, on_hup)
sys.stdout.write("ready\n")
sys.stdout.flush()
while True:
    signal.pause()
'''
