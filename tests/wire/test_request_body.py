"""Tests for daemoncore.wire.request_body."""

import json

import pytest

from daemoncore.wire.errors import BadRequest
from daemoncore.wire.request_body import (
    parse_json_object,
    parse_json_object_in_pieces,
    reject_unknown,
    take,
    take_list_of,
)


def test_invalid_json_names_line_and_column():
    """Malformed JSON is a 400 saying where it broke."""
    with pytest.raises(BadRequest, match="line 1 column 2"):
        parse_json_object(b"{x")


def test_non_object_body_is_refused():
    """A JSON list is not an acceptable body."""
    with pytest.raises(BadRequest, match="must be a JSON object"):
        parse_json_object(b"[1]")


def test_wrong_field_type_names_path_and_value():
    """A field of the wrong type is named as $.field with the value found."""
    with pytest.raises(BadRequest, match=r"\$\.limit: expected an integer, got \"ten\""):
        take({"limit": "ten"}, "limit", int)


def test_bool_is_not_an_integer():
    """``true`` does not pass for an integer."""
    with pytest.raises(BadRequest):
        take({"limit": True}, "limit", int)


def test_list_item_of_wrong_type_names_index():
    """A bad list item is named by its index."""
    with pytest.raises(BadRequest, match=r"\$\.names\[1\]"):
        take_list_of({"names": ["a", 2]}, "names", str)


def test_unknown_field_is_refused():
    """A misspelt field is refused instead of ignored."""
    with pytest.raises(BadRequest, match=r"\$\.limt: unknown field"):
        reject_unknown({"limt": 3}, {"limit"})


def test_deeply_nested_body_is_refused():
    """JSON nested beyond what the parser can follow is a 400, not a crash."""
    with pytest.raises(BadRequest, match="too deeply"):
        parse_json_object(b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}")


def test_integer_of_5000_digits_is_a_400_naming_the_limit():
    """An integer longer than Python converts is a 400 saying it is too long, not a 500."""
    with pytest.raises(BadRequest, match="number too long to read.*4300 digits"):
        parse_json_object(b'{"limit": ' + b"9" * 5000 + b"}")


def test_lone_surrogate_is_a_400_naming_the_field():
    """A string with a lone surrogate escape is refused, naming where it is."""
    with pytest.raises(BadRequest, match=r"\$\.constraint\[1\]: string holds a lone UTF-16 surrogate \(\\ud800\)"):
        parse_json_object(b'{"constraint": ["ok", "x\\ud800"]}')


def test_lone_surrogate_in_a_key_is_a_400():
    """A lone surrogate in an object key is refused too."""
    with pytest.raises(BadRequest, match=r"\(a key\)"):
        parse_json_object(b'{"\\udc00": 1}')


def test_surrogate_pair_and_escaped_backslash_pass():
    """A proper surrogate pair is one character, and an escaped backslash before ``ud800`` is text."""
    assert parse_json_object(b'{"a": "\\ud83d\\ude00", "b": "\\\\ud800"}') == {"a": "\U0001F600", "b": "\\ud800"}


def test_deep_nesting_is_a_400():
    """Arrays nested 100,000 deep are refused as too deep."""
    with pytest.raises(BadRequest, match="too deeply"):
        parse_json_object(b"[" * 100_000 + b"]" * 100_000)


def _in_pieces(raw: bytes, piece_bytes: int = 64) -> tuple[object, int]:
    """What parse_json_object_in_pieces returns, and how many pieces came before."""
    pieces = parse_json_object_in_pieces(raw, piece_bytes)
    count = 0
    while True:
        try:
            piece = next(pieces)
        except StopIteration as finished:
            return finished.value, count
        assert piece is None
        count += 1


@pytest.mark.parametrize("body", [
    {"ads": [{"Name": f"slot{n}@a", "Nested": [1, {"x": None}], "Text": "\u00e9\n"} for n in range(30)]},
    {"a": 1, "ads": [], "b": {"c": [1.5, True]}, "ads2": [[], [[]]]},
    {},
])
@pytest.mark.parametrize("dump", [json.dumps, lambda body: json.dumps(body, indent=2),
                                  lambda body: " \n" + json.dumps(body, separators=(",", ":")) + "\r\n"])
def test_a_body_decoded_in_pieces_is_the_body_decoded_whole(body, dump):
    """Pieces or not, the same object, whatever the spacing."""
    raw = dump(body).encode()
    assert _in_pieces(raw)[0] == parse_json_object(raw) == body


def test_a_large_list_is_decoded_a_piece_at_a_time():
    """A body many pieces long yields one None per piece of about the piece size."""
    raw = json.dumps({"ads": [{"Name": "x" * 50}] * 100}).encode()
    assert _in_pieces(raw, 1000)[1] in range(len(raw) // 1000 - 1, len(raw) // 1000 + 2)


@pytest.mark.parametrize("raw", [
    b'{"ads": [1, 2, ]}', b'{"ads": [1 2]}', b'{"ads": [1]} x', b'{"ads": [1]', b'{"a" 1}', b"{ads: 1}",
    b'{"ads": [1], }', b'{"a": nope}', b'{"a": "\\ud800"}', b'{"a": ' + b"1" * 5000 + b"}",
    b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", b'{"a": "\xff"}',
])
def test_a_body_refused_whole_is_refused_in_pieces_alike(raw):
    """The same 400, with the same words, as decoding the body whole gives."""
    raw = raw + b" " * 64  # longer than one piece
    with pytest.raises(BadRequest) as whole:
        parse_json_object(raw)
    with pytest.raises(BadRequest) as pieces:
        _in_pieces(raw)
    assert str(pieces.value) == str(whole.value)
