"""What a slot holds: CPUs, memory (MiB), disk (KiB) and GPUs, whole or as shares.

A :class:`GpuShare` is a piece of one card: its memory in MiB and its compute in
percent of the card (HAMi's ``gpumem`` and ``gpucores``). A whole card is a share
of all its memory and 100 % of its cores, flagged ``whole`` so no one else gets it.
"""

from __future__ import annotations

import attrs
from attrs import validators as v

FULL_CORES = 100


@attrs.frozen
class GpuShare:
    """A piece of the card ``gpu_id``: ``memory_mb`` of its memory, ``cores`` percent of its SMs."""

    gpu_id: str
    memory_mb: int = attrs.field(validator=v.ge(0))
    cores: int = attrs.field(validator=[v.ge(0), v.le(FULL_CORES)])
    whole: bool = False


@attrs.frozen
class Resources:
    """An amount of the machine: a slot's size, or what a job asks for."""

    cpus: int = attrs.field(validator=v.ge(0))
    memory_mb: int = attrs.field(validator=v.ge(0))
    disk_kb: int = attrs.field(validator=v.ge(0))
    gpus: tuple[GpuShare, ...] = ()

    @property
    def gpu_ids(self) -> tuple[str, ...]:
        """The cards this holds any part of, in order, each once."""
        return tuple(dict.fromkeys(share.gpu_id for share in self.gpus))

    def fits_in(self, other: Resources) -> bool:
        """Whether CPUs, memory and disk are each no more than ``other``'s."""
        return (self.cpus <= other.cpus and self.memory_mb <= other.memory_mb
                and self.disk_kb <= other.disk_kb)

    def minus(self, other: Resources) -> Resources:
        """CPUs, memory and disk less ``other``'s; GPUs are tracked per card elsewhere."""
        return Resources(self.cpus - other.cpus, self.memory_mb - other.memory_mb,
                         self.disk_kb - other.disk_kb, self.gpus)
