"""Tests for collector.reactor_lag, driven by task.Clock and a stand-in CPU clock."""

from prometheus_client import CollectorRegistry
from twisted.internet.task import Clock

from collector.reactor_lag import TICK_SECONDS, ReactorLag


def sample(registry, name, **labels):
    return registry.get_sample_value(name, labels or None)


def test_a_late_tick_and_a_busy_reactor_are_recorded_with_their_maxima():
    """A tick that runs 0.3 s late after 0.25 s of the reactor's CPU shows in both
    histograms' buckets and in the maxima; on-time ticks raise neither maximum."""
    clock, cpu, registry = Clock(), [0.0], CollectorRegistry()
    lag = ReactorLag(clock, lambda: cpu[0], registry)
    lag.start()
    for _ in range(5):
        cpu[0] += 0.001
        clock.advance(TICK_SECONDS)
    assert sample(registry, "roost_collector_reactor_lag_max_seconds") < 1e-9
    cpu[0] += 0.25
    clock.advance(TICK_SECONDS + 0.3)
    assert abs(sample(registry, "roost_collector_reactor_lag_max_seconds") - 0.3) < 1e-9
    assert abs(sample(registry, "roost_collector_reactor_busy_max_seconds") - 0.25) < 1e-9
    assert sample(registry, "roost_collector_reactor_lag_seconds_bucket", le="0.25") == 5
    assert sample(registry, "roost_collector_reactor_lag_seconds_bucket", le="0.5") == 6
    assert sample(registry, "roost_collector_reactor_busy_seconds_bucket", le="0.1") == 5
    lag.stop()
    assert clock.getDelayedCalls() == []
