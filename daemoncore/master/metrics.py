"""The master's Prometheus metrics, read from its supervisor when scraped: how often
each daemon was restarted and whether it is up now."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily


class MasterMetrics:
    """A Prometheus collector over ``describe()`` (the supervisor's list of daemons, as
    ``roost pool status`` shows them)."""

    def __init__(self, describe: Callable[[], list[dict]]) -> None:
        self._describe = describe

    def collect(self) -> Iterator:
        restarts = CounterMetricFamily("roost_master_daemon_restarts", "Times the master restarted a daemon",
                                       labels=["daemon"])
        up = GaugeMetricFamily("roost_master_daemon_up", "1 when the daemon is running and answered",
                               labels=["daemon"])
        for daemon in self._describe():
            restarts.add_metric([daemon["name"]], daemon.get("restarts") or 0)
            up.add_metric([daemon["name"]], 1 if daemon.get("state") == "ready" else 0)
        yield restarts
        yield up
