"""Job ads on the wire, fast: HTCondor's JSON form (literals as JSON values, other
expressions as ``"/Expr(...)/"`` strings) straight from and to expression nodes, so
a query of 100,000 jobs spends its time sending, not re-parsing JSON text."""

from __future__ import annotations

from classad import ClassAd
from classad.convert import python_to_node
from classad.expr import Literal
from classad.parser import parse_expression
from classad.unparse import unparse_expr
from classad.values import UNDEFINED

_EXPR_PREFIX = "/Expr("
_EXPR_SUFFIX = ")/"
_PLAIN = (bool, int, str)


class WireAdError(ValueError):
    """A job ad from the wire is not a JSON object of attribute values."""


def node_to_wire(node) -> object:
    """The JSON value of one attribute's expression node."""
    if type(node) is Literal:
        value = node.value
        kind = type(value)
        if kind in _PLAIN:
            return value
        if kind is float and value == value and value not in (float("inf"), float("-inf")):
            return value
        if value is UNDEFINED:
            return None
    return f"{_EXPR_PREFIX}{unparse_expr(node)}{_EXPR_SUFFIX}"


def job_to_wire(ad: ClassAd) -> dict:
    """The JSON object of a job ad, attributes in the ad's order."""
    return {name: node_to_wire(ad.expression(name)) for name in ad}


def wire_to_node(value: object, where: str):
    """The expression node for one JSON value.

    Raises:
        WireAdError: an ``/Expr(...)/`` string does not parse, or the value is not JSON data.
    """
    if isinstance(value, str) and value.startswith(_EXPR_PREFIX) and value.endswith(_EXPR_SUFFIX):
        text = value[len(_EXPR_PREFIX):-len(_EXPR_SUFFIX)]
        try:
            return parse_expression(text)
        except Exception as exc:  # the parser's error type is classad's business
            raise WireAdError(f"{where}: expression {text!r} does not parse: {exc}") from None
    if value is None:
        return Literal(UNDEFINED)
    try:
        return python_to_node(value)
    except (TypeError, ValueError) as exc:
        raise WireAdError(f"{where}: {exc}") from None


def job_from_wire(obj: object, where: str = "ad") -> ClassAd:
    """The ClassAd of a JSON object from the wire; ``where`` names it in errors.

    Raises:
        WireAdError: ``obj`` is not an object, or a value is not an expression.
    """
    if not isinstance(obj, dict):
        raise WireAdError(f"{where}: a job ad must be a JSON object, got {type(obj).__name__}")
    entries, seen = [], set()
    for name, value in obj.items():
        if not isinstance(name, str) or not name:
            raise WireAdError(f"{where}: attribute names must be non-empty strings, got {name!r}")
        if name.lower() in seen:
            raise WireAdError(f"{where}: attribute {name} appears twice (names are case-insensitive)")
        seen.add(name.lower())
        entries.append((name, wire_to_node(value, f"{where}.{name}")))
    return ClassAd.from_entries(entries)
