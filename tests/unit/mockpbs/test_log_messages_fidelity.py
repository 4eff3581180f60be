"""Every log text of tests/reference/log_messages.json (what real OpenPBS 23.06.06 writes,
with ``<placeholders>``) that the mock writes is checked against the mock's own text.

Three ways, one per kind of message, so that a changed log text in the mock fails here:

- written from one format string: the mock's sources (``tests/mockpbs/mockpbs``) are
  scanned for string literals (``%s``/``%d``/``{}`` placeholders, f-strings) and each
  reference message must fit one of them: the reference text with its placeholders filled
  in matches the literal, or the literal with its placeholders filled in matches the
  reference text; the literal must carry most of the reference's fixed text (so ``%s%s``
  never counts);
- composed at run time (``release_nodes()``'s chunk lines): the mock's function is
  driven and its log line must match the reference text, placeholders as wildcards;
- not written by the mock: listed in :data:`NOT_WRITTEN_BY_THE_MOCK` with the reason.

Each reference message is in exactly one of these groups, and the scan must find exactly
the messages not listed elsewhere.
"""
import ast
import functools
import glob
import json
import os
import re

from mockpbs import release_nodes

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
REFERENCE = os.path.join(REPO, "tests", "reference", "log_messages.json")
MOCK_SOURCES = os.path.join(REPO, "tests", "mockpbs", "mockpbs")

PRINTF_OR_FORMAT = re.compile(r"%(?:\([^)]*\))?[-#0 +]*\d*(?:\.\d+)?[sdrfix]|\{[^{}]*\}")
REFERENCE_PLACEHOLDER = re.compile(r"<[^<>]*>|\.\.\.")
FILLER = "X1"
# The part of a reference message's fixed text a mock literal must carry.
MIN_LITERAL_SHARE = 0.6

HOOK_TEXT = "written by the hook (the PTL tests' or ReliableJobStartup.py), not by PBS"
NOT_WRITTEN_BY_THE_MOCK = {
    "ignoring POLL error from failed mom <host> as job is tolerant of node failures":
        "the mock's primary does not poll the sisters with IM_POLL_JOB errors",
    "ignoring POLL_JOB error from failed mom <host> as job is tolerant of node failures":
        "the mock's primary does not poll the sisters with IM_POLL_JOB errors",
    "ignoring node EOF <n> from failed mom <host> as job is tolerant of node failures":
        "the mock has no TPP stream EOF numbers",
    "release_nodes_given_select: AFT rc=<rc> keep_select=<..> execvnode=<..> exechost=<..> "
    "exechost2=<..> new_exec_vnode=<..> new_exec_host=<..> new_exec_host2=<..> "
    "new_schedselect=<..>": "a debug-only line of real PBS",
    "MOM: release_nodes_given_select: AFT rc=<rc> keep_select=NULL execvnode=...":
        "a debug-only line of real PBS",
    "im_eof, Premature end of message from addr <addr> on stream 4":
        "the mock has no DIS/TPP streams",
    "Executing begin": HOOK_TEXT, "Executing prolo": HOOK_TEXT, "Executing prolo1": HOOK_TEXT,
    "Executing launch": HOOK_TEXT,
    "prolo: found vnode_list[<vn>]": HOOK_TEXT, "prolo: found vnode_list_fail[<vn>]": HOOK_TEXT,
    "prolo2: found ...": HOOK_TEXT, "launch: found vnode_list[<vn>]": HOOK_TEXT,
    "launch: found vnode_list_fail[<vn>]": HOOK_TEXT,
    "launch:offline vnode_list_fail[<vn>]": HOOK_TEXT,
    "launch: job.exec_vnode=<v>": HOOK_TEXT, "launch: job.schedselect=<s>": HOOK_TEXT,
    "prolo: job.exec_vnode=<v>": HOOK_TEXT, "prolo: job.schedselect=<s>": HOOK_TEXT,
    "sleeping for 30 secs": HOOK_TEXT, "unsuccessful at LAUNCH": HOOK_TEXT,
    "sel.increment_chunks(<inp>)=<result>": HOOK_TEXT, "sel=<spec>": HOOK_TEXT,
    "execjob_launch request rejected by 'launch'":
        "the mock writes it from '%s request rejected by '%s'' (event and hook name "
        "filled in), too little fixed text for the scan: the PP-928 interface 1 tests "
        "compare the whole line",
    "pbs_release_nodes: Request invalid for state of job":
        "the pbs_release_nodes command is not part of the mock",
    "no 's' accounting record": "not a log line: the accounting replays check it",
    "accounting record 's' (PBS_ACCT_PRUNE): exec_host=<new> exec_vnode=<new> "
    "Resource_List.mem/ncpus/nodect/place/select=<pruned>":
        "not a log line: the accounting replays check it",
    "accounting record 'S': exec_host/exec_vnode/Resource_List.* of the incremented "
    "(pre-prune) assignment": "not a log line: the accounting replays check it",
    "pbs.event().job.tolerate_node_failures=none": "not a log line (a hook input file)",
    "sister_join_job_alarm;<value>":
        "object name and message fields of one line: transcript f's replay compares them",
    "job_launch_delay;<value>":
        "object name and message fields of one line: transcript f's replay compares them",
}
COMPOSED_AT_RUN_TIME = (
    "could not satisfy select chunk (ncpus=<n> ssi=<n> mem=<kb> vmem=<kb> naccels=<n> "
    "accel_mem=<kb>)",
    "could not satisfy 1st select chunk (ncpus=<n> ssi=<n> mem=<kb> vmem=<kb> naccels=<n> "
    "accel_mem=<kb>)  with first available chunk",
    "HAVE chunks from job's exec_vnode: <healthy '+'-entries of exec_vnode or 'none'>",
)


