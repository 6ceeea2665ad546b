"""What a slot holds: CPUs, memory (MiB), disk (KiB) and GPUs, whole or as shares.

A slot's GPUs are :class:`gpushare.placement.Grant` values, the one representation
the model, the negotiator and claim reuse share: a piece of one card (its memory in
MiB, its compute in percent of the SMs), or the whole card, flagged ``whole``.
"""

from __future__ import annotations

import attrs
from attrs import validators as v

from gpushare.placement import FULL_CORES, Card, Grant
from startd.gpus import GpuDevice


def card_of(device: GpuDevice, split_count: int) -> Card:
    """``device`` as the placement model sees it, nothing of it given out yet."""
    return Card(uuid=device.uuid, id=device.id, index=device.index, name=device.name,
                numa_node=device.numa_node, memory_total=device.memory_mb, split_count=split_count)


def whole_grant(device: GpuDevice) -> Grant:
    """All of ``device``: what a static or partitionable slot holds of its cards."""
    return Grant(device.uuid, device.id, device.index, device.memory_mb, FULL_CORES, whole=True)


@attrs.frozen
class Resources:
    """An amount of the machine: a slot's size, or what a job asks for."""

    cpus: int = attrs.field(validator=v.ge(0))
    memory_mb: int = attrs.field(validator=v.ge(0))
    disk_kb: int = attrs.field(validator=v.ge(0))
    gpus: tuple[Grant, ...] = ()

    @property
    def gpu_ids(self) -> tuple[str, ...]:
        """The cards (short ids) this holds any part of, in order, each once."""
        return tuple(dict.fromkeys(grant.id for grant in self.gpus))

    def fits_in(self, other: Resources) -> bool:
        """Whether CPUs, memory and disk are each no more than ``other``'s."""
        return (self.cpus <= other.cpus and self.memory_mb <= other.memory_mb
                and self.disk_kb <= other.disk_kb)

    def minus(self, other: Resources) -> Resources:
        """CPUs, memory and disk less ``other``'s; GPUs are tracked per card elsewhere."""
        return Resources(self.cpus - other.cpus, self.memory_mb - other.memory_mb,
                         self.disk_kb - other.disk_kb, self.gpus)
