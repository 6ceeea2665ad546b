"""The startd's GPU metrics, read when scraped: per card its memory, shares and
utilisation, and per job on it the memory and cores its share allocates and the memory
its processes use.

Allocation comes from the startd's own slot ads (through :mod:`startd.gpu_view`, as
``roost status -gpus`` reads the collector's); use comes from the GPU watchdog's
latest sample, ``usage()``: per job id, per card UUID, (MiB used, utilisation 0..1).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping

from prometheus_client.core import GaugeMetricFamily

import classad
from gpushare.placement import FULL_CORES
from startd.gpu_view import CardView, card_views

MIB = 1024 * 1024

Usage = Callable[[], Mapping[str, Mapping[str, tuple[int, float]]]]


def no_usage() -> dict:
    """No watchdog on this startd (no cards, or sharing off): nothing sampled."""
    return {}


def _gauge(name: str, documentation: str, labels: list[str]) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, labels=labels)


def card_families(views: Iterable[CardView]) -> list[GaugeMetricFamily]:
    """Per card: total and free memory, free cores and shares."""
    total = _gauge("roost_gpu_memory_total_bytes", "A card's memory", ["uuid", "model"])
    free = _gauge("roost_gpu_memory_free_bytes", "A card's memory no share holds", ["uuid"])
    cores = _gauge("roost_gpu_core_free_ratio", "A card's cores no share holds, 0..1", ["uuid"])
    shares = _gauge("roost_gpu_shares", "Claims holding a piece of a card", ["uuid"])
    for view in views:
        card = view.card
        total.add_metric([card.uuid, card.name], card.memory_total * MIB)
        free.add_metric([card.uuid], card.memory_free * MIB)
        cores.add_metric([card.uuid], card.cores_free / FULL_CORES)
        shares.add_metric([card.uuid], card.tasks)
    return [total, free, cores, shares]


def allocation_families(views: Iterable[CardView]) -> list[GaugeMetricFamily]:
    """Per card and running job: the memory and the cores its share allocates."""
    memory = _gauge("roost_gpu_memory_allocated_bytes", "Card memory a job's share allocates", ["uuid", "job"])
    cores = _gauge("roost_gpu_core_allocated_ratio", "Card cores a job's share allocates, 0..1", ["uuid", "job"])
    for view in views:
        for share in view.shares:
            if share.job:
                memory.add_metric([view.card.uuid, share.job], share.memory_mib * MIB)
                cores.add_metric([view.card.uuid, share.job], share.cores / FULL_CORES)
    return [memory, cores]


def usage_families(usage: Mapping[str, Mapping[str, tuple[int, float]]]) -> list[GaugeMetricFamily]:
    """Per card and job the memory its processes used at the last sample; per card its utilisation."""
    used = _gauge("roost_gpu_memory_used_bytes", "Card memory a job's processes use", ["uuid", "job"])
    utilisation = _gauge("roost_gpu_utilization_ratio", "A card's utilisation at the last sample, 0..1",
                         ["uuid"])
    seen: dict[str, float] = {}
    for job, cards in sorted(usage.items()):
        for uuid, (mib, ratio) in sorted(cards.items()):
            used.add_metric([uuid, job], mib * MIB)
            seen[uuid] = ratio
    for uuid, ratio in sorted(seen.items()):
        utilisation.add_metric([uuid], ratio)
    return [used, utilisation]


class GpuMetrics:
    """A Prometheus collector over the startd's slot ads and its watchdog's samples."""

    def __init__(self, slot_ads: Callable[[], list[classad.ClassAd]], usage: Usage = no_usage) -> None:
        self._slot_ads = slot_ads
        self._usage = usage

    def collect(self) -> Iterator[GaugeMetricFamily]:
        views = card_views(self._slot_ads())
        yield from card_families(views)
        yield from allocation_families(views)
        yield from usage_families(self._usage())
