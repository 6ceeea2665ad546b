"""The submit code's one doorway into the ClassAd package: parsing expression text
and turning submit values into ClassAd ones."""

from __future__ import annotations

import functools

import classad
from classad import nodes

ExprTree = classad.ExprTree
ClassAd = classad.ClassAd


def parse_error(text: str) -> str | None:
    """None when ``text`` parses as an expression, else the parser's complaint."""
    try:
        ExprTree(text)
    except ValueError as exc:
        return str(exc).splitlines()[0]
    return None


@functools.lru_cache(maxsize=8192)
def tree(text: str) -> "ExprTree":
    """The parsed expression for ``text`` (parsed once per distinct text)."""
    return ExprTree(text)


def canonical(text: str) -> str:
    """The compact unparse of an expression's text."""
    return str(tree(text))


def own_references(text: str) -> set[str]:
    """Lower-cased names an expression refers to in its own ad (bare or ``MY.``), as
    HTCondor's GetExprReferences reports them; ``TARGET.`` references are left out."""
    return {name.lower() for name in ClassAd().externalRefs(tree(text))
            if not name.lower().startswith("target.")}


def binds_looser_than_and(text: str) -> bool:
    """True when ``text`` must be parenthesised before ``&& clause`` is appended to it
    (its outermost operator is ``||`` or a conditional), as WrapExprTreeInParensForOp does."""
    node = tree(text).node
    kind = type(node)
    return kind in (nodes.Ternary, nodes.Elvis) or (kind is nodes.Binary and node.op == "||")
