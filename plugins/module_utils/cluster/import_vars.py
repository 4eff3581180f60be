# -*- coding: utf-8 -*-
# Copyright: hpc.pbs developers
# Apache License 2.0 (https://www.apache.org/licenses/LICENSE-2.0), as galaxy.yml says
"""What ``playbooks/import.yml`` writes: a running cluster, as ``hpc.pbs.cluster_info`` and
the server's hook files report it, turned into the inventory variables that the roles and
playbooks of the collection take, so that ``site.yml --check`` then changes nothing and
``audit.yml`` reports no drift.

Inputs (all plain data, as the playbook collects them):

- ``server``: the ``server`` of ``cluster_info`` on the PBS server (``hooks``: name ->
  type, events, enabled, order, alarm, fail_action, sha256 of the body;
  ``tolerate_node_failures``; ``job_run_wait``; ``default_qsub_arguments``).
- ``moms``: inventory host name -> the ``mom`` of its ``cluster_info`` (``job_launch_delay``
  and ``sister_join_job_alarm``, each with ``value`` and ``source``: ``mom_config`` when the
  line is in ``mom_priv/config``), or None when it has no ``mom_priv``.
- ``bundled``: ``body`` (the text of ``files/hooks/reliable_job_startup.py``) and
  ``config`` (the dict of ``files/hooks/reliable_job_startup.json``); optionally
  ``cray_atom`` and ``cgroup_resize``, each ``{body, config}`` of that bundled hook (a part
  whose bundled files are not given is not imported).
- ``hook_files``: ``hooks``: hook name -> ``{body, config}``, the text of its ``NAME.PY`` /
  ``NAME.CF`` on the server (None when missing), for the hooks of ``read_hooks``; or the
  reliable_job_startup hook's ``body`` / ``config`` alone; None when not read yet.
- ``import_dir``: the absolute path the files are written under (the variable that points
  to a hook body written there holds its absolute path); None: paths relative to it.

Standard library only.
"""

import hashlib
import json
import os
import re
import tempfile

DEFAULT_HOOK_NAME = "reliable_job_startup"
HOOK_EVENTS = ("queuejob", "execjob_launch")
TUNABLES = ("job_launch_delay", "sister_join_job_alarm")
MARKER = "# Written by hpc.pbs playbooks/import.yml"
BODY_DIR = "hook_bodies"
# The hooks the import turns into role variables: the role, its variables' prefix, the
# switch of site.yml that runs it, the events its hook task sets, the default of its
# <prefix>hook_fail_action (None: the role leaves fail_action alone), the indent of its
# config JSON.
PARTS = (
    dict(role="reliable_job_startup", prefix="reliable_job_startup_", switch=None,
         events=HOOK_EVENTS, fail_action=None, indent=2),
    dict(role="cray_atom", prefix="cray_atom_", switch="site_cray_atom",
         events=("execjob_begin", "execjob_end"), fail_action=["offline_vnodes"], indent=4,
         builtin="PBS_cray_atom"),
    dict(role="cgroup_resize", prefix="cgroup_resize_", switch="site_cgroup_resize",
         events=("execjob_begin", "execjob_launch", "execjob_resize", "execjob_end"),
         fail_action=None, indent=2, pbs_cgroups="pbs_cgroups"),
)
# A name that is a file name in host_vars/ and an inventory host name.
HOST_FILE_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


class ImportRefused(Exception):
    """The cluster's answers cannot be turned into variables (the message says why)."""


