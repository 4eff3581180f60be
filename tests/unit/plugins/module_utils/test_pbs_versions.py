"""The version table: which PBS release has which of the behaviours that differ."""
import pytest

from ansible_collections.hpc.pbs.plugins.module_utils.pbs.pbs_versions import (
    FEATURES, OPENPBS, PBS_PROFESSIONAL, feature_table, has_feature, parse_version)


@pytest.mark.parametrize("text, product, release", [
    ("23.06.06", OPENPBS, (23, 6, 6)),
    ("22.05.11\n", OPENPBS, (22, 5, 11)),
    ("23.06.06-cd7ab5eda", OPENPBS, (23, 6, 6)),
    ("pbs_version = 20.0.1", OPENPBS, (20, 0, 1)),
    ("2022.1.3", PBS_PROFESSIONAL, (2022, 1, 3)),
    ("2025.2", PBS_PROFESSIONAL, (2025, 2)),
])
def test_both_numberings_are_read(text, product, release):
    version = parse_version(text)
    assert (version.product, version.release) == (product, release)
    assert version.as_dict()["text"] == text.strip()


@pytest.mark.parametrize("text", [None, "", "unknown", "v23", "23"])
def test_what_is_no_version_gives_none(text):
    assert parse_version(text) is None


def test_the_differences_measured_between_22_05_11_and_23_06_06():
    assert feature_table("22.05.11") == {"clear_topjob_estimates_enable": False,
                                         "pbs_cgroups_cgroup_v2": False,
                                         "pbsnodes_refusal_by_name": False}
    assert feature_table("23.06.06") == {"clear_topjob_estimates_enable": True,
                                         "pbs_cgroups_cgroup_v2": False,
                                         "pbsnodes_refusal_by_name": True}


def test_pbs_professional_has_what_its_openpbs_base_has_and_is_unknown_without_one():
    assert has_feature("clear_topjob_estimates_enable", "2022.1.3") is False
    assert has_feature("clear_topjob_estimates_enable", "2025.2.0") is None
    assert feature_table(None) == dict.fromkeys(FEATURES)


def test_a_probe_of_the_host_wins_over_the_table():
    assert has_feature("pbs_cgroups_cgroup_v2", "23.06.06", probe=True) is True
    assert has_feature("clear_topjob_estimates_enable", "23.06.06", probe=False) is False
    assert has_feature("pbs_cgroups_cgroup_v2", None, probe=True) is True


def test_an_unknown_feature_is_a_key_error():
    with pytest.raises(KeyError):
        has_feature("no_such_thing", "23.06.06")
