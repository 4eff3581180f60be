"""module_utils.mom_config.planned_text keeps a line whose value already means the wanted one (no
rewrite, so no reload of every mom on every run)."""
from ansible_collections.hpc.pbs.plugins.module_utils.moms import mom_config


def test_a_boolean_written_as_yes_is_kept_when_true_is_wanted():
    text = "$clienthost srv\n$alien_attach yes\n"
    assert mom_config.planned_text(text, {"alien_attach": ["true"]}, set()) == text
