"""PBS's JSON output (``-F json`` of ``qstat -f`` and ``pbsnodes``), the one reader of it:
the command's run, the document, its ``Jobs`` object and the text form of its values.
Standard library only (runs on the nodes)."""
import json
from typing import Any, Dict, List, Sequence, Tuple

from ansible_collections.hpc.pbs.plugins.module_utils.common.module_error import ModuleError
from ansible_collections.hpc.pbs.plugins.module_utils.pbs.pbs_command import PbsRunner


def parse_json_output(text: str) -> Dict[str, Any]:
    """The JSON document ``text`` (an object, as every ``-F json`` prints); ValueError when
    it is not JSON or not an object."""
    document = json.loads(text)
    if not isinstance(document, dict):
        raise ValueError("not a JSON object")
    return document


def run_json(runner: PbsRunner, argv: Sequence[str], what: str) -> Dict[str, Any]:
    """Run ``argv`` (a PBS command printing ``-F json``) by ``runner`` and return its
    document. ``what`` names what was read in the messages (``the jobs``).

    Raises ModuleError, naming the command, rc and stderr, when it exits non-zero or prints
    something that is not a JSON object."""
    rc, out, err = runner.run_command(list(argv))
    if rc != 0:
        raise ModuleError("cannot read %s: %s exited %d; check that the PBS server runs "
                          "and this host may query it" % (what, argv[0], rc),
                          cmd=list(argv), rc=rc, stdout=out, stderr=err)
    try:
        return parse_json_output(out)
    except ValueError as exc:
        raise ModuleError("cannot read %s: %s printed no JSON (%s)" % (what, argv[0], exc),
                          cmd=list(argv), rc=rc, stdout=out, stderr=err)


def json_jobs(document: Dict[str, Any]) -> List[Tuple[str, Dict[str, Any]]]:
    """``[(job id, {attribute: value})]`` of the ``Jobs`` object of ``qstat -f -F json``
    (absent when there is no job), values as JSON gave them. ValueError on other shapes."""
    jobs = document.get("Jobs", {})
    if not isinstance(jobs, dict) or not all(isinstance(a, dict) for a in jobs.values()):
        raise ValueError("no \"Jobs\" object of job objects")
    return list(jobs.items())


def text_value(value: Any) -> Any:
    """A value of PBS's JSON as the text ``qstat -f`` prints (21 -> "21", true -> "true",
    1.5 -> "1.5"); objects (resource lists) are kept as they are."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float):
        return "%d" % value if value.is_integer() else "%.15g" % value
    if isinstance(value, (int, str)):
        return str(value)
    return value
