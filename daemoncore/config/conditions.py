"""Evaluate the test of an ``if``/``elif`` line once its ``$(...)`` references are expanded.

Accepted tests, optionally negated with a leading ``!``:

- ``defined NAME``: NAME is set to a non-empty value (so far in the reading);
- ``version OP X.Y[.Z]`` with OP one of ``== != < <= > >=`` (no OP means ``==``):
  compares with Roost's version;
- a boolean word: ``true``/``false``/``yes``/``no``/``1``/``0`` (any case).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable

from daemoncore.config.conversions import BOOLEAN_WORDS
from daemoncore.config.errors import ConfigError

EXPECTED_CONDITION = "expected 'defined NAME', 'version >= X.Y' or true/false"

_VERSION_TEST = re.compile(r"version\s*(==|!=|<=|>=|<|>)?\s*(\d+(?:\.\d+)*)", re.IGNORECASE)
_DEFINED_TEST = re.compile(r"defined\s+(\S+)", re.IGNORECASE)
_COMPARE: dict[str, Callable[[tuple, tuple], bool]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt,
    "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}


def evaluate_condition(text: str, is_defined: Callable[[str], bool], version: Callable[[], str]) -> bool:
    """Decide an expanded ``if`` test; ``is_defined`` says whether a name has a value and
    ``version`` gives Roost's version (asked only by a version test).

    Raises:
        ConfigError: the test is none of the accepted forms (no location; the reader adds it).
    """
    test = text.strip()
    if test.startswith("!"):
        return not evaluate_condition(test[1:], is_defined, version)
    if match := _DEFINED_TEST.fullmatch(test):
        return is_defined(match.group(1))
    if match := _VERSION_TEST.fullmatch(test):
        compare = _COMPARE[match.group(1) or "=="]
        return compare(_version_tuple(version()), _version_tuple(match.group(2)))
    word = test.lower()
    if word in BOOLEAN_WORDS:
        return BOOLEAN_WORDS[word]
    raise ConfigError(f"cannot decide 'if {test}': {EXPECTED_CONDITION}")


_MAX_VERSION_DIGITS = 30


def _version_tuple(text: str) -> tuple[int, ...]:
    """``8.1`` -> ``(8, 1, 0)``: pad so that ``8.1`` equals ``8.1.0``."""
    found = re.findall(r"\d+", text)
    if any(len(p) > _MAX_VERSION_DIGITS for p in found):
        raise ConfigError(f"cannot decide 'if version ... {text[:40]}': a version number part "
                          f"has more than {_MAX_VERSION_DIGITS} digits")
    parts = [int(p) for p in found]
    return tuple(parts + [0] * (3 - len(parts)))
