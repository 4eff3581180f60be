"""``qsub``: submit a job to the mock server (transcript d of reference/openpbs).

Accepted: ``-l`` (select, place, other resources), ``-W`` (``tolerate_node_failures=
all|job_start|none``, ``run_count=N``; anything else ``qsub: illegal -W value``, rc 2),
``-J X-Y[:Z]`` (a job array, ``qsub: illegal -J value``), ``-N``, ``-o``,
``-e``, ``-j``, ``-v``, ``-V``, ``-q``, ``-h``, ``-r``, ``-m``, ``-M``, ``-P``, ``-p``,
``-A``, ``-k``, ``-c``, ``-S``, a script file or stdin (``#PBS`` directives honoured) or
``-- command args``. The command line wins over the script's directives, which win over
the server's ``default_qsub_arguments`` (split with shlex); a weaker value of an option
already set is neither applied nor checked. ``default_qsub_arguments`` comes from the
caller's cache process (:mod:`mockpbs.cli.qsub_cache`), so a bad value once cached keeps
failing every plain qsub until that process ends (transcript d).

``default_qsub_arguments`` that qsub cannot even parse (``-W foo``, an option missing its
argument) are a *directive error*, as in OpenPBS's ``do_dir()``: qsub prints the parser's
message, refreshes the defaults from the server and parses again, prints the message a
second time, then ``qsub: directive error: <the words> `` and exits 255 without the usage.
A value the parser accepts but the server refuses (``tolerate_node_failures=bogus``) is
``qsub: illegal -W value`` with the usage, rc 2, wherever it came from.
"""
import getopt
import os
import shlex
import sys

from mockpbs import arrays
from mockpbs.cli import common, qsub_cache

PBSE_FORCE_QSUB_UPDATE = 15160

OPTSTRING = "a:A:c:C:e:fhIj:J:k:l:m:M:N:o:p:P:q:r:R:S:u:v:VW:Xz"
TOLERATE_VALUES = ("all", "job_start", "none")
USAGE = """usage: qsub [-a date_time] [-A account_string] [-c interval]
\t[-C directive_prefix] [-e path] [-f ] [-h ] [-I [-X]] [-j oe|eo] [-J X-Y[:Z]]
\t[-k keep] [-l resource_list] [-m mail_options] [-M user_list]
\t[-N jobname] [-o path] [-p priority] [-P project] [-q queue] [-r y|n]
\t[-R o|e|oe] [-S path] [-u user_list] [-W otherattributes=value...]
\t[-v variable_list] [-V ] [-z] [script | -- command [arg1 ...]]
       qsub --version
"""


class QsubUsage(Exception):
    """Bad options: ``message`` (may be empty) is printed before the usage text.
    ``syntax``: found while parsing the options (OpenPBS's ``process_opts``), not a value
    the server would refuse."""

    def __init__(self, message="", syntax=False):
        super().__init__(message)
        self.syntax = syntax


class QsubDirectiveError(Exception):
    """``default_qsub_arguments`` qsub cannot parse: ``message`` from the parser and the
    ``words`` as qsub echoes them (an ``-W`` value cut at its ``=``, as the parser leaves
    it)."""

    def __init__(self, message, words):
        super().__init__(message)
        self.message = message
        self.words = [w.split("=", 1)[0] if i and words[i - 1] == "-W" else w
                      for i, w in enumerate(words)]


def _put(attrs, key, value, keep, into=None):
    """Set ``attrs[key]`` (or ``attrs[into][key]``) unless ``keep`` and it is already set.
    Returns False when the value was left alone (its checks must not run either)."""
    target = attrs.setdefault(into, {}) if into else attrs
    if keep and key in target:
        return False
    target[key] = value
    return True


def _valid_w_value(key, value):
    if key == "tolerate_node_failures":
        return value in TOLERATE_VALUES
    if key == "run_count":
        return value.isdigit() and int(value) < 2 ** 63
    return True


