"""Expression trees: the parsed form of a ClassAd expression.

Nodes are frozen values. The parser builds them, :mod:`classad.unparse` prints them
and :mod:`classad.evaluate` compiles them into closures. ``depth`` is kept on every
node so that pathologically nested input is refused before anything recurses.

A chain of binary operators nests to the left (``a || b || c`` is ``(a || b) || c``);
everything that walks a tree follows that left spine in a loop (:func:`left_spine`),
so a chain's length does not count as depth: a machine list of 5,000 ``||`` terms is
as shallow as its deepest term.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Literal:
    """A constant value."""

    value: object
    depth: int = 1


@attrs.frozen
class AttrRef:
    """A reference to an attribute by name; ``absolute`` for ``.name`` (the root ad)."""

    name: str
    absolute: bool = False
    depth: int = 1


@attrs.frozen
class Select:
    """``base.name``: an attribute of an ad-valued expression."""

    base: object
    name: str
    depth: int = 1


@attrs.frozen
class Subscript:
    """``base[index]``: a list element or an ad's attribute by string."""

    base: object
    index: object
    depth: int = 1


@attrs.frozen
class Unary:
    op: str
    operand: object
    depth: int = 1


@attrs.frozen
class Binary:
    op: str
    left: object
    right: object
    depth: int = 1


@attrs.frozen
class Ternary:
    cond: object
    then: object
    otherwise: object
    depth: int = 1


@attrs.frozen
class Elvis:
    """``left ?: right``: ``right`` only when ``left`` is undefined."""

    left: object
    right: object
    depth: int = 1


@attrs.frozen
class Paren:
    """Parentheses, kept so that the expression prints as it was written."""

    inner: object
    depth: int = 1


@attrs.frozen
class ListExpr:
    items: tuple
    depth: int = 1


@attrs.frozen
class RecordExpr:
    """A nested ad ``[ a = 1; b = a ]``: ``(name, expr)`` pairs, duplicates resolved."""

    entries: tuple
    depth: int = 1


@attrs.frozen
class Call:
    """A function call; ``folded`` holds the value of a call evaluated at parse time
    (``absTime``/``relTime`` of a literal string), else the class's NOT_FOLDED marker."""

    name: str
    args: tuple
    folded: object = None
    is_folded: bool = False
    depth: int = 1


def binary_depth(left, right) -> int:
    """Depth of ``Binary(op, left, right)``: the left operand is walked in a loop."""
    return max(left.depth, right.depth + 1)


def left_spine(node: Binary) -> tuple[object, list[tuple[str, object]]]:
    """``(first, [(op, right), ...])``: the operands of a left-nested chain of binary
    operators in evaluation order, found without recursion."""
    rest = []
    while type(node) is Binary:
        rest.append((node.op, node.right))
        node = node.left
    rest.reverse()
    return node, rest


def is_node(value: object) -> bool:
    """Whether ``value`` is an expression tree node of this module (not a Python value)."""
    return type(value).__module__ == __name__


def depth_of(*children: object) -> int:
    """Depth of a node whose children are ``children``."""
    return 1 + max((c.depth for c in children), default=0)
