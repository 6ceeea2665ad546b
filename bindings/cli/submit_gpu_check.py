"""``roost submit``'s check of a GPU memory request against the cards the pool now advertises.

A job asking for more memory per card (``request_gpu_memory``) than any card has would wait
forever; submit says so at once, naming the request and the largest card, but submits anyway:
cards come and go. A pool that cannot be asked quickly, or has no GPU at all, gets no warning
(``roost q -better-analyze`` explains a waiting job).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the ClassAd library loads only for a job that asks for GPU memory
    import classad
    from bindings.schedd import SubmitResult

#: How long submit waits for the collector before giving up on the check.
QUERY_TIMEOUT = 1.0
#: Only slots with cards carry card ads.
GPU_SLOTS = "TotalSlotGPUs > 0 || TotalGPUs > 0"


def largest_card_mib(slot_ads: Iterable[classad.ClassAd]) -> int | None:
    """The largest ``GlobalMemoryMb`` among the slots' nested card ads; None when no slot has a card."""
    from gpushare.slot_cards import cards_from_slot_ad

    sizes = [card.memory_total for ad in slot_ads for card in cards_from_slot_ad(ad)]
    return max(sizes) if sizes else None


def gpu_memory_warning(request_mib: object, slot_ads: Iterable[classad.ClassAd]) -> str | None:
    """The warning for a job asking ``request_mib`` MiB per card in a pool of ``slot_ads``; None when
    some card is large enough, the job asks no GPU memory, or the pool has no GPU."""
    if type(request_mib) is not int or request_mib <= 0:
        return None
    largest = largest_card_mib(slot_ads)
    if largest is None or request_mib <= largest:
        return None
    return (f"request_gpu_memory = {request_mib} MiB per card is more than any card in the pool has now "
            f"(the largest has {largest} MiB): the job waits until such a card joins the pool")


def pool_slot_ads(pool: str | None) -> list[classad.ClassAd] | None:
    """The slot ads with GPUs of ``pool``'s collector, or None when it cannot be asked within a second."""
    from bindings.collector import Collector
    from bindings.enums import AdType

    try:
        return Collector(pool, timeout=QUERY_TIMEOUT).query(AdType.Startd, GPU_SLOTS)
    except Exception:  # noqa: BLE001 - a check that cannot be made says nothing; the submit goes on
        return None


def check_submitted(result: SubmitResult, pool: str | None) -> str | None:
    """:func:`check_gpu_memory` of a submit's cluster ad, read only when it asks for GPU memory."""
    return check_gpu_memory(result.clusterad(), pool) if result.clusterad_has("RequestGPUMemory") else None


def check_gpu_memory(cluster_ad: classad.ClassAd, pool: str | None) -> str | None:
    """The warning for the submitted cluster ``cluster_ad`` in ``pool`` (None: nothing to say)."""
    request = cluster_ad.get("RequestGPUMemory") if "RequestGPUMemory" in cluster_ad else None
    if type(request) is not int:
        return None
    slots = pool_slot_ads(pool)
    return gpu_memory_warning(request, slots) if slots is not None else None
