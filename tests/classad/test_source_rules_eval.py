"""Evaluation rules taken from HTCondor's ClassAd source (src/classad/ and the
compatibility layer in src/condor_utils/compat_classad.cpp), one test per rule."""

import math

import pytest

import classad
from classad.unparse import unparse_expr
from classad.values import ERROR, UNDEFINED, RelTime


def ev(text, ad=None):
    scope = classad.ClassAd(ad) if ad else classad.ClassAd()
    return classad.ExprTree(text).evaluate(scope)


def test_pow_of_zero_to_a_negative_power_is_infinity():
    """fnCall.cpp doMath2 ("pow") hands a negative exponent to C's pow(): zero to a
    negative power is +inf, and -0.0 to a negative odd power is -inf (never NaN)."""
    assert ev("pow(0, -1)") == math.inf
    assert ev("pow(0.0, -2)") == math.inf
    assert ev("pow(-0.0, -1)") == -math.inf
    assert ev("pow(2, 1024.0)") == math.inf and ev("pow(-2, 1025.0)") == -math.inf
    assert math.isnan(ev("pow(-8, 1.0/3)"))


def test_pow_of_integers_out_of_range_is_int64_min():
    """fnCall.cpp doMath2: an integer power is a C double cast to long long, which on
    x86 turns every value out of range into INT64_MIN (it does not wrap)."""
    assert ev("pow(2, 64)") == -(1 << 63)
    assert ev("pow(10, 19)") == -(1 << 63)
    assert ev("pow(10, 18)") == 10 ** 18


def test_reltime_prints_whole_seconds():
    """util.cpp relTimeToString: the seconds go through a C int, so a fractional
    duration prints truncated toward zero and -0.5 s prints as 00."""
    assert ev("string(relTime(1.5))") == "01"
    assert ev("string(relTime(3661.5))") == "01:01:01"
    assert ev("string(relTime(-3661.5))") == "-01:01:01"
    assert ev("string(relTime(-0.5))") == "00"
    assert ev("string(relTime(86400.75))") == "1+00:00:00"
    assert classad.ExprTree("relTime(90) + relTime(0.5)").evaluate().seconds == 90.5


def test_reltime_outside_a_c_int_prints_as_int_min():
    """util.cpp relTimeToString: a duration beyond a C int (or infinite) becomes
    INT_MIN, whose negation stays negative: HTCondor prints '--24855+-3:-14:-8'."""
    assert ev("string(relTime(60) / 0)") == "--24855+-3:-14:-8"
    assert ev("string(relTime(2147483653.0))") == "--24855+-3:-14:-8"


def test_reltime_divided_by_zero_is_an_infinite_reltime():
    """operators.cpp timeArithmetic divides a relative time in C doubles: by zero it
    is +/-infinity, still a relative time, not error."""
    assert ev("relTime(60) / 0") == RelTime(math.inf)
    assert ev("isReltime(relTime(60) / 0.0)") is True
    assert ev("relTime(-60) / 0") == RelTime(-math.inf)


def test_int_and_real_of_a_reltime_take_whole_seconds():
    """value.cpp IsNumber/convert: a relative time is read as a C int of seconds, so
    real(relTime(90.7)) is 90.0 and an out-of-range one INT_MIN."""
    assert ev("real(relTime(90.7))") == 90.0 and ev("real(relTime(-90.7))") == -90.0
    assert ev("int(relTime(-90.7))") == -90
    assert ev("int(relTime(60) / 0)") == -(1 << 31)


