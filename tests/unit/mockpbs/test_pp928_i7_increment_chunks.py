"""PP-928 interface 7: pbs.select.increment_chunks(), the seed's examples and every quirk
of OpenPBS's implementation (tests/reference/increment_chunks_quirks.md)."""
import pytest

from mockpbs import pbs

SEED = "ncpus=3:mem=1gb+1:ncpus=2:mem=2gb+2:ncpus=1:mem=3gb"
SEED5 = "5:ncpus=3:mem=1gb+1:ncpus=2:mem=2gb+2:ncpus=1:mem=3gb"


def inc(spec, increment):
    return pbs.select(spec).increment_chunks(increment)


# ------------------------------------------------------------------ seed examples
def test_pp928_i7_seed_example_int_2():
    assert inc(SEED, 2) == "1:ncpus=3:mem=1gb+3:ncpus=2:mem=2gb+4:ncpus=1:mem=3gb"


def test_pp928_i7_seed_example_numeric_string_3():
    assert inc(SEED, "3") == "1:ncpus=3:mem=1gb+4:ncpus=2:mem=2gb+5:ncpus=1:mem=3gb"


def test_pp928_i7_seed_example_percent_23_5():
    assert inc(SEED, "23.5%") == "1:ncpus=3:mem=1gb+2:ncpus=2:mem=2gb+3:ncpus=1:mem=3gb"


def test_pp928_i7_seed_example_dict():
    assert inc(SEED, {0: 0, 1: 4, 2: "50%"}) == "1:ncpus=3:mem=1gb+5:ncpus=2:mem=2gb+3:ncpus=1:mem=3gb"


def test_pp928_i7_seed_example_first_chunk_5_percent_50():
    assert inc(SEED5, "50%") == "7:ncpus=3:mem=1gb+2:ncpus=2:mem=2gb+3:ncpus=1:mem=3gb"


def test_pp928_i7_seed_example_first_chunk_5_dict_percent_50():
    assert inc(SEED5, {0: "50%", 1: "50%", 2: "50%"}) == "7:ncpus=3:mem=1gb+2:ncpus=2:mem=2gb+3:ncpus=1:mem=3gb"


def test_pp928_i7_transcript_values():
    # g_increment_chunks.txt: pbs.select("ncpus=1+2:ncpus=1") on a real OpenPBS
    sel = pbs.select("ncpus=1+2:ncpus=1")
    assert sel.increment_chunks(2) == "1:ncpus=1+4:ncpus=1"
    assert sel.increment_chunks("3") == "1:ncpus=1+5:ncpus=1"
    assert sel.increment_chunks("50%") == "1:ncpus=1+3:ncpus=1"
    assert sel.increment_chunks({0: 0, 1: "50%"}) == "1:ncpus=1+3:ncpus=1"
    assert sel.increment_chunks({1: 3}) == "1:ncpus=1+5:ncpus=1"
    assert sel.increment_chunks(1) == "1:ncpus=1+3:ncpus=1"
    assert str(sel) == "ncpus=1+2:ncpus=1"


# ------------------------------------------------------------------ quirk 1: zero raises
@pytest.mark.parametrize("zero", [0, "0", "-100%", False])
def test_pp928_i7_quirk_zero_raises(zero):
    with pytest.raises(ValueError, match="^bad increment specs$"):
        inc("ncpus=1+2:ncpus=1", zero)


def test_pp928_i7_quirk_zero_on_first_chunk_with_count_above_one_raises():
    with pytest.raises(ValueError, match="bad increment specs"):
        inc("3:ncpus=1", 0)


@pytest.mark.parametrize("zero", [0, "0", "-100%"])
def test_pp928_i7_quirk_zero_accepted_for_single_chunk_of_one(zero):
    assert inc("ncpus=4:mem=1gb", zero) == "1:ncpus=4:mem=1gb"


# ------------------------------------------------------------------ quirk 2: negatives
def test_pp928_i7_quirk_negative_increment_applied():
    assert inc("ncpus=1+5:ncpus=1", -2) == "1:ncpus=1+3:ncpus=1"
    assert inc("ncpus=1+4:ncpus=1", "-50%") == "1:ncpus=1+2:ncpus=1"


def test_pp928_i7_quirk_negative_to_zero_is_a_valid_select():
    # A count of 0 passes OpenPBS's select validation (decode_select); checked under the
    # real pbs_python by tests/unit/hooks/test_real_pbs_python.py.
    assert inc("ncpus=1+2:ncpus=1", "-2") == "1:ncpus=1+0:ncpus=1"


