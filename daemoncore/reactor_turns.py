"""Work split over reactor turns: one slice per turn, so a daemon answers other
requests between slices of a long piece of work it must do on the reactor."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from twisted.internet.defer import Deferred


def turn_by_turn(clock, step: Callable[[int], None], starts: Iterable[int]) -> Deferred:
    """Call ``step(start)`` for each of ``starts``, the first now and each next one in a
    later reactor turn (``clock.callLater(0)``); fires None in the turn of the last
    step, or fails with the first exception a step raises (no later step runs)."""
    done: Deferred = Deferred()
    pending = iter(starts)

    def run(start) -> None:
        try:
            step(start)
        except Exception as exc:  # noqa: BLE001 - handed to the caller's errback
            done.errback(exc)
            return
        following = next(pending, None)
        if following is None:
            done.callback(None)
        else:
            clock.callLater(0, run, following)

    first = next(pending, None)
    if first is None:
        done.callback(None)
    else:
        run(first)
    return done
