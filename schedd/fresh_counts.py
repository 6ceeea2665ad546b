"""The queue's job counts for the schedd's ads, counted off the reactor.

Counting 100,000 jobs reads megabytes of index, so the count runs in a worker thread,
one at a time. A caller always gets a count begun after it asked (an ad sent after a
submit must show the submitted jobs), and the callers that ask while one runs share
the next: a burst of queue changes costs two counts, not one per change.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

T = TypeVar("T")


class FreshCounts(Generic[T]):
    """``count()`` run through ``run_blocking`` (a worker thread), one count at a time.

    :param count: the blocking count
    :param run_blocking: runs ``count`` and returns a Deferred of its result
    """

    def __init__(self, count: Callable[[], T], run_blocking: Callable[..., Deferred]) -> None:
        self._count = count
        self._run_blocking = run_blocking
        self._waiting: list[Deferred] = []
        self._counting = False
        #: The last count made (None before the first).
        self.latest: T | None = None

    def __call__(self) -> Deferred:
        """A Deferred of a count begun after this call (or its failure)."""
        waiter: Deferred = Deferred()
        self._waiting.append(waiter)
        if not self._counting:
            self._start()
        return waiter

    def _start(self) -> None:
        waiting, self._waiting = self._waiting, []
        self._counting = True
        counting = self._run_blocking(self._count)
        counting.addBoth(self._counted, waiting)

    def _counted(self, result: T | Failure, waiting: list[Deferred]) -> None:
        self._counting = False
        if not isinstance(result, Failure):
            self.latest = result
        if self._waiting:
            self._start()
        for waiter in waiting:
            if isinstance(result, Failure):
                waiter.errback(result)
            else:
                waiter.callback(result)
