"""The semantics of ClassAd operators on values, as HTCondor defines them.

These are pure functions of values, shared by the compiled evaluator and by builtins
that compare values (``member``, ``anyCompare``). ERROR wins over UNDEFINED, and both
propagate through arithmetic and comparison; booleans take part in arithmetic as 0/1
but not in bitwise operators.
"""

from __future__ import annotations

import math

from classad.values import ERROR, INT_MAX, INT_MIN, UNDEFINED, AbsTime, RelTime, wrap_int

_INF = math.inf
_MASK = 0xFFFFFFFFFFFFFFFF
_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def fold_case(s: str) -> str:
    """ASCII-only lower-casing: HTCondor compares strings ignoring ASCII case only."""
    return s.lower() if s.isascii() else s.translate(_ASCII_LOWER)


def _special(a, b):
    """ERROR or UNDEFINED if either operand is one (ERROR first), else None."""
    if a is ERROR or b is ERROR:
        return ERROR
    if a is UNDEFINED or b is UNDEFINED:
        return UNDEFINED
    return None


def _as_number(v):
    """An int or float for arithmetic (booleans count as 0/1), or None."""
    t = type(v)
    if t is int or t is float:
        return v
    if t is bool:
        return int(v)
    return None


def real_result(x: float):
    """HTCondor turns a real result of +infinity into ERROR but keeps -inf and NaN."""
    return ERROR if x == _INF else x


def _time_factor(v):
    """A number that may scale a relative time: an int or a real, never a boolean
    (operators.cpp timeArithmetic takes only integer and real factors)."""
    t = type(v)
    return v if t is int or t is float else None


def _time_arith(op: str, a, b):
    """Arithmetic on times: absolute +/- relative, absolute - absolute, relative
    with relative, and relative scaled by a number; anything else is ERROR."""
    ta, tb = type(a), type(b)
    nb = _time_factor(b)
    if op == "+":
        if ta is AbsTime and tb is RelTime:
            return AbsTime(a.seconds + b.seconds, a.offset)
        if ta is RelTime and tb is AbsTime:
            return AbsTime(b.seconds + a.seconds, b.offset)
        if ta is RelTime and tb is RelTime:
            return RelTime(a.seconds + b.seconds)
    elif op == "-":
        if ta is AbsTime and tb is AbsTime:
            return RelTime(float(a.seconds - b.seconds))
        if ta is AbsTime and tb is RelTime:
            return AbsTime(a.seconds - b.seconds, a.offset)
        if ta is RelTime and tb is RelTime:
            return RelTime(a.seconds - b.seconds)
    elif op == "*":
        if ta is RelTime and nb is not None:
            return RelTime(a.seconds * nb)
        na = _time_factor(a)
        if tb is RelTime and na is not None:
            return RelTime(b.seconds * na)
    elif op == "/":
        if ta is RelTime and nb is not None:
            return RelTime(c_real_divide(a.seconds, nb))
    return ERROR


def c_real_divide(a: float, b: float) -> float:
    """``a / b`` in C doubles: a zero divisor gives a signed infinity, or NaN for 0/0."""
    if b:
        return a / b
    if a == 0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _int_div(a: int, b: int):
    if b == 0:
        return ERROR
    if a == INT_MIN and b == -1:
        return INT_MAX
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _int_mod(a: int, b: int):
    if b == 0:
        return ERROR
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def _real_div(a: float, b: float):
    if b == 0.0:
        if a == 0.0 or math.isnan(a):
            return math.nan
        sign = math.copysign(1.0, a) * math.copysign(1.0, b)
        return real_result(sign * _INF)
    return real_result(a / b)


def arithmetic(op: str, a, b):
    """``a op b`` for ``+ - * / %``."""
    special = _special(a, b)
    if special is not None:
        return special
    na, nb = _as_number(a), _as_number(b)
    if na is None or nb is None:
        if type(a) in (AbsTime, RelTime) or type(b) in (AbsTime, RelTime):
            return _time_arith(op, a, b)
        return ERROR
    if type(na) is int and type(nb) is int:
        if op == "+":
            return wrap_int(na + nb)
        if op == "-":
            return wrap_int(na - nb)
        if op == "*":
            return wrap_int(na * nb)
        if op == "/":
            return _int_div(na, nb)
        return _int_mod(na, nb)
    x, y = float(na), float(nb)
    if op == "+":
        return real_result(x + y)
    if op == "-":
        return real_result(x - y)
    if op == "*":
        return real_result(x * y)
    if op == "/":
        return _real_div(x, y)
    return ERROR  # % on reals


