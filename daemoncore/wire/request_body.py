"""Reading a JSON request body and its fields, with 400 errors that name the field
(as ``$.field``), the value found and what was expected."""

from __future__ import annotations

import json
import re

from daemoncore.wire.errors import BadRequest

_MISSING = object()

#: A ``\\uD800``-``\\uDFFF`` escape: only then can a parsed string hold a lone surrogate.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")

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


def _parse_json(raw: bytes) -> object:
    """Any JSON value from a request body, every failure a ``BadRequest``.

    Raises:
        BadRequest: the body is not UTF-8 JSON, nests too deeply, holds an integer
            of more than 4,300 digits or a string with a lone surrogate.
    """
    try:
        value = json.loads(raw)
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
    if _SURROGATE_ESCAPE.search(raw):
        _refuse_lone_surrogates(value, "$")
    return value


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
