"""Work split over reactor turns: one slice per turn, so a daemon answers other
requests between slices of a long piece of work it must do on the reactor."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from twisted.internet.defer import Deferred


def turn_by_turn(clock, step: Callable[[int], None], starts: Iterable[int]) -> Deferred:
    """Call ``step(start)`` for each of ``starts``, the first now and each next one in a
    later reactor turn (``clock.callLater(0)``); fires None after the last, or fails
    with the first exception a step raises (no later step runs)."""
    done: Deferred = Deferred()
    pending = iter(starts)

    def next_step() -> None:
        start = next(pending, None)
        if start is None:
            done.callback(None)
            return
        try:
            step(start)
        except Exception as exc:  # noqa: BLE001 - handed to the caller's errback
            done.errback(exc)
            return
        clock.callLater(0, next_step)

    next_step()
    return done
