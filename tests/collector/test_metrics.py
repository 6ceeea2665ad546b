"""Tests for collector.metrics: the pool totals kept by segment are always the totals
of the live Machine ads, through updates, removals and expiry."""

import random

from twisted.internet.task import Clock

from collector.metrics import CollectorMetrics
from collector.pool_totals import pool_totals
from collector.store import AdStore


def test_pool_totals_kept_by_segment_follow_updates_removals_and_expiry():
    """After every round of changes the scraped totals equal pool_totals over the live ads."""
    rng = random.Random(3)
    clock = Clock()
    store = AdStore(clock)
    metrics = CollectorMetrics(store)
    pool = metrics.pool
    for _ in range(10):
        for n in rng.sample(range(300), 60):
            store.update("Machine", None, {"Name": f"s{n}", "State": rng.choice(["Unclaimed", "Claimed"]),
                                           "SlotType": "Static", "Cpus": rng.randint(1, 8),
                                           "ClassAdLifetime": rng.choice([10, 100])})
        store.invalidate_names("Machine", [f"s{n}" for n in rng.sample(range(300), 5)])
        clock.advance(rng.choice([0, 6, 30]))
        assert pool.totals() == pool_totals(stored.wire for stored in store.query("Machine"))
    assert metrics.registry.get_sample_value("roost_pool_cpus_total") == pool.totals().total["cpus"]
