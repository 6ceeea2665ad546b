"""How long answers share a daemon's reactor: streams run as cooperative tasks, and
after a turn that ran long (one slow step, such as a constraint evaluated in one ad
of a hostile query) the reactor is left alone as long again, so a request arriving
meanwhile, which needs a few reactor turns (accept, read, write), is answered at once."""

from __future__ import annotations

from twisted.internet import task

#: How long one turn of the streams runs steps before it gives the reactor back.
TURN_SECONDS = 0.01
#: A turn of the streams longer than this is followed by a pause as long as the turn.
SLOW_TURN_SECONDS = 0.02
#: The longest such pause.
MAX_PAUSE_SECONDS = 0.5


def pause_after(turn_seconds: float) -> float:
    """How long the streams wait after a turn of ``turn_seconds``: nothing after a
    quick turn, as long again after a slow one (at most ``MAX_PAUSE_SECONDS``)."""
    if turn_seconds <= SLOW_TURN_SECONDS:
        return 0.0
    return min(turn_seconds, MAX_PAUSE_SECONDS)


def sharing_cooperator(clock) -> task.Cooperator:
    """A ``Cooperator`` on ``clock`` (the reactor) that spends at most about half of
    the reactor's time on streams whose single steps are slow, and all the time it
    can on streams whose steps are quick."""
    turn: dict[str, float | None] = {"started": None}

    def schedule(tick):
        started = turn["started"]
        delay = 0.0 if started is None else pause_after(clock.seconds() - started)

        def run() -> None:
            turn["started"] = clock.seconds()
            try:
                tick()
            finally:
                turn["started"] = None

        return clock.callLater(delay, run)

    def turn_is_over():
        began = clock.seconds()
        return lambda: clock.seconds() - began >= TURN_SECONDS

    return task.Cooperator(scheduler=schedule, terminationPredicateFactory=turn_is_over)
