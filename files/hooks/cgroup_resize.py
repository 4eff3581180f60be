"""cgroup_resize: a job's cgroups on each host follow its assignment, also after release_nodes().

A plain PBS hook (standard library + ``pbs`` only) for hosts that do not run PBS's own
``pbs_cgroups`` hook. It implements what PP-928 interface 9 (the
PP-928 Reliable Job Startup, "new hook event: execjob_resize") asks of a cgroup hook:
when ``release_nodes()`` prunes a job, the moms still in the job shrink its cgroups to the
job's new assignment. Install it for the events
``execjob_begin,execjob_launch,execjob_resize,execjob_end`` (``execjob_abort`` is handled
like ``execjob_end`` when it is added). It is configured only through its hook config file
(``pbs.hook_config_filename``), a JSON object (schema: ``cgroup_resize.schema.json``):

    root          absolute path under which the cgroup hierarchies are mounted.
                  Default "/sys/fs/cgroup".
    prefix        the cgroup (relative path, no "..") that holds one cgroup per job.
                  Default "pbs_jobs".
    mounts_file   the mount table that tells cgroup v1 from v2. Default "/proc/self/mounts".
    exclude_cpus  CPU numbers never given to jobs (e.g. those of system daemons). Default [].
    kill_timeout  seconds to wait, after SIGKILL, for a job's processes to leave its
                  cgroups before removing them fails. Default 10.

Layout, detected from ``mounts_file``: when a ``cgroup2`` file system is mounted at
``root``, cgroup v2: ``<root>/<prefix>/<jobid>`` with ``cpuset.cpus``, ``cpuset.mems``,
``memory.max``; otherwise cgroup v1: ``<cpuset mount>/<prefix>/<jobid>`` and
``<memory mount>/<prefix>/<jobid>`` (normally ``<root>/cpuset`` and ``<root>/memory``) with
``cpuset.cpus``, ``cpuset.mems`` and ``memory.limit_in_bytes``.

A job's assignment on this host is the sum of ``ncpus`` and ``mem`` over the entries of
``exec_vnode`` whose vnode belongs to this host (a vnode's host is its
``resources_available["host"]`` in ``vnode_list``, else the ``exec_host`` entry of its
chunk). Events:

- execjob_begin: create the job's cgroups with ``cpuset.cpus`` = that many CPUs, the
  lowest ones of the host's allowed set (the prefix cgroup's CPUs minus ``exclude_cpus``)
  that no other job's cgroup holds; ``cpuset.mems`` = the prefix cgroup's memory nodes;
  the memory limit = ``mem`` in bytes (no limit written when the job has no ``mem`` here).
  A host where the job has ``ncpus=0`` gets no cpuset cgroup. Not enough free CPUs, or a
  write the kernel refuses, rejects the event (the mom then does not start the job).
- execjob_launch: move the hook's parent process (the process PBS is about to turn into
  the job's program or task, as with ``pbs_cgroups``) into the job's cgroups; its
  children follow.
- execjob_resize: shrink the cgroups to the job's new assignment: the kept CPUs are the
  first ones (in CPU order) of those the job had, the memory limit is set to the new
  ``mem``. A host the job no longer has anything on gets its cgroups removed. A write the
  kernel refuses (EINVAL, EBUSY, ENOSPC... any OSError) rejects the event; per PP-928 interface 9 the
  mom then aborts the job and the server requeues it, and the mom log shows
  ``"execjob_resize" request rejected by '<hook name>'`` and the message.
- execjob_end / execjob_abort: SIGKILL the processes left in the job's cgroups, wait for
  them to leave, remove the cgroups. The hook's own process and its ancestors (the mom)
  are never killed: if they are found inside, they are moved to the hierarchy's root.

Every event is idempotent (running it again gives the same cgroups). A config file that is
not valid JSON or breaks the rules above rejects the event with a message naming the file.
"""
import errno
import json
import os
import re
import signal
import time

import pbs

