"""Turn expanded config text into typed values: booleans, numbers, lists and durations."""

from __future__ import annotations

import re

#: HTCondor's boolean words (compared in lower case)
BOOLEAN_WORDS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}

#: Longest whole number accepted (with sign and base prefix); Python refuses to convert
#: more than 4,300 digits, and no knob needs more than a few dozen.
MAX_INT_DIGITS = 100

DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*([smhdw])", re.IGNORECASE)
_LIST_SEPARATOR = re.compile(r"[\s,]+")


def to_bool(text: str) -> bool:
    """``true``/``yes``/``1`` or ``false``/``no``/``0``, any case.

    Raises:
        ValueError: any other text.
    """
    try:
        return BOOLEAN_WORDS[text.strip().lower()]
    except KeyError:
        raise ValueError("expected true/false, yes/no or 1/0") from None


def to_int(text: str) -> int:
    """A whole number (``300``, ``-1``, ``0x10``).

    Raises:
        ValueError: not a whole number.
    """
    compact = text.strip()
    if len(compact) > MAX_INT_DIGITS:
        raise ValueError(f"expected a whole number of at most {MAX_INT_DIGITS} digits, "
                         f"got {len(compact)} characters")
    try:
        return int(compact, 0)
    except ValueError:
        raise ValueError("expected a whole number") from None


def to_float(text: str) -> float:
    """A number such as ``0.5`` or ``1e7``.

    Raises:
        ValueError: not a number.
    """
    try:
        return float(text.strip())
    except ValueError:
        raise ValueError("expected a number") from None


def to_list(text: str) -> list[str]:
    """Items separated by commas and/or whitespace; empty items are dropped."""
    return [item for item in _LIST_SEPARATOR.split(text.strip()) if item]


def to_duration(text: str) -> float:
    """Seconds from ``300``, ``2.5``, ``5m``, ``1h``, ``1d``, ``1h30m`` (units s, m, h, d, w).

    Raises:
        ValueError: not a number of seconds or a sequence of number-unit pairs.
    """
    compact = text.strip()
    try:
        return float(compact)
    except ValueError:
        pass
    if not compact or _DURATION_PART.sub("", compact).strip():
        raise ValueError("expected seconds or a duration such as 30s, 5m, 1h, 1d")
    return sum(float(num) * DURATION_UNITS[unit.lower()] for num, unit in _DURATION_PART.findall(compact))
