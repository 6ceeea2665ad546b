"""Parsing rules taken from HTCondor's ClassAd source (src/classad/source.cpp,
lexer.cpp, jsonSource.cpp), one test per rule."""

import pytest

import classad
from classad.unparse import unparse_expr


def old(text):
    return classad.parseOne(text, classad.ParserType.Old)


@pytest.mark.parametrize("line, value", [
    ("a = 1; b = 2", 1), ("a = 1;", 1), ("a = 1 ; garbage here", 1), ("a = 1 2", 1),
    ("a = 1 + 2 )", 3), ("a = true false", True), ("a = 1 # not a comment", 1),
    ("a = 1 \"unterminated", 1), ("a = {1, 2} 3", [1, 2]),
])
def test_old_line_value_is_the_expression_at_its_start(line, value):
    """source.cpp ParseClassAd (old syntax) parses one expression after '=' and stops
    at the first token that cannot continue it: the rest of the line, after a ';' or
    not, is ignored, and only that attribute is defined."""
    ad = old(line)
    assert list(ad) == ["a"] and ad.eval("a") == value


@pytest.mark.parametrize("line", [
    "a = 1 +", "a = (1", "a = x.", "a = 1 is", "a = 5 [", "a =", "a = is", "a = ; 1",
])
def test_old_line_without_a_whole_expression_is_refused(line):
    """source.cpp: the value must start with a complete expression; one cut short
    (or a keyword where a name belongs) is a syntax error naming where."""
    with pytest.raises(classad.ClassAdParseError):
        old(line)


@pytest.mark.parametrize("line, value", [
    ('a = "a\\"b"', 'a"b'), ('a = "a\\b"', "a\\b"), ('a = "ends\\"', "ends\\"),
    ('a = "\\\\"', "\\\\"), ('a = "a\\"\\"', 'a"\\'), ('a = "x\\" + "y"', 'x" + '),
])
def test_old_strings_escape_only_a_quote_not_at_the_line_end(line, value):
    """lexer.cpp, old-ClassAd strings: a backslash is an ordinary character except
    before a double quote, and a backslash-quote that ends the line is a backslash
    followed by the closing quote ("ends\\" is ends\\)."""
    assert old(line).eval("a") == value


def test_old_string_with_an_escaped_quote_before_trailing_blanks_is_unterminated():
    """lexer.cpp: only a quote that is the line's very last character closes after a
    backslash; with blanks after it the quote is escaped and the string never ends."""
    with pytest.raises(classad.ClassAdParseError):
        old('a = "a\\"  ')


def test_old_line_keeps_following_lines():
    """source.cpp reads old syntax line by line: what one line ignores does not
    swallow the next line's attribute."""
    ad = old('a = "a\\"\nb = 2 3\nc = 1; d = 4\n')
    assert ad.eval("a") == "a\\" and ad.eval("b") == 2 and ad.eval("c") == 1
    assert sorted(ad) == ["a", "b", "c"]
    assert unparse_expr(ad.lookup("a").node) == '"a\\\\"'


def js(text):
    return classad.parseNext(text, classad.ParserType.JSON)


@pytest.mark.parametrize("text, value", [
    ('{"a": "\\x41"}', "x41"), ('{"a": "\\q"}', "q"), ('{"a": "\\u0041\\u0042"}', "AB"),
    ('{"a": "a\\/b\\tc"}', "a/b\tc"),
])
def test_json_escapes_outside_json_drop_their_backslash(text, value):
    """jsonSource.cpp: an escape JSON does not define (\\x, \\q) is the character
    itself, not an error; the JSON escapes and ASCII \\u escapes decode as usual."""
    assert js(text).eval("a") == value


@pytest.mark.parametrize("text, value", [
    ('{"a": -012}', -12), ('{"a": -00}', 0), ('{"a": 00.5}', 0.5), ('{"a": .5}', 0.5),
    ('{"a": 1E+5}', 100000.0), ('{"a": 12345678901234567890}', 0),
    ('{"a": tRUE, "b": 1}', True), ('{"a": nulL}', classad.Value.Undefined),
    ('{"a": "\\/expr(1 + 1)\\/"}', 2), ('{,"a": 1,,}', 1),
])
def test_json_numbers_words_and_expressions(text, value):
    """jsonSource.cpp: numbers may start with '.', leading zeros are read after a minus
    or before a fraction, an integer past 64 bits is 0, true/false/null and the
    /Expr( marker are read in any case, stray commas in an object are skipped."""
    assert js(text).eval("a") == value


@pytest.mark.parametrize("text", [
    '{"a": 01}', '{"a": 00}', '{"a": 1.}', '{"a": 1.5e}', '{"a": +1}', '{"a": -}',
    '{"a": [1,]}', '{"a": [,1]}', '{"a": [1,,2]}', '{"": 1}', '{"a": "a\\u0000b"}',
    '{"a": "\\u12"}', '{"a": "\\/Expr(is)\\/"}', '{"a": "\\/Expr(1; 2)\\/"}',
])
def test_json_text_htcondor_refuses(text):
    """jsonSource.cpp refuses a bare integer with a leading zero, a number cut short,
    an array with an empty element, an empty attribute name, a NUL, and an /Expr(/
    whose expression does not parse."""
    with pytest.raises((classad.ClassAdParseError, StopIteration)):
        js(text)


def test_json_empty_object_is_no_ad():
    """HTCondor's bindings end a stream of ads at an empty ad: parseNext of {} finds
    none, and parseAds stops there."""
    with pytest.raises(StopIteration):
        js("{}")
    assert list(classad.parseAds('[{"a": 1}, {}, {"b": 2}]', classad.ParserType.JSON))[0].eval("a") == 1
    assert len(list(classad.parseAds('[{"a": 1}, {}, {"b": 2}]', classad.ParserType.JSON))) == 1


def test_a_record_of_semicolons_alone_is_refused():
    """source.cpp parseClassAd: semicolons separate attributes and may lead or trail
    them, but '[;]' (semicolons and no attribute) is a syntax error; '[ ]' is empty."""
    with pytest.raises(classad.ClassAdParseError):
        classad.ExprTree("[;]")
    with pytest.raises(classad.ClassAdParseError):
        classad.ClassAd("[ ; ; ]")
    assert len(classad.ClassAd("[ ]")) == 0
    assert dict(classad.ClassAd("[ ;; a = 1;; b = 2 ;]").items()) == {"a": 1, "b": 2}
