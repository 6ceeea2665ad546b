"""The bounds that keep any expression, ad or text from freezing or crashing a daemon.

Every part of the package that could recurse, build a large value or run a regular
expression reads its bound from here, so that parsing, compiling, evaluating and
printing agree: a tree the parser accepts is one the others can handle.
"""

from __future__ import annotations

#: Deepest nesting the parser accepts. Compiling, evaluating and printing recurse
#: once per level (a left-associative chain such as ``a || b || c`` is walked in a
#: loop and does not count), and a few Python frames per level must stay well under
#: the interpreter's recursion limit wherever the caller already is.
MAX_DEPTH = 200

#: Longest string, in characters, a builtin or an unparse may build (CLASSAD_MAX_STRING).
MAX_STRING = 16 << 20

#: Most elements a list value may hold, nested lists' elements included.
MAX_LIST = 1 << 20

#: Most digits in an integer literal; HTCondor's integers are 64-bit (19 digits),
#: and a longer literal that is still within this bound becomes 0, as in HTCondor.
MAX_INT_DIGITS = 1000

#: Seconds one regular-expression match may take before it evaluates to ERROR
#: (CLASSAD_REGEX_TIMEOUT).
REGEX_TIMEOUT = 0.05


class TooLarge(Exception):
    """Raised inside a builder that would pass :data:`MAX_STRING` or :data:`MAX_LIST`;
    evaluation turns it into ERROR."""


def set_regex_timeout(seconds: float) -> None:
    """Change the time budget of one regular-expression match (CLASSAD_REGEX_TIMEOUT)."""
    global REGEX_TIMEOUT
    if not seconds > 0:
        raise ValueError(f"CLASSAD_REGEX_TIMEOUT must be a positive number of seconds, not {seconds!r}")
    REGEX_TIMEOUT = float(seconds)


def check_length(size: int) -> None:
    """Raise :class:`TooLarge` when a string of ``size`` characters would pass the bound."""
    if size > MAX_STRING:
        raise TooLarge(f"a string of {size} characters is over CLASSAD_MAX_STRING ({MAX_STRING})")
