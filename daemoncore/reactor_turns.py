"""Work split over reactor turns: one slice per turn, so a daemon answers other
requests between slices of a long piece of work it must do on the reactor."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from twisted.internet.defer import Deferred


def in_slices(clock, steps: Iterator[object], budget: float,
              timer: Callable[[], float] = time.perf_counter, max_steps: int | None = None,
              started: float | None = None) -> Deferred:
    """Advance ``steps`` (each ``next`` one piece of work) to its end, for at most
    ``budget`` seconds by ``timer`` and at most ``max_steps`` steps per reactor turn, but
    always one step; the first slice now (its budget counted from ``started``, by
    ``timer``, when the work began earlier in this turn) and each next in a later turn
    (``clock.callLater(0)``). Fires with what ``steps`` returned (a generator's
    ``return`` value) in the turn of its last step, or fails with the first exception a
    step raises; a Deferred fired already when one slice was enough."""
    done: Deferred = Deferred()

    def run_slice(since: float | None = None) -> None:
        deadline = (timer() if since is None else since) + budget
        taken = 0
        try:
            while True:
                next(steps)
                taken += 1
                if timer() >= deadline or taken == max_steps:
                    break
        except StopIteration as finished:
            done.callback(finished.value)
            return
        except Exception as exc:  # noqa: BLE001 - handed to the caller's errback
            done.errback(exc)
            return
        clock.callLater(0, run_slice)

    run_slice(started)
    return done
