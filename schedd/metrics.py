"""The schedd's Prometheus metrics: jobs in the queue by state and owner (as last counted
for the schedd's ads, a second or so after each change; counted when scraped by a
schedd with no collector, which makes no ads) and submits counted since
the schedd started."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter
from prometheus_client.core import GaugeMetricFamily

from jobmodel.states import STATUS_NAMES, JobStatus

Totals = Callable[[], "dict[str | None, dict[JobStatus, int]]"]


class _JobCounts:
    """Jobs per owner and state from ``totals`` when scraped (a scrape must not count
    the queue on the reactor, so the schedd passes its last count)."""

    def __init__(self, totals: Totals) -> None:
        self._totals = totals

    def collect(self) -> Iterator[GaugeMetricFamily]:
        gauge = GaugeMetricFamily("roost_schedd_jobs", "Jobs in the queue", labels=["owner", "state"])
        for owner, by_status in sorted(self._totals().items(), key=lambda item: item[0] or ""):
            for status in JobStatus:
                gauge.add_metric([owner or "", STATUS_NAMES[status]], by_status.get(status, 0))
        yield gauge


class ScheddMetrics:
    """The schedd's metrics in ``registry``. Mutable: the submit counters count."""

    def __init__(self, totals: Totals, registry: CollectorRegistry) -> None:
        self.submits = Counter("roost_schedd_submits", "Clusters submitted", registry=registry)
        self.jobs_submitted = Counter("roost_schedd_jobs_submitted", "Jobs (procs) submitted", registry=registry)
        registry.register(_JobCounts(totals))

    def submitted(self, num_procs: int) -> None:
        """Count one cluster of ``num_procs`` jobs."""
        self.submits.inc()
        self.jobs_submitted.inc(num_procs)
