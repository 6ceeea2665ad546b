"""What a GPU job is told about its cards, by the startd knob ``GPU_SHARING_MODE``.

Every job with cards sees them as HTCondor shows them: ``CUDA_VISIBLE_DEVICES``,
``GPU_DEVICE_ORDINAL`` and ``NVIDIA_VISIBLE_DEVICES`` name the assigned ids. A job
holding a share (not whole cards) is also given its limits, in the form the mode's
enforcer reads:

- ``hami-core`` (default): HAMi-core's ``CUDA_DEVICE_MEMORY_LIMIT_<i>`` (``<MiB>m`` per
  visible index) and ``CUDA_DEVICE_SM_LIMIT`` (percent of SMs); ``LD_PRELOAD`` of
  ``GPU_HAMI_CORE_LIBRARY`` when that knob names a file.
- ``mps``: ``CUDA_MPS_PINNED_DEVICE_MEM_LIMIT`` (``<i>=<MiB>M``), ``CUDA_MPS_ACTIVE_THREAD_PERCENTAGE``
  and the pipe and log directories of the card's MPS control daemon (see :mod:`startd.mps`).
  MPS serves one card per client here, so only a share of one card whose daemon runs joins it.
- ``none``: visibility only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import attrs

import classad
from daemoncore.config import Config, ConfigError

GPU_SHARING_MODE = "GPU_SHARING_MODE"
GPU_HAMI_CORE_LIBRARY = "GPU_HAMI_CORE_LIBRARY"
MODES = ("hami-core", "mps", "none")
#: The environment variable naming the directory where a job reports simulated card use
#: (set only with ``GPU_DISCOVERY = simulated:...``; see :mod:`startd.simulated_nvml`).
SIMULATED_USAGE_ENV = "ROOST_SIMULATED_GPU_USAGE"
_VISIBILITY = ("CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "NVIDIA_VISIBLE_DEVICES")


@attrs.frozen
class AssignedCard:
    """One card a slot holds: its ids, visible position, and the share of it (None: the whole card)."""

    id: str
    uuid: str
    index: int
    memory_mib: int | None = None
    cores: int | None = None


@attrs.frozen
class MpsDirs:
    """Where one card's MPS control daemon has its pipes and logs."""

    pipe: str
    log: str


@attrs.frozen
class GpuSharing:
    """How this startd enforces shares: the mode, HAMi-core's library, the running MPS daemons by
    card id, and the simulated-usage directory (None off simulation)."""

    mode: str = "hami-core"
    hami_library: str | None = None
    mps: Mapping[str, MpsDirs] = attrs.field(factory=dict)
    simulated_usage_dir: str | None = None


def sharing_mode(config: Config) -> str:
    """``GPU_SHARING_MODE``, lower-cased; ``hami-core`` when unset.

    Raises:
        ConfigError: the value is not one of :data:`MODES`.
    """
    raw = (config.param(GPU_SHARING_MODE) or "hami-core").strip()
    mode = raw.lower()
    if mode not in MODES:
        raise ConfigError(f"{GPU_SHARING_MODE} = {raw!r}: expected one of {', '.join(MODES)}")
    return mode


def hami_library(config: Config) -> str | None:
    """``GPU_HAMI_CORE_LIBRARY`` when it names an existing file, else None."""
    path = (config.param(GPU_HAMI_CORE_LIBRARY) or "").strip()
    return path if path and os.path.isfile(path) else None