DEFAULT_HOOK_NAME = "cgroup_resize"
SIZE_RE = re.compile(r"^\s*([0-9]+)\s*([kmgtp]?)([bw]?)\s*$", re.IGNORECASE)
SIZE_FACTORS = {"": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3, "t": 1024 ** 4, "p": 1024 ** 5}
KILL_POLL_SECONDS = 0.1


# BEGIN GENERATED SCHEMA: written by tools/hooks_embed.py --write from cgroup_resize.schema.json,
# cgroup_resize.json and tools/hook_config_validator.py. Edit those and run it again, not this block.
CONFIG_SCHEMA = {
    'type': 'object',
    'additionalProperties': False,
    'properties': {
        'root': {
            'type': 'string',
            'pattern': '^/',
            'x-must-be': 'an absolute path',
        },
        'prefix': {
            'type': 'string',
            'pattern': '^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$',
            'not': {
                'pattern': '(^|/)\\.\\.(/|$)',
            },
            'x-must-be': "a relative cgroup path of letters, digits, _ . - and /, without '..'",
        },
        'mounts_file': {
            'type': 'string',
            'pattern': '^/',
            'x-must-be': 'an absolute path',
        },
        'exclude_cpus': {
            'type': 'array',
            'items': {
                'type': 'integer',
                'minimum': 0,
                'x-must-be': 'a CPU number >= 0',
            },
            'uniqueItems': True,
            'x-must-be': 'a list of CPU numbers >= 0',
        },
        'kill_timeout': {
            'type': 'number',
            'minimum': 0,
            'x-must-be': 'a number of seconds >= 0',
        },
    },
}
DEFAULT_CONFIG = {
    'root': '/sys/fs/cgroup',
    'prefix': 'pbs_jobs',
    'mounts_file': '/proc/self/mounts',
    'exclude_cpus': [],
    'kill_timeout': 10,
}


_SCHEMA_TYPE_WORDS = {"integer": "an integer", "number": "a number", "string": "a string",
                      "boolean": "true or false", "array": "a list", "object": "a JSON object",
                      "null": "null"}


def _schema_type_fits(value, kind):
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer())
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, {"string": str, "boolean": bool, "array": list, "object": dict,
                              "null": type(None)}[kind])


def _schema_json_key(value):
    if isinstance(value, bool) or value is None:
        return (type(value).__name__, value)
    if isinstance(value, (int, float)):
        return ("number", value)
    if isinstance(value, list):
        return ("array", tuple(_schema_json_key(item) for item in value))
    if isinstance(value, dict):
        return ("object", tuple(sorted((key, _schema_json_key(item)) for key, item in value.items())))
    return (type(value).__name__, value)


_SCHEMA_PATTERNS = {
    '(^|/)\\.\\.(/|$)': ((((('^', 1, 1), ('s//', 1, 1)), 1, 1, 's..', 1, 1, 's..', 1, 1, (('s//', 1, 1), ('$', 1, 1)), 1, 1),), 1, 1),
    '^/': ((('^', 1, 1, 's//', 1, 1),), 1, 1),
    '^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$': ((('^', 1, 1, 'sAZaz09__..--', 1, None, (('s//', 1, 1, 'sAZaz09__..--', 1, None),), 0, None, '$', 1, 1),), 1, 1),
}


def _pattern_ends(sequence, position, text, start, count):
    if position == len(sequence):
        yield start
        return
    node, low, high = sequence[position:position + 3]
    if high is None or count < high:
        for end in _pattern_node_ends(node, text, start):
            if end != start or count < low:
                yield from _pattern_ends(sequence, position, text, end, count + 1)
    if count >= low:
        yield from _pattern_ends(sequence, position + 3, text, start, 0)


def _pattern_node_ends(node, text, start):
    if node.__class__ is tuple:
        for alternative in node:
            yield from _pattern_ends(alternative, 0, text, start, 0)
    elif node == "^":
        if start == 0:
            yield start
    elif node == "$":
        if start == len(text) or (start == len(text) - 1 and text[start] == "\n"):
            yield start
    elif start < len(text):
        char = text[start]
        if node == ".":
            if char != "\n":
                yield start + 1
        elif (node[0] == "n") != any(node[index] <= char <= node[index + 1] for index in range(1, len(node), 2)):
            yield start + 1