def bitwise(op: str, a, b):
    """``a op b`` for ``& | ^ << >> >>>``; integers only."""
    special = _special(a, b)
    if special is not None:
        return special
    if type(a) is not int or type(b) is not int:
        return ERROR
    if op == "&":
        return a & b
    if op == "|":
        return a | b
    if op == "^":
        return a ^ b
    if b < 0 or b >= 64:
        return ERROR  # undefined behaviour in C++; refuse rather than guess
    if op == "<<":
        return wrap_int(a << b)
    if op == ">>":
        return a >> b
    return wrap_int((a & _MASK) >> b)


def compare(op: str, a, b):
    """``a op b`` for ``== != < <= > >=``: strings ignore ASCII case, numbers and
    booleans compare by value, anything else mixed is ERROR."""
    special = _special(a, b)
    if special is not None:
        return special
    ta, tb = type(a), type(b)
    if ta is str and tb is str:
        x, y = fold_case(a), fold_case(b)
    elif (ta is AbsTime and tb is AbsTime) or (ta is RelTime and tb is RelTime):
        x, y = a.seconds, b.seconds
    else:
        x, y = _as_number(a), _as_number(b)
        if x is None or y is None:
            return ERROR
        if type(x) is not type(y):  # C++ compares an integer with a real as doubles
            x, y = float(x), float(y)
    if op == "==":
        return x == y
    if op == "!=":
        return x != y
    if op == "<":
        return x < y
    if op == "<=":
        return x <= y
    if op == ">":
        return x > y
    return x >= y


def identical(a, b):
    """``a =?= b``: same type and same value, strings case-sensitively; lists and
    ads cannot be compared (ERROR)."""
    from classad.ad import ClassAd

    ta, tb = type(a), type(b)
    if (ta is list and tb is list) or (isinstance(a, ClassAd) and isinstance(b, ClassAd)):
        return ERROR
    if ta is not tb:
        return False
    return a == b


def not_identical(a, b):
    result = identical(a, b)
    return result if result is ERROR else not result


def truth(v):
    """A value as a condition: True/False, UNDEFINED, or ERROR for non-booleans."""
    t = type(v)
    if t is bool:
        return v
    if t is int or t is float:
        return v != 0
    if v is UNDEFINED:
        return UNDEFINED
    return ERROR


def negate(v):
    t = type(v)
    if t is int:
        return wrap_int(-v)
    if t is float:
        return -v
    if t is RelTime:
        return RelTime(-v.seconds)
    if v is UNDEFINED:
        return UNDEFINED
    return ERROR


def plus(v):
    t = type(v)
    if t is int or t is float or t is RelTime:
        return v
    if v is UNDEFINED:
        return UNDEFINED
    return ERROR


def logical_not(v):
    t = type(v)
    if t is bool:
        return not v
    if t is int or t is float:
        return v == 0
    if v is UNDEFINED:
        return UNDEFINED
    return ERROR


def invert(v):
    if type(v) is int:
        return ~v
    if v is UNDEFINED:
        return UNDEFINED
    return ERROR


def logical_and(a, b_thunk):
    """``&&`` with HTCondor's short-circuit: a false left side decides, an ERROR
    (or non-boolean) left side wins, and UNDEFINED waits for the right side."""
    left = truth(a)
    if left is False or left is ERROR:
        return left
    right = truth(b_thunk())
    if right is False or right is ERROR:
        return right
    return UNDEFINED if left is UNDEFINED or right is UNDEFINED else True


def logical_or(a, b_thunk):
    """``||``: the mirror image of :func:`logical_and`."""
    left = truth(a)
    if left is True or left is ERROR:
        return left
    right = truth(b_thunk())
    if right is True or right is ERROR:
        return right
    return UNDEFINED if left is UNDEFINED or right is UNDEFINED else False


ARITHMETIC = frozenset("+-*/%")
COMPARISON = frozenset({"==", "!=", "<", "<=", ">", ">="})