def apply_options(opts, attrs, keep=False):
    """Apply getopt ``opts`` to ``attrs`` (the job attribute dict being built). With
    ``keep`` (script directives, then ``default_qsub_arguments``) a value already set by a
    stronger source is kept and the weaker one is not even checked, as qsub does."""
    for opt, value in opts:
        if opt == "-l":
            for item in value.split(","):
                if "=" not in item:
                    raise QsubUsage("qsub: illegal -l value", syntax=True)
                key, val = item.split("=", 1)
                _put(attrs, key.strip(), val.strip(), keep, "Resource_List")
        elif opt == "-W":
            for item in value.split(","):
                if "=" not in item:
                    raise QsubUsage("qsub: illegal -W value", syntax=True)
                key, val = item.split("=", 1)
                if keep and key in attrs:
                    continue
                if not _valid_w_value(key, val):
                    raise QsubUsage("qsub: illegal -W value")
                attrs[key] = val
        elif opt == "-J":
            if keep and "array_indices_submitted" in attrs:
                continue
            try:
                arrays.parse_range(value)
            except arrays.ArrayRangeError:
                raise QsubUsage("qsub: illegal -J value", syntax=True)
            attrs["array_indices_submitted"] = value
        elif opt == "-j":
            if keep and "Join_Path" in attrs:
                continue
            if value not in ("oe", "eo", "n"):
                raise QsubUsage("qsub: illegal -j value", syntax=True)
            attrs["Join_Path"] = value
        elif opt == "-r":
            if keep and "Rerunable" in attrs:
                continue
            if value not in ("y", "n"):
                raise QsubUsage("qsub: illegal -r value", syntax=True)
            attrs["Rerunable"] = "True" if value == "y" else "False"
        elif opt == "-v":
            for item in value.split(","):
                if not item:
                    continue
                key, sep, val = item.partition("=")
                _put(attrs, key, val if sep else os.environ.get(key, ""), keep, "_extra_vars")
        elif opt in SIMPLE_OPTIONS:
            name, fixed = SIMPLE_OPTIONS[opt]
            _put(attrs, name, fixed if fixed is not None else value, keep)
        elif opt in ("-I", "-X"):
            raise QsubUsage("qsub: option %s is not supported by the mock" % opt)


SIMPLE_OPTIONS = {
    "-N": ("Job_Name", None), "-o": ("Output_Path", None), "-e": ("Error_Path", None),
    "-V": ("_all_env", True), "-q": ("queue", None), "-h": ("Hold_Types", "u"),
    "-m": ("Mail_Points", None), "-M": ("Mail_Users", None), "-P": ("project", None),
    "-p": ("Priority", None), "-A": ("Account_Name", None), "-k": ("Keep_Files", None),
    "-c": ("Checkpoint", None), "-S": ("Shell_Path_List", None),
}


def _parse(args):
    """getopt with glibc's messages, as qsub prints them."""
    try:
        opts, rest = getopt.getopt(args, OPTSTRING)
    except getopt.GetoptError as exc:
        if exc.opt and exc.opt in OPTSTRING:
            raise QsubUsage("qsub: option requires an argument -- '%s'" % exc.opt, syntax=True)
        raise QsubUsage("qsub: invalid option -- '%s'" % (exc.opt or "?"), syntax=True)
    return opts, rest


def script_directives(script):
    """The option words of the ``#PBS`` lines before the first command line."""
    words = []
    for line in script.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#PBS"):
            words.extend(shlex.split(stripped[4:], comments=True))
            continue
        if stripped.startswith("#"):
            continue
        break
    return words


def base_variables():
    home = os.environ.get("HOME", "/")
    user = common.identity()["user"]
    return {
        "PBS_O_HOME": home, "PBS_O_LOGNAME": os.environ.get("LOGNAME", user),
        "PBS_O_PATH": os.environ.get("PATH", ""), "PBS_O_MAIL": os.environ.get("MAIL", "/var/mail/%s" % user),
        "PBS_O_SHELL": os.environ.get("SHELL", "/bin/sh"), "PBS_O_INTERACTIVE_AUTH_METHOD": "resvport",
        "PBS_O_INTERACTIVE_ENCRYPT_METHOD": "", "PBS_O_WORKDIR": os.getcwd(),
        "PBS_O_SYSTEM": os.uname().sysname,
    }


