"""Matching two ads the way the negotiator does: each side's Requirements and Rank
evaluated with MY bound to that side and TARGET to the other."""

from __future__ import annotations

from classad.evaluate import evaluate_key
from classad.values import ERROR


def evaluate_against(ad, attr: str, other):
    """The value of ``ad``'s ``attr`` with MY = ``ad`` and TARGET = ``other``."""
    return ad.evaluate(attr, other)


def requirements_accept(ad, other) -> bool:
    """True when ``ad``'s Requirements, evaluated against ``other``, are true: boolean
    true or a non-zero number; anything else (UNDEFINED, ERROR, strings) is no."""
    value = evaluate_key(ad, "requirements", other)
    t = type(value)
    if t is bool:
        return value
    if t is int or t is float:
        return value != 0
    return False


def symmetric_match(left, right) -> bool:
    return requirements_accept(left, right) and requirements_accept(right, left)


def rank(ad, other) -> float:
    """``ad``'s Rank of ``other`` as a number; a missing or non-numeric Rank is 0.0."""
    value = evaluate_key(ad, "rank", other)
    t = type(value)
    if t is int or t is float or t is bool:
        return float(value)
    return 0.0


__all__ = ["evaluate_against", "requirements_accept", "symmetric_match", "rank", "ERROR"]
