"""``qsub``: submit a job to the mock server (transcript d of reference/openpbs).

Accepted: ``-l`` (select, place, other resources), ``-W`` (``tolerate_node_failures=
all|job_start|none``; anything else ``qsub: illegal -W value``, rc 2), ``-N``, ``-o``,
``-e``, ``-j``, ``-v``, ``-V``, ``-q``, ``-h``, ``-r``, ``-m``, ``-M``, ``-P``, ``-p``,
``-A``, ``-k``, ``-c``, ``-S``, a script file or stdin (``#PBS`` directives honoured) or
``-- command args``. The server's ``default_qsub_arguments`` are applied first (split
with shlex), then the script's directives, then the command line.
"""
import getopt
import os
import shlex
import sys

from mockpbs.cli import common

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
    """Bad options: ``message`` (may be empty) is printed before the usage text."""


def apply_options(opts, attrs):
    """Apply getopt ``opts`` to ``attrs`` (the job attribute dict being built)."""
    for opt, value in opts:
        if opt == "-l":
            for item in value.split(","):
                if "=" not in item:
                    raise QsubUsage("qsub: illegal -l value")
                key, val = item.split("=", 1)
                attrs.setdefault("Resource_List", {})[key.strip()] = val.strip()
        elif opt == "-W":
            for item in value.split(","):
                if "=" not in item:
                    raise QsubUsage("qsub: illegal -W value")
                key, val = item.split("=", 1)
                if key == "tolerate_node_failures" and val not in TOLERATE_VALUES:
                    raise QsubUsage("qsub: illegal -W value")
                attrs[key] = val
        elif opt == "-N":
            attrs["Job_Name"] = value
        elif opt == "-o":
            attrs["Output_Path"] = value
        elif opt == "-e":
            attrs["Error_Path"] = value
        elif opt == "-j":
            if value not in ("oe", "eo", "n"):
                raise QsubUsage("qsub: illegal -j value")
            attrs["Join_Path"] = value
        elif opt == "-v":
            for item in value.split(","):
                if not item:
                    continue
                key, sep, val = item.partition("=")
                attrs.setdefault("_extra_vars", {})[key] = val if sep else os.environ.get(key, "")
        elif opt == "-V":
            attrs["_all_env"] = True
        elif opt == "-q":
            attrs["queue"] = value
        elif opt == "-h":
            attrs["Hold_Types"] = "u"
        elif opt == "-r":
            if value not in ("y", "n"):
                raise QsubUsage("qsub: illegal -r value")
            attrs["Rerunable"] = "True" if value == "y" else "False"
        elif opt == "-m":
            attrs["Mail_Points"] = value
        elif opt == "-M":
            attrs["Mail_Users"] = value
        elif opt == "-P":
            attrs["project"] = value
        elif opt == "-p":
            attrs["Priority"] = value
        elif opt == "-A":
            attrs["Account_Name"] = value
        elif opt == "-k":
            attrs["Keep_Files"] = value
        elif opt == "-c":
            attrs["Checkpoint"] = value
        elif opt == "-S":
            attrs["Shell_Path_List"] = value
        elif opt in ("-I", "-J", "-X"):
            raise QsubUsage("qsub: option %s is not supported by the mock" % opt)


def _parse(args):
    try:
        opts, rest = getopt.getopt(args, OPTSTRING)
    except getopt.GetoptError as exc:
        raise QsubUsage("qsub: %s" % exc.msg)
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
    if default_arguments:
        default_opts, _ = _parse(shlex.split(default_arguments))
        apply_options(default_opts, attrs)
    opts, rest = _parse(option_args)
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
        directive_opts, _ = _parse(script_directives(script))
        apply_options(directive_opts, attrs)
    attrs.setdefault("Job_Name", name)
    apply_options(opts, attrs)
    variables = base_variables()
    if attrs.pop("_all_env", False):
        for key, value in os.environ.items():
            variables.setdefault(key, value)
    variables.update(attrs.pop("_extra_vars", {}))
    attrs["Variable_List"] = variables
    attrs["Submit_arguments"] = " ".join(argv)
    return attrs, script


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if common.wants_version(argv):
        return 0
    try:
        server = common.call("stat_server")
    except common.ServerUnreachable as exc:
        return common.unreachable("qsub", exc)
    defaults = dict(server.get("items") or []).get("default_qsub_arguments")
    try:
        attrs, script = build_job(argv, defaults, sys.stdin)
    except QsubUsage as exc:
        if str(exc):
            sys.stderr.write(str(exc) + "\n")
        sys.stderr.write(USAGE)
        return 2
    try:
        reply = common.call("submit", attrs=attrs, script=script)
    except common.ServerUnreachable as exc:
        return common.unreachable("qsub", exc)
    if not reply.get("ok"):
        sys.stderr.write("qsub: %s\n" % reply.get("error", ""))
        return common.exit_code(reply.get("code", 1))
    print(reply["jobid"])
    return 0
