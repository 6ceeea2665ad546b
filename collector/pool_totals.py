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


def add_totals(parts: Iterable[PoolTotals]) -> PoolTotals:
    """The totals of several sets of slot ads, from the totals of each."""
    states: Counter = Counter()
    total = dict.fromkeys(RESOURCES, 0.0)
    free = dict.fromkeys(RESOURCES, 0.0)
    for part in parts:
        states.update(part.slots_by_state)
        for name in RESOURCES:
            total[name] += part.total[name]
            free[name] += part.free[name]
    return PoolTotals(dict(states), total, free)
