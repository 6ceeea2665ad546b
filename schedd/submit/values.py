"""Values of job attributes as the submit code makes them, before they become ClassAds.

An attribute is either a Python literal (int, float, str, bool, ``UNDEFINED``) or an
:class:`Expr` holding expression text; :func:`to_value` decides which, the way
HTCondor's submit code does (``1`` is a literal, ``(5)`` an expression). Sizes with
unit suffixes (``2 GB``, ``512K``) are converted here too.
"""

from __future__ import annotations

import ast
import functools
import math
import re

import attrs

from schedd.submit.errors import SubmitError


class _Undefined:
    """The submit code's UNDEFINED: ClassAd's undefined value, standing in for it
    until the value becomes a ClassAd node (:func:`schedd.submit.jobs.classad_node`),
    so that expanding a description does not load the ClassAd library."""

    _instance = None

    def __new__(cls) -> _Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNDEFINED"

    def __bool__(self) -> bool:
        return False


#: ClassAd's undefined value as a submit value.
UNDEFINED = _Undefined()


@attrs.frozen
class Expr:
    """An expression attribute, as ClassAd text (checked to parse)."""

    text: str


Value = object  # int | float | str | bool | UNDEFINED | Expr

_INT = re.compile(r"^[+-]?\d+$")
_REAL = re.compile(r"^[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?$")
_STRING = re.compile(r'^"((?:[^"\\]|\\.)*)"$', re.S)
_WORDS = {"true": True, "false": False}
#: Longest integer literal read (Python's own limit for converting text to int).
MAX_INTEGER_DIGITS = 4300


def checked_digits(digits: str) -> str:
    """``digits`` when it is short enough to be a number.

    Raises:
        SubmitError: more than :data:`MAX_INTEGER_DIGITS` digits.
    """
    if len(digits) > MAX_INTEGER_DIGITS:
        raise SubmitError(f"a number of {len(digits)} digits is too long (at most {MAX_INTEGER_DIGITS})")
    return digits


def literal(text: str) -> tuple[bool, object]:
    """(True, value) when ``text`` is a single literal, else (False, None)."""
    t = text.strip()
    if _INT.match(t):
        return True, int(checked_digits(t))
    if _REAL.match(t):
        return True, float(t)
    m = _STRING.match(t)
    if m:
        return True, m.group(1).replace('\\"', '"')
    low = t.lower()
    if low in _WORDS:
        return True, _WORDS[low]
    if low == "undefined" or not t:
        return True, UNDEFINED
    return False, None


@functools.lru_cache(maxsize=4096)
def check_expression(text: str) -> str | None:
    """None when ``text`` parses as a ClassAd expression, else what the parser said."""
    from schedd.submit.exprs import parse_error

    return parse_error(text)


def to_value(text: str, command: str | None = None) -> object:
    """The attribute value for a command's (expanded) text: a literal or an :class:`Expr`."""
    try:
        is_literal, value = literal(text)
    except SubmitError as exc:
        raise exc.located(command=command) from None
    if is_literal:
        return value
    problem = check_expression(text.strip())
    if problem is not None:
        raise SubmitError(f"{text.strip()!r} is not a valid ClassAd expression ({problem})",
                          command=command)
    return Expr(text.strip())


def string_value(text: str) -> str:
    """A command whose value is a plain string: surrounding double quotes are dropped."""
    t = text.strip()
    if len(t) >= 2 and t.startswith('"') and t.endswith('"'):
        return t[1:-1]
    return t


def is_true(text: str | None, default: bool = False) -> bool:
    """A yes/no command (``true``, ``yes``, ``1`` ...)."""
    if text is None or not text.strip():
        return default
    word = string_value(text).lower()
    if word in ("true", "yes", "t", "y", "1", "on"):
        return True
    if word in ("false", "no", "f", "n", "0", "off"):
        return False
    return default


_UNITS = {"": None, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
          "g": 1 << 30, "gb": 1 << 30, "t": 1 << 40, "tb": 1 << 40}
_SIZE = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))\s*([A-Za-z]*)$")


