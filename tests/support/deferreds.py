"""Reading the outcome of a Deferred that has already fired, in tests that drive
Twisted code with a fake clock instead of a running reactor."""

from __future__ import annotations

from typing import Any


def resolved(value: Any) -> Any:
    """The result of an already-fired Deferred (or ``value`` itself if it is not one);
    a failure is raised. ValueError from the unpacking if it has not fired."""
    if not hasattr(value, "addBoth"):
        return value
    results = []
    value.addBoth(results.append)
    [result] = results
    if hasattr(result, "raiseException"):
        result.raiseException()
    return result
