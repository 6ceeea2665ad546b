"""Tests for daemoncore.wire.request_body."""

import pytest

from daemoncore.wire.errors import BadRequest
from daemoncore.wire.request_body import parse_json_object, reject_unknown, take, take_list_of


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
