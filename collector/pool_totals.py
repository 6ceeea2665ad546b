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
        state = ad.get("State")
        states[state if type(state) is str else "Unknown"] += 1
        if ad.get("DynamicSlot") is True or ad.get("SlotType") == "Dynamic":
            continue
        unclaimed = ad.get("PartitionableSlot") is True or state == "Unclaimed"
        for name, (total_attr, free_attr) in RESOURCES.items():
            total[name] += _number(ad, total_attr) or _number(ad, free_attr)
            free[name] += _number(ad, free_attr) if unclaimed else 0
    return PoolTotals(dict(states), total, free)


class RunningTotals:
    """The totals of a changing set of slot ads, kept up to date as ads come and go
    (each ad's share worked out once), so reading them costs nothing per ad. Mutable:
    it follows the store."""

    def __init__(self) -> None:
        self._states: Counter = Counter()
        self._total = dict.fromkeys(RESOURCES, 0)
        self._free = dict.fromkeys(RESOURCES, 0)

    def added(self, stored) -> None:
        """Count ``stored`` (a :class:`collector.store.StoredAd`) in."""
        self._apply(share(stored), 1)

    def dropped(self, stored) -> None:
        """Count ``stored`` out."""
        self._apply(share(stored), -1)

    def totals(self, leaving_out: Iterable = ()) -> PoolTotals:
        """The totals now, less the stored ads ``leaving_out`` (held but expired)."""
        states, total, free = Counter(self._states), dict(self._total), dict(self._free)
        for stored in leaving_out:
            part = share(stored)
            states[next(iter(part.slots_by_state))] -= 1
            for name in RESOURCES:
                total[name] -= part.total[name]
                free[name] -= part.free[name]
        return PoolTotals({state: count for state, count in states.items() if count}, total, free)

    def _apply(self, part: PoolTotals, sign: int) -> None:
        self._states.update({state: sign * count for state, count in part.slots_by_state.items()})
        for name in RESOURCES:
            self._total[name] += sign * part.total[name]
            self._free[name] += sign * part.free[name]


def share(stored) -> PoolTotals:
    """One stored ad's share of the totals."""
    return pool_totals([stored.wire])
