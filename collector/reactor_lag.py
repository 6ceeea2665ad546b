"""How long the collector's reactor is held: a tick every 20 ms notes how late it ran
(wall time, which also counts the machine being busy with other processes) and how
much CPU the reactor's thread used since the last tick (work that held the reactor,
whatever the machine's load). Both go to histograms and a maximum on ``/metrics``, so
a stall is seen where it happens instead of guessed from a client's latency."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Gauge, Histogram
from twisted.internet import task

#: How often the tick is due.
TICK_SECONDS = 0.02
#: Histogram buckets, in seconds: a reactor must never be held past 0.1 s.
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


class ReactorLag:
    """The tick and its metrics. ``cpu_seconds`` reads the reactor thread's CPU time
    (``time.thread_time`` in the daemon); ``clock`` is the reactor."""

    def __init__(self, clock, cpu_seconds: Callable[[], float], registry: CollectorRegistry) -> None:
        self._clock = clock
        self._cpu_seconds = cpu_seconds
        self.lag = Histogram("roost_collector_reactor_lag_seconds",
                             "How late each 20 ms tick of the reactor ran (wall time)", buckets=BUCKETS,
                             registry=registry)
        self.busy = Histogram("roost_collector_reactor_busy_seconds",
                              "CPU time the reactor's thread used between two 20 ms ticks", buckets=BUCKETS,
                              registry=registry)
        self.lag_max = Gauge("roost_collector_reactor_lag_max_seconds", "Latest any tick ran since start",
                             registry=registry)
        self.busy_max = Gauge("roost_collector_reactor_busy_max_seconds",
                              "Most CPU the reactor's thread used between two ticks since start", registry=registry)
        self._loop = task.LoopingCall(self._tick)
        self._loop.clock = clock
        self._due = self._cpu = None
        self._latest = self._busiest = 0.0

    def start(self) -> None:
        """Start ticking."""
        self._due, self._cpu = self._clock.seconds(), self._cpu_seconds()
        self._loop.start(TICK_SECONDS, now=False)

    def stop(self) -> None:
        """Stop ticking (nothing left on the clock)."""
        if self._loop.running:
            self._loop.stop()

    def _tick(self) -> None:
        now, cpu = self._clock.seconds(), self._cpu_seconds()
        self.note(now - self._due - TICK_SECONDS, cpu - self._cpu)
        self._due, self._cpu = now, cpu

    def note(self, late: float, busy: float) -> None:
        """Record one tick ``late`` seconds after it was due, ``busy`` CPU seconds after the last."""
        late = max(0.0, late)
        self.lag.observe(late)
        self.busy.observe(busy)
        self._latest, self._busiest = max(self._latest, late), max(self._busiest, busy)
        self.lag_max.set(self._latest)
        self.busy_max.set(self._busiest)
