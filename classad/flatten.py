"""Partial evaluation: replace what an ad can resolve by its value."""

from __future__ import annotations

from classad import expr as e
from classad.evaluate import evaluate
from classad.references import _children, _walk, references


def _fully_resolved(ad, node) -> bool:
    found: list = []
    _walk(node, found)
    if not found:
        return True
    return not references(ad, node)[1]


def flatten_node(ad, node):
    """``node`` with every sub-expression that ``ad`` resolves replaced by its value."""
    if type(node) is e.Literal:
        return node
    if _fully_resolved(ad, node):
        value = evaluate(node, ad)
        from classad.convert import python_to_node
        if type(value) is list or hasattr(value, "_attrs"):
            return python_to_node(value)
        return e.Literal(value)
    t = type(node)
    if t is e.Binary:
        return e.Binary(node.op, flatten_node(ad, node.left), flatten_node(ad, node.right), node.depth)
    if t is e.Unary:
        return e.Unary(node.op, flatten_node(ad, node.operand), node.depth)
    if t is e.Paren:
        return e.Paren(flatten_node(ad, node.inner), node.depth)
    if t is e.Ternary:
        return e.Ternary(*(flatten_node(ad, c) for c in _children(node)), depth=node.depth)
    if t is e.Call:
        return e.Call(node.name, tuple(flatten_node(ad, a) for a in node.args), depth=node.depth)
    return node


def flatten(ad, expr):
    from classad.exprtree import ExprTree
    from classad.references import _node_of

    return ExprTree._wrap(flatten_node(ad, _node_of(expr)))