def schema_pattern_search(pattern, text):
    for start in range(len(text) + 1):
        for _unused in _pattern_ends(_SCHEMA_PATTERNS[pattern], 0, text, start, 0):
            return True
    return False


def _schema_path(path, key):
    if isinstance(key, int):
        return "%s[%d]" % (path, key)
    return "%s.%s" % (path, key) if path else key


def schema_problems(value, schema, root=None, path=""):
    root = schema if root is None else root
    name = path or "the config"
    shown = repr(value) if path else type(value).__name__

    def must_be(words):
        return ["%s must be %s, not %s" % (name, schema.get("x-must-be", words), shown)]

    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not any(_schema_type_fits(value, kind) for kind in kinds):
            return must_be(" or ".join(_SCHEMA_TYPE_WORDS[kind] for kind in kinds))
    problems = []
    if "not" in schema and not schema_problems(value, schema["not"], root, path):
        if "x-must-be" in schema and not ("enum" in schema["not"] or "const" in schema["not"]):
            problems += must_be("")
        else:
            problems.append("%s may not be %s" % (name, shown))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            problems += must_be(">= %s" % schema["minimum"])
    if isinstance(value, str):
        if "pattern" in schema and not schema_pattern_search(schema["pattern"], value):
            problems += must_be("a string matching %s" % schema["pattern"])
    if isinstance(value, list):
        if schema.get("uniqueItems"):
            seen = []
            for item in value:
                if _schema_json_key(item) in seen:
                    problems.append("%s may not repeat %r" % (name, item))
                    break
                seen.append(_schema_json_key(item))
        if "items" in schema:
            for index, item in enumerate(value):
                problems += schema_problems(item, schema["items"], root, _schema_path(path, index))
    if isinstance(value, dict):
        known = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        unknown = sorted(key for key in value if key not in known)
        if extra is False and unknown:
            problems.append("%sunknown key(s) %s; known keys: %s"
                            % (path + " has " if path else "", ", ".join(unknown), ", ".join(sorted(known))))
        for key in sorted(value):
            if key in known:
                problems += schema_problems(value[key], known[key], root, _schema_path(path, key))
            elif isinstance(extra, dict):
                problems += schema_problems(value[key], extra, root, _schema_path(path, key))
    return problems
# END GENERATED SCHEMA


class ConfigError(ValueError):
    """The hook config file is unreadable or breaks the documented rules."""


class CgroupError(Exception):
    """A cgroup operation failed; the message says which file, which value and why."""


def hook_name(event):
    return getattr(event, "hook_name", None) or DEFAULT_HOOK_NAME


# ---------------------------------------------------------------- config
def check_config(config):
    """Validate a parsed config against CONFIG_SCHEMA (cgroup_resize.schema.json); return it
    with the defaults (DEFAULT_CONFIG) filled in. Raises ConfigError naming every offending
    key."""
    problems = schema_problems(config, CONFIG_SCHEMA)
    if problems:
        raise ConfigError("; ".join(problems))
    merged = dict(DEFAULT_CONFIG)
    merged.update(config)
    return merged


def load_config():
    """Read and validate ``pbs.hook_config_filename``; the defaults when there is none.
    Raises ConfigError with the path in the message."""
    path = getattr(pbs, "hook_config_filename", None)
    if not path:
        return dict(DEFAULT_CONFIG)
    try:
        # JSON is UTF-8; pbs_python's own default is the locale's (ASCII under the C locale
        # of CPython 3.6). A file that is not UTF-8 raises UnicodeDecodeError, a ValueError.
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (IOError, OSError, ValueError) as err:
        raise ConfigError("cannot read config file %s: %s" % (path, err))
    try:
        parsed = json.loads(text)
    except ValueError as err:
        raise ConfigError("config file %s is not valid JSON: %s" % (path, err))
    try:
        return check_config(parsed)
    except ConfigError as err:
        raise ConfigError("config file %s: %s" % (path, err))