def test_pp928_i7_quirk_negative_below_zero_refused_by_select_validation():
    with pytest.raises(pbs.BadResourceValueError):
        inc("ncpus=1+1:ncpus=1", -5)


# ------------------------------------------------------------------ quirk 3: dict keys
def test_pp928_i7_quirk_dict_missing_index_raises():
    with pytest.raises(ValueError, match="bad increment specs"):
        inc(SEED, {1: 1})


def test_pp928_i7_quirk_dict_string_keys_never_found():
    with pytest.raises(ValueError, match="bad increment specs"):
        inc("ncpus=1+2:ncpus=1", {"1": 3})


def test_pp928_i7_quirk_dict_chunk0_needs_no_key_when_count_is_one():
    assert inc("ncpus=1+2:ncpus=1", {1: 1}) == "1:ncpus=1+3:ncpus=1"


def test_pp928_i7_quirk_dict_chunk0_needs_key_when_count_above_one():
    with pytest.raises(ValueError, match="bad increment specs"):
        inc("2:ncpus=1+2:ncpus=1", {1: 1})


# ------------------------------------------------------------------ quirk 4: dict values
def test_pp928_i7_quirk_dict_float_value_reuses_previous_count():
    # chunk 0 computes 1 + (2 + 1) = 4; chunk 1 (a float) silently takes 4 too
    assert inc("3:ncpus=1+2:ncpus=2", {0: 1, 1: 1.5}) == "4:ncpus=1+4:ncpus=2"


def test_pp928_i7_quirk_dict_float_value_on_first_chunk_unbound():
    with pytest.raises(UnboundLocalError):
        inc("3:ncpus=1+2:ncpus=2", {0: 1.5, 1: 1})


def test_pp928_i7_quirk_dict_numeric_string_and_bool_values():
    assert inc("ncpus=1+2:ncpus=1+2:ncpus=2", {1: "2", 2: True}) == "1:ncpus=1+4:ncpus=1+3:ncpus=2"


# ------------------------------------------------------------------ quirk 5: percent in binary fp
def test_pp928_i7_quirk_percent_binary_floating_point_50_at_10():
    assert inc("ncpus=1+50:ncpus=1", "10%") == "1:ncpus=1+56:ncpus=1"


def test_pp928_i7_quirk_percent_rounds_up():
    assert inc("ncpus=1+3:ncpus=1", "1%") == "1:ncpus=1+4:ncpus=1"


# ------------------------------------------------------------------ quirk 6: numeric strings
@pytest.mark.parametrize("text, expected", [
    (" 3", "1:ncpus=1+5:ncpus=1"),
    ("+2", "1:ncpus=1+4:ncpus=1"),
    ("1e2%", "1:ncpus=1+4:ncpus=1"),
    ("\u0662", "1:ncpus=1+4:ncpus=1"),  # Arabic-Indic digit two
])
def test_pp928_i7_quirk_numeric_strings_python_accepts(text, expected):
    assert inc("ncpus=1+2:ncpus=1", text) == expected


@pytest.mark.parametrize("text", ["1.5", "0x10", "1e2", "abc%", "%", "nan%"])
def test_pp928_i7_quirk_numeric_strings_value_error(text):
    with pytest.raises(ValueError):
        inc("ncpus=1+2:ncpus=1", text)


def test_pp928_i7_quirk_inf_percent_overflow():
    with pytest.raises(OverflowError):
        inc("ncpus=1+2:ncpus=1", "inf%")


# ------------------------------------------------------------------ quirk 7: other types
@pytest.mark.parametrize("bad", [1.0, None, [1], (1,)])
def test_pp928_i7_quirk_other_types_raise(bad):
    with pytest.raises(ValueError, match="^bad increment specs$"):
        inc("ncpus=1+2:ncpus=1", bad)


def test_pp928_i7_quirk_bool_true_counts_as_int_one():
    assert inc("ncpus=1+2:ncpus=1", True) == "1:ncpus=1+3:ncpus=1"


# ------------------------------------------------------------------ quirk 8: result shape
def test_pp928_i7_quirk_result_is_select_with_explicit_counts():
    result = inc("ncpus=3:Mem=1GB:ngpus=1+ncpus=2", 1)
    assert isinstance(result, pbs.select)
    assert result == "1:ncpus=3:Mem=1GB:ngpus=1+2:ncpus=2"
    assert isinstance(result.increment_chunks(1), pbs.select)
