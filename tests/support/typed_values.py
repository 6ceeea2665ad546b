"""Values in the conformance files' typed JSON form, and the README's comparison rules."""

from __future__ import annotations

import math

from classad.functions.time_text import abstime_text
from classad.values import ERROR, UNDEFINED, AbsTime, RelTime, is_classad


def typed(value: object, evaluate_attr) -> dict:
    """``value`` as ``{"type": ..., "value": ...}``; ``evaluate_attr(ad, name)`` gives
    the value of an attribute of an ad-valued result."""
    if value is UNDEFINED:
        return {"type": "undefined", "value": None}
    if value is ERROR:
        return {"type": "error", "value": None}
    kinds = {bool: "boolean", int: "integer", float: "real", str: "string"}
    kind = type(value)
    if kind in kinds:
        return {"type": kinds[kind], "value": value}
    if kind is list:
        return {"type": "list", "value": [typed(v, evaluate_attr) for v in value]}
    if kind is AbsTime:
        return {"type": "abstime", "value": abstime_text(value)}
    if kind is RelTime:
        return {"type": "reltime", "value": value.seconds}
    if is_classad(value):
        return {"type": "classad",
                "value": {k: typed(evaluate_attr(value, k), evaluate_attr) for k in value}}
    raise AssertionError(f"not a ClassAd value: {value!r}")


def same(got: dict, want: dict) -> bool:
    """Same type; reals within 1e-9 relative; lists and ads element by element."""
    if got["type"] != want["type"]:
        return False
    g, w = got["value"], want["value"]
    if want["type"] in ("real", "reltime"):
        return _same_real(g, w)
    if want["type"] == "list":
        return len(g) == len(w) and all(same(a, b) for a, b in zip(g, w))
    if want["type"] == "classad":
        lowered = {k.lower(): v for k, v in w.items()}
        return {k.lower() for k in g} == set(lowered) and all(
            same(v, lowered[k.lower()]) for k, v in g.items())
    return g == w


def _same_real(g, w) -> bool:
    specials = {"inf": math.inf, "-inf": -math.inf}
    if w == "nan":
        return isinstance(g, float) and math.isnan(g)
    w = specials.get(w, w)
    if not isinstance(g, float):
        return False
    if math.isinf(w) or math.isnan(g) or math.isinf(g):
        return g == w
    return abs(g - w) <= 1e-9 * max(abs(g), abs(w))