# ---------------------------------------------------------------- values
def parse_cpu_list(text):
    """``"0-2,5"`` -> ``[0, 1, 2, 5]`` (sorted, no repeats); ``""`` -> ``[]``.
    Raises ValueError for anything else."""
    cpus = set()
    for piece in text.strip().split(","):
        piece = piece.strip()
        if not piece:
            continue
        if "-" in piece:
            low, high = piece.split("-", 1)
            cpus.update(range(int(low), int(high) + 1))
        else:
            cpus.add(int(piece))
    return sorted(cpus)


def format_cpu_list(cpus):
    """``[0, 1, 2, 5]`` -> ``"0-2,5"`` (the kernel's own format)."""
    ranges = []
    for cpu in sorted(set(cpus)):
        if ranges and cpu == ranges[-1][1] + 1:
            ranges[-1][1] = cpu
        else:
            ranges.append([cpu, cpu])
    return ",".join(str(a) if a == b else "%d-%d" % (a, b) for a, b in ranges)


def size_to_bytes(value):
    """A PBS size (``"1gb"``, ``"1048576kb"``, ``"512mb"``, ``"100"`` = bytes, ``"2kw"`` =
    words of 8 bytes) in bytes. Raises ValueError."""
    match = SIZE_RE.match(str(value))
    if not match:
        raise ValueError("illegal size %r" % (value,))
    number = int(match.group(1)) * SIZE_FACTORS[match.group(2).lower()]
    return number * 8 if match.group(3).lower() == "w" else number


def parse_exec_vnode(text):
    """``"(a:ncpus=1+b:ncpus=2)+(c:mem=1gb)"`` -> ``[[("a", {"ncpus": "1"}), ("b", ...)], [...]]``:
    one list per chunk, each entry a vnode name and its resources (strings)."""
    chunks = []
    for match in re.finditer(r"\(([^()]*)\)", text or ""):
        entries = []
        for piece in match.group(1).split("+"):
            fields = piece.split(":")
            resources = {}
            for field in fields[1:]:
                if "=" in field:
                    key, value = field.split("=", 1)
                    resources[key] = value
            entries.append((fields[0], resources))
        chunks.append(entries)
    return chunks


def exec_host_names(text):
    """``"h1/0*2+h2/0"`` -> ``["h1", "h2"]``: the host of each chunk, in order."""
    return [piece.split("/", 1)[0] for piece in str(text or "").split("+") if piece]


def short_name(host):
    return str(host).split(".", 1)[0]


def vnode_host(event, vnode_name, chunk_host):
    """The host of ``vnode_name``: its ``resources_available["host"]`` in the event's
    vnode_list, else the exec_host entry of its chunk, else its name without ``[...]``."""
    try:
        vnode = event.vnode_list[vnode_name]
    except (KeyError, TypeError, AttributeError, pbs.EventIncompatibleError):
        vnode = None
    if vnode is not None:
        try:
            host = vnode.resources_available["host"]
        except (KeyError, TypeError, AttributeError):
            host = None
        if host:
            return str(host)
    if chunk_host:
        return chunk_host
    return vnode_name.split("[", 1)[0]


def local_assignment(event, local_host):
    """``{"ncpus": int, "mem": bytes or None, "vnodes": [names]}`` of the job on
    ``local_host``; ``vnodes`` empty when the job has nothing here."""
    job = event.job
    chunk_hosts = exec_host_names(job.exec_host)
    ncpus = 0
    mem = None
    vnodes = []
    for index, chunk in enumerate(parse_exec_vnode(str(job.exec_vnode or ""))):
        chunk_host = chunk_hosts[index] if index < len(chunk_hosts) else None
        for name, resources in chunk:
            if short_name(vnode_host(event, name, chunk_host)) != short_name(local_host):
                continue
            if name not in vnodes:
                vnodes.append(name)
            ncpus += int(resources.get("ncpus", "0") or 0)
            if "mem" in resources:
                mem = (mem or 0) + size_to_bytes(resources["mem"])
    return {"ncpus": ncpus, "mem": mem, "vnodes": vnodes}


