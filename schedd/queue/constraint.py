"""Job constraints: an expression compiled once per query into a predicate that is
true for a job ad only when the expression evaluates to boolean true in it."""

from __future__ import annotations

from collections.abc import Callable

from classad import ClassAd, ExprTree
from schedd.errors import BadConstraintError

#: Longer constraint texts are refused before parsing.
MAX_CONSTRAINT_CHARS = 64 * 1024

Predicate = Callable[[ClassAd], bool]


def _always(_ad: ClassAd) -> bool:
    return True


def compile_constraint(text: "str | ExprTree | None") -> Predicate:
    """The predicate for ``text``; None, empty or ``true`` matches every job.

    Raises:
        BadConstraintError: the text is too long or does not parse (with the
            parser's line, column and caret).
    """
    if isinstance(text, ExprTree):
        tree = text
    else:
        if text is None or text.strip().lower() in ("", "true"):
            return _always
        if len(text) > MAX_CONSTRAINT_CHARS:
            raise BadConstraintError(f"constraint of {len(text)} characters is longer than {MAX_CONSTRAINT_CHARS}")
        try:
            tree = ExprTree(text)
        except ValueError as exc:
            raise BadConstraintError(f"constraint {text!r} does not parse: {exc}") from None

    def matches(ad: ClassAd) -> bool:
        return tree.evaluate(ad) is True

    return matches


def is_everything(predicate: Predicate) -> bool:
    """Whether the predicate matches every ad without looking at it."""
    return predicate is _always
