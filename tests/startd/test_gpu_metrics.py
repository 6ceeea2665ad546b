"""The startd's GPU metrics from fixed slot ads and watchdog samples: per card its
memory and shares, per job its allocation and its use."""

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from startd.gpu_metrics import MIB, GpuMetrics
from tests.support.gpu_slot_ads import pool

SHARED = "GPU-aaaa0001-0000-1111-2222"
TAKEN = "GPU-aaaa0002-0000-1111-2222"


def scrape(slot_ads, usage=None) -> dict:
    registry = CollectorRegistry()
    registry.register(GpuMetrics(lambda: slot_ads, lambda: usage or {}))
    text = generate_latest(registry).decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def test_cards_and_allocations():
    """Totals per card with its model, shares per card, and each running job's memory and cores."""
    got = scrape(pool()[:4])
    assert got[("roost_gpu_memory_total_bytes", (("model", "NVIDIA A100-SXM4-40GB"), ("uuid", SHARED)))] \
        == 40960 * MIB
    assert got[("roost_gpu_shares", (("uuid", SHARED),))] == 2
    assert got[("roost_gpu_shares", (("uuid", TAKEN),))] == 1
    assert got[("roost_gpu_memory_allocated_bytes", (("job", "12.1"), ("uuid", SHARED)))] == 10240 * MIB
    assert got[("roost_gpu_core_allocated_ratio", (("job", "12.0"), ("uuid", SHARED)))] == 0.3
    assert got[("roost_gpu_core_allocated_ratio", (("job", "13.0"), ("uuid", TAKEN)))] == 1.0
    assert got[("roost_gpu_memory_free_bytes", (("uuid", SHARED),))] == 20480 * MIB
    assert not any(name == "roost_gpu_memory_used_bytes" for name, _ in got)


def test_use_comes_from_the_watchdog():
    """The watchdog's latest sample gives each job's memory used and each card's utilisation."""
    got = scrape(pool()[:4], {"12.0": {SHARED: (2048, 0.5)}, "12.1": {SHARED: (512, 0.5)}})
    assert got[("roost_gpu_memory_used_bytes", (("job", "12.0"), ("uuid", SHARED)))] == 2048 * MIB
    assert got[("roost_gpu_memory_used_bytes", (("job", "12.1"), ("uuid", SHARED)))] == 512 * MIB
    assert got[("roost_gpu_utilization_ratio", (("uuid", SHARED),))] == 0.5


def test_a_startd_without_cards_exports_none():
    """No card, no GPU samples (the families are there, empty)."""
    assert scrape([]) == {}
