"""ClassAd comparison and addition on already evaluated values.

``member``, ``anyCompare``, ``sum`` and friends apply the language's own operators
to list elements, so they need the operators' exact rules: ``==`` and its kin are
strict (error wins over undefined), compare strings ignoring ASCII case, and give
error for a string against a number or for any list or ad; ``is``/``isnt`` compare
type and value exactly and never give undefined.
"""

from __future__ import annotations

import math
import operator

from classad.functions.coercion import ascii_lower, utf8
from classad.values import ERROR, UNDEFINED, AbsTime, RelTime, is_classad, wrap_int

_ORDER = {
    "<": operator.lt, "<=": operator.le, "==": operator.eq,
    "!=": operator.ne, ">": operator.gt, ">=": operator.ge,
}


def _numeric(v: object) -> bool:
    t = type(v)
    return t is int or t is float or t is bool


def _aggregate(v: object) -> bool:
    return type(v) is list or is_classad(v)


def identical(a: object, b: object) -> object:
    """``a =?= b``: same type and same value (strings case-sensitive); error for lists and ads."""
    if _aggregate(a) or _aggregate(b):
        return ERROR
    if type(a) is not type(b):
        return False
    if type(a) is AbsTime or type(a) is RelTime:
        return a.seconds == b.seconds
    return a == b


def compare(op: str, a: object, b: object) -> object:
    """Apply one of ``< <= == != > >= is isnt`` (``=?=``/``=!=`` too) to two values."""
    if op in ("is", "=?="):
        return identical(a, b)
    if op in ("isnt", "=!="):
        same = identical(a, b)
        return same if same is ERROR else not same
    if a is ERROR or b is ERROR:
        return ERROR
    if a is UNDEFINED or b is UNDEFINED:
        return UNDEFINED
    keys = _comparable_keys(a, b)
    if keys is None:
        return ERROR
    return _ORDER[op](*keys)


def _comparable_keys(a: object, b: object) -> tuple | None:
    if _numeric(a) and _numeric(b):
        return a, b
    if type(a) is str and type(b) is str:
        return utf8(ascii_lower(a)), utf8(ascii_lower(b))
    if type(a) is type(b) and type(a) in (AbsTime, RelTime):
        return a.seconds, b.seconds
    return None


def add(a: object, b: object) -> object:
    """``a + b`` on numbers: integers wrap at 64 bits, a real makes the sum real, and a
    real sum of +infinity is error (as HTCondor's arithmetic gives)."""
    if a is ERROR or b is ERROR:
        return ERROR
    if a is UNDEFINED or b is UNDEFINED:
        return UNDEFINED
    if not (_numeric(a) and _numeric(b)):
        return ERROR
    if type(a) is float or type(b) is float:
        total = float(a) + float(b)
        return ERROR if total == math.inf else total
    return wrap_int(int(a) + int(b))


def divide_real(a: object, n: int) -> object:
    """``a / real(n)`` for a positive count ``n``, with the same infinity rule as :func:`add`."""
    if not _numeric(a):
        return ERROR
    quotient = float(a) / n
    return ERROR if quotient == math.inf else quotient
