"""Constraints: a ClassAd expression compiled once per query into a predicate that
is true for an ad only when the expression evaluates to boolean true in it."""

from __future__ import annotations

from collections.abc import Callable

from collector.errors import ConstraintError

MAX_CONSTRAINT_CHARS = 64 * 1024

Predicate = Callable[[object], bool]


def _always(_ad: object) -> bool:
    return True


def compile_constraint(text: str | None) -> Predicate:
    """The predicate for constraint ``text``; empty or ``true`` matches every ad.

    Raises:
        ConstraintError: ``text`` is too long or does not parse; the message carries
            the parser's line, column and caret.
    """
    if text is None or text.strip().lower() in ("", "true"):
        return _always
    if len(text) > MAX_CONSTRAINT_CHARS:
        raise ConstraintError(f"constraint of {len(text)} characters is longer than {MAX_CONSTRAINT_CHARS}")
    import classad

    try:
        tree = classad.ExprTree(text)
    except ValueError as exc:  # classad's ClassAdParseError is a ValueError
        raise ConstraintError(f"constraint {text!r} does not parse: {exc}") from None
    except RecursionError:
        raise ConstraintError(f"constraint of {len(text)} characters nests too deeply") from None

    evaluate = classad.compile_expression(tree)

    def matches(ad: object) -> bool:
        return evaluate(ad) is True

    return matches
