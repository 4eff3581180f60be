"""The default_qsub_arguments trap of reference/openpbs/README.md and transcript d: each
user's qsub keeps a background process caching the value; once it cached a bad value,
every plain qsub fails with ``qsub: illegal -W value`` (rc 2) until that process ends,
even after the attribute was corrected or unset; an explicit ``-W`` on the command line
still works. The idle time is shortened with ``MOCKPBS_QSUB_CACHE_IDLE``."""
import os
import re
import signal

import pytest

from mockpbs import testaddr
from mockpbs.cli import common, qmgr, qsub, qsub_cache, qstat
from mockpbs.testing import server as testing

IDLE_SECONDS = 3
PBSUSER = {"user": "pbsuser", "group": "pbsuser", "host": "vm"}
ROOT = {"user": "root", "group": "root", "host": "vm"}


@pytest.fixture
def server(tmp_path, monkeypatch):
    monkeypatch.setenv(qsub_cache.IDLE_ENV, str(IDLE_SECONDS))
    who = {"now": ROOT}
    monkeypatch.setattr(common, "identity", lambda: dict(who["now"]))
    # reserved here so that the address stays ours until the cache process is gone
    with testaddr.reserved_addresses(1) as (address,):
        daemon = testing.start_server(tmp_path, monkeypatch, address=address, qsub_cache=True)
        name = qsub_cache.socket_name("pbsuser", "vm", address)
        yield who
        daemon.stop()
        try:
            pid = qsub_cache._ask(name, "ping")["pid"]
        except OSError:
            return
        os.kill(pid, signal.SIGTERM)


def as_root(who, command):
    who["now"] = ROOT
    try:
        return testing.run_cli(qmgr.main, ["-c", command])
    finally:
        who["now"] = PBSUSER


def plain_qsub():
    return testing.run_cli(qsub.main, ["--", "/bin/sleep", "1"])


def cache_running():
    try:
        qsub_cache._ask(qsub_cache.socket_name("pbsuser", "vm", common.server_address()), "ping")
        return True
    except OSError:
        return False


def job_attrs(jobid):
    _unused, out, _unused = testing.run_cli(qstat.main, ["-f", jobid])
    return dict(re.findall(r"^    (\S+) = (.*)$", out.replace("\n\t", ""), re.M))


def test_bad_default_stays_cached_until_the_cache_process_ends(server):
    who = server
    who["now"] = PBSUSER
    rc, out, err = testing.run_cli(qsub.main, ["-W", "tolerate_node_failures=all", "--", "/bin/sleep", "30"])
    assert (rc, out, err) == (0, "0.vm\n", "")
    assert cache_running()
    assert as_root(who, "set server default_qsub_arguments = '-W tolerate_node_failures=bogus'")[0] == 0
    rc, out, err = plain_qsub()
    assert (rc, out) == (2, "") and err == "qsub: illegal -W value\n" + qsub.USAGE
    assert as_root(who, "set server default_qsub_arguments = '-W tolerate_node_failures=job_start'")[0] == 0
    assert plain_qsub()[0] == 2
    assert as_root(who, "unset server default_qsub_arguments")[0] == 0
    rc, _unused, err = plain_qsub()
    assert rc == 2 and err.startswith("qsub: illegal -W value\n")
    # the command line's own value is used, the cached default's is not even checked
    rc, out, _unused = testing.run_cli(qsub.main, ["-W", "tolerate_node_failures=none", "--", "/bin/sleep", "1"])
    assert (rc, out) == (0, "1.vm\n")
    testing.wait_for(lambda: not cache_running(), "the cache process to end", deadline=IDLE_SECONDS * 10)
    assert plain_qsub() == (0, "2.vm\n", "")
    assert as_root(who, "set server default_qsub_arguments = '-W tolerate_node_failures=job_start'")[0] == 0
    assert plain_qsub() == (0, "3.vm\n", "")
    attrs = job_attrs("3.vm")
    assert (attrs["tolerate_node_failures"], attrs["Submit_arguments"]) == ("job_start", "-- /bin/sleep 1")


def test_a_good_change_reaches_a_running_cache(server):
    who = server
    who["now"] = PBSUSER
    assert plain_qsub() == (0, "0.vm\n", "")
    assert as_root(who, "set server default_qsub_arguments = '-W tolerate_node_failures=job_start -m n'")[0] == 0
    assert plain_qsub() == (0, "1.vm\n", "")
    attrs = job_attrs("1.vm")
    assert (attrs["tolerate_node_failures"], attrs["Mail_Points"]) == ("job_start", "n")


@pytest.mark.parametrize("default, message, echoed", [
    ("-W foo", "qsub: illegal -W value", "-W foo "),
    ("-W tolerate_node_failures=job_start -r", "qsub: option requires an argument -- 'r'",
     "-W tolerate_node_failures -r "),
])
def test_unparsable_default_is_a_directive_error(server, default, message, echoed):
    """As a real OpenPBS 23.06 answered (the ``openpbs`` test-cluster backend): the parser's
    message once per parse (the second after refreshing the defaults), then the directive
    error echoing the words, rc 255 and no usage."""
    who = server
    assert as_root(who, "set server default_qsub_arguments = '%s'" % default)[0] == 0
    who["now"] = PBSUSER
    rc, out, err = plain_qsub()
    assert (rc, out) == (255, "")
    assert err == "%s\n%s\nqsub: directive error: %s\n" % (message, message, echoed)


def test_directive_error_clears_once_the_server_value_is_fixed(server):
    """The second parse reads the defaults again from the server: fixed there, it works."""
    who = server
    assert as_root(who, "set server default_qsub_arguments = '-W foo'")[0] == 0
    who["now"] = PBSUSER
    assert plain_qsub()[0] == 255
    assert as_root(who, "unset server default_qsub_arguments")[0] == 0
    rc, out, _unused = plain_qsub()
    assert rc == 0 and re.fullmatch(r"\d+\.vm\n", out), out
