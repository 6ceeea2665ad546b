"""Waiting on a condition instead of sleeping a fixed time: polled until it holds or
a deadline passes, then failing with what was awaited. One blocking form for tests
that drive daemons from outside, one for tests running on the real reactor."""

from __future__ import annotations

import inspect
import os
import time
from typing import Any, Callable

from twisted.internet import defer, task

#: How long a condition may take before the test fails (daemons start in about a second).
DEADLINE = 30.0


def wait_for(predicate: Callable[[], Any], seconds: float = DEADLINE, what: str = "the condition",
             step: float = 0.1) -> Any:
    """Call ``predicate`` every ``step`` seconds until it returns something truthy,
    and return that; AssertionError naming ``what`` after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what} did not happen within {seconds}s")
        time.sleep(step)


def address_in(path) -> str | None:
    """The address a daemon wrote to ``path`` (without its angle brackets), or None
    while the file is missing or still empty."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read().strip().strip("<>")
    except FileNotFoundError:
        return None
    return text or None


def read_address(path, seconds: float = DEADLINE) -> str:
    """The address a starting daemon writes to ``path``, once it is there."""
    return wait_for(lambda: address_in(path), seconds, f"{os.fspath(path)} appearing")


async def wait_until(reactor, predicate: Callable[[], Any], what: str, seconds: float = DEADLINE,
                     step: float = 0.05) -> Any:
    """Like ``wait_for``, for a test running on ``reactor``: polls without blocking it,
    and ``predicate`` may return a Deferred or a coroutine, whose result is tested."""
    deadline = reactor.seconds() + seconds
    while True:
        value = predicate()
        if isinstance(value, defer.Deferred) or inspect.iscoroutine(value):
            value = await value
        if value:
            return value
        if reactor.seconds() >= deadline:
            raise AssertionError(f"{what} did not happen within {seconds}s")
        await task.deferLater(reactor, step, lambda: None)
