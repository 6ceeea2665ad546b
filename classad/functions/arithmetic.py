"""Numeric builtins: ``floor``, ``ceiling``/``ceil``, ``round``, ``pow``, ``quantize``, ``random``."""

from __future__ import annotations

import math
import random as _random

from classad.functions import builtin
from classad.functions.coercion import real_to_int, to_real
from classad.values import ERROR, INT_MIN, wrap_int


def _rounder(name: str, how) -> None:
    """Register a one-argument rounding function: integers pass unchanged, anything
    else goes through ``real()`` (undefined and failures are error)."""

    def impl(v: object) -> object:
        if type(v) is int:
            return v
        r = to_real(v)
        if type(r) is not float:
            return ERROR
        if math.isnan(r) or math.isinf(r):
            return ERROR
        return real_to_int(how(r))

    builtin(name, 1)(impl)


_rounder("floor", math.floor)
_rounder("ceiling", math.ceil)
_rounder("ceil", math.ceil)
_rounder("round", round)  # Python's round() is rint(): half to even


def c_divide(a: int, b: int) -> int:
    """Integer division truncating toward zero, as in C."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _c_pow(base: float, exponent: float) -> float:
    """``pow`` with C's answers where Python's math.pow raises: overflow is a signed
    infinity, zero to a negative power is infinity (negative for -0.0 to an odd power),
    a negative base to a fractional power NaN."""
    odd = exponent.is_integer() and int(exponent) % 2 == 1
    try:
        return math.pow(base, exponent)
    except OverflowError:
        return -math.inf if base < 0 and odd else math.inf
    except ValueError:
        if base == 0:
            return math.copysign(math.inf, base) if odd else math.inf
        return math.nan


def _c_llong(x: float) -> int:
    """A double converted to a C ``long long`` on x86: a value out of range (or NaN)
    becomes the 'integer indefinite' INT64_MIN."""
    if math.isfinite(x) and INT_MIN <= x < -float(INT_MIN):
        return int(x)
    return INT_MIN


@builtin("pow", 2)
def power(base: object, exponent: object) -> object:
    """Integers to a non-negative integer power give an integer, computed in floating
    point and rounded by adding 0.5 and truncating (so ``pow(-1, 3)`` is 0); every
    other case is ``real(base) ** real(exponent)``."""
    if type(base) is int and type(exponent) is int and exponent >= 0:
        return _c_llong(_c_pow(float(base), float(exponent)) + 0.5)
    rb, re_ = to_real(base), to_real(exponent)
    if type(rb) is not float or type(re_) is not float:
        return ERROR
    return _c_pow(rb, re_)


@builtin("quantize", 2)
def quantize(a: object, b: object) -> object:
    """The smallest multiple of ``b`` at least ``a``; with a list, the first element at
    least ``a``, else a multiple of the last element. The result has ``b``'s type."""
    ra = to_real(a)
    if type(ra) is not float:
        return ERROR
    if type(b) is list:
        base, rbase = 0.0, 0.0
        for element in b:
            base, rbase = element, to_real(element)
            if type(rbase) is not float:
                return ERROR
            if rbase >= ra:
                return element
    else:
        base, rbase = b, to_real(b)
        if type(rbase) is not float:
            return ERROR
    return _quantize_to(a, ra, base, rbase)


def _quantize_to(a: object, ra: float, base: object, rbase: float) -> object:
    if type(base) is int:
        if base == 0:
            return a
        if type(a) is int:
            return wrap_int(c_divide(a + base - 1, base) * base)
        return _ceil(ra / base) * float(base)
    if -1e-8 <= rbase <= 1e-8:
        return a
    return _ceil(ra / rbase) * rbase


def _ceil(x: float) -> float:
    return float(math.ceil(x)) if math.isfinite(x) else x


@builtin("random", 0, 1)
def random_number(limit: object = 1.0) -> object:
    """A random integer in ``[0, n)`` for an integer ``n``, a random real in ``[0, x)``
    for a real ``x``; with no argument a real in ``[0, 1)``."""
    if type(limit) is int:
        if limit == 0:
            return ERROR
        pick = _random.randrange(abs(limit))
        return pick if limit > 0 else -pick
    if type(limit) is float:
        return limit * _random.random()
    return ERROR
