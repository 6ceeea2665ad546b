"""Hashable keys for expressions, so that ads whose attributes are alike can be
grouped without evaluating them: a literal is keyed by its value, anything else by
its text. The schedd groups idle jobs into autoclusters with these keys and the
negotiator groups slots the same way, so both sides agree on what "alike" means."""

from __future__ import annotations

from classad.nodes import Literal
from classad.unparse import unparse_expr


class ExpressionTexts:
    """Unparsed text of expression trees, remembered by identity: ads parsed from one
    text (the jobs of one cluster) share their trees, so each is printed once.
    Mutable because it fills as it goes; use one per grouping pass."""

    def __init__(self) -> None:
        self._texts: dict[int, tuple[object, str]] = {}

    def text(self, node) -> str:
        hit = self._texts.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        text = unparse_expr(node)
        self._texts[id(node)] = (node, text)
        return text


def attribute_key(key: str, node, texts: ExpressionTexts) -> tuple:
    """One attribute as a hashable signature part: its literal value, else its text."""
    if type(node) is Literal:
        value = node.value
        return (key, type(value).__name__, value if _hashable(value) else repr(value))
    return (key, "expr", texts.text(node))


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True