def _int_attr(ad: classad.ClassAd, name: str) -> int | None:
    value = ad.get(name) if name in ad else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def assigned_cards(machine_ad: classad.ClassAd) -> tuple[AssignedCard, ...]:
    """The cards in the slot's ``AssignedGPUs``, in order, with the share of each when the slot
    holds one (``AssignedGPUMemoryMb``/``AssignedGPUCores``, not ``GPUShareWhole``)."""
    assigned = machine_ad.get("AssignedGPUs") if "AssignedGPUs" in machine_ad else None
    if not isinstance(assigned, str):
        return ()
    ids = [i.strip() for i in assigned.split(",") if i.strip()]
    whole = machine_ad.get("GPUShareWhole") if "GPUShareWhole" in machine_ad else False
    memory = None if whole is True else _int_attr(machine_ad, "AssignedGPUMemoryMb")
    cores = None if whole is True else _int_attr(machine_ad, "AssignedGPUCores")
    cards = []
    for position, card_id in enumerate(ids):
        cards.append(AssignedCard(card_id, _card_uuid(machine_ad, card_id), position,
                                  memory if memory and memory > 0 else None, cores))
    return tuple(cards)


def _card_uuid(machine_ad: classad.ClassAd, card_id: str) -> str:
    """The full UUID in the card's nested ad (``GPUs_GPU_1a2b3c4d``), else the id itself."""
    name = "GPUs_" + card_id.replace("-", "_")
    nested = machine_ad.get(name) if name in machine_ad else None
    if isinstance(nested, classad.ClassAd) and "UUID" in nested and isinstance(nested.get("UUID"), str):
        return nested.get("UUID")
    return card_id


def gpu_environment(machine_ad: classad.ClassAd, sharing: GpuSharing | None = None) -> dict[str, str]:
    """The environment a job on the slot ``machine_ad`` gets for its cards under ``sharing``.

    A slot with no cards on a machine that has some sees none (``CUDA_VISIBLE_DEVICES`` empty).
    """
    sharing = sharing or GpuSharing()
    cards = assigned_cards(machine_ad)
    if not cards:
        detected = machine_ad.get("DetectedGPUs") if "DetectedGPUs" in machine_ad else ""
        return {"CUDA_VISIBLE_DEVICES": ""} if detected else {}
    ids = ",".join(card.id for card in cards)
    found = {name: ids for name in _VISIBILITY}
    found["_CONDOR_AssignedGPUs"] = ids
    if sharing.simulated_usage_dir:
        found[SIMULATED_USAGE_ENV] = sharing.simulated_usage_dir
    if sharing.mode == "hami-core":
        found.update(hami_environment(cards, sharing.hami_library))
    elif sharing.mode == "mps":
        found.update(mps_environment(cards, sharing.mps))
    return found


def _share_of(cards: tuple[AssignedCard, ...]) -> tuple[int | None, int | None]:
    """(memory MiB, cores) of the slot's share; (None, None) for whole cards."""
    first = cards[0]
    cores = first.cores if first.cores is not None and 0 < first.cores < 100 else None
    return first.memory_mib, cores


def hami_environment(cards: tuple[AssignedCard, ...], library: str | None) -> dict[str, str]:
    """HAMi-core's limits for a share (nothing for whole cards), and its preload when installed."""
    memory, cores = _share_of(cards)
    if memory is None and cores is None:
        return {}
    found: dict[str, str] = {}
    if memory is not None:
        found.update({f"CUDA_DEVICE_MEMORY_LIMIT_{card.index}": f"{memory}m" for card in cards})
    if cores is not None:
        found["CUDA_DEVICE_SM_LIMIT"] = str(cores)
    if library:
        found["LD_PRELOAD"] = library
    return found


def mps_environment(cards: tuple[AssignedCard, ...], daemons: Mapping[str, MpsDirs]) -> dict[str, str]:
    """MPS's client settings for a share of one card whose control daemon runs; else nothing."""
    memory, cores = _share_of(cards)
    if (memory is None and cores is None) or len(cards) != 1 or cards[0].id not in daemons:
        return {}
    dirs = daemons[cards[0].id]
    found = {"CUDA_MPS_PIPE_DIRECTORY": dirs.pipe, "CUDA_MPS_LOG_DIRECTORY": dirs.log}
    if memory is not None:
        found["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] = f"{cards[0].index}={memory}M"
    if cores is not None:
        found["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = str(cores)
    return found
