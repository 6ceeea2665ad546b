"""Constraints: ClassAd expression text compiled into a predicate that is true for an
ad only when the expression evaluates to boolean true in it.

This is the one constraint compiler of Roost: the collector's queries and
invalidations, the schedd's queue and history queries and its job selections all use
:func:`compile_constraint`, so they agree on what a constraint means and on how a bad
one is refused. A text is parsed and compiled once; the compiled predicates of the
most recent distinct texts are kept, because daemons see the same few constraints
(``Owner == "alice"``, ``JobStatus == 1``) again and again.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from classad.errors import ConstraintError
from classad.evaluate import compile_expression
from classad.exprtree import ExprTree

#: Longer constraint texts are refused before parsing.
MAX_CONSTRAINT_CHARS = 64 * 1024

#: How many distinct constraint texts keep their compiled predicate.
CACHED_CONSTRAINTS = 256

Predicate = Callable[[object], bool]


def _always(_ad: object) -> bool:
    return True


def compile_constraint(text: "str | ExprTree | None") -> Predicate:
    """The predicate for constraint ``text`` (or an already parsed expression);
    None, empty or ``true`` matches every ad without looking at it.

    The predicate answers False, never raises, when evaluating the expression fails
    in some ad (nesting too deep for the interpreter, or any other failure): such an
    ad does not match, as one where the expression is ERROR.

    Raises:
        ConstraintError: ``text`` is too long, does not parse (the message carries the
            parser's line, column and caret) or nests too deeply to compile.
    """
    if isinstance(text, ExprTree):
        return _predicate(text.node, str(text))
    if text is None or text.strip().lower() in ("", "true"):
        return _always
    if len(text) > MAX_CONSTRAINT_CHARS:
        raise ConstraintError(f"constraint of {len(text)} characters is longer than {MAX_CONSTRAINT_CHARS}")
    return _compiled_text(text)


def is_everything(predicate: Predicate) -> bool:
    """Whether ``predicate`` matches every ad without looking at it."""
    return predicate is _always


@functools.lru_cache(maxsize=CACHED_CONSTRAINTS)
def _compiled_text(text: str) -> Predicate:
    try:
        node = ExprTree(text).node
    except ValueError as exc:  # ClassAdParseError
        raise ConstraintError(f"constraint {text!r} does not parse: {exc}") from None
    except RecursionError:
        raise ConstraintError(f"constraint of {len(text)} characters nests too deeply") from None
    return _predicate(node, text)


def _predicate(node, text: str) -> Predicate:
    try:
        evaluate = compile_expression(node)
    except RecursionError:
        raise ConstraintError(f"constraint of {len(text)} characters nests too deeply") from None

    def matches(ad: object) -> bool:
        try:
            return evaluate(ad) is True
        except Exception:  # an evaluation failure is a non-match, as ERROR is
            return False

    return matches