def reference_messages():
    """Every message of log_messages.json once, ``" / "``-joined alternatives split."""
    with open(REFERENCE) as handle:
        entries = json.load(handle)
    texts = [text for entry in entries for text in entry["msg"].split(" / ")]
    return sorted(set(texts), key=texts.index)


@functools.lru_cache(maxsize=None)
def mock_literals():
    """Each line of each string literal in the mock's sources (f-strings with ``{}``),
    as a frozenset."""
    literals = set()
    for path in glob.glob(os.path.join(MOCK_SOURCES, "**", "*.py"), recursive=True):
        with open(path) as handle:
            tree = ast.parse(handle.read(), path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                literals.update(node.value.splitlines())
            elif isinstance(node, ast.JoinedStr):
                literals.update("".join(part.value if isinstance(part, ast.Constant) else "{}"
                                        for part in node.values).splitlines())
    return frozenset(literals)


@functools.lru_cache(maxsize=None)
def wildcard_pattern(parts, wildcard=".+"):
    """A regex of ``parts`` joined by ``wildcard`` (what a placeholder may stand for)."""
    return re.compile(wildcard.join(re.escape(part) for part in parts) + r"\Z", re.S)


def fixed_text_length(parts):
    return len("".join(parts).strip())


def literal_fits(reference, literal):
    """True when the mock literal and the reference text say the same (see the module
    docstring)."""
    reference_parts = tuple(REFERENCE_PLACEHOLDER.split(reference))
    literal_parts = tuple(PRINTF_OR_FORMAT.split(literal))
    if fixed_text_length(literal_parts) < MIN_LITERAL_SHARE * fixed_text_length(reference_parts):
        return False
    return bool(wildcard_pattern(literal_parts).match(FILLER.join(reference_parts))
                or wildcard_pattern(reference_parts).match(FILLER.join(literal_parts)))


def test_every_reference_message_is_in_exactly_one_group():
    messages = reference_messages()
    assert len(messages) == 53
    for text in NOT_WRITTEN_BY_THE_MOCK:
        assert text in messages, text
    for text in COMPOSED_AT_RUN_TIME:
        assert text in messages and text not in NOT_WRITTEN_BY_THE_MOCK, text


def test_the_mock_writes_each_reference_text_from_a_format_string_that_fits_it():
    literals = mock_literals()
    scanned = [text for text in reference_messages()
               if text not in NOT_WRITTEN_BY_THE_MOCK and text not in COMPOSED_AT_RUN_TIME]
    unmatched = [text for text in scanned if not any(literal_fits(text, lit) for lit in literals)]
    assert unmatched == []
    assert len(scanned) == 18


def test_no_literal_fits_a_message_listed_as_not_written():
    """A message the mock starts writing must move out of the 'not written' list (with
    its reason) and into the checked ones."""
    literals = mock_literals()
    fitting = [text for text in NOT_WRITTEN_BY_THE_MOCK
               if any(literal_fits(text, literal) for literal in literals)]
    assert fitting == []


def reference_pattern(text):
    """The reference text as a regex; a placeholder may be empty (real PBS leaves the
    ``HAVE chunks`` list empty, see mockpbs.release_nodes)."""
    return wildcard_pattern(tuple(REFERENCE_PLACEHOLDER.split(text)), ".*")


def release_log(keep_select, exec_vnode, exec_host):
    """The messages ``release_given_select`` logs for a job whose hosts are all healthy."""
    hosts = [entry.split("/")[0] for entry in exec_host.split("+")]
    result = release_nodes.release_given_select("1.vm", exec_vnode, exec_host, exec_host, keep_select,
                                                {host: host for host in hosts}, hosts)
    return [log[-1] for log in result.logs]


def test_release_nodes_chunk_lines_fit_the_reference():
    # Only the 2nd chunk of the job (a sister's) holds 4 CPUs: the 1st kept chunk, which
    # must be the primary's, fails.
    lines = release_log("ncpus=4", "(vm:ncpus=1)+(vm2:ncpus=4)", "vm/0+vm2/0*4")
    assert reference_pattern(COMPOSED_AT_RUN_TIME[1]).match(lines[0]), lines
    # The 2nd chunk fails after the 1st was satisfied.
    lines = release_log("1:ncpus=1+1:ncpus=4", "(vm:ncpus=1)+(vm2:ncpus=1)", "vm/0+vm2/0")
    assert any(reference_pattern(COMPOSED_AT_RUN_TIME[0]).match(line) for line in lines), lines
    assert any(reference_pattern(COMPOSED_AT_RUN_TIME[2]).match(line) for line in lines), lines
