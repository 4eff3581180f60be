"""``default_qsub_arguments`` edits that mutation testing found untested (docs/testing.md,
"Mutation testing"): the ``-W`` items after the tolerate item in the same value are kept,
and the safety net of :func:`edit_default_qsub_arguments` (a new text that would not parse
back to the intended options is never returned: every plain ``qsub`` would fail with it,
``qsub: illegal -W value``)."""
import pytest

from ansible_collections.hpc.pbs.plugins.module_utils import qsub_args
from ansible_collections.hpc.pbs.plugins.module_utils.qsub_args import (
    QsubArgumentsError, edit_default_qsub_arguments)


@pytest.mark.parametrize("current, value, expected", [
    ("-W tolerate_node_failures=none,umask=022,group_list=x", "all",
     "-W tolerate_node_failures=all,umask=022,group_list=x"),
    ("-W tolerate_node_failures=none,umask=022 -r n", None, "-W umask=022 -r n"),
    ("-W tolerate_node_failures=none,tolerate_node_failures=all,umask=022", "job_start",
     "-W tolerate_node_failures=job_start,umask=022"),
])
def test_items_after_the_tolerate_item_are_kept(current, value, expected):
    assert edit_default_qsub_arguments(current, value) == (expected, True)


@pytest.mark.parametrize("rendered, says", [
    # unbalanced quote: shlex cannot split it
    ("-W 'tolerate_node_failures=all", "does not parse back"),
    # a tolerate value qsub refuses
    ("-r n -W tolerate_node_failures=bogus", "qsub: illegal -W value"),
    # the other options lost, the tolerate value right
    ("-W tolerate_node_failures=all", "parses back as"),
])
def test_a_new_text_that_does_not_parse_back_is_refused(monkeypatch, rendered, says):
    monkeypatch.setattr(qsub_args, "render_options", lambda options: rendered)
    with pytest.raises(QsubArgumentsError) as error:
        edit_default_qsub_arguments("-r n", "all")
    assert says in str(error.value)
    assert repr(rendered) in str(error.value)
