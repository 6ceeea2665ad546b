"""The collector's Prometheus metrics: ads held per type, updates, invalidations and
queries counted per type (Prometheus' ``rate()`` turns the counts into per-second)."""

from __future__ import annotations

from attrs import define, field
from prometheus_client import CollectorRegistry, Counter
from prometheus_client.core import GaugeMetricFamily

from collector.store import AdStore


class _AdCounts:
    """Reads the store's counts at scrape time, so the gauge is never stale."""

    def __init__(self, store: AdStore) -> None:
        self._store = store

    def collect(self):
        gauge = GaugeMetricFamily("roost_collector_ads", "Ads held by the collector", labels=["type", "private"])
        for private in (False, True):
            for kind, count in sorted(self._store.counts(private).items()):
                gauge.add_metric([kind, str(private).lower()], count)
        yield gauge


@define
class CollectorMetrics:
    """The collector's counters, in a registry of its own. Mutable: counters count."""

    store: AdStore
    registry: CollectorRegistry = field(factory=CollectorRegistry)
    updates: Counter = field(init=False)
    invalidations: Counter = field(init=False)
    queries: Counter = field(init=False)

    def __attrs_post_init__(self) -> None:
        self.updates = Counter("roost_collector_updates", "Ads received", ["type"], registry=self.registry)
        self.invalidations = Counter(
            "roost_collector_invalidations", "Ads removed by invalidation", ["type"], registry=self.registry
        )
        self.queries = Counter("roost_collector_queries", "Queries answered", ["type"], registry=self.registry)
        self.registry.register(_AdCounts(self.store))
