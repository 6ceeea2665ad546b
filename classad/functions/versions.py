"""Version comparison: ``versioncmp``, ``versionGT/GE/LT/LE/EQ`` and ``version_in_range``.

Strings compare byte by byte until they differ; where the difference falls inside a
run of digits in both, the runs compare as numbers, a run with more leading zeros
being smaller (``000 < 00 < 01 < 010 < 09 < 0 < 1 < 9 < 10``). Like HTCondor,
``versioncmp`` returns the raw difference it stopped at, not just its sign.
"""

from __future__ import annotations

import operator

from classad.functions import builtin
from classad.functions.coercion import to_string, utf8
from classad.values import ERROR, UNDEFINED


def _at(data: bytes, i: int) -> int:
    return data[i] if i < len(data) else 0


def _digit(c: int) -> bool:
    return 0x30 <= c <= 0x39


def _run_end(data: bytes, i: int, test) -> int:
    while test(_at(data, i)):
        i += 1
    return i


def natural_compare(left: str, right: str) -> int:
    """Negative, zero or positive as ``left`` is an earlier, equal or later version."""
    a, b = utf8(left), utf8(right)
    i = 0
    while i < len(a) and _at(a, i) == _at(b, i):
        i += 1
    c1, c2 = _at(a, i), _at(b, i)
    if c1 == c2:
        return 0
    start = i
    while start > 0 and _digit(a[start - 1]):
        start -= 1
    if start == i and not (_digit(c1) and _digit(c2)):
        return c1 - c2
    zeros1 = _leading_zeros(a, start)
    zeros2 = _leading_zeros(b, start)
    if zeros1 != zeros2:
        return zeros2 - zeros1
    if zeros1:
        return c1 - c2
    len1 = _run_end(a, start, _digit) - start
    len2 = _run_end(b, start, _digit) - start
    return len1 - len2 if len1 != len2 else c1 - c2


def _leading_zeros(data: bytes, start: int) -> int:
    """Zeros at the start of the digit run, not counting a lone final zero."""
    end = _run_end(data, start, lambda c: c == 0x30)
    if end > start and not _digit(_at(data, end)):
        end -= 1
    return end - start


def _compared(left: object, right: object) -> object:
    if left is UNDEFINED or right is UNDEFINED:
        return UNDEFINED
    a, b = to_string(left), to_string(right)
    if type(a) is not str or type(b) is not str:
        return ERROR
    return natural_compare(a, b)


@builtin("versioncmp", 2)
def versioncmp(left: object, right: object) -> object:
    return _compared(left, right)


def _version_test(name: str, test) -> None:
    def impl(left: object, right: object) -> object:
        order = _compared(left, right)
        return test(order, 0) if type(order) is int else order

    builtin(name, 2)(impl)


_version_test("versionGT", operator.gt)
_version_test("versionGE", operator.ge)
_version_test("versionLT", operator.lt)
_version_test("versionLE", operator.le)
_version_test("versionEQ", operator.eq)


@builtin("version_in_range", 3)
def version_in_range(version: object, low: object, high: object) -> object:
    """``versionLE(low, version) && versionLE(version, high)``."""
    if low is UNDEFINED or high is UNDEFINED:
        return UNDEFINED
    texts = [to_string(v) for v in (version, low, high)]
    if any(type(t) is not str for t in texts):
        return ERROR
    v, lo, hi = texts
    return natural_compare(lo, v) <= 0 and natural_compare(v, hi) <= 0
