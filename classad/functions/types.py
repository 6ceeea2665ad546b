"""Type predicates (``isInteger`` ...) and the conversions ``int``, ``real``, ``string``, ``bool``."""

from __future__ import annotations

from classad.functions import builtin
from classad.functions.coercion import to_integer, to_real, to_string, whole_seconds
from classad.values import ERROR, UNDEFINED, AbsTime, RelTime, is_classad


def _predicate(name: str, test) -> None:
    builtin(name, 1)(lambda v: test(v))


_predicate("isUndefined", lambda v: v is UNDEFINED)
_predicate("isError", lambda v: v is ERROR)
_predicate("isString", lambda v: type(v) is str)
_predicate("isInteger", lambda v: type(v) is int)
_predicate("isReal", lambda v: type(v) is float)
_predicate("isBoolean", lambda v: type(v) is bool)
_predicate("isList", lambda v: type(v) is list)
_predicate("isClassAd", is_classad)
_predicate("isAbstime", lambda v: type(v) is AbsTime)
_predicate("isReltime", lambda v: type(v) is RelTime)

builtin("int", 1)(to_integer)
builtin("real", 1)(to_real)
builtin("string", 1)(to_string)


@builtin("bool", 1)
def to_bool(v: object) -> object:
    """Numbers are true when non-zero; only the strings "true"/"false" (any case) convert,
    other strings are undefined; lists, ads and absolute times are error."""
    t = type(v)
    if v is UNDEFINED or v is ERROR:
        return v
    if t is bool:
        return v
    if t is int or t is float:
        return v != 0
    if t is RelTime:
        return whole_seconds(v.seconds) != 0
    if t is str:
        return {"true": True, "false": False}.get(v.lower() if v.isascii() else v, UNDEFINED)
    return ERROR