def build_job(argv, default_arguments, stdin):
    """Return ``(attrs, script)`` for ``argv``; raises QsubUsage."""
    if "--" in argv:
        cut = argv.index("--")
        option_args, command = argv[:cut], argv[cut + 1:]
        if not command:
            raise QsubUsage("")
    else:
        option_args, command = argv, None
    attrs = {}
    opts, rest = _parse(option_args)
    apply_options(opts, attrs)
    script = ""
    if command is not None:
        if rest:
            raise QsubUsage("")
        attrs["executable"] = "<jsdl-hpcpa:Executable>%s</jsdl-hpcpa:Executable>" % command[0]
        if command[1:]:
            attrs["argument_list"] = "".join("<jsdl-hpcpa:Argument>%s</jsdl-hpcpa:Argument>" % a for a in command[1:])
        name = "STDIN"
    else:
        if len(rest) > 1:
            raise QsubUsage("")
        if rest:
            try:
                with open(rest[0]) as handle:
                    script = handle.read()
            except OSError as exc:
                raise QsubUsage("qsub: script file:: %s" % os.strerror(exc.errno or 2))
            name = os.path.basename(rest[0])
        else:
            script = stdin.read()
            name = "STDIN"
        directive_opts, _unused = _parse(script_directives(script))
        apply_options(directive_opts, attrs, keep=True)
    if default_arguments:
        words = shlex.split(default_arguments)
        try:
            default_opts, _unused = _parse(words)
            apply_options(default_opts, attrs, keep=True)
        except QsubUsage as exc:
            if not exc.syntax:
                raise
            raise QsubDirectiveError(str(exc), words)
    attrs.setdefault("Job_Name", name)
    variables = base_variables()
    if attrs.pop("_all_env", False):
        for key, value in os.environ.items():
            variables.setdefault(key, value)
    variables.update(attrs.pop("_extra_vars", {}))
    attrs["Variable_List"] = variables
    attrs["Submit_arguments"] = " ".join(argv)
    return attrs, script


class _OnceStdin:
    """stdin read at most once (qsub may build the job twice after a cache refresh)."""

    def __init__(self, stream):
        self.stream = stream
        self.text = None

    def read(self):
        if self.text is None:
            self.text = self.stream.read()
        return self.text


def _defaults_source():
    """``(defaults, version, use_cache)``: through the per-user cache process
    (:mod:`mockpbs.cli.qsub_cache`), or straight from the server when it is off."""
    if qsub_cache.enabled():
        try:
            reply = qsub_cache.request(common.identity(), common.server_name(), common.server_address())
            return reply.get("defaults"), reply.get("version"), True
        except qsub_cache.CacheUnavailable:
            pass
    server = common.call("stat_server")
    return dict(server.get("items") or []).get("default_qsub_arguments"), None, False


def _refreshed_defaults(defaults, cached):
    """``(defaults, version)`` read again: through the cache process (which asks the server)
    when there is one, else straight from the server."""
    if cached:
        try:
            refreshed = qsub_cache.request(common.identity(), common.server_name(),
                                           common.server_address(), op="refresh")
        except qsub_cache.CacheUnavailable:
            refreshed = {"defaults": defaults, "version": None}
        return refreshed.get("defaults"), refreshed.get("version")
    return _defaults_source()[:2]


def main(argv=None):
    """``qsub``: prints the job id (rc 0); bad options print the usage (rc 2); a server
    refusal prints ``qsub: <message>`` (rc errno % 256)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if common.wants_version(argv):
        return 0
    stdin = _OnceStdin(sys.stdin)
    try:
        defaults, version, cached = _defaults_source()
    except common.ServerUnreachable as exc:
        return common.unreachable("qsub", exc)
    for attempt in range(2):
        try:
            attrs, script = build_job(argv, defaults, stdin)
        except QsubDirectiveError as exc:
            sys.stderr.write(exc.message + "\n")
            if attempt == 0:
                defaults, version = _refreshed_defaults(defaults, cached)
                continue
            sys.stderr.write("qsub: directive error: %s\n" % "".join(w + " " for w in exc.words))
            return 255
        except QsubUsage as exc:
            if str(exc):
                sys.stderr.write(str(exc) + "\n")
            sys.stderr.write(USAGE)
            return 2
        try:
            reply = common.call("submit", attrs=attrs, script=script, defaults_version=version)
        except common.ServerUnreachable as exc:
            return common.unreachable("qsub", exc)
        if reply.get("code") == PBSE_FORCE_QSUB_UPDATE and cached and attempt == 0:
            defaults, version = _refreshed_defaults(defaults, cached)
            continue
        break
    if not reply.get("ok"):
        sys.stderr.write("qsub: %s\n" % reply.get("error", ""))
        return common.exit_code(reply.get("code", 1))
    print(reply["jobid"])
    return 0
