"""Unit tests for the type predicates, conversions and numeric builtins."""

import math

import pytest

from classad.functions import lookup
from classad.values import ERROR, UNDEFINED, AbsTime, RelTime


def call(name, *args):
    return lookup(name).impl(*args)


def test_names_are_case_insensitive_and_counts_are_checked():
    assert lookup("ISINTEGER") is lookup("isInteger")
    assert not lookup("isInteger").accepts(2)
    assert lookup("strcat").accepts(0) and lookup("strcat").accepts(9)


@pytest.mark.parametrize("value, expected", [(1, True), (True, False), (1.0, False), ("1", False)])
def test_is_integer_counts_only_integers(value, expected):
    assert call("isInteger", value) is expected


def test_is_boolean_rejects_zero_and_one():
    assert call("isBoolean", 1) is False and call("isBoolean", True) is True


@pytest.mark.parametrize("text, expected", [("12 ", 12), ("1.9", 1), ("0x10", 16), ("-7x", -7)])
def test_int_reads_the_leading_number_of_a_string(text, expected):
    assert call("int", text) == expected


def test_int_of_unreadable_string_is_error_and_undefined_passes():
    assert call("int", "abc") is ERROR and call("int", "") is ERROR
    assert call("int", UNDEFINED) is UNDEFINED


def test_int_truncates_reals_and_relative_times_toward_zero():
    assert call("int", -1.9) == -1 and call("int", RelTime(-1.5)) == -1


def test_real_reads_prefixes_and_special_words():
    assert call("real", "2.5x") == 2.5 and call("real", ".5") == 0.5
    assert call("real", "INF") == math.inf and math.isnan(call("real", "nan"))
    assert call("real", "1e400") == math.inf and call("real", "abc") is ERROR


def test_string_prints_reals_and_times_like_htcondor():
    assert call("string", 2.0 / 3) == "6.666666666666666E-01"
    assert call("string", AbsTime(1577836800, 0)) == "2020-01-01T00:00:00-00:00"
    assert call("string", RelTime(-5)) == "-05" and call("string", RelTime(0)) == "00"
    assert call("string", [1, [1.5]]) == "{ 1,{ 1.500000000000000E+00 } }"


@pytest.mark.parametrize("value, expected", [("TRUE", True), ("false", False), ("yes", UNDEFINED),
                                             (0.0, False), (2, True), ([1], ERROR)])
def test_bool_accepts_only_true_and_false_words(value, expected):
    assert call("bool", value) is expected


def test_rounding_gives_integers_and_round_halves_to_even():
    assert call("floor", -1.5) == -2 and call("ceiling", -3.5) == -3
    assert call("round", 2.5) == 2 and call("round", 3.5) == 4
    assert type(call("ceil", 1.5)) is int


def test_rounding_undefined_or_text_is_error():
    assert call("floor", UNDEFINED) is ERROR and call("round", "abc") is ERROR


def test_pow_of_integers_rounds_through_floating_point():
    assert call("pow", 3, 39) == 4052555153018976256
    assert call("pow", -1, 3) == 0 and call("pow", -2, 31) == -2147483647
    assert call("pow", 2, -1) == 0.5 and call("pow", "2", 2) == 4.0
    assert call("pow", 2, True) == 2.0 and call("pow", UNDEFINED, 2) is ERROR


def test_quantize_rounds_up_to_a_multiple_of_the_base_type():
    assert call("quantize", 5, 2) == 6 and call("quantize", -3, 2) == -2
    assert call("quantize", 10, 5.1) == pytest.approx(10.2)
    assert call("quantize", "3", 2) == 4.0 and type(call("quantize", "3", 2)) is float


def test_quantize_with_a_list_takes_the_first_big_enough_element():
    assert call("quantize", 7, [10]) == 10
    assert call("quantize", 2.7, [1, 2, 0.5]) == 3.0
    assert call("quantize", 3, [1, 2, "A"]) is ERROR
    assert call("quantize", 7, [3, UNDEFINED]) is ERROR


def test_random_stays_below_its_limit():
    assert all(0 <= call("random", 5) < 5 for _ in range(50))
    assert 0.0 <= call("random") < 1.0 and call("random", "x") is ERROR
