"""A clock that runs its ``callLater(0)`` calls as the reactor does: a call scheduled
during a turn waits for the next turn (``task.Clock.advance(0)`` would run it at once)."""

from __future__ import annotations


class TurnClock:
    """``seconds()`` stays at ``now``; ``turn()`` runs the calls pending when it began."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now
        self.pending: list = []

    def seconds(self) -> float:
        return self.now

    def callLater(self, delay, function, *args, **kwargs):  # noqa: N802 - IReactorTime's name
        self.pending.append((function, args, kwargs))

    def turn(self) -> None:
        due, self.pending = self.pending, []
        for function, args, kwargs in due:
            function(*args, **kwargs)