def test_abstime_minus_abstime_is_a_real_valued_reltime():
    """operators.cpp timeArithmetic: absTime - absTime is a relTime of (double) seconds;
    absTime +/- relTime stays absolute."""
    got = ev('absTime("2020-01-01T00:00:00Z") - absTime("2019-01-01T00:00:00Z")')
    assert got == RelTime(31536000.0) and type(got.seconds) is float
    assert ev('string(absTime("2020-01-01T00:00:00Z") - relTime(60))') == "2019-12-31T23:59:00-00:00"
    assert ev('string(relTime(60) + absTime("2020-01-01T00:00:00Z"))') == "2020-01-01T00:01:00-00:00"
    assert ev('absTime("2020-01-01T00:00:00Z") + absTime("2020-01-01T00:00:00Z")') is ERROR


def test_regexp_member_with_an_invalid_pattern_is_false():
    """fnCall.cpp matchPatternMember counts an element whose match failed (an invalid
    pattern) as not matching, so the answer is false (undefined with an undefined
    element); regexp() itself answers error for the same pattern."""
    assert ev('regexpMember("(", {"abc"})') is False
    assert ev('regexpMember("(", {})') is False
    assert ev('regexpMember("(", {"abc", undefined})') is UNDEFINED
    assert ev('regexpMember("(", {"abc", 1})') is ERROR
    assert ev('regexp("(", "abc")') is ERROR
    assert ev('stringList_regexpMember("(", "a,b")') is ERROR


@pytest.mark.parametrize("text, expected", [
    ('stringListMember(undefined, "a,b")', False),
    ('stringListMember(undefined, undefined)', UNDEFINED),
    ('stringListMember("a", "a,b", undefined)', True),
    ('stringListMember("a", "a;b", undefined)', False),
    ('stringListMember("a", "a\tb")', True),
    ('stringListMember(1, undefined)', ERROR),
    ('stringListMember("a", error)', ERROR),
    ('stringListIMember("A", "a,b", undefined)', True),
    ('stringListIMember(undefined, undefined)', UNDEFINED),
    ('stringListSubsetMatch("a", "a,b", undefined)', True),
    ('stringListSubsetMatch(undefined, "a")', True),
    ('stringListSubsetMatch(" , ", "x")', False),
    ('stringListISubsetMatch("A", undefined)', False),
])
def test_string_list_member_and_subset_with_undefined(text, expected):
    """compat_classad.cpp stringListMember_func: an argument neither string nor
    undefined is error; both lists undefined is undefined; otherwise undefined is an
    empty string, an undefined delimiter set the default ", \\t\\r\\n"; a subset text
    with no items (only delimiters) is not a subset."""
    assert ev(text) is expected


def test_count_matches_of_an_undefined_list_is_zero():
    """compat_classad.cpp countMatches: an undefined list holds no ad, so 0 match."""
    assert ev('countMatches(a, undefined)') == 0
    assert ev('countMatches(a, error)') is ERROR
    assert ev('evalInEachContext(a, undefined)') is UNDEFINED


def test_join_of_an_undefined_list_is_undefined():
    """fnCall.cpp strCat ("join"): with one or two arguments the last is the list; when
    it is undefined the result is undefined. Undefined items in the 3+ form are skipped."""
    assert ev("join(undefined)") is UNDEFINED and ev('join(",", undefined)') is UNDEFINED
    assert ev('join(",", "a", undefined)') == "a"


@pytest.mark.parametrize("text", [
    "is", "isnt", "is + 1", "a.is", "a.TRUE", "[ a = 1 ].undefined", "[ is = 1 ]",
    "[ true = 1 ]", "[ error = 1 ]", "is(1)", "isnt(1)",
])
def test_keywords_are_not_attribute_names(text):
    """lexer.cpp tokenizeAlphaHead reads true, false, undefined, error, is and isnt as
    keywords wherever they appear, so unquoted they never name an attribute."""
    with pytest.raises(classad.ClassAdParseError, match="reserved word"):
        classad.ExprTree(text)


def test_quoted_keywords_and_parent_are_names():
    """lexer.cpp: a quoted name is always a name, and 'parent' is not a keyword."""
    assert ev("[ 'is' = 1 ].'is'") == 1
    assert ev("[ parent = 2 ].parent") == 2


