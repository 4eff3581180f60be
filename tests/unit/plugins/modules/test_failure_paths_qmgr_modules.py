"""Failure paths of the qmgr-driven modules, with qmgr faked at the process boundary.

- hpc.pbs.hook ``state: absent`` in check mode reports the deletion and deletes nothing;
- hpc.pbs.tolerate_node_failures reads ``default_qsub_arguments`` back after writing it
  and fails when the server holds something else than what was written.
"""

import pytest

from ansible_collections.hpc.pbs.plugins.modules import hook as hook_module
from ansible_collections.hpc.pbs.plugins.modules import tolerate_node_failures as tnf
from hpc_pbs_module_fakes import FakeQmgr, NEW_HOOK, run_module

BODY = b"import pbs\npbs.event().accept()\n"
CONFIG = b'{"alpha": 1}\n'


class RewritingQmgr(FakeQmgr):
    """A qmgr whose server stores ``default_qsub_arguments`` through ``rewrite`` (text ->
    text, None drops it), as a server that changed or refused the value silently would."""

    rewrite = staticmethod(lambda text: text)

    def do_set(self, command, words):
        out = FakeQmgr.do_set(self, command, words)
        attrs = self.lookup("server", None)[1]
        if words[0] == "set" and "default_qsub_arguments" in attrs:
            stored = self.rewrite(attrs["default_qsub_arguments"])
            if stored is None:
                del attrs["default_qsub_arguments"]
            else:
                attrs["default_qsub_arguments"] = stored
        return out


@pytest.fixture
def pbs(fake_qmgr, tmp_path):
    """A fake qmgr (:class:`RewritingQmgr`) with a server ``vm`` and a site hook ``h1``
    that has a body and a config file."""
    fake = fake_qmgr(RewritingQmgr)
    fake.add("server", "vm", {"server_state": "Active", "scheduling": "True"})
    fake.add("hook", "h1", dict(NEW_HOOK, event="queuejob"), body=BODY, config=CONFIG)
    fake.tmp = tmp_path / "moduletmp"
    fake.tmp.mkdir()
    return fake


def run(pbs, main, check_mode=False, **args):
    args.setdefault("pbs_conf_file", pbs.conf)
    return run_module(main, args, check_mode=check_mode, tmpdir=pbs.tmp)


# -- 3. hook state: absent in check mode ---------------------------------------------------
def test_hook_absent_in_check_mode_deletes_nothing(pbs):
    code, result = run(pbs, hook_module.main, check_mode=True, name="h1", state="absent")
    assert code == 0, result
    assert result["changed"] is True and result["commands"] == ["delete hook h1"]
    assert ("hook", "h1") in pbs.objects
    assert pbs.hook_file("h1", "PY") == BODY and pbs.hook_file("h1", "CF") == CONFIG
    assert pbs.calls and not pbs.writes()


def test_hook_absent_deletes_for_real_outside_check_mode(pbs):
    code, result = run(pbs, hook_module.main, name="h1", state="absent")
    assert code == 0 and result["changed"] is True, result
    assert ("hook", "h1") not in pbs.objects and pbs.hook_file("h1", "PY") is None
    assert len(pbs.writes()) == 1


# -- 6. read-back of default_qsub_arguments ------------------------------------------------
@pytest.mark.parametrize("rewrite, stored", [
    (lambda text: text.replace("job_start", "all"), "'-r n -W tolerate_node_failures=all'"),
    (lambda text: None, "''"),
], ids=["changed-by-the-server", "dropped-by-the-server"])
def test_tolerate_fails_when_the_server_holds_another_value(pbs, rewrite, stored):
    pbs.rewrite = rewrite
    pbs.lookup("server", None)[1]["default_qsub_arguments"] = "-r n"
    code, result = run(pbs, tnf.main, value="job_start")
    assert code == 1, result
    assert result["changed"] is True
    assert ("the server holds default_qsub_arguments %s after writing "
            "'-r n -W tolerate_node_failures=job_start'" % stored) in result["msg"]


def test_tolerate_passes_when_the_server_holds_what_was_written(pbs):
    pbs.lookup("server", None)[1]["default_qsub_arguments"] = "-r n"
    code, result = run(pbs, tnf.main, value="job_start")
    assert code == 0 and result["changed"] is True, result
    assert pbs.lookup("server", None)[1]["default_qsub_arguments"] == \
        "-r n -W tolerate_node_failures=job_start"
