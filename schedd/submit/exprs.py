"""The submit code's one doorway into the ClassAd package: parsing expression text
and turning submit values into ClassAd ones."""

from __future__ import annotations

import functools

import classad

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
