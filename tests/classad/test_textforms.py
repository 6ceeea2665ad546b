"""The fast readers of the old and new syntax agree with the grammar on every input."""

from __future__ import annotations

import pytest

from classad.errors import ClassAdParseError
from classad.parser import parse_expression
from classad.textforms import ParserType, _ad_from_record, parse_ads, parse_new_ad, split_new_ads


def shape(ad) -> list:
    """Everything an ad holds, literal types and spellings included."""
    return sorted((key, entry.name, repr(entry.expr)) for key, entry in ad.entries_by_key().items())


def by_grammar(text: str) -> list:
    """The new-syntax ads of ``text`` as the grammar alone reads them, or the error."""
    out = []
    try:
        for chunk in split_new_ads(text):
            node = parse_expression(chunk.strip())
            out.append(sorted((n.lower(), n, repr(x)) for n, x in node.entries))
    except ClassAdParseError as err:
        out.append(("error", err.reason, err.line, err.column))
    return out


def by_reader(text: str) -> list:
    out = []
    try:
        for ad in parse_ads(text, ParserType.New):
            out.append(shape(ad))
    except ClassAdParseError as err:
        out.append(("error", err.reason, err.line, err.column))
    return out


NEW_TEXTS = [
    '[ a = 1; b = "x" ]',
    '[a=1;b=2;]\n[c = 3]',
    "[ a = 1; A = 2; a = 3 ]",
    "[ B = 1; b = TARGET.x + 2 ]",
    '[ s = "a\\"b"; t = "tab\\there" ]',
    "[ s = \"semi;colon\" ; u = \"]\" ]",
    "[ 'a b' = 1; c = 2 ]",
    "[ a = [ b = 1; c = 2 ]; d = 3 ]",
    "[ l = { 1, 2, [ x = 1 ] }; m = {} ]",
    "[ a = 1; // comment ]\n b = 2 ]",
    "[ a = 1 /* ; */; b = 2 ]",
    "// before\n[ a = 1 ]\n/* between */ [ b = 2 ]  ",
    "[ a = 1;; b = 2 ]",
    "[ ; a = 1 ]",
    "[ ; ]",
    "[ ]",
    "[ a = ; b = 2 ]",
    "[ a = 1 b = 2 ]",
    "[ a = 1 + ]",
    "[ true = 1 ]",
    "[ Error = 2 ]",
    "[ a = -5; b = 007; c = 1e3; d = .5; e = 123456789012345678901234 ]",
    "[ a = 1 / 2; b = x/y ]",
    "[ a = \"caf\u00e9\"; b = 2 ]",
    "[ a = 1\u00a0]",
    "[ a = 1 ] x",
    "[ a = 1 ] ]",
    "[ a = 1",
    "[ a = \"unterminated ]",
    "[ a = absTime(\"2024-01-01T00:00:00Z\"); b = relTime(\"bogus\") ]",
    "[ a = \"x\" \"y\"; b = undefined; c = error; d = true || false ]",
    "[\ta\t=\t1\t;\n\tb\n=\n2\n]",
    "[ a = b =?= c; d = e =!= f ]",
    "[ a = 1 ]\n[ a = 1; b = ]\n",
    '[ u = "http://host/a;b"; v = "[x]" ]',
    '[ u = "a]b"; v = 1 ]',
    "[ a = {1, 2}; b = size({3}) ]",
    "[ a = 1 ; ]\n\n[ ]\n[b=2]",
    "[ a = 1\u2028; b = 2 ]",
    "[ x = y.z; w = ! x ]",
]


@pytest.mark.parametrize("text", NEW_TEXTS)
def test_new_syntax_reader_agrees_with_the_grammar(text):
    """Each text gives the grammar's ads, or its error at the same position."""
    assert by_reader(text) == by_grammar(text)
    assert by_reader(text) == by_grammar(text)  # again, from the remembered definitions


def _one(read, text: str):
    try:
        return shape(read(text))
    except ClassAdParseError as err:
        return ("error", err.reason, err.line, err.column)


@pytest.mark.parametrize("text", NEW_TEXTS)
def test_one_new_syntax_ad_agrees_with_the_grammar(text):
    """``parse_new_ad`` (what ClassAd(text) uses) reads a text as the grammar does whole."""
    def grammar(t):
        return _ad_from_record(parse_expression(t.strip()), t)

    assert _one(parse_new_ad, text) == _one(grammar, text)


def test_plain_ads_take_the_string_split_path():
    """Plain ads are split without regular expressions or the grammar, and ads whose
    ';' or ']' could mean something else are not."""
    from classad.ad import Entry
    from classad.textforms import _split_plain_ad

    assert _split_plain_ad('[ a = 1; B = "x;" ]', 0, Entry) is None
    assert _split_plain_ad('[ a = 1; u = "a]b" ]', 0, Entry) is None
    assert _split_plain_ad("[ 'a;b' = 1 ]", 0, Entry) is None
    attrs, end = _split_plain_ad('\n [ a = 1; B = "x" ] [c = 2]', 0, Entry)
    assert sorted(attrs) == ["a", "b"] and end == 20


