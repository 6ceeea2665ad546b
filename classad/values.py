"""ClassAd values as Python objects, and the type tests every other module uses.

A value is one of: ``int`` (64-bit, wrapped), ``float``, ``bool``, ``str``, a Python
``list`` of values, a :class:`classad.ad.ClassAd`, :class:`AbsTime`, :class:`RelTime`,
or one of the two special values :data:`UNDEFINED` and :data:`ERROR`. ``bool`` is a
subclass of ``int`` in Python, so type tests here check ``type(v) is ...`` exactly.
"""

from __future__ import annotations

import enum

import attrs


class Value(enum.Enum):
    """The two special ClassAd values, named as in HTCondor's ``classad2``."""

    Error = 1
    Undefined = 2

    def __repr__(self) -> str:
        return f"Value.{self.name}"

    def __bool__(self) -> bool:
        return False


UNDEFINED = Value.Undefined
ERROR = Value.Error

INT_MIN = -(1 << 63)
INT_MAX = (1 << 63) - 1


@attrs.frozen
class AbsTime:
    """An absolute time: seconds since the epoch and the zone offset (seconds east of UTC)."""

    seconds: float
    offset: int = 0


@attrs.frozen
class RelTime:
    """A relative time (a duration) in seconds."""

    seconds: float


def wrap_int(n: int) -> int:
    """Wrap an unbounded Python int to a signed 64-bit integer, as C++ arithmetic does."""
    if INT_MIN <= n <= INT_MAX:
        return n
    return ((n - INT_MIN) & 0xFFFFFFFFFFFFFFFF) + INT_MIN


def is_int(v: object) -> bool:
    return type(v) is int


def is_real(v: object) -> bool:
    return type(v) is float


def is_bool(v: object) -> bool:
    return type(v) is bool


def is_number(v: object) -> bool:
    """Integer or real (not boolean)."""
    t = type(v)
    return t is int or t is float


def is_string(v: object) -> bool:
    return type(v) is str


def is_list(v: object) -> bool:
    return type(v) is list


def is_classad(v: object) -> bool:
    from classad.ad import ClassAd

    return isinstance(v, ClassAd)


def is_time(v: object) -> bool:
    t = type(v)
    return t is AbsTime or t is RelTime


def type_name(v: object) -> str:
    """The ClassAd type name of a value (as the conformance files spell it)."""
    if v is UNDEFINED:
        return "undefined"
    if v is ERROR:
        return "error"
    t = type(v)
    names = {int: "integer", float: "real", bool: "boolean", str: "string", list: "list",
             AbsTime: "abstime", RelTime: "reltime"}
    if t in names:
        return names[t]
    if is_classad(v):
        return "classad"
    raise TypeError(f"not a ClassAd value: {v!r}")
