"""Card utilisation for the GPU page's colours, from the startds' Prometheus text:
parsed by card UUID, bounded in startds asked, a silent startd skipped."""

from __future__ import annotations

from web.card_utilisation import MAX_FAILURES_IN_A_ROW, card_utilisation, startd_addresses, utilisation_from_metrics

METRICS = """# HELP roost_gpu_utilization_ratio A card's utilisation at the last sample, 0..1
# TYPE roost_gpu_utilization_ratio gauge
roost_gpu_utilization_ratio{uuid="GPU-1"} 0.75
roost_gpu_utilization_ratio{uuid="GPU-2"} 3.0
# TYPE roost_gpu_memory_used_bytes gauge
roost_gpu_memory_used_bytes{uuid="GPU-1",job="1.0"} 1024.0
"""


def test_the_utilisation_of_each_card_is_read_by_uuid_and_clamped():
    """Only the utilisation metric counts, one value per UUID, kept within 0..1."""
    assert utilisation_from_metrics(METRICS) == {"GPU-1": 0.75, "GPU-2": 1.0}
    assert utilisation_from_metrics("not { prometheus") == {}


def test_each_startd_is_asked_once_and_a_silent_one_is_skipped():
    """Slots of one startd share an address; a startd that fails leaves its cards out,
    and after a run of failures the rest are not asked."""
    slots = [{"MyAddress": "<a:1>"}, {"MyAddress": "<a:1>"}, {"MyAddress": "<b:1>"}, {"Name": "no address"}]
    assert startd_addresses(slots) == ["a:1", "b:1"]
    asked = []

    def metrics_of(address):
        asked.append(address)
        if address == "b:1":
            raise OSError("refused")
        return METRICS
    assert card_utilisation(slots, metrics_of, (OSError,)) == {"GPU-1": 0.75, "GPU-2": 1.0}
    asked.clear()
    dead = [{"MyAddress": f"<dead{n}:1>"} for n in range(10)]
    assert card_utilisation(dead, _refuse(asked), (OSError,)) == {}
    assert len(asked) == MAX_FAILURES_IN_A_ROW


def _refuse(asked):
    def metrics_of(address):
        asked.append(address)
        raise OSError("no route to host")
    return metrics_of
