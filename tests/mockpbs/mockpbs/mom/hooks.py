"""The mom's local hook store, ``PBS_HOME/mom_priv/hooks/NAME.{HK,PY,CF}``.

Files arrive from the server by ``hook_copy`` and are written with mode 0700, as the real
mom's ``req_copy_hookfile`` does (transcript c).
"""
import hashlib
import os

from mockpbs import hookdefs

EXTENSIONS = ("HK", "PY", "CF")


class HookStore:
    """Hook files under ``hooks_dir``."""

    def __init__(self, hooks_dir):
        self.hooks_dir = hooks_dir
        os.makedirs(hooks_dir, exist_ok=True)

    def path(self, name, ext):
        return os.path.join(self.hooks_dir, "%s.%s" % (name, ext))

    def checksums(self):
        """``{name: {ext: sha256 hex}}`` of the hook files held: what the mom tells the
        server in ``mom_hello`` (as a real mom reports its hook checksums), so the server
        sends only the hooks whose files differ."""
        found = {}
        for entry in sorted(os.listdir(self.hooks_dir)):
            name, dot, ext = entry.rpartition(".")
            if not dot or ext not in EXTENSIONS:
                continue
            with open(os.path.join(self.hooks_dir, entry), "rb") as handle:
                found.setdefault(name, {})[ext] = hashlib.sha256(handle.read()).hexdigest()
        return found

    def write(self, name, ext, text):
        """Write one file (``ext`` in HK/PY/CF), mode 0700, replacing any old one."""
        if ext not in EXTENSIONS or not name or "/" in name:
            raise ValueError("bad hook file %r.%r" % (name, ext))
        path = self.path(name, ext)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o700)
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.chmod(path, 0o700)
        return path

    def delete(self, name):
        """Remove every file of hook ``name``; returns the removed paths."""
        removed = []
        for ext in EXTENSIONS:
            try:
                os.unlink(self.path(name, ext))
                removed.append(self.path(name, ext))
            except FileNotFoundError:
                pass
        return removed

    def attributes(self):
        """{name: effective attribute dict} of every hook with a ``.HK`` file."""
        hooks = {}
        for entry in sorted(os.listdir(self.hooks_dir)):
            if not entry.endswith(".HK"):
                continue
            try:
                with open(os.path.join(self.hooks_dir, entry)) as handle:
                    hooks[entry[:-3]] = hookdefs.effective(hookdefs.parse_hk(handle.read()))
            except OSError:
                continue
        return hooks

    def for_event(self, event):
        """Run-ready hook dicts (the ``hook`` argument of ``mockpbs.hookrun.run_hook``) of the
        enabled hooks having ``event`` and a body, sorted by ``order`` then name."""
        selected = []
        for name, attrs in self.attributes().items():
            if attrs.get("enabled", "true").lower() != "true":
                continue
            if event not in [e for e in attrs.get("event", "").split(",") if e]:
                continue
            body = self.path(name, "PY")
            if not os.path.exists(body):
                continue
            config = self.path(name, "CF")
            selected.append({
                "name": name,
                "body": body,
                "config": config if os.path.exists(config) else None,
                "alarm": int(attrs.get("alarm", "30")),
                "user": attrs.get("user", "pbsadmin"),
                "debug": attrs.get("debug", "false").lower() == "true",
                "order": int(attrs.get("order", "1")),
                "fail_action": attrs.get("fail_action", "none"),
            })
        selected.sort(key=lambda h: (h["order"], h["name"]))
        return selected

    def has_enabled(self, event):
        """True if an enabled hook has ``event`` among its events (``num_eligible_hooks()``
        of the real mom)."""
        return any(attrs.get("enabled", "true").lower() == "true"
                   and event in attrs.get("event", "").split(",")
                   for attrs in self.attributes().values())

    def alarm_sums(self, join_derived=True, both_count_for_both=False):
        """(execjob_begin sum or None, execjob_prologue sum or None) over enabled hooks;
        None means no such hook (PP-928 interfaces 3, 4).

        By default as the real mom's loop in ``req_copy_hookfile``: while ``join_derived``
        (``$sister_join_job_alarm`` has no config line) a hook having both events counts
        for execjob_begin only. ``both_count_for_both``: as the mom's start, where such a
        hook counts for both."""
        begin = prologue = None
        for attrs in self.attributes().values():
            if attrs.get("enabled", "true").lower() != "true":
                continue
            events = [e for e in attrs.get("event", "").split(",") if e]
            alarm = int(attrs.get("alarm", "30"))
            counted = False
            if "execjob_begin" in events and (join_derived or both_count_for_both):
                begin = (begin or 0) + alarm
                counted = True
            if "execjob_prologue" in events and (both_count_for_both or not counted):
                prologue = (prologue or 0) + alarm
        return begin, prologue
