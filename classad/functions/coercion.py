"""Converting ClassAd values between types the way HTCondor's builtins do.

These are the ``int()``, ``real()`` and ``string()`` conversions, the C library
number readers they rest on (``strtod`` reads a prefix and ignores the rest), and
the rule most strict builtins share: an ``error`` argument wins, then ``undefined``.
"""

from __future__ import annotations

import math
import re

from classad.unparse import format_real, unparse_value
from classad.values import ERROR, UNDEFINED, AbsTime, RelTime, is_classad, wrap_int

_DECIMAL = re.compile(r"[ \t\n\r\f\v]*([+-]?)(\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)")
_HEX = re.compile(r"[ \t\n\r\f\v]*([+-]?)0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP]([+-]?\d+))?")
_SPECIAL = re.compile(r"[ \t\n\r\f\v]*([+-]?)(infinity|inf|nan(?:\([0-9A-Za-z_]*\))?)", re.IGNORECASE)
_PLAIN_INT = re.compile(r"[ \t\n\r\f\v]*([+-]?\d+)(?![.\deExX])")


def strtod(text: str) -> tuple[float, int] | None:
    """The number at the start of ``text`` as C's ``strtod`` reads it, with the
    count of characters used; None when no number starts the text."""
    m = _HEX.match(text)
    if m:
        return _hex_value(m), m.end()
    m = _DECIMAL.match(text)
    if m:
        try:
            value = float(m.group(1) + m.group(2))
        except OverflowError:  # pragma: no cover - float() saturates to inf
            value = math.inf
        return value, m.end()
    m = _SPECIAL.match(text)
    if m:
        word = m.group(2).lower()
        value = math.nan if word.startswith("nan") else math.inf
        return (-value if m.group(1) == "-" else value), m.end()
    return None


def _hex_value(m: re.Match) -> float:
    digits = m.group(2)
    whole, _, frac = digits.partition(".")
    mantissa = int(whole or "0", 16) + (int(frac, 16) / 16 ** len(frac) if frac else 0.0)
    value = math.ldexp(mantissa, int(m.group(3) or 0))
    return -value if m.group(1) == "-" else value


def real_to_int(x: float) -> int | object:
    """Truncate a real toward zero into a 64-bit integer; ERROR when it cannot be."""
    if math.isnan(x) or math.isinf(x):
        return ERROR
    return wrap_int(int(x))


def whole_seconds(x: float) -> int:
    """Seconds truncated to a 64-bit count, as a C ``time_t`` holds them (non-finite: 0)."""
    return wrap_int(int(x)) if math.isfinite(x) else 0


def to_int32(n: int) -> int:
    """Wrap an integer to a C ``int`` (32 bits), as HTCondor's time functions store it."""
    return ((n + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def real_to_int32(x: float) -> int:
    """A real converted to a C ``int`` the way x86 does: out of range gives INT_MIN."""
    if math.isnan(x) or math.isinf(x) or not -(1 << 31) <= int(x) < (1 << 31):
        return -(1 << 31)
    return int(x)


def string_to_int(text: str) -> int | object:
    """``int()`` of a string: the leading number, truncated; ERROR if there is none."""
    m = _PLAIN_INT.match(text)
    if m:
        return wrap_int(int(m.group(1)))
    parsed = strtod(text)
    if parsed is None:
        return ERROR
    return real_to_int(parsed[0])


def string_to_real(text: str) -> float | object:
    """``real()`` of a string: the leading number; ERROR if there is none."""
    parsed = strtod(text)
    return ERROR if parsed is None else parsed[0]


def to_integer(v: object) -> object:
    """HTCondor's ``int()`` conversion of any value (undefined and error pass through)."""
    t = type(v)
    if v is UNDEFINED or v is ERROR:
        return v
    if t is int:
        return v
    if t is bool:
        return int(v)
    if t is float:
        return real_to_int(v)
    if t is str:
        return string_to_int(v)
    if t is AbsTime:
        return real_to_int(v.seconds)
    if t is RelTime:
        return real_to_int32(v.seconds)
    return ERROR


def to_real(v: object) -> object:
    """HTCondor's ``real()`` conversion of any value (undefined and error pass through)."""
    t = type(v)
    if v is UNDEFINED or v is ERROR:
        return v
    if t is float:
        return v
    if t is int or t is bool:
        return float(v)
    if t is str:
        return string_to_real(v)
    if t is AbsTime:
        return float(whole_seconds(v.seconds))
    if t is RelTime:
        return float(real_to_int32(v.seconds))  # value.cpp reads a duration as a C int
    return ERROR


def to_string(v: object) -> object:
    """HTCondor's ``string()`` conversion: strings as they are, other values as their
    ClassAd text (reals in ``%.15E``, times in their own text form)."""
    from classad.functions.time_text import abstime_text, reltime_text

    t = type(v)
    if v is UNDEFINED or v is ERROR:
        return v
    if t is str:
        return v
    if t is float:
        return format_real(v)
    if t is AbsTime:
        return abstime_text(v)
    if t is RelTime:
        return reltime_text(v.seconds)
    if t is bool or t is int or t is list or is_classad(v):
        return unparse_value(v)
    return ERROR


def ascii_upper(s: str) -> str:
    """Upper-case only the ASCII letters, as C's ``toupper`` does in the C locale."""
    return s.translate(_UPPER)


def utf8(s: str) -> bytes:
    """The bytes of a ClassAd string (HTCondor's string functions count bytes)."""
    return s.encode("utf-8", "surrogateescape")


def from_utf8(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


_UPPER = {c + 32: c for c in range(ord("A"), ord("Z") + 1)}
