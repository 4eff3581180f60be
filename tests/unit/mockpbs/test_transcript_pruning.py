"""The two launches of transcript g_reliable_job_startup_2nodes replayed on the mock's
``release_nodes(keep_select=...)`` (:func:`mockpbs.release_nodes.release_given_select`,
the emulator's ``job.release_nodes``), with the job's values taken from the transcript:

- job 17 (every vnode healthy): the mom's ``pruned from exec_vnode=`` value is the input,
  ``Resource_List.site`` the keep_select; the result must be the ``pruned to`` value,
  the pruned ``exec_host`` of the ``s`` record (the mock's server regenerates it the same
  way, see test_transcript_accounting) and the ``schedselect`` of ``qstat -fx`` after;
- job 18 (host ``vm`` failed, both vnodes in vnode_list_fail): release_nodes fails and
  the hook process's job-class log lines (``could not satisfy``, ``NEED``, ``HAVE``)
  must be the transcript's, field by field (event class, object type, object name,
  message).

Both moms of the session run on host ``vm``: every vnode's parent host is ``vm``.
"""
import re

from mockpbs import release_nodes
from mockpbs.testing import server as testing

TRANSCRIPT = "g_reliable_job_startup_2nodes.txt"
VNODE_HOSTS = {"vm": "vm", "vm-m2": "vm"}
KEEP_SELECT = "1:ncpus=1+1:ncpus=1"


blocks = testing.transcript_blocks


def stdout_of(command_start):
    found = [b[1] for b in blocks(TRANSCRIPT) if b[0].startswith(command_start)]
    assert found, command_start
    return found[-1]


def attribute(text, name):
    return re.search(r"^    %s = (.*)$" % re.escape(name), text, re.M).group(1)


def message_of(log_text, prefix):
    return next(line.split(";", 5)[5][len(prefix):] for line in log_text.splitlines()
                if line.split(";", 5)[5].startswith(prefix))


def test_job_17_prunes_to_the_transcripts_exec_vnode_exec_host_and_schedselect():
    mom_log = stdout_of("tail -n +944 /var/spool/pbs/mom_logs/")
    after = stdout_of("qstat -fx 17.vm | grep")
    accounting = stdout_of("grep -F ';17.vm;' /var/spool/pbs/server_priv/accounting/")
    start = next(l for l in accounting.splitlines() if ";S;17.vm;" in l)
    pruned = next(l for l in accounting.splitlines() if ";s;17.vm;" in l)
    exec_vnode = message_of(mom_log, "pruned from exec_vnode=")
    exec_host = re.search(r" exec_host=(\S+)", start).group(1)
    assert attribute(after, "Resource_List.site") == KEEP_SELECT

    result = release_nodes.release_given_select("17.vm", exec_vnode, exec_host, exec_host, KEEP_SELECT,
                                                VNODE_HOSTS, ["vm"])

    assert result.ok and result.changed
    assert result.exec_vnode == message_of(mom_log, "pruned to exec_vnode=")
    assert result.exec_host == re.search(r" exec_host=(\S+)", pruned).group(1)
    assert result.schedselect == attribute(after, "schedselect")
    assert result.logs == []


def test_job_18_with_its_host_failed_logs_the_transcripts_lines_and_fails():
    mom_log = stdout_of("tail -n +970 /var/spool/pbs/mom_logs/")
    start = next(l for l in stdout_of("grep -F ';18.vm;' /var/spool/pbs/server_priv/accounting/").splitlines()
                 if ";S;18.vm;" in l)
    exec_vnode = re.search(r" exec_vnode=(\S+)", start).group(1)
    exec_host = re.search(r" exec_host=(\S+)", start).group(1)
    expected = [tuple(line.split(";")[1:2] + line.split(";", 5)[3:])
                for line in mom_log.splitlines() if ";pbs_python;Job;18.vm;" in line
                and not re.search(r";launch: found ", line)]
    assert len(expected) == 3

    result = release_nodes.release_given_select("18.vm", exec_vnode, exec_host, exec_host, KEEP_SELECT,
                                                VNODE_HOSTS, [], ["vm"])

    assert not result.ok
    assert [("%04x" % cls, objtype, name, text) for cls, objtype, name, text in result.logs] == expected
