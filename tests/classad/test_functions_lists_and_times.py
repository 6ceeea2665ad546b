"""Unit tests for list aggregates, membership, list comparison and time builtins."""

import math

import pytest

from classad.functions import lookup
from classad.values import ERROR, UNDEFINED, AbsTime, RelTime


def call(name, *args):
    return lookup(name).impl(*args)


def test_sum_and_avg_skip_undefined_elements():
    assert call("sum", [1, UNDEFINED, 2]) == 3 and call("sum", [True]) is True
    assert call("avg", []) == 0 and call("avg", [UNDEFINED]) == 0
    assert call("avg", [3]) == 3.0 and type(call("avg", [3])) is float


def test_sum_overflowing_to_infinity_is_error():
    assert call("sum", [1e308, 1e308]) is ERROR and call("sum", [1, "a"]) is ERROR


def test_min_and_max_take_the_widest_element_type():
    assert call("min", [1, 2.5]) == 1.0 and type(call("min", [1, 2.5])) is float
    assert call("min", [True, 1]) == 1 and type(call("min", [True, 1])) is int
    assert call("max", []) is UNDEFINED and call("max", UNDEFINED) is UNDEFINED


def test_member_uses_equality_and_identical_member_identity():
    assert call("member", 0, [False]) is True and call("member", UNDEFINED, [1]) is UNDEFINED
    assert call("identicalMember", 1, [1.0]) is False
    assert call("identicalMember", UNDEFINED, [UNDEFINED]) is True
    assert call("member", [1], [[1]]) is ERROR


def test_any_and_all_compare():
    assert call("anyCompare", "is", [1, 2, 3], 2) is True
    assert call("allCompare", "<", ["a", "B"], "b") is False
    assert call("anyCompare", "<", [1, 2], UNDEFINED) is False
    assert call("anyCompare", "=?=", [1], 1) is ERROR
    assert call("allCompare", "==", [1, ERROR], 1) is ERROR


def test_abs_time_from_seconds_keeps_c_int_limits():
    assert call("absTime", 1700000000, 3600) == AbsTime(1700000000, 3600)
    assert call("string", call("absTime", 1e10, 0)) == "1901-12-13T20:45:52-00:00"
    assert call("absTime", 0, UNDEFINED) is ERROR and call("absTime", UNDEFINED, 0) is UNDEFINED


def test_rel_time_of_a_computed_string_is_zero():
    assert call("relTime", "1+02:03:04") == RelTime(0.0)
    assert call("relTime", 90) == RelTime(90.0) and call("relTime", True) is ERROR


def test_field_readers_use_local_time_for_absolute_times():
    t = AbsTime(1641013199, -18000)  # 2021-12-31T23:59:59-05:00
    assert call("getYear", t) == 2022 and call("getHours", t) == 4
    assert call("getDayOfWeek", t) == 6 and call("getDayOfYear", t) == 0


def test_field_readers_truncate_relative_times_like_c():
    assert call("getMinutes", RelTime(-3725)) == -2 and call("getSeconds", RelTime(-3725)) == -5
    assert call("getDays", RelTime(183845)) == 2 and call("getYear", RelTime(5)) is ERROR


def test_split_reltime_negates_the_first_nonzero_part():
    from classad.functions.times import split_reltime

    assert split_reltime(-3725) == {"Type": "RelativeTime", "Days": 0, "Hours": -1, "Minutes": 2,
                                    "Seconds": 5.0}


def test_split_abstime_uses_the_times_own_offset():
    from classad.functions.times import split_abstime

    parts = split_abstime(AbsTime(1709167028, 19800))  # 2024-02-29T06:07:08+05:30
    assert (parts["Year"], parts["Month"], parts["Day"], parts["Hours"]) == (2024, 2, 29, 6)


def test_format_time():
    assert call("formatTime", 951782400, "%a %b %d %y") == "Tue Feb 29 00"
    assert call("formatTime", 0, "%x %X") == "01/01/70 00:00:00"
    assert call("formatTime", RelTime(5), "%Y") is ERROR and call("formatTime", 0, 5) is ERROR


@pytest.mark.parametrize("seconds, text", [(1, "1"), (90, "1:30"), (86399, "23:59:59"),
                                           (90061, "1+01:01:01"), (True, "1")])
def test_interval_leaves_out_leading_zero_parts(seconds, text):
    assert call("interval", seconds) == text


def test_time_text_parsers_for_literal_folding():
    from classad.functions.time_text import parse_abstime_text, parse_reltime_text

    assert parse_abstime_text("2020-13-01T00:00:00Z") == AbsTime(1609459200, 0)
    assert parse_abstime_text("2020-06-15T14:34:56+02:00") == AbsTime(1592224496, 7200)
    assert parse_abstime_text("2020-06-15T12:34:56.5Z") is None
    assert parse_abstime_text("garbage") is None
    assert parse_reltime_text("1+02:03:04") == 93784.0 and parse_reltime_text("01:30") == 90.0
    assert math.isclose(parse_reltime_text("-1.5"), -1.5)
