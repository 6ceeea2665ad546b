"""Choosing cards for a claim: whole cards, or HAMi-style shares of memory and compute.

A job asks for ``RequestGPUs`` cards; with ``RequestGPUMemory`` (MiB per card) or
``RequestGPUCores`` (percent of a card's SMs) it asks for a share of each, and
cards are shared with other claims until their memory or cores run out. The order
cards are tried in follows ``GPUPlacementPolicy``, HAMi's keys: ``spread`` (most
free first, the default), ``binpack`` (least free first) and ``numa`` (all on one
NUMA node), which can be chained: ``numa,binpack``.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from startd.gpus import GpuDevice
from startd.resources import FULL_CORES, GpuShare

POLICIES = ("spread", "binpack", "numa")
DEFAULT_POLICY = "spread"


@attrs.frozen
class CardRoom:
    """How much of one card is still free, and whether someone already holds a piece of it."""

    device: GpuDevice
    free_memory_mb: int
    free_cores: int

    @property
    def untouched(self) -> bool:
        """No claim holds any of this card."""
        return self.free_memory_mb == self.device.memory_mb and self.free_cores == FULL_CORES

    def take(self, share: GpuShare) -> CardRoom:
        """What is left after ``share`` is given out."""
        return attrs.evolve(self, free_memory_mb=self.free_memory_mb - share.memory_mb,
                            free_cores=self.free_cores - share.cores)

    def give_back(self, share: GpuShare) -> CardRoom:
        """What is free again once ``share`` is returned."""
        return attrs.evolve(self, free_memory_mb=self.free_memory_mb + share.memory_mb,
                            free_cores=self.free_cores + share.cores)


@attrs.frozen
class GpuRequest:
    """What a job asks of the GPUs: a count, and per-card memory and cores when it shares."""

    count: int
    memory_mb: int | None = None
    cores: int | None = None
    policy: str = DEFAULT_POLICY

    @property
    def shares(self) -> bool:
        """Whether the job takes pieces of cards rather than whole ones."""
        return self.memory_mb is not None or self.cores is not None

    def share_of(self, device: GpuDevice) -> GpuShare:
        """This request's piece of ``device`` (a whole card when not sharing)."""
        if not self.shares:
            return GpuShare(device.id, device.memory_mb, FULL_CORES, whole=True)
        memory = device.memory_mb if self.memory_mb is None else self.memory_mb
        return GpuShare(device.id, memory, self.cores or 0)


def policy_keys(policy: str | None) -> list[str]:
    """The known keys of a policy chain, in order; none known means ``spread``."""
    keys = [k.strip().lower() for k in (policy or "").split(",")]
    known = [k for k in keys if k in POLICIES]
    return known or [DEFAULT_POLICY]


def _fits(room: CardRoom, request: GpuRequest) -> bool:
    if not request.shares:
        return room.untouched
    share = request.share_of(room.device)
    return share.memory_mb <= room.free_memory_mb and share.cores <= room.free_cores


def _ordered(rooms: list[CardRoom], keys: list[str]) -> list[CardRoom]:
    def key(room: CardRoom) -> tuple:
        parts: list = []
        for k in keys:
            if k == "spread":
                parts.append(-room.free_memory_mb)
            elif k == "binpack":
                parts.append(room.free_memory_mb)
        return (*parts, room.device.index)
    return sorted(rooms, key=key)


def place_gpus(rooms: Iterable[CardRoom], request: GpuRequest,
               allowed: set[str] | None = None) -> tuple[GpuShare, ...] | None:
    """The shares to give ``request`` from ``rooms``, or None when the cards cannot hold it.

    Args:
        rooms: the free room on each card of the slot.
        request: the job's count, per-card share and policy.
        allowed: ids of the cards the job accepts (its ``RequireGPUs``), None for any.
    """
    if request.count <= 0:
        return ()
    keys = policy_keys(request.policy)
    candidates = [r for r in rooms if (allowed is None or r.device.id in allowed) and _fits(r, request)]
    candidates = _ordered(candidates, keys)
    if "numa" in keys:
        by_node: dict[int, list[CardRoom]] = {}
        for room in candidates:
            by_node.setdefault(room.device.numa_node, []).append(room)
        fitting = [room.device.numa_node for room in candidates
                   if len(by_node[room.device.numa_node]) >= request.count]
        if not fitting:
            return None
        candidates = by_node[fitting[0]]
    chosen = candidates[:request.count]
    if len(chosen) < request.count:
        return None
    return tuple(request.share_of(room.device) for room in chosen)
