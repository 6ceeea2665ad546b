"""Which attributes an expression refers to, and which of them an ad defines."""

from __future__ import annotations

from classad import nodes as e
from classad.evaluate import find_entry
from classad.parser import parse_expression


def _walk(node, out: list) -> None:
    """Append ``(scope_word_or_None, name_path)`` for each attribute reference, in
    the order they are written (a loop over an explicit stack: long chains of
    operators do not recurse)."""
    stack = [node]
    while stack:
        node = stack.pop()
        t = type(node)
        if t is e.AttrRef:
            out.append((None, node.name))
        elif t is e.Select:
            base = node.base
            if type(base) is e.AttrRef and base.name.lower() in ("my", "target", "parent", "self"):
                out.append((base.name.lower(), node.name))
            elif type(base) is e.AttrRef:
                out.append((None, f"{base.name}.{node.name}"))
            else:
                stack.append(base)
        elif t is not e.Literal:
            stack.extend(reversed(_children(node)))


def _children(node):
    t = type(node)
    if t is e.Subscript:
        return (node.base, node.index)
    if t is e.Unary:
        return (node.operand,)
    if t is e.Binary or t is e.Elvis:
        return (node.left, node.right)
    if t is e.Ternary:
        return (node.cond, node.then, node.otherwise)
    if t is e.Paren:
        return (node.inner,)
    if t is e.ListExpr or t is e.Call:
        return node.items if t is e.ListExpr else node.args
    if t is e.RecordExpr:
        return tuple(x for _, x in node.entries)
    return ()


def _dedupe(names):
    seen, out = set(), []
    for n in names:
        if n.lower() not in seen:
            seen.add(n.lower())
            out.append(n)
    return out


def references(ad, expr) -> tuple[list[str], list[str]]:
    """``(internal, external)`` references of ``expr`` (text or tree) against ``ad``."""
    node = _node_of(expr)
    found: list = []
    _walk(node, found)
    internal, external = [], []
    for word, name in found:
        if word == "target":
            external.append(f"TARGET.{name}")
            continue
        first = name.split(".")[0]
        entry, _ = find_entry(ad, first.lower())
        (internal if entry is not None else external).append(name)
    return _dedupe(internal), _dedupe(external)


def unresolved_names(ad, expr) -> list[str]:
    """References in ``expr`` that ``ad`` (and its enclosing ads) cannot resolve,
    unscoped ones first, then those on the other side (``TARGET.``)."""
    found: list = []
    _walk(expr, found)
    mine, theirs = [], []
    for word, name in found:
        if word == "target":
            theirs.append(name)
            continue
        first = name.split(".")[0]
        if find_entry(ad, first.lower())[0] is None:
            mine.append(name)
    return _dedupe(sorted(mine, key=str.lower) + theirs)


def _node_of(expr):
    from classad.exprtree import ExprTree

    if isinstance(expr, ExprTree):
        return expr._node
    if isinstance(expr, str):
        return parse_expression(expr)
    return expr
