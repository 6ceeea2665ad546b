"""Screening a query's constraint against the plain values of stored ads, so that a
query of 100,000 ads evaluates the full ClassAd expression only where it must.

A constraint whose top level is ``&&`` of comparisons ``Attr op literal`` (``State ==
"Unclaimed"``, ``Cpus >= 16``) is true in an ad only when each comparison is; each is
decided with the ClassAd language's own comparison on the ad's literal value of
``Attr``, read from a table built once when the ad arrives. An ad failing one is
skipped; an ad passing all of a constraint made only of them matches; anything else
(the attribute is an expression, or the constraint has other parts) is evaluated in
full as before. So the answer is always exactly the full constraint's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from attrs import frozen

from classad import ExprTree, Value, compile_constraint, is_everything
from classad.nodes import AttrRef, Binary, Literal, Paren
from classad.operators import COMPARISON, compare
from classad.values import wrap_int

#: Distinct constraint texts whose screen is kept (daemons repeat a few constraints).
CACHED_SCREENS = 256

_EXPR_PREFIX = "/Expr("
_EXPR_SUFFIX = ")/"
_SCOPES = frozenset({"my", "target", "self", "parent"})
_MIRRORED = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def literal_values(wire: dict) -> dict[str, object]:
    """The ClassAd value of each attribute of a JSON ad whose value is a literal, by
    lower-case name (a later spelling wins, as when the ad is parsed); expressions,
    lists and nested ads are left out."""
    values: dict[str, object] = {}
    for name, value in wire.items():
        kind = type(value)
        if kind is str:
            if value.startswith(_EXPR_PREFIX) and value.endswith(_EXPR_SUFFIX):
                values.pop(name.lower(), None)
                continue
        elif kind is int:
            value = wrap_int(value)
        elif value is None:
            value = Value.Undefined
        elif kind is not bool and kind is not float:
            values.pop(name.lower(), None)
            continue
        values[name.lower()] = value
    return values


@frozen
class Screen:
    """A compiled constraint with its comparisons of attributes to literals."""

    predicate: Callable[[object], bool]
    #: (lower-case attribute name, operator, literal value), each a conjunct of the constraint.
    tests: tuple[tuple[str, str, object], ...]
    #: Whether the constraint is exactly the conjunction of ``tests``.
    complete: bool
    #: The constraint's text: what stored ads keep their :meth:`screened` verdicts under.
    text: str = ""

    @property
    def everything(self) -> bool:
        """Whether every ad matches without looking at it."""
        return is_everything(self.predicate)

    def matches(self, ad: object, values: dict[str, object]) -> bool:
        """Whether the constraint is true in ``ad``, whose literal values are ``values``."""
        verdict = self.screened(values)
        return self.predicate(ad) if verdict is None else verdict

    def screened(self, values: dict[str, object]) -> bool | None:
        """What the tests alone tell of an ad whose literal values are ``values``: False
        when one fails, True when all hold and are the whole constraint, None when only
        evaluating the constraint in the ad can tell. It depends on ``values`` only (never
        on the time or the ad's expressions), so an ad may keep it while it is stored."""
        decided = True
        for name, op, literal in self.tests:
            if name in values:
                if compare(op, values[name], literal) is not True:
                    return False
            else:
                decided = False
        return True if decided and self.complete else None


@functools.lru_cache(maxsize=CACHED_SCREENS)
def screen_for(text: str) -> Screen:
    """The screen of constraint ``text``.

    Raises:
        ConstraintError: as :func:`classad.compile_constraint` does.
    """
    predicate = compile_constraint(text)
    if is_everything(predicate):
        return Screen(predicate, (), True, text)
    conjuncts = _conjuncts(ExprTree(text).node)
    tests = tuple(test for test in map(_comparison, conjuncts) if test is not None)
    return Screen(predicate, tests, len(tests) == len(conjuncts), text)


def _conjuncts(node) -> list:
    """The operands of the top-level ``&&`` chain of ``node``, parentheses dropped."""
    while type(node) is Paren:
        node = node.inner
    if type(node) is Binary and node.op == "&&":
        return _conjuncts(node.left) + _conjuncts(node.right)
    return [node]


def _comparison(node) -> tuple[str, str, object] | None:
    """``(name, op, value)`` for ``Attr op literal`` or ``literal op Attr``, else None."""
    if type(node) is not Binary or node.op not in COMPARISON:
        return None
    left, right, op = _bare(node.left), _bare(node.right), node.op
    if type(left) is Literal and type(right) is AttrRef:
        left, right, op = right, left, _MIRRORED[op]
    if type(left) is not AttrRef or type(right) is not Literal or left.absolute:
        return None
    if left.name.lower() in _SCOPES:
        return None
    return left.name.lower(), op, right.value


def _bare(node):
    while type(node) is Paren:
        node = node.inner
    return node
