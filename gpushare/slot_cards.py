"""The cards of a slot ad, and what the startd writes about each.

A slot names each card in a nested ad ``GPUs_GPU_1a2b3c4d`` (HTCondor 23's form, as
``condor_gpu_discovery -properties`` makes them); Roost adds what sharing needs:
``Index``, ``FreeMemoryMb``, ``FreeCores``, ``Shares`` and ``SplitCount``.
"""

from __future__ import annotations

import classad
from gpushare.placement import DEFAULT_SPLIT_COUNT, FULL_CORES, Card, Grant

CARD_ATTR_PREFIX = "GPUs_"
_NESTED_PREFIX = "gpus_gpu_"


def card_ad_attributes(card: Card) -> dict[str, object]:
    """What the startd writes into ``card``'s nested ad beside its discovery properties."""
    return {"Index": card.index, "FreeMemoryMb": card.memory_free, "FreeCores": card.cores_free,
            "Shares": card.tasks, "SplitCount": card.split_count}


def _int(ad: classad.ClassAd, attr: str, default: int) -> int:
    value = ad.get(attr, default)
    return int(value) if type(value) in (int, float) else default


def card_from_ad(ad: classad.ClassAd, fallback_index: int = 0) -> Card:
    """One nested card ad as a :class:`Card` (a card without the sharing attributes is
    taken as untouched)."""
    total = _int(ad, "GlobalMemoryMb", 0)
    free_memory = _int(ad, "FreeMemoryMb", total)
    free_cores = _int(ad, "FreeCores", FULL_CORES)
    uuid = ad.get("UUID")
    short = ad.get("Id")
    return Card(
        uuid=uuid if type(uuid) is str else str(short),
        id=short if type(short) is str else str(uuid),
        index=_int(ad, "Index", fallback_index),
        name=ad.get("DeviceName") if type(ad.get("DeviceName")) is str else "",
        numa_node=_int(ad, "NumaNode", 0),
        memory_total=max(total, 0),
        memory_used=max(total - free_memory, 0),
        cores_used=max(FULL_CORES - free_cores, 0),
        tasks=max(_int(ad, "Shares", 0 if free_memory == total and free_cores == FULL_CORES else 1), 0),
        split_count=_int(ad, "SplitCount", DEFAULT_SPLIT_COUNT),
    )


def card_attribute_names(slot: classad.ClassAd) -> list[str]:
    """The slot's attributes that hold a nested card ad, in the slot's own spelling."""
    return [key for key in slot.keys() if key.lower().startswith(_NESTED_PREFIX)
            and isinstance(slot.get(key), classad.ClassAd)]


def cards_from_slot_ad(slot: classad.ClassAd) -> tuple[Card, ...]:
    """Every card the slot's nested ads describe, in index order."""
    cards = [card_from_ad(slot.get(name), n) for n, name in enumerate(sorted(card_attribute_names(slot)))]
    return tuple(sorted(cards, key=lambda c: (c.index, c.id)))


def grants_from_slot_ad(slot: classad.ClassAd) -> tuple[Grant, ...]:
    """The pieces of cards a claimed (dynamic) slot holds: its ``AssignedGPUs``, each
    with ``AssignedGPUMemoryMb`` and ``AssignedGPUCores`` (a whole card without them)."""
    assigned = slot.get("AssignedGPUs")
    ids = [i.strip() for i in assigned.split(",") if i.strip()] if type(assigned) is str else []
    cards = {card.id: card for card in cards_from_slot_ad(slot)}
    whole = slot.get("GPUShareWhole")
    memory = slot.get("AssignedGPUMemoryMb")
    cores = slot.get("AssignedGPUCores")
    shared = whole is not True and type(memory) is int
    out = []
    for n, short in enumerate(ids):
        card = cards.get(short)
        total = card.memory_total if card is not None else 0
        out.append(Grant(card.uuid if card is not None else short, short, card.index if card else n,
                         memory if shared else total, cores if shared and type(cores) is int else FULL_CORES,
                         whole=not shared))
    return tuple(out)
