"""Each card's utilisation (0..1) as its startd last sampled it, read from the startds'
``/metrics`` (``roost_gpu_utilization_ratio{uuid=...}``) for the GPU page's colours.
Bounded: at most ``MAX_HOSTS`` startds are asked per read, and one that does not answer
only leaves its cards uncoloured."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from prometheus_client.parser import text_string_to_metric_families

#: The metric the startd exports a card's utilisation in.
METRIC = "roost_gpu_utilization_ratio"
#: Startds asked for their metrics in one read of the pool at most.
MAX_HOSTS = 64
#: After this many startds in a row fail to answer, the rest are not asked (each may take a timeout).
MAX_FAILURES_IN_A_ROW = 3


def utilisation_from_metrics(text: str) -> dict[str, float]:
    """The card utilisations in one startd's Prometheus text, by card UUID; text that
    does not parse gives none."""
    found: dict[str, float] = {}
    try:
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == METRIC and "uuid" in sample.labels:
                    found[sample.labels["uuid"]] = min(max(float(sample.value), 0.0), 1.0)
    except ValueError:
        return {}
    return found


def startd_addresses(slots: Iterable[Mapping], limit: int = MAX_HOSTS) -> list[str]:
    """The distinct ``MyAddress`` of the startds of ``slots``, at most ``limit``, in order met."""
    seen: dict[str, None] = {}
    for slot in slots:
        address = slot.get("MyAddress")
        if isinstance(address, str) and address.strip("<>"):
            seen.setdefault(address.strip().strip("<>"), None)
            if len(seen) >= limit:
                break
    return list(seen)


def card_utilisation(slots: Iterable[Mapping], metrics_of: Callable[[str], str],
                     errors: tuple[type[BaseException], ...]) -> dict[str, float]:
    """Every card utilisation the startds of ``slots`` report; ``metrics_of(address)``
    reads one startd's metrics text, and a startd failing with one of ``errors`` is skipped;
    after ``MAX_FAILURES_IN_A_ROW`` such failures the others are not asked this time."""
    found: dict[str, float] = {}
    failures = 0
    for address in startd_addresses(slots):
        if failures >= MAX_FAILURES_IN_A_ROW:
            break
        try:
            found.update(utilisation_from_metrics(metrics_of(address)))
            failures = 0
        except errors:
            failures += 1
    return found


__all__ = ["card_utilisation", "utilisation_from_metrics", "startd_addresses", "MAX_HOSTS"]