# ---------------------------------------------------------------- files
def read_text(path):
    with open(path) as handle:
        return handle.read().strip()


def write_value(path, value):
    """Write ``value`` to a cgroup file; raises CgroupError saying what the kernel refused."""
    try:
        with open(path, "w") as handle:
            handle.write(str(value))
    except (IOError, OSError) as err:
        code = errno.errorcode.get(err.errno, str(err.errno)) if err.errno else "?"
        raise CgroupError("writing %s to %s failed: [%s] %s" % (value, path, code, err.strerror or err))


def read_pids(directory):
    """PIDs in the cgroup's ``cgroup.procs``.  cgroup v2 lists a process that this PID
    namespace cannot see as 0, never a PID to signal (kill(0) is our own process group)."""
    try:
        text = read_text(os.path.join(directory, "cgroup.procs"))
    except (IOError, OSError):
        return []
    return [int(word) for word in text.split() if word.isdigit() and int(word) > 0]


def own_lineage():
    """This process and its ancestors (the mom that runs the hook): never to be killed."""
    pids = set()
    pid = os.getpid()
    while pid > 1 and pid not in pids:
        pids.add(pid)
        try:
            with open("/proc/%d/stat" % pid) as handle:
                stat = handle.read()
            pid = int(stat.rsplit(")", 1)[1].split()[1])
        except (IOError, OSError, ValueError, IndexError):
            break
    return pids


