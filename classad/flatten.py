"""Partial evaluation: replace what an ad can resolve by its value."""

from __future__ import annotations

from classad import nodes as e
from classad.convert import python_to_node
from classad.evaluate import evaluate
from classad.exprtree import ExprTree
from classad.references import _children, _node_of, _walk, references


def _fully_resolved(ad, node) -> bool:
    found: list = []
    _walk(node, found)
    if not found:
        return True
    return not references(ad, node)[1]


def _value_node(ad, node):
    """The value of a fully resolved ``node`` as a literal tree."""
    value = evaluate(node, ad)
    if type(value) is list or hasattr(value, "_attrs"):
        return python_to_node(value)
    return e.Literal(value)


def flatten_node(ad, node):
    """``node`` with every sub-expression that ``ad`` resolves replaced by its value."""
    if type(node) is e.Literal:
        return node
    if _fully_resolved(ad, node):
        return _value_node(ad, node)
    t = type(node)
    if t is e.Binary:
        return _flatten_chain(ad, node)
    if t is e.Unary:
        return e.Unary(node.op, flatten_node(ad, node.operand), node.depth)
    if t is e.Paren:
        return e.Paren(flatten_node(ad, node.inner), node.depth)
    if t is e.Ternary:
        return e.Ternary(*(flatten_node(ad, c) for c in _children(node)), depth=node.depth)
    if t is e.Call:
        return e.Call(node.name, tuple(flatten_node(ad, a) for a in node.args), depth=node.depth)
    return node


def _flatten_chain(ad, node: e.Binary):
    """A chain of binary operators flattened in a loop: its longest fully resolved
    prefix becomes one value, the operands after it are flattened one by one."""
    first, rest = e.left_spine(node)
    prefixes = []
    while type(node) is e.Binary:
        prefixes.append(node)
        node = node.left
    prefixes.reverse()
    resolved = 0
    if _fully_resolved(ad, first):
        for _, right in rest:
            if not _fully_resolved(ad, right):
                break
            resolved += 1
    out = _value_node(ad, prefixes[resolved - 1]) if resolved else flatten_node(ad, first)
    for op, right in rest[resolved:]:
        flat = flatten_node(ad, right)
        out = e.Binary(op, out, flat, e.binary_depth(out, flat))
    return out


def flatten(ad, expr):
    return ExprTree.from_node(flatten_node(ad, _node_of(expr)))
