"""Unit tests for string, version, regex, string-list and environment builtins."""

import pytest

from classad.functions import lookup
from classad.values import ERROR, UNDEFINED


def call(name, *args):
    return lookup(name).impl(*args)


def test_strcat_stops_at_the_first_undefined_or_error():
    assert call("strcat", "a", 1.0) == "a1.000000000000000E+00"
    assert call("strcat", "a", UNDEFINED) is UNDEFINED
    assert call("strcat", "a", ERROR) is ERROR


def test_join_skips_undefined_items_and_joins_lists():
    assert call("join", ",", "a", UNDEFINED) == "a"
    assert call("join", UNDEFINED, "a", "b") == "ab"
    assert call("join", ", ", [1, 2.5, True]) == "1, 2.500000000000000E+00, true"
    assert call("join", ["a", "b"]) == "ab" and call("join", ",", "a", ERROR) is ERROR


@pytest.mark.parametrize("args, expected", [
    (("abcdef", 2, 3), "cde"), (("abcdef", 1, 100), "bcdef"), (("abcdef", -2), "ef"),
    (("abcdef", 1, -2), "bcd"), (("abcdef", 100, 2), ""), (("abcdef", -7, 0), ""),
])
def test_substr_counts_from_either_end(args, expected):
    assert call("substr", *args) == expected


def test_substr_needs_integer_positions():
    assert call("substr", "abc", 1.5) is ERROR and call("substr", "abc", UNDEFINED) is UNDEFINED


def test_size_counts_bytes_of_strings():
    assert call("size", "é") == 2 and call("size", [1, 2]) == 2 and call("size", 1) is ERROR


def test_case_changes_are_ascii_only():
    assert call("toUpper", "aé") == "Aé" and call("toLower", [1]) == "{ 1 }"
    assert call("toUpper", UNDEFINED) is UNDEFINED


def test_strcmp_is_byte_order_and_stricmp_folds_ascii():
    assert call("strcmp", "A", "a") == -1 and call("stricmp", "ABC", "abc") == 0
    assert call("stricmp", "é", "É") == 1 and call("strcmp", "a", UNDEFINED) is UNDEFINED


def test_split_keeps_empty_pieces_only_between_repeated_separators():
    assert call("split", "a,b,,c", ",") == ["a", "b", "", "c"]
    assert call("split", " a , b ") == ["a", "b"] and call("split", "   ") == []


def test_split_names_at_the_first_at_sign():
    assert call("splitUserName", "a@b@c") == ["a", "b@c"]
    assert call("splitUserName", "user") == ["user", ""]
    assert call("splitSlotName", "machine") == ["", "machine"]


@pytest.mark.parametrize("left, right, expected", [
    ("", "01", -48), ("7.x", "", 55), ("1.02", "000", 2), ("9", "00", 1),
    ("010", "7.10", -1), ("10", "0", 1), ("abc", "10", 48), ("1.0", "1.0", 0),
])
def test_versioncmp_returns_the_raw_difference(left, right, expected):
    assert call("versioncmp", left, right) == expected


def test_version_order_follows_the_manual_sequence():
    sequence = ["000", "00", "01", "010", "09", "0", "1", "9", "10"]
    assert all(call("versionLT", a, b) for a, b in zip(sequence, sequence[1:]))
    assert call("version_in_range", "8.9.5", "8.9.0", "8.9.10") is True
    assert call("versionGT", "1", UNDEFINED) is UNDEFINED


def test_regexp_honours_only_lower_case_options():
    assert call("regexp", "a.c", "ABC", "i") is True
    assert call("regexp", "a.c", "ABC", "I") is False
    assert call("regexp", "[", "x") is ERROR and call("regexp", "a", 1) is ERROR


def test_regexp_member_is_undefined_when_only_undefined_could_match():
    assert call("regexpMember", "a", ["b", UNDEFINED]) is UNDEFINED
    assert call("regexpMember", "a", [UNDEFINED, "a"]) is True
    assert call("regexpMember", "b", ["a", ["b"]]) is ERROR


def test_substitution_modes():
    assert call("regexps", "(\\w+)@(\\w+)", "user@host", "\\2:\\1") == "host:user"
    assert call("regexps", "B", "abc", "X", "if") == "aXc"
    assert call("replace", "a", "banana", "\\0\\0") == "baanana"
    assert call("replaceAll", "(an)", "banana", "[\\1]") == "b[an][an]a"


def test_substitution_errors():
    assert call("regexps", "(a)", "a", "\\5") is ERROR
    assert call("regexps", "", "abc", "-", "g") is ERROR


def test_string_list_summaries_start_from_float_limits():
    assert call("stringListMax", "-1,-5") == 0
    assert call("stringListMax", "-1.5,-2") == pytest.approx(1.1754943508222875e-38)
    assert call("stringListMin", "1e39") == pytest.approx(3.4028234663852886e38)
    assert call("stringListAvg", "1,2") == 1 and call("stringListSum", "") == 0.0
    assert call("stringListSum", "1,2.5") == 3.5 and call("stringListMax", "") is UNDEFINED


def test_string_list_membership_and_sets():
    assert call("stringListMember", "a", "a b,c") is True
    assert call("stringListIMember", "A", "a,b") is True
    assert call("stringListMember", "x", UNDEFINED) is False
    assert call("stringListsIntersect", "A", "a") is False
    assert call("stringListSubsetMatch", UNDEFINED, "a") is True
    assert call("stringListSubsetMatch", UNDEFINED, UNDEFINED) is UNDEFINED
    assert call("stringList_regexpMember", "^A", "abc", ",", "i") is True
    assert call("stringList_regexpMember", "a", "") is UNDEFINED


def test_argument_strings_round_trip():
    words = ["a", "b c", "it's", ""]
    text = call("listToArgs", words)
    assert text == "a b' 'c it''''s ''"
    assert call("argsToList", text) == words
    assert call("argsToList", "'unclosed") is ERROR


def test_environment_conversion_and_merge():
    assert call("envV1ToV2", "PATH=bin:usr/bin;HOME=home/u") == "HOME=home/u PATH=bin:usr/bin"
    assert call("envV1ToV2", "=1") is ERROR and call("envV1ToV2", UNDEFINED) is UNDEFINED
    assert call("mergeEnvironment", "A=1 B=2", UNDEFINED, "B=3") == "A=1 B=3"
    assert call("mergeEnvironment", "A='x y'") == "A=x' 'y"