def size_value(text: str, unit: int, command: str) -> object:
    """A size command in ``unit`` bytes (KiB or MiB), rounded up; plain expressions
    stay expressions."""
    t = text.strip()
    m = _SIZE.match(t)
    if not m:
        return to_value(t, command)
    number, suffix = m.group(1), m.group(2).lower()
    if suffix not in _UNITS:
        if _REAL.match(t):
            return float(t)
        raise SubmitError(f"{t!r} is not a size; use a number with K, M, G or T "
                          "(optionally followed by B)", command=command)
    scale = _UNITS[suffix] or unit
    amount = float(number) * scale
    if not math.isfinite(amount):
        raise SubmitError(f"a size of {len(number)} characters is too large to be a size", command=command)
    rounded = (amount + unit - 1) / unit
    return int(math.trunc(rounded))


#: Longest integer expression ``queue N`` or a count command may hold; longer text is
#: refused before it is parsed (the walk below recurses once per operator).
MAX_INTEGER_EXPRESSION = 256


def integer_expression(text: str) -> int:
    """The value of a small integer expression (``2*3``, ``-1 + 10 / 4``): numbers,
    ``+ - * / // %`` and parentheses; division rounds toward zero as in C.

    Raises:
        ValueError: anything else, or text longer than :data:`MAX_INTEGER_EXPRESSION`.
    """
    stripped = text.strip()
    if len(stripped) > MAX_INTEGER_EXPRESSION:
        raise ValueError(f"an integer expression is at most {MAX_INTEGER_EXPRESSION} characters")
    try:
        return _integer_value(ast.parse(stripped, mode="eval").body)
    except (SyntaxError, ZeroDivisionError) as exc:
        raise ValueError(f"not an integer expression: {exc}") from None


_INTEGER_OPERATORS = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: int(a / b), ast.FloorDiv: lambda a, b: int(a / b), ast.Mod: lambda a, b: a % b,
}


def _integer_value(node: ast.AST) -> int:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _integer_value(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _INTEGER_OPERATORS:
        return _INTEGER_OPERATORS[type(node.op)](_integer_value(node.left), _integer_value(node.right))
    raise ValueError("not an integer expression")


#: Longest text :func:`long_param` evaluates as an expression.
MAX_LONG_PARAM = 1000


def long_param(text: str) -> int:
    """An integer command the way HTCondor's ``string_is_long_param`` reads it: a
    whole integer, else a ClassAd expression whose value is a number (a real is
    truncated, ``1.5`` is 1) or a boolean (1 or 0).

    Raises:
        ValueError: the text is not an expression, or its value is not a number.
    """
    stripped = text.strip()
    if _INT.match(stripped):
        return int(checked_digits(stripped))
    value = _evaluated(stripped)
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return int(value)
    raise ValueError("does not evaluate to a number")


_BOOLEAN_WORDS = (("true", True), ("false", False), ("1", True), ("0", False))


def boolean_param(text: str) -> bool:
    """A yes/no command the way HTCondor's ``string_is_boolean_param`` reads it:
    ``true``, ``false``, ``1`` or ``0`` (any case, blanks after), else a ClassAd
    expression whose value is a boolean or a number (non-zero is true). ``yes`` is
    not a boolean there (it names an attribute that is undefined).

    Raises:
        ValueError: anything else.
    """
    stripped = text.strip()
    for word, value in _BOOLEAN_WORDS:
        if stripped.lower() == word:
            return value
    value = _evaluated(stripped)
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and math.isfinite(value):
        return value != 0
    raise ValueError("does not evaluate to a boolean")


def _evaluated(text: str) -> object:
    """The value of a ClassAd expression on its own (no ad around it), for the
    commands HTCondor evaluates when they are not a plain number or word."""
    if not text or len(text) > MAX_LONG_PARAM:
        raise ValueError("not an expression (or too long)")
    import classad

    try:
        return classad.ExprTree(text).eval()
    except (ValueError, RecursionError):
        raise ValueError("not an expression") from None
