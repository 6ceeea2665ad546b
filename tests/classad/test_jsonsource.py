"""The JSON reader's fast path (the C decoder) agrees with HTCondor's rules as the
slow reader implements them, errors and their positions included."""

from __future__ import annotations

import pytest

from classad.errors import ClassAdParseError
from classad.jsonsource import _JsonReader, parse_json_ads


def shape(ad) -> list:
    return sorted((key, entry.name, repr(entry.expr)) for key, entry in ad.entries_by_key().items())


def slow(text: str) -> list:
    """Ads of ``text`` read by :class:`_JsonReader` alone, then the error if any."""
    out = []
    reader = _JsonReader(text)
    try:
        while not reader.at_end():
            entries = reader.read_object().entries
            if not entries:
                break
            out.append(sorted((n.lower(), n, repr(x)) for n, x in entries))
    except ClassAdParseError as err:
        out.append(("error", err.reason, err.line, err.column))
    return out


def fast(text: str) -> list:
    out = []
    try:
        for ad in parse_json_ads(text):
            out.append(shape(ad))
    except ClassAdParseError as err:
        out.append(("error", err.reason, err.line, err.column))
    return out


JSON_TEXTS = [
    '{"a": 1, "b": "x", "c": true, "d": null, "e": 1.5, "f": -0.0, "g": 0.0}',
    '{"a": 1, "A": 2, "a": 3}\n{"B": 1, "b": "\\/Expr(x + 1)\\/"}',
    '{"r": "\\/Expr(TARGET.Memory >= 1024)\\/", "s": "\\/expr(1)\\/"}',
    '{"r": "/Expr(1)/", "s": "\\/Expr(1)/", "t": "/Expr(1)\\/"}',
    '{"s": "a\\"b\\\\c\\/d\\n\\t"}',
    '{"s": "\\u00e9\\ud83d\\ude00"}',
    '{"s": "\\u0000"}',
    '{"s": "\\ud800"}',
    '{"s": "\\q"}',
    '{"a": 1,}',
    '{"a": 1 // comment\n}',
    '{"a": True, "b": NULL}',
    '{"a": .5}',
    '{"a": NaN}',
    '{"a": Infinity}',
    '{"a": 01}',
    '{"a": -012}',
    '{"a": 123456789012345678901234}',
    '{"a": 9223372036854775807, "b": -9223372036854775808, "c": 9223372036854775808}',
    '{"a": 1e400, "b": 1E5, "c": -1.5e-3}',
    '{"": 1}',
    '{"n": {"x": 1, "X": 2, "y": [1, {"z": "\\/Expr(a)\\/"}]}}',
    '{"l": [], "m": {}, "o": [[[]]]}',
    '{"a": "\\/Expr(1 +)\\/"}',
    '{"a": 1} {"b": 2}',
    '{"a": 1}\n{}\n{"b": 2}',
    '{"a": 1',
    '{"a": "x\ny"}',
    '{"a":\u00a01}',
    '{"caf\u00e9": "\u00e9"}',
    '{"a": 1} x',
    '{"a": [1, 2,]}',
    '{"a": 1}\n// between\n{"b": 2}\n/* and */ {"c": 3}',
    '/* first */ {"a": 1}\n{"a": NaN}\n{"b": 2}',
    '{"a": 1}\n{"b": "\\/Expr(1 +)\\/"}\n{"c": 3}',
    '{"a": ' + "[" * 250 + "]" * 250 + "}",
    '{"a": ' + '{"b": ' * 250 + "1" + "}" * 250 + "}",
]


@pytest.mark.parametrize("text", JSON_TEXTS)
def test_json_fast_path_agrees_with_htcondors_rules(text):
    """Each text gives the slow reader's ads, or its error at the same position."""
    assert fast(text) == slow(text)
    assert fast(text) == slow(text)  # again, from the remembered entries


def test_json_array_of_ads():
    """An array of ads reads as its objects, fast or not."""
    text = '[ {"a": 1}, {"b": "\\/Expr(x)\\/"}, {"c": 1,} ]'
    assert [shape(ad) for ad in parse_json_ads(text)] == [
        ads[0] for ads in (slow('{"a": 1}'), slow('{"b": "\\/Expr(x)\\/"}'), slow('{"c": 1,}'))]


def test_json_literals_keep_their_types_when_remembered():
    """1, 1.0 and true under one name stay an integer, a real and a boolean."""
    ads = list(parse_json_ads('{"a": 1}\n{"a": true}\n{"a": 1.0}\n{"a": 1}'))
    assert [type(ad["a"]) for ad in ads] == [int, bool, float, int]