def unmangle(field):
    """Mount table fields escape space, tab, newline and backslash as octal."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


# ---------------------------------------------------------------- the hierarchy
class Hierarchy:
    """Where this host's job cgroups live, detected from the mount table.

    ``version`` 1 or 2; ``mounts``: ``{"cpuset": dir, "memory": dir}`` (the same dir twice
    for v2); ``memory_limit_file``: ``memory.limit_in_bytes`` or ``memory.max``."""

    def __init__(self, config):
        self.config = config
        self.prefix = config["prefix"]
        root = os.path.normpath(config["root"])
        try:
            with open(config["mounts_file"]) as handle:
                lines = handle.read().splitlines()
        except (IOError, OSError) as err:
            raise CgroupError("cannot read the mount table %s: %s" % (config["mounts_file"], err))
        v1 = {}
        version = None
        for line in lines:
            fields = line.split()
            if len(fields) < 4:
                continue
            mount_point, fs_type, options = os.path.normpath(unmangle(fields[1])), fields[2], fields[3].split(",")
            if fs_type == "cgroup2" and mount_point == root:
                version = 2
            elif fs_type == "cgroup" and (mount_point == root or mount_point.startswith(root + "/")):
                for controller in ("cpuset", "memory"):
                    if controller in options:
                        # The conventional <root>/<controller> wins over other mounts of it.
                        if controller not in v1 or mount_point == os.path.join(root, controller):
                            v1[controller] = mount_point
        if version == 2:
            self.version = 2
            self.mounts = {"cpuset": root, "memory": root}
            self.memory_limit_file = "memory.max"
        elif "cpuset" in v1 and "memory" in v1:
            self.version = 1
            self.mounts = v1
            self.memory_limit_file = "memory.limit_in_bytes"
        else:
            raise CgroupError("no cgroup v2 file system at %s and no cgroup v1 cpuset and memory "
                              "controllers under it in %s" % (root, config["mounts_file"]))

    def prefix_dir(self, controller):
        return os.path.join(self.mounts[controller], self.prefix)

    def job_dir(self, controller, jobid):
        return os.path.join(self.prefix_dir(controller), str(jobid))

    def job_dirs(self, jobid):
        """``[(hierarchy mount, job cgroup dir)]``, one per distinct directory (v2: one)."""
        dirs = []
        for controller in ("cpuset", "memory"):
            path = self.job_dir(controller, jobid)
            if path not in [d for _m, d in dirs]:
                dirs.append((self.mounts[controller], path))
        return dirs

    def ensure_prefix(self):
        """Create the prefix cgroup(s) and make their CPUs and memory nodes usable by jobs
        (v1 cpuset children start empty; v2 needs the controllers enabled for children)."""
        if self.version == 2:
            root = self.mounts["cpuset"]
            parts = self.prefix.split("/")
            current = root
            for depth in range(len(parts) + 1):
                self._enable_controllers(current)
                if depth < len(parts):
                    current = os.path.join(current, parts[depth])
                    self._mkdir(current)
            return
        current = self.mounts["cpuset"]
        for part in self.prefix.split("/"):
            parent, current = current, os.path.join(current, part)
            created = self._mkdir(current)
            for name in ("cpuset.cpus", "cpuset.mems"):
                if created or not self._read_or_empty(os.path.join(current, name)):
                    write_value(os.path.join(current, name), read_text(os.path.join(parent, name)))
        current = self.mounts["memory"]
        for part in self.prefix.split("/"):
            current = os.path.join(current, part)
            self._mkdir(current)

    def _enable_controllers(self, directory):
        path = os.path.join(directory, "cgroup.subtree_control")
        enabled = [word.lstrip("+") for word in self._read_or_empty(path).split()]
        missing = ["+" + c for c in ("cpuset", "memory") if c not in enabled]
        if missing:
            write_value(path, " ".join(missing))

    @staticmethod
    def _read_or_empty(path):
        try:
            return read_text(path)
        except (IOError, OSError):
            return ""

    @staticmethod
    def _mkdir(path):
        try:
            os.mkdir(path)
            return True
        except OSError as err:
            if err.errno == errno.EEXIST:
                return False
            raise CgroupError("cannot create cgroup %s: %s" % (path, err))

    def _effective(self, kind):
        """The prefix cgroup's effective ``cpus`` or ``mems`` text; where it shows none
        (a cgroup whose own value is unset), the nearest ancestor's up to the mount."""
        mount = self.mounts["cpuset"]
        directory = self.prefix_dir("cpuset")
        names = ("cpuset.%s.effective" % kind, "cpuset.effective_%s" % kind, "cpuset.%s" % kind)
        while True:
            for name in names:
                text = self._read_or_empty(os.path.join(directory, name))
                if text:
                    return text
            if directory == mount or len(directory) <= len(mount):
                return ""
            directory = os.path.dirname(directory)

    def allowed_cpus(self):
        """CPUs jobs may get on this host: the prefix cgroup's, minus ``exclude_cpus``."""
        excluded = set(self.config["exclude_cpus"])
        return [cpu for cpu in parse_cpu_list(self._effective("cpus")) if cpu not in excluded]

    def allowed_mems(self):
        return self._effective("mems") or "0"

    def job_cpus(self, jobid):
        """CPUs in the job's cpuset (``[]`` when it has none)."""
        return parse_cpu_list(self._read_or_empty(os.path.join(self.job_dir("cpuset", jobid), "cpuset.cpus")))

    def cpus_of_other_jobs(self, jobid):
        used = set()
        prefix = self.prefix_dir("cpuset")
        try:
            names = os.listdir(prefix)
        except OSError:
            return used
        for name in names:
            path = os.path.join(prefix, name)
            if name != str(jobid) and os.path.isdir(path):
                used.update(parse_cpu_list(self._read_or_empty(os.path.join(path, "cpuset.cpus"))))
        return used

    def set_cpus(self, jobid, cpus):
        directory = self.job_dir("cpuset", jobid)
        self._mkdir(directory)
        # v1 refuses tasks in a cpuset without memory nodes; write mems first.
        if not self._read_or_empty(os.path.join(directory, "cpuset.mems")):
            write_value(os.path.join(directory, "cpuset.mems"), self.allowed_mems())
        write_value(os.path.join(directory, "cpuset.cpus"), format_cpu_list(cpus))

    def set_memory_limit(self, jobid, limit_bytes):
        directory = self.job_dir("memory", jobid)
        self._mkdir(directory)
        if limit_bytes is not None:
            write_value(os.path.join(directory, self.memory_limit_file), limit_bytes)

    def add_pid(self, jobid, pid):
        """Move ``pid`` into every existing cgroup of the job; returns the dirs used."""
        used = []
        for _mount, directory in self.job_dirs(jobid):
            if os.path.isdir(directory):
                write_value(os.path.join(directory, "cgroup.procs"), pid)
                used.append(directory)
        return used

    def remove_job(self, jobid, timeout):
        """Kill what is left in the job's cgroups and remove them; returns the removed dirs.
        Raises CgroupError when a cgroup is still busy after ``timeout`` seconds."""
        spared = own_lineage()
        dirs = [(m, d) for m, d in self.job_dirs(jobid) if os.path.isdir(d)]
        for mount, directory in dirs:
            for pid in [p for sub, _d, _f in os.walk(directory) for p in read_pids(sub)]:
                if pid in spared:
                    write_value(os.path.join(mount, "cgroup.procs"), pid)
                    continue
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass  # already gone
        deadline = time.time() + timeout
        for _mount, directory in dirs:
            self._remove_tree(directory, deadline)
        return [d for _m, d in dirs]

    def _remove_tree(self, directory, deadline):
        for name in sorted(os.listdir(directory)):
            path = os.path.join(directory, name)
            if os.path.isdir(path) and not os.path.islink(path):
                self._remove_tree(path, deadline)
        while True:
            try:
                os.rmdir(directory)
                return
            except OSError as err:
                if err.errno == errno.ENOENT:
                    return
                if err.errno in (errno.ENOTEMPTY, errno.EEXIST):
                    # Only an ordinary directory (not cgroupfs) says this: a cgroup's own
                    # files vanish with it, an ordinary directory's must go first.
                    for name in os.listdir(directory):
                        path = os.path.join(directory, name)
                        if not os.path.isdir(path):
                            os.unlink(path)
                    continue
                if err.errno != errno.EBUSY or time.time() >= deadline:
                    raise CgroupError("cannot remove cgroup %s: %s (processes still in it: %s)"
                                      % (directory, err, read_pids(directory) or "none"))
                time.sleep(KILL_POLL_SECONDS)