def sha256_text(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def role_config_text(config, indent=2):
    """The config text a role imports: Ansible's ``to_nice_json(indent=INDENT)`` of the
    merged dict (sorted keys, no final newline); reliable_job_startup and cgroup_resize
    write indent 2, cray_atom indent 4."""
    return json.dumps(config, indent=indent, sort_keys=True, separators=(",", ": "))


def managed_hook_name(hooks, bundled_body):
    """The site hook that reliable_job_startup manages on this cluster: the one named
    ``reliable_job_startup``, else the first (by name) whose body is the bundled one;
    None when there is none."""
    hooks = hooks or {}
    site = dict((name, attrs) for name, attrs in hooks.items()
                if (attrs or {}).get("type", "site") == "site")
    if DEFAULT_HOOK_NAME in site:
        return DEFAULT_HOOK_NAME
    wanted = sha256_text(bundled_body)
    for name in sorted(site):
        if (site[name] or {}).get("sha256") == wanted:
            return name
    return None


def _yaml_scalar(value):
    """A value as YAML (JSON is YAML: strings double-quoted, dicts and lists in flow)."""
    return json.dumps(value, sort_keys=True)


def vars_file_text(title, variables, comments=()):
    """A group_vars / host_vars file: the marker, a title, comment lines, then one
    ``name: value`` line per variable (sorted)."""
    lines = ["---", MARKER + ": " + title + "."]
    lines += ["# " + c if c else "#" for c in comments]
    lines += ["%s: %s" % (name, _yaml_scalar(variables[name])) for name in sorted(variables)]
    return "\n".join(lines) + "\n"


def _mom_value(mom, option):
    entry = (mom or {}).get(option) or {}
    if entry.get("source") == "mom_config":
        return entry.get("value")
    return None


def _common_value(values, hosts):
    """The value most moms have; a tie goes to the value of the first mom by name."""
    counts = {}
    for host in hosts:
        key = json.dumps(values[host])
        counts.setdefault(key, [0, host])[0] += 1
    best = sorted(counts.items(), key=lambda item: (-item[1][0], item[1][1]))[0][0]
    return json.loads(best)


def _files_read(hook_files, name):
    """The text of hook ``name``'s body and config as read on the server (``{"body",
    "config"}``, each None when missing), or None when they were not read."""
    if not isinstance(hook_files, dict) or name is None:
        return None
    return (hook_files.get("hooks") or {}).get(name)


def _config_part(label, name, config_text, default, indent, notes):
    """The keys of the hook's config that differ from the bundled default (None when there
    is nothing to take), with notes for what site.yml would rewrite."""
    if config_text is None or not config_text.strip():
        notes.append("hook %s has no config on the server; site.yml would import the "
                     "bundled default" % name)
        return None
    try:
        config = json.loads(config_text)
    except ValueError as exc:
        notes.append("the config of hook %s is not JSON (%s); site.yml would replace it "
                     "with the bundled default" % (name, exc))
        return None
    if not isinstance(config, dict):
        notes.append("the config of hook %s is JSON but not an object; site.yml would "
                     "replace it with the bundled default" % name)
        return None
    own = dict((k, v) for k, v in config.items() if k not in default or default[k] != v)
    missing = sorted(k for k in default if k not in config)
    if missing:
        notes.append("the config of hook %s lacks %s; site.yml would add the bundled "
                     "default of each" % (name, ", ".join(missing)))
    merged = dict(default)
    merged.update(own)
    if not missing and role_config_text(merged, indent) != config_text:
        notes.append("the config of hook %s holds these values in another layout; "
                     "site.yml would import them again as the %s role writes JSON "
                     "(sorted keys, indent %d)" % (name, label, indent))
    return own


def _site_hook_part(spec, name, attrs, bundled, files_read, notes, body_src=""):
    """The variables and files of a bundled site hook found on the server under ``name``
    (``spec``: one of PARTS). A body of the site's own is written to
    ``hook_bodies/NAME.py`` and the role variable ``<prefix>hook_body_src`` points to it:
    ``body_src`` is the directory the files are written under ("": paths relative to it),
    so that site.yml installs that body again, not the bundled one."""
    prefix = spec["prefix"]
    variables = {
        prefix + "hook_name": name,
        prefix + "hook_enabled": bool(attrs.get("enabled")),
        prefix + "hook_order": attrs.get("order"),
        prefix + "hook_alarm": attrs.get("alarm"),
    }
    for key in ("order", "alarm"):
        if not isinstance(attrs.get(key), int):
            notes.append("hook %s has no %s the server lists; the role's default is kept"
                         % (name, key))
            del variables[prefix + "hook_" + key]
    events = sorted(attrs.get("events") or [])
    if events != sorted(spec["events"]):
        notes.append("hook %s runs at %s; site.yml would set its events to %s"
                     % (name, ",".join(events) or "no event", ",".join(spec["events"])))
    fail_action = spec.get("fail_action")
    found = sorted(attrs.get("fail_action") or ["none"])
    if fail_action is not None and found != sorted(fail_action):
        variables[prefix + "hook_fail_action"] = found
    files = {}
    if files_read is None:
        return variables, files
    body = files_read.get("body")
    if body is None:
        notes.append("hook %s has no body on the server; site.yml would import the bundled one"
                     % name)
    elif sha256_text(body) != sha256_text(bundled["body"]):
        path = "%s/%s.py" % (BODY_DIR, name)
        files[path] = body
        variables[prefix + "hook_body_src"] = os.path.join(body_src, path) if body_src else path
    own = _config_part(spec["role"], name, files_read.get("config"), bundled["config"],
                       spec["indent"], notes)
    if own is not None:
        variables[prefix + "config"] = own
    return variables, files


def _hook_part(server, bundled, hook_files, notes, import_dir):
    """The variables of the reliable_job_startup hook, the files to write, the hook's name."""
    hooks = server.get("hooks") or {}
    name = managed_hook_name(hooks, bundled["body"])
    if name is None:
        notes.append("the server has no reliable_job_startup hook (none named %s, none with "
                     "the bundled body): site.yml would create it" % DEFAULT_HOOK_NAME)
        return {}, {}, None
    read = _files_read(hook_files, name)
    if read is None and isinstance(hook_files, dict) and ("body" in hook_files or "config" in hook_files):
        read = dict(body=hook_files.get("body"), config=hook_files.get("config"))
    variables, files = _site_hook_part(PARTS[0], name, hooks[name] or {}, bundled, read, notes,
                                       body_src=import_dir or "")
    return variables, files, name


def _optional_parts(server, bundled, hook_files, notes, import_dir=None):
    """The Cray ATOM hook and the cgroup resize hook, when the server runs them (and the
    playbook gave their bundled files): variables, files, the hooks they manage and the
    hooks whose files are to be read. A body of the site's own is written out and the
    role's ``<prefix>hook_body_src`` points to it, as for reliable_job_startup."""
    hooks = server.get("hooks") or {}
    site = dict((n, a or {}) for n, a in hooks.items() if (a or {}).get("type", "site") == "site")
    variables, files, managed, to_read = {}, {}, [], []
    for spec in PARTS[1:]:
        part_bundled = (bundled or {}).get(spec["role"])
        if not part_bundled:
            continue
        prefix = spec["prefix"]
        name = spec["role"] if spec["role"] in site else None
        if name is None:
            wanted = sha256_text(part_bundled["body"])
            name = next((n for n in sorted(site) if site[n].get("sha256") == wanted), None)
        if spec["role"] == "cray_atom":
            builtin = hooks.get(spec["builtin"]) or None
            if builtin is not None and builtin.get("type") == "pbs" and builtin.get("enabled"):
                variables.update({spec["switch"]: True, prefix + "hook_source": "builtin",
                                  prefix + "hook_enabled": True})
                managed.append(spec["builtin"])
                to_read.append(spec["builtin"])
                read = _files_read(hook_files, spec["builtin"])
                if read is not None:
                    own = _config_part(spec["role"], spec["builtin"], read.get("config"),
                                       part_bundled["config"], spec["indent"], notes)
                    if own is not None:
                        variables[prefix + "config"] = own
                if name is not None:
                    notes.append("the built-in %s is enabled: site.yml would remove the site "
                                 "hook %s, which would register every job a second time"
                                 % (spec["builtin"], name))
                    managed.append(name)
                continue
        elif name is None:
            pbs_cgroups = site.get(spec["pbs_cgroups"])
            if pbs_cgroups is not None and "execjob_resize" in (pbs_cgroups.get("events") or []):
                variables.update({spec["switch"]: True, prefix + "hook_source": "pbs_cgroups",
                                  prefix + "pbs_cgroups_hook_name": spec["pbs_cgroups"]})
                managed.append(spec["pbs_cgroups"])
            continue
        if name is None:
            continue
        if spec["role"] == "cgroup_resize" and (site.get(spec["pbs_cgroups"]) or {}).get("enabled"):
            notes.append("%s is enabled beside the bundled hook %s: the cgroup_resize role "
                         "refuses the bundled hook while it is" % (spec["pbs_cgroups"], name))
        part_vars, part_files = _site_hook_part(spec, name, site[name], part_bundled,
                                                _files_read(hook_files, name), notes,
                                                body_src=import_dir or "")
        variables.update(part_vars)
        variables.update({spec["switch"]: True, prefix + "hook_source": "bundled"})
        files.update(part_files)
        managed.append(name)
        to_read.append(name)
    return variables, files, managed, to_read


def import_vars(server, moms, bundled, hook_files=None, server_host="pbs_server", import_dir=None):
    """What to write (see the module docstring for the inputs). Returns a dict:

    - ``hook_name``: the managed hook (None when the server has none);
    - ``read_hooks``: the hooks whose ``NAME.PY`` / ``NAME.CF`` the playbook is to read
      (the reliable_job_startup hook, the Cray ATOM and cgroup resize hooks found);
    - ``files``: path under ``import_dir`` -> text (``group_vars/all.yml``,
      ``group_vars/pbs_mom.yml``, ``host_vars/<mom>.yml`` for the moms that differ from
      the common value, ``hook_bodies/<hook>.py`` for a body that is not the bundled one);
    - ``unmanaged_hooks``: the other hooks (name, type, events, enabled), not touched;
    - ``notes``: what site.yml would still change, one sentence each;
    - ``variables``: ``all``, ``pbs_mom``, ``hosts`` (host -> its own variables).
    """
    if not isinstance(server, dict):
        raise ImportRefused("the PBS server %s reported no server data (cluster_info's "
                            "server is %r): is it the host where qmgr works?"
                            % (server_host, server))
    if not isinstance(moms, dict):
        raise ImportRefused("moms must map inventory host names to cluster_info's mom, "
                            "not %s" % type(moms).__name__)
    if import_dir is not None and not (isinstance(import_dir, str) and os.path.isabs(import_dir)):
        raise ImportRefused("import_dir must be an absolute path on the controller, not %r"
                            % (import_dir,))
    notes = []
    all_vars, files, hook_name = _hook_part(server, bundled, hook_files, notes, import_dir)
    part_vars, part_files, part_hooks, to_read = _optional_parts(
        server, bundled, hook_files, notes, import_dir)
    all_vars.update(part_vars)
    files.update(part_files)

    tolerate = server.get("tolerate_node_failures")
    if tolerate is not None:
        all_vars["site_tolerate_node_failures"] = tolerate
    job_run_wait = server.get("job_run_wait")
    if job_run_wait is not None:
        all_vars["sched_tuning_job_run_wait"] = job_run_wait
    else:
        notes.append("the scheduler lists no job_run_wait; site.yml would set the role's "
                     "default (runjob_hook), or throughput_mode on a PBS without it")

    hooks = server.get("hooks") or {}
    unmanaged = [dict(name=n, type=(hooks[n] or {}).get("type"),
                      events=list((hooks[n] or {}).get("events") or []),
                      enabled=(hooks[n] or {}).get("enabled"))
                 for n in sorted(hooks) if n != hook_name and n not in part_hooks]

    mom_hosts = []
    for host in sorted(moms):
        if not HOST_FILE_NAME.match(host):
            raise ImportRefused("the inventory host name %r cannot name a host_vars file; "
                                "accepted: letters, digits, '.', '_' and '-'" % host)
        if moms[host] is None:
            notes.append("%s has no mom_priv: its tunables were not read" % host)
            continue
        mom_hosts.append(host)
    mom_vars = {}
    host_vars = {}
    for option in TUNABLES:
        name = "reliable_job_startup_" + option
        values = dict((h, _mom_value(moms[h], option)) for h in mom_hosts)
        if not values:
            continue
        common = _common_value(values, mom_hosts)
        mom_vars[name] = common
        for host in mom_hosts:
            if values[host] != common:
                host_vars.setdefault(host, {})[name] = values[host]

    comments = ["Read-only import of the cluster whose PBS server is %s." % server_host,
                "Hooks not managed by the collection (left as they are):"]
    comments += ["  %s (%s, %s, events %s)" % (h["name"], h["type"],
                                               "enabled" if h["enabled"] else "disabled",
                                               ",".join(h["events"]) or "none")
                 for h in unmanaged] or ["  none"]
    comments += ["What site.yml would still change:"]
    comments += ["  " + n for n in notes] or ["  nothing"]
    files["group_vars/all.yml"] = vars_file_text(
        "the PBS server's part (hook, scheduler, server-wide defaults)", all_vars, comments)
    if mom_vars:
        files["group_vars/pbs_mom.yml"] = vars_file_text(
            "the mom tunables most moms have (null: no line in mom_priv/config)", mom_vars)
    for host in sorted(host_vars):
        files[os.path.join("host_vars", host + ".yml")] = vars_file_text(
            "the mom tunables of %s that differ from group_vars/pbs_mom.yml" % host,
            host_vars[host])
    return dict(hook_name=hook_name, files=files, unmanaged_hooks=unmanaged, notes=notes,
                read_hooks=([hook_name] if hook_name else []) + to_read,
                variables=dict(all=all_vars, pbs_mom=mom_vars, hosts=host_vars))


def import_dir_problem(path):
    """Why ``path`` cannot be the import directory on this machine, or ``""``.

    Accepted: a directory this user may write (made when missing, its parent must then
    exist and be writable); its ``group_vars``, ``host_vars`` and ``hook_bodies``, where
    they exist, must be writable directories too."""
    accepted = ("a directory path on the controller, writable by this user (made when "
                "missing, its parent must then exist and be writable)")
    if path is None or (isinstance(path, str) and not path.strip()):
        return ("import_dir is not set; give the directory the inventory variables are "
                "written to (-e import_dir=DIR); accepted: %s" % accepted)
    if not isinstance(path, str):
        return "import_dir %r is not a path; accepted: %s" % (path, accepted)
    if "\0" in path:
        return "import_dir %r holds a NUL character; accepted: %s" % (path, accepted)
    full = os.path.abspath(os.path.expanduser(path))
    if os.path.lexists(full) and not os.path.isdir(full):
        return "import_dir %s exists and is not a directory; accepted: %s" % (full, accepted)
    probe_dirs = [full] if os.path.isdir(full) else [os.path.dirname(full)]
    if not os.path.isdir(probe_dirs[0]):
        return "import_dir %s: the directory %s does not exist; accepted: %s" % (
            full, probe_dirs[0], accepted)
    for sub in ("group_vars", "host_vars", BODY_DIR):
        sub_path = os.path.join(full, sub)
        if os.path.lexists(sub_path):
            if not os.path.isdir(sub_path):
                return "import_dir %s: %s exists and is not a directory; accepted: %s" % (
                    full, sub_path, accepted)
            probe_dirs.append(sub_path)
    for directory in probe_dirs:
        try:  # the permission bits do not show a read-only file system or /proc
            handle, probe = tempfile.mkstemp(dir=directory, prefix=".hpc-pbs-write-check-")
        except OSError as exc:
            return "import_dir %s: the directory %s cannot be written (%s); accepted: %s" % (
                full, directory, exc.strerror, accepted)
        os.close(handle)
        os.unlink(probe)
    return ""