def test_names_with_many_values_are_read_without_being_remembered():
    """Past the per-name limit, values are still read right but no longer cached."""
    from classad.entries import PER_NAME_LIMIT
    from classad.textforms import _NEW_DEFS

    text = "\n".join(f'[ Unique{PER_NAME_LIMIT} = "v{i}"; Same = 1 ]' for i in range(PER_NAME_LIMIT + 50))
    ads = list(parse_ads(text, ParserType.New))
    assert [ad[f"unique{PER_NAME_LIMIT}"] for ad in ads] == [f"v{i}" for i in range(PER_NAME_LIMIT + 50)]
    remembered = [key for key in _NEW_DEFS if f"Unique{PER_NAME_LIMIT}" in str(key)]
    assert len(remembered) <= PER_NAME_LIMIT


def test_shared_literal_entries_do_not_mix_spellings():
    """A remembered definition keeps each ad's own first spelling of a name."""
    ads = list(parse_ads('[ a = 1; A = "x" ]\n[ A = 1; a = "x" ]', ParserType.New))
    assert [list(ad) for ad in ads] == [["a"], ["A"]]
    assert [ad["a"] for ad in ads] == ["x", "x"]


def test_expression_entries_are_not_shared_between_ads():
    """Two ads with the same expression hold distinct entries (evaluation tells
    attributes apart by their entries), over the same shared tree."""
    one, two = parse_ads("[ r = x + 1 ]\n[ r = x + 1 ]", ParserType.New)
    first, second = one.entries_by_key()["r"], two.entries_by_key()["r"]
    assert first is not second
    assert first.expr is second.expr


OLD_TEXTS = [
    'A = 1\nb = "x"\n\nC = TARGET.y\n',
    'a = 1\nA = 2\n',
    'S = "a\\"b"\nT = "end\\"\n',
    "# comment\nX = 1\n  \nY = 2",
    "X = 1; b = 2\n",
    "bad line\n",
    "X = 1 +\n",
    "Name = \"caf\u00e9\"\n",
    "A = 1\n   \nB = 2\n\n\n# only\n# comments\n\nC = \"x\"\nc = 3\n",
    "A = -5\nB = 007\nC = \"tab\there\"\nD = TRUE\nE = 1e3\nF = \"a\\\\\"b\"\n",
    "A = 1\r\nB = 2\r\n\r\nC = 3",
    "A = 1\nbad\n\nB = 2\n",
]


def _old_reference(text: str) -> list:
    """The old syntax as read line by line with no remembered lines: ads separated by
    blank lines, '#' lines comments (a text of only comments is one empty ad)."""
    from classad.textforms import parse_old_line

    out, ad, started = [], {}, False
    try:
        for lineno, line in enumerate(text.splitlines(), 1):
            stripped = line.strip()
            if not stripped:
                if started:
                    out.append(sorted((k, n, repr(x)) for k, (n, x) in ad.items()))
                    ad, started = {}, False
                continue
            started = True
            if stripped[0] == "#":
                continue
            name, node = parse_old_line(line, lineno)
            old = ad.get(name.lower())
            ad[name.lower()] = (name if old is None else old[0], node)
        if started:
            out.append(sorted((k, n, repr(x)) for k, (n, x) in ad.items()))
    except ClassAdParseError as err:
        out.append(("error", err.reason, err.line, err.column))
    return out


def _old(text: str) -> list:
    out = []
    try:
        for ad in parse_ads(text, ParserType.Old):
            out.append(shape(ad))
    except ClassAdParseError as err:
        out.append(("error", err.reason, err.line, err.column))
    return out


@pytest.mark.parametrize("text", OLD_TEXTS)
def test_old_syntax_reads_the_same_from_remembered_lines(text):
    """Reading a text (then again, lines remembered) gives the ads or error that
    reading it line by line gives."""
    assert _old(text) == _old_reference(text)
    assert _old(text) == _old_reference(text)


def test_old_syntax_remembered_line_keeps_each_ads_spelling():
    """A remembered line under a name spelled otherwise earlier in the ad keeps that spelling."""
    ads = list(parse_ads("a = 1\nA = 2\n\nA = 2\n", ParserType.Old))
    assert [list(ad) for ad in ads] == [["a"], ["A"]]
    assert [ad["a"] for ad in ads] == [2, 2]


def test_long_expression_texts_are_not_remembered():
    """Expression texts past CACHED_TEXT_MAX are parsed each time, not kept by the cache."""
    from classad import parser

    text = " || ".join(f"a{i} == {i}" for i in range(1000))
    assert len(text) > parser.CACHED_TEXT_MAX
    before = parser._parse_cached.cache_info().currsize
    first, second = parser.parse_expression(text), parser.parse_expression(text)
    from classad.unparse import unparse_expr

    assert unparse_expr(first) == unparse_expr(second) and first is not second
    assert parser._parse_cached.cache_info().currsize == before
    assert parser.parse_expression("a + 1") is parser.parse_expression("a + 1")
