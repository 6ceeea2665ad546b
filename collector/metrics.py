"""The collector's Prometheus metrics: ads held per type, updates, invalidations and
queries counted per type (Prometheus' ``rate()`` turns the counts into per-second)."""

from __future__ import annotations

from attrs import define, field
from prometheus_client import CollectorRegistry, Counter
from prometheus_client.core import GaugeMetricFamily

from collector.pool_totals import RESOURCES, PoolTotals, RunningTotals
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


class _PoolTotals:
    """The pool's slots by state and its resources in total and free, from the Machine
    ads held when scraped: running totals the store keeps up to date as ads come and go,
    less the ads past their lifetime not yet swept, so a scrape at 100,000 ads does not
    hold the reactor to read every ad."""

    def __init__(self, store: AdStore) -> None:
        self._store = store
        self._running = RunningTotals()
        store.watch("Machine", self._running)

    def totals(self) -> PoolTotals:
        """The totals of the live Machine ads now."""
        now = self._store.clock.seconds()
        return self._running.totals([stored for stored in self._store.snapshot("Machine") if stored.expires_at <= now])

    def collect(self):
        totals = self.totals()
        slots = GaugeMetricFamily("roost_pool_slots", "Slot ads held, by State", labels=["state"])
        for state, count in sorted(totals.slots_by_state.items()):
            slots.add_metric([state], count)
        yield slots
        for name in RESOURCES:
            unit = "_bytes" if name == "memory_mb" else ""
            scale = 1024 * 1024 if unit else 1
            label = name.removesuffix("_mb")
            yield GaugeMetricFamily(f"roost_pool_{label}_total{unit}", f"The pool's {label} in all slots",
                                    value=totals.total[name] * scale)
            yield GaugeMetricFamily(f"roost_pool_{label}_free{unit}", f"The pool's {label} not claimed",
                                    value=totals.free[name] * scale)


@define
class CollectorMetrics:
    """The collector's counters, in a registry of its own. Mutable: counters count."""

    store: AdStore
    registry: CollectorRegistry = field(factory=CollectorRegistry)
    updates: Counter = field(init=False)
    invalidations: Counter = field(init=False)
    queries: Counter = field(init=False)
    #: The pool's totals, kept by segment between scrapes.
    pool: _PoolTotals = field(init=False)

    def __attrs_post_init__(self) -> None:
        self.updates = Counter("roost_collector_updates", "Ads received", ["type"], registry=self.registry)
        self.invalidations = Counter(
            "roost_collector_invalidations", "Ads removed by invalidation", ["type"], registry=self.registry
        )
        self.queries = Counter("roost_collector_queries", "Queries answered", ["type"], registry=self.registry)
        self.registry.register(_AdCounts(self.store))
        self.pool = _PoolTotals(self.store)
        self.registry.register(self.pool)