@pytest.mark.parametrize("text, printed", [
    ("'a\\nb'", "'a\\nb'"), ("'a\\tb'", "'a\\tb'"), ("'\u00e9'", "'\\303\\251'"),
    ("'a\"b'", "'a\"b'"), ("'a\\'b'", "'a\\'b'"), ("[ 'x y' = 1 ]", "[ 'x y' = 1 ]"),
])
def test_quoted_names_print_with_string_escapes(text, printed):
    """sink.cpp writes a quoted attribute name with the escapes of a string literal
    (control characters by name, non-ASCII bytes in octal), escaping ' but not "."""
    assert unparse_expr(classad.ExprTree(text).node) == printed


def test_self_names_the_ad_being_evaluated():
    """attrrefs.cpp: 'self' is a scope word like MY, the ad the expression is
    evaluated in (a nested ad inside a nested ad), unless the ad defines 'self'."""
    assert ev("self.x", "[x = 3]") == 3
    assert ev("[x = 1; y = self.x].y") == 1
    assert ev("[x = 1; y = [w = 2; z = self.w]].y.z") == 2
    assert ev("[x = 1; y = self].y.x") == 1
    assert ev("size(self)", "[a = 1; b = 2]") == 2
    assert ev("self", "[self = 3]") == 3
    assert ev("self.x", "[y = 1]") is UNDEFINED


def test_join_writes_a_separator_only_after_some_text():
    """fnCall.cpp strCat ("join"): the separator goes in front of an item only when
    the result so far is not empty, so empty leading items leave no separator."""
    assert ev('join(",", "", "a")') == "a"
    assert ev('join(",", "", "", "a", "", "b")') == "a,,b"
    assert ev('join(",", {"", "a"})') == "a"
    assert ev('join(",", "a", "")') == "a,"


def test_regexp_member_checks_undefined_before_types():
    """fnCall.cpp matchPatternMember: error arguments first, then undefined ones, and
    only then the types, so a non-string pattern with an undefined list is undefined."""
    assert ev("regexpMember(2.5, undefined)") is UNDEFINED
    assert ev("regexpMember(2.5, error)") is ERROR
    assert ev('regexpMember(2.5, {"a"})') is ERROR


def test_eval_parses_the_printed_form_of_its_argument():
    """fnCall.cpp eval converts its argument to a string before parsing it: numbers and
    lists come back as themselves, a time's printed form is no expression (error)."""
    assert ev("eval(1)") == 1 and ev("eval(2.5)") == 2.5 and ev("eval({1})") == [1]
    assert ev("eval(absTime(1000))") is ERROR and ev("eval(relTime(90))") is ERROR
    assert ev('eval("1 + 1")') == 2 and ev("eval(undefined)") is ERROR


def test_a_boolean_does_not_scale_a_reltime():
    """operators.cpp timeArithmetic multiplies or divides a relative time only by an
    integer or a real: true and false there are error (unlike in plain arithmetic)."""
    assert ev("relTime(90) * true") is ERROR and ev("false * relTime(90)") is ERROR
    assert ev("relTime(90) / true") is ERROR
    assert ev("relTime(90) * 2") == RelTime(180) and ev("2.5 * relTime(2)") == RelTime(5.0)
    assert ev("true * 2") == 2


def test_a_record_subscript_looks_in_that_ad_alone():
    """operators.cpp (SUBSCRIPT_OP on a classad) looks the name up in that ad only:
    an attribute it lacks is undefined even when an enclosing ad defines it, while
    z.missing (attribute selection) goes on to the enclosing ads."""
    ad = "[z = [q = 1; r = q + 1]; missing = 4]"
    assert ev('z["missing"]', ad) is UNDEFINED
    assert ev("z.missing", ad) == 4
    assert ev('z["R"]', ad) == 2
    assert ev('[a = 1]["b"]') is UNDEFINED and ev("[a = 1][1]") is ERROR
