"""The web daemon's Prometheus metrics, served on ``/metrics`` as every daemon's are:
pages answered by page and status, and how long the last read of the pool took."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge
from prometheus_client.exposition import generate_latest


class WebMetrics:
    """The site's counters in ``registry``. Mutable: counters count."""

    def __init__(self, registry: CollectorRegistry, last_read_seconds: Callable[[], float]) -> None:
        self._registry = registry
        self.pages = Counter("roost_web_pages", "Pages answered, by page and HTTP status",
                             ["page", "status"], registry=registry)
        Gauge("roost_web_last_pool_read_duration_seconds", "How long the site's last read of the pool took",
              registry=registry).set_function(last_read_seconds)

    def answered(self, page: str, status: int) -> None:
        """Count one answer; ``page`` is one of the site's own page names, never a caller's path."""
        self.pages.labels(page=page, status=str(status)).inc()

    def text(self) -> bytes:
        """The metrics in Prometheus text format."""
        return generate_latest(self._registry)