# ---------------------------------------------------------------- events
def choose_cpus(hierarchy, jobid, count):
    """The ``count`` lowest allowed CPUs no other job holds; raises CgroupError."""
    busy = hierarchy.cpus_of_other_jobs(jobid)
    allowed = hierarchy.allowed_cpus()
    free = [cpu for cpu in allowed if cpu not in busy]
    if len(free) < count:
        raise CgroupError("job needs %d CPUs here but only %d of %s are free (other jobs hold %s)"
                          % (count, len(free), format_cpu_list(allowed) or "none",
                             format_cpu_list(busy) or "none"))
    return free[:count]


def on_begin(event, hierarchy, config, local_host):
    jobid = event.job.id
    name = hook_name(event)
    assignment = local_assignment(event, local_host)
    if not assignment["vnodes"]:
        # PBS runs execjob_begin only on the job's moms; elsewhere (a preflight run of the
        # event on the server host) the hook makes no cgroup at all, not even the prefix.
        pbs.logjobmsg(jobid, "%s: job has no vnode on %s, no cgroup made" % (name, local_host))
        return
    hierarchy.ensure_prefix()
    cpus = []
    if assignment["ncpus"] > 0:
        cpus = choose_cpus(hierarchy, jobid, assignment["ncpus"])
        hierarchy.set_cpus(jobid, cpus)
    hierarchy.set_memory_limit(jobid, assignment["mem"])
    pbs.logjobmsg(jobid, "%s: cgroup v%d of %s on %s: cpus=%s mem=%s"
                  % (name, hierarchy.version, hierarchy.prefix + "/" + str(jobid), local_host,
                     format_cpu_list(cpus) or "none",
                     "unlimited" if assignment["mem"] is None else "%d bytes" % assignment["mem"]))


