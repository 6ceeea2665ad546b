"""Job launches spread over reactor turns.

A schedd that got hundreds of matches at once sends as many ACTIVATEs together, and
each launch (sandbox, inputs, ad files, the fork) takes the startd's reactor for some
milliseconds. Started all in one turn, they would hold every other request (keep-alives,
a vacate, a health check) for seconds; here one job starts per reactor turn, and what
arrived meanwhile is answered between two launches. A launch with nothing before it in
its turn starts at once, so a lone job waits for nothing. The next launch is a
``callLater(0)``, which Twisted's reactor runs in its next turn, after polling its
connections.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from twisted.internet.defer import Deferred, maybeDeferred


# Mutable: the launches waiting for their turn.
class LaunchQueue:
    """Starts at most one launch per turn of ``clock`` (the reactor), in arrival order."""

    def __init__(self, clock) -> None:
        self.clock = clock
        self._waiting: deque[tuple[Callable[[], Deferred], Deferred]] = deque()
        self._turn = None  # the call that ends this turn's launch, while one is due

    def __len__(self) -> int:
        """How many launches wait for a later turn."""
        return len(self._waiting)

    def launch(self, start: Callable[[], Deferred]) -> Deferred:
        """Call ``start`` now if nothing started this turn, else in a later turn; the
        Deferred fires with what ``start``'s does."""
        if self._turn is None:
            self._turn = self.clock.callLater(0, self._next)
            return maybeDeferred(start)
        done: Deferred = Deferred()
        self._waiting.append((start, done))
        return done

    def _next(self) -> None:
        self._turn = None
        if not self._waiting:
            return
        start, done = self._waiting.popleft()
        self._turn = self.clock.callLater(0, self._next)
        maybeDeferred(start).chainDeferred(done)


__all__ = ["LaunchQueue"]
