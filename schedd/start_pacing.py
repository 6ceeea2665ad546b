"""The schedd's job starts spread over reactor turns (in the spirit of HTCondor's
``JOB_START_COUNT``/``JOB_START_DELAY``).

A negotiation cycle can hand the schedd hundreds of matches in one answer, and their
CLAIM answers come back together: claiming a slot and activating a job each read the
job, write the queue and build a request, a few milliseconds apiece. Done all in one
turn they would hold every other request for seconds; paced here, a burst of starts
runs for at most :data:`TURN_BUDGET` per turn of the reactor, and requests that arrived
meanwhile are answered in between. A start outside a burst runs at once.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from twisted.logger import Logger

_log = Logger()


#: How long the starts of one burst may hold the reactor before the rest wait for a later turn.
TURN_BUDGET = 0.02
#: Starts closer together than this (seconds between one's end and the next one's beginning) are one burst.
BURST_GAP = 0.005


# Mutable: the starts waiting for their turn.
class StartPacing:
    """Runs starts at once while a burst of them has held the reactor (``clock``) for
    less than :data:`TURN_BUDGET`; later ones of the burst wait, in arrival order, for
    the following turns (a ``callLater(0)``, which the reactor runs after polling its
    connections), a budget's worth per turn."""

    def __init__(self, clock) -> None:
        self.clock = clock
        self._waiting: deque[tuple[Callable[..., Any], tuple]] = deque()
        self._turn = None
        self._burst_began: float | None = None
        self._last_end = float("-inf")

    def __len__(self) -> int:
        """How many starts wait for a later turn."""
        return len(self._waiting)

    def run(self, start: Callable[..., Any], *args: Any) -> None:
        """``start(*args)`` now, or in a later turn once this burst used its budget; a
        start that raises is logged and the next one still runs."""
        now = self.clock.seconds()
        if self._burst_began is None or now - self._last_end > BURST_GAP:
            self._burst_began = now
        if self._waiting or now - self._burst_began >= TURN_BUDGET:
            self._waiting.append((start, args))
            if self._turn is None:
                self._turn = self.clock.callLater(0, self._next)
            return
        self._call(start, args)

    def stop(self) -> None:
        """Drop the starts still waiting (the schedd is stopping) and the pending turn."""
        self._waiting.clear()
        if self._turn is not None and self._turn.active():
            self._turn.cancel()
        self._turn = None

    def _next(self) -> None:
        self._turn = None
        self._burst_began = self.clock.seconds()
        while self._waiting and self.clock.seconds() - self._burst_began < TURN_BUDGET:
            start, args = self._waiting.popleft()
            self._call(start, args)
        if self._waiting:
            self._turn = self.clock.callLater(0, self._next)

    def _call(self, start: Callable[..., Any], args: tuple) -> None:
        try:
            start(*args)
        except Exception:
            _log.failure("schedd: starting a job failed")
        finally:
            self._last_end = self.clock.seconds()


__all__ = ["StartPacing"]
