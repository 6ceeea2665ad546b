"""Reading a JSON request body and its fields, with 400 errors that name the field
(as ``$.field``), the value found and what was expected."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Generator, Iterator

from daemoncore.wire.errors import BadRequest

_MISSING = object()

#: A ``\\uD800``-``\\uDFFF`` escape: only then can a parsed string hold a lone surrogate.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")

#: Text of a large body decoded per piece by :func:`parse_json_object_in_pieces` (2-4
#: ms of ``json`` decoding on these machines; a 1 MiB piece took 10-27 ms).
PIECE_BYTES = 256 * 1024

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()

_TYPE_NAMES = {
    str: "a string", int: "an integer", bool: "true or false", list: "a list",
    dict: "an object", float: "a number",
}


def parse_json_object(raw: bytes) -> dict:
    """The body as a JSON object; an empty body is ``{}``.

    Raises:
        BadRequest: the body is not UTF-8 JSON, not an object, holds an integer
            longer than Python converts (4,300 digits) or a string with a lone
            surrogate (which no UTF-8 text can carry further).
    """
    if not raw.strip():
        return {}
    value = _parse_json(raw)
    if not isinstance(value, dict):
        raise BadRequest(f"request body must be a JSON object, got {_describe(value)}")
    return value


def parse_json_object_in_pieces(raw: bytes, piece_bytes: int = PIECE_BYTES) -> Generator[None, None, dict]:
    """:func:`parse_json_object` in pieces, for a daemon that must not hold its reactor
    for the whole of a large body (a 15 MB update decodes in 110-190 ms): yields None
    after each piece of about ``piece_bytes`` of text, and returns the object (the
    generator's value, as :func:`daemoncore.reactor_turns.in_slices` hands it on). The
    object's members, and the items of a member that is a list (the ads of an update),
    are decoded one by one; anything deeper, or a body that is not UTF-8 text opening
    with ``{``, is decoded whole.

    Raises:
        BadRequest: as :func:`parse_json_object`, when the generator is advanced.
    """
    if len(raw) <= piece_bytes or not raw.lstrip()[:1] == b"{":
        return parse_json_object(raw)
    value: dict = {}
    with _read_as_request_body():
        text = raw.decode("utf-8")
        yield None  # a piece of its own: 7-8 ms for 15 MB
        yield from _object_members(text, value, piece_bytes)
    if _SURROGATE_ESCAPE.search(raw):
        _refuse_lone_surrogates(value, "$")
    return value


def _object_members(text: str, into: dict, piece_bytes: int) -> Iterator[None]:
    """Decode the JSON object that is all of ``text`` into ``into``, yielding None each
    time about ``piece_bytes`` more of it is decoded.

    Raises:
        json.JSONDecodeError: ``text`` is not one JSON object.
    """
    marks = {"next": piece_bytes}
    at = _skip(text, 0) + 1  # past the "{" the caller saw
    at = _skip(text, at)
    if text[at:at + 1] == "}":
        at += 1
    else:
        while True:
            if text[at:at + 1] != '"':
                raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, at)
            key, at = _DECODER.raw_decode(text, at)
            at = _skip(text, at)
            if text[at:at + 1] != ":":
                raise json.JSONDecodeError("Expecting ':' delimiter", text, at)
            at = _skip(text, at + 1)
            if text[at:at + 1] == "[":
                items: list = []
                for at in _list_items(text, at, items):
                    if at >= marks["next"]:
                        marks["next"] = at + piece_bytes
                        yield None
                into[key] = items
            else:
                into[key], at = _value(text, at)
            at = _skip(text, at)
            if text[at:at + 1] == "}":
                at += 1
                break
            if text[at:at + 1] != ",":
                raise json.JSONDecodeError("Expecting ',' delimiter", text, at)
            at = _skip(text, at + 1)
    if _skip(text, at) != len(text):
        raise json.JSONDecodeError("Extra data", text, _skip(text, at))


def _list_items(text: str, at: int, into: list) -> Iterator[int]:
    """Decode the JSON list opening at ``at`` into ``into``, item by item, yielding
    where each item ends and, last, where the list ends."""
    at = _skip(text, at + 1)
    if text[at:at + 1] == "]":
        yield at + 1
        return
    while True:
        item, at = _value(text, at)
        into.append(item)
        yield at
        at = _skip(text, at)
        if text[at:at + 1] == "]":
            yield at + 1
            return
        if text[at:at + 1] != ",":
            raise json.JSONDecodeError("Expecting ',' delimiter", text, at)
        at = _skip(text, at + 1)


def _value(text: str, at: int) -> tuple[object, int]:
    try:
        return _DECODER.raw_decode(text, at)
    except StopIteration:  # raw_decode's way of saying nothing decodable starts here
        raise json.JSONDecodeError("Expecting value", text, at) from None


def _skip(text: str, at: int) -> int:
    """Where the JSON whitespace at ``at`` ends."""
    return _WHITESPACE.match(text, at).end()


def _parse_json(raw: bytes) -> object:
    """Any JSON value from a request body, every failure a ``BadRequest``.

    Raises:
        BadRequest: the body is not UTF-8 JSON, nests too deeply, holds an integer
            of more than 4,300 digits or a string with a lone surrogate.
    """
    with _read_as_request_body():
        value = json.loads(raw)
    if _SURROGATE_ESCAPE.search(raw):
        _refuse_lone_surrogates(value, "$")
    return value


@contextlib.contextmanager
def _read_as_request_body() -> Iterator[None]:
    """Decoding a request body's UTF-8 and JSON, with each failure as the
    ``BadRequest`` a client reads."""
    try:
        yield
    except UnicodeDecodeError as exc:
        raise BadRequest(f"request body is not UTF-8: {exc}") from None
    except json.JSONDecodeError as exc:
        raise BadRequest(
            f"request body is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise BadRequest("request body nests JSON too deeply") from None
    except ValueError as exc:  # json's int() of a number past sys.get_int_max_str_digits()
        raise BadRequest(f"request body holds a number too long to read: {_first_line(exc)}") from None


def _refuse_lone_surrogates(value: object, where: str) -> None:
    """Walk ``value`` (only done when the text had a surrogate escape) and refuse a
    string that would not encode as UTF-8; pairs such as ``\\ud83d\\ude00`` decode
    to one character and pass."""
    pending = [(value, where)]
    while pending:
        item, path = pending.pop()
        if isinstance(item, dict):
            for key, inner in item.items():
                _check_text(key, f"{path} (a key)")
                pending.append((inner, f"{path}.{key}"))
        elif isinstance(item, list):
            pending.extend((inner, f"{path}[{index}]") for index, inner in enumerate(item))
        elif isinstance(item, str):
            _check_text(item, path)


def _check_text(text: str, where: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise BadRequest(
            f"{where}: string holds a lone UTF-16 surrogate (\\u{ord(text[exc.start]):04x}) "
            f"at character {exc.start}; send a valid Unicode character or a surrogate pair"
        ) from None


def _first_line(exc: Exception) -> str:
    return str(exc).split(";")[0]


def take(body: dict, name: str, kind: type, default: object = _MISSING) -> object:
    """The field ``name`` of ``body`` checked to be of ``kind``.

    Raises:
        BadRequest: the field is missing without a default, or has the wrong type.
    """
    if name not in body or body[name] is None:
        if default is _MISSING:
            raise BadRequest(f"$.{name}: required field is missing")
        return default
    value = body[name]
    if not _is_kind(value, kind):
        raise BadRequest(f"$.{name}: expected {_TYPE_NAMES.get(kind, kind.__name__)}, got {_describe(value)}")
    return value


def take_list_of(body: dict, name: str, kind: type, default: object = _MISSING) -> list:
    """The list field ``name`` of ``body`` whose every item is of ``kind``.

    Raises:
        BadRequest: the field is missing without a default, is not a list, or holds
            an item of another type (named by its index).
    """
    items = take(body, name, list, default)
    for index, item in enumerate(items):
        if not _is_kind(item, kind):
            raise BadRequest(
                f"$.{name}[{index}]: expected {_TYPE_NAMES.get(kind, kind.__name__)}, got {_describe(item)}"
            )
    return items


def reject_unknown(body: dict, known: set[str]) -> None:
    """Refuse fields the route does not define, so a typo is not silently ignored.

    Raises:
        BadRequest: ``body`` has a field outside ``known``.
    """
    unknown = sorted(set(body) - known)
    if unknown:
        raise BadRequest(f"$.{unknown[0]}: unknown field (expected one of: {', '.join(sorted(known))})")


def _is_kind(value: object, kind: type) -> bool:
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, kind)


def _describe(value: object) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."
