"""The concurrency limits a job names (``ConcurrencyLimits = "a,b.x,c:3"``), read the way
HTCondor reads them: names case-insensitive with at most one dot, ``:N`` a positive
weight (default 1). Submit checks them; the negotiator and the startd count them."""

from __future__ import annotations

import math
import re

#: A limit name: letters, digits and underscores, with at most one dot.
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)?$")


class LimitSyntaxError(ValueError):
    """A ConcurrencyLimits string is not a list of ``name[:weight]``."""


def parse_limits(text: str) -> tuple[tuple[str, float], ...]:
    """``"a, B.x, c:3"`` -> ``(("a", 1.0), ("b.x", 1.0), ("c", 3.0))``; names lower-cased.

    Raises:
        LimitSyntaxError: an entry has a bad name, more than one dot, or a weight that
            is not a positive number; the message names the entry.
    """
    return tuple(_entry(e) for e in re.split(r"[,\s]+", text.strip()) if e)


def _entry(entry: str) -> tuple[str, float]:
    name, _, weight_text = entry.partition(":")
    if not NAME.match(name):
        raise LimitSyntaxError(f"concurrency limit {entry!r}: a name is letters, digits and "
                               "underscores with at most one dot (such as license or sw.matlab)")
    if not weight_text:
        return name.lower(), 1.0
    try:
        weight = float(weight_text)
    except ValueError:
        weight = math.nan
    if not math.isfinite(weight) or weight <= 0:
        raise LimitSyntaxError(f"concurrency limit {entry!r}: the weight after ':' must be a "
                               f"positive number, not {weight_text!r}")
    return name.lower(), weight