def on_launch(event, hierarchy, config, local_host):
    jobid = event.job.id
    parent = os.getppid()
    used = hierarchy.add_pid(jobid, parent)
    if not used:
        pbs.logjobmsg(jobid, "%s: job has no cgroup on %s (started before the hook?), process %d left alone"
                      % (hook_name(event), local_host, parent))
        return
    pbs.logjobmsg(jobid, "%s: process %d put in %s" % (hook_name(event), parent, ", ".join(used)))


def on_resize(event, hierarchy, config, local_host):
    jobid = event.job.id
    name = hook_name(event)
    assignment = local_assignment(event, local_host)
    if not assignment["vnodes"]:
        removed = hierarchy.remove_job(jobid, config["kill_timeout"])
        pbs.logjobmsg(jobid, "%s: job has nothing left on %s, cgroups removed: %s"
                      % (name, local_host, ", ".join(removed) or "none"))
        return
    if not [d for _m, d in hierarchy.job_dirs(jobid) if os.path.isdir(d)]:
        pbs.logjobmsg(jobid, "%s: job has no cgroup on %s (started before the hook?), nothing to resize"
                      % (name, local_host))
        return
    had = hierarchy.job_cpus(jobid)
    wanted = assignment["ncpus"]
    if wanted > len(had):
        raise CgroupError("execjob_resize cannot grow the job's cpuset on %s from %d to %d CPUs"
                          % (local_host, len(had), wanted))
    kept = had[:wanted]
    if kept != had:
        if kept:
            hierarchy.set_cpus(jobid, kept)
        else:
            # A cpuset cannot be emptied while it may hold tasks: leave it to execjob_end.
            raise CgroupError("execjob_resize cannot take every CPU (%s) from the job on %s while it still has vnodes %s"
                              % (format_cpu_list(had), local_host, ", ".join(assignment["vnodes"])))
    hierarchy.set_memory_limit(jobid, assignment["mem"])
    pbs.logjobmsg(jobid, "%s: cgroups on %s resized: cpus %s -> %s, mem=%s"
                  % (name, local_host, format_cpu_list(had) or "none", format_cpu_list(kept) or "none",
                     "unchanged (no mem)" if assignment["mem"] is None else "%d bytes" % assignment["mem"]))


def on_end(event, hierarchy, config, local_host):
    jobid = event.job.id
    removed = hierarchy.remove_job(jobid, config["kill_timeout"])
    pbs.logjobmsg(jobid, "%s: cgroups removed on %s: %s" % (hook_name(event), local_host, ", ".join(removed) or "none"))


HANDLERS = {
    "EXECJOB_BEGIN": on_begin,
    "EXECJOB_LAUNCH": on_launch,
    "EXECJOB_RESIZE": on_resize,
    "EXECJOB_END": on_end,
    "EXECJOB_ABORT": on_end,
}


def main():
    event = pbs.event()
    handler = None
    for constant, candidate in HANDLERS.items():
        if getattr(pbs, constant, None) == event.type:
            handler = candidate
    if handler is None:
        return
    name = hook_name(event)
    try:
        config = load_config()
    except ConfigError as err:
        message = "%s: %s" % (name, err)
        pbs.logmsg(pbs.LOG_ERROR, message)
        event.reject(message)
        return
    local_host = pbs.get_local_nodename()
    try:
        hierarchy = Hierarchy(config)
        handler(event, hierarchy, config, local_host)
    except (CgroupError, ValueError) as err:
        message = "%s: job %s on %s: %s" % (name, event.job.id, local_host, err)
        pbs.logmsg(pbs.LOG_ERROR, message)
        event.reject(message)


if __name__ == "builtins":
    main()
