"""The pool's totals from its slot ads, for the collector's metrics: slots by state,
and cpus, memory and GPUs in total and free.

A dynamic slot's resources are carved from its partitionable slot, so totals come
from static and partitionable slots only: a partitionable slot's ``Cpus``, ``Memory``
and ``GPUs`` are what is left, a static slot's are free while it is Unclaimed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from attrs import frozen

RESOURCES = {"cpus": ("TotalSlotCpus", "Cpus"), "memory_mb": ("TotalSlotMemory", "Memory"),
             "gpus": ("TotalSlotGPUs", "GPUs")}


@frozen
class PoolTotals:
    """Slots per State, and per resource its total and free amount."""

    slots_by_state: Mapping[str, int]
    total: Mapping[str, float]
    free: Mapping[str, float]


def _number(ad: Mapping, attr: str) -> float:
    value = ad.get(attr)
    return value if type(value) in (int, float) else 0


def pool_totals(slot_ads: Iterable[Mapping]) -> PoolTotals:
    """The totals of ``slot_ads`` (Machine ads in JSON form)."""
    states: Counter = Counter()
    total = dict.fromkeys(RESOURCES, 0.0)
    free = dict.fromkeys(RESOURCES, 0.0)
    for ad in slot_ads:
        state, amounts = _ad_share(ad)
        states[state] += 1
        for name, (in_total, in_free) in zip(RESOURCES, amounts):
            total[name] += in_total
            free[name] += in_free
    return PoolTotals(dict(states), total, free)


def _ad_share(ad: Mapping) -> tuple[str, tuple[tuple[float, float], ...]]:
    """One slot ad's State (``Unknown`` when it has none) and its (total, free) of each
    of :data:`RESOURCES` (nothing for a dynamic slot: its partitionable slot counts them)."""
    state = ad.get("State")
    state = state if type(state) is str else "Unknown"
    if ad.get("DynamicSlot") is True or ad.get("SlotType") == "Dynamic":
        return state, _NOTHING
    unclaimed = ad.get("PartitionableSlot") is True or state == "Unclaimed"
    return state, tuple((_number(ad, total_attr) or _number(ad, free_attr),
                         _number(ad, free_attr) if unclaimed else 0)
                        for total_attr, free_attr in RESOURCES.values())


_NOTHING = tuple((0, 0) for _ in RESOURCES)


class RunningTotals:
    """The totals of a changing set of slot ads, kept up to date as ads come and go
    (each ad's share worked out from its few attributes, no totals rebuilt), so reading
    them costs nothing per ad. Mutable: it follows the store."""

    def __init__(self) -> None:
        self._states: Counter = Counter()
        self._total = dict.fromkeys(RESOURCES, 0)
        self._free = dict.fromkeys(RESOURCES, 0)

    def added(self, stored) -> None:
        """Count ``stored`` (a :class:`collector.store.StoredAd`) in."""
        self._apply(stored.wire, 1)

    def dropped(self, stored) -> None:
        """Count ``stored`` out."""
        self._apply(stored.wire, -1)

    def totals(self, leaving_out: Iterable = ()) -> PoolTotals:
        """The totals now, less the stored ads ``leaving_out`` (held but expired)."""
        states, total, free = Counter(self._states), dict(self._total), dict(self._free)
        for stored in leaving_out:
            state, amounts = _ad_share(stored.wire)
            states[state] -= 1
            for name, (in_total, in_free) in zip(RESOURCES, amounts):
                total[name] -= in_total
                free[name] -= in_free
        return PoolTotals({state: count for state, count in states.items() if count}, total, free)

    def _apply(self, ad: Mapping, sign: int) -> None:
        state, amounts = _ad_share(ad)
        self._states[state] += sign
        total, free = self._total, self._free
        for name, (in_total, in_free) in zip(RESOURCES, amounts):
            total[name] += sign * in_total
            free[name] += sign * in_free
