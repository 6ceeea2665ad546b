"""ClassAd values as Python objects: the two special values, the two time types
and 64-bit integer wrapping.

A value is one of: ``int`` (64-bit, wrapped with :func:`wrap_int`), ``float``,
``bool``, ``str``, a Python ``list`` of values, a :class:`classad.ad.ClassAd`,
:class:`AbsTime`, :class:`RelTime`, or one of the two special values
:data:`UNDEFINED` and :data:`ERROR` (:class:`Value`). ``bool`` is a subclass of
``int`` in Python, so code that tells values apart tests ``type(v) is ...`` exactly;
:func:`is_classad` is the one test kept here, because a nested ad is a subclass test.
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


def is_classad(v: object) -> bool:
    """Whether ``v`` is a nested ad (a :class:`classad.ad.ClassAd`)."""
    from classad.ad import ClassAd  # values sit below the ad; the ad imports them

    return isinstance(v, ClassAd)
