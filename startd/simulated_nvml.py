"""A small stand-in for the pynvml calls Roost uses, for machines without a GPU.

``GPU_DISCOVERY = simulated:2xA100:40G`` (groups joined by ``+`` or ``,``:
``simulated:2xA100:40G+1xT4:16G``) builds one of these. It presents the same
functions, return shapes and error class as pynvml, so discovery runs one code path.

Per-process use, for the GPU watchdog's tests: given a ``usage_dir``, a process "uses" a
card by writing a file named by its pid in that directory, one line per card::

    <card> <MiB> [<utilisation percent>]

where ``<card>`` is the card's short id (``GPU-1a2b3c4d``), full UUID or index. The
startd hands jobs the directory in ``ROOST_SIMULATED_GPU_USAGE``, so a job can write
``$ROOST_SIMULATED_GPU_USAGE/$$``. Files of processes that no longer exist, malformed
lines and anything past the first 4 KiB of a file are ignored.
``nvmlDeviceGetComputeRunningProcesses`` and ``nvmlDeviceGetUtilizationRates`` answer from
these files (a card's utilisation is the sum of its processes', at most 100), and
``nvmlDeviceGetMemoryInfo`` counts their memory as used.
"""

from __future__ import annotations

import hashlib
import os
import re

import attrs
import psutil

from startd.errors import DiscoveryError

#: Compute capability of the models people name most; others get 8.0.
MODEL_CAPABILITY: dict[str, tuple[int, int]] = {
    "V100": (7, 0), "T4": (7, 5), "A100": (8, 0), "A30": (8, 0), "A10": (8, 6),
    "A40": (8, 6), "RTX3090": (8, 6), "L4": (8, 9), "L40": (8, 9), "L40S": (8, 9),
    "RTX4090": (8, 9), "H100": (9, 0), "H200": (9, 0), "B200": (10, 0),
}
DEFAULT_CAPABILITY = (8, 0)
SIMULATED_DRIVER_VERSION = "550.54.15"
SIMULATED_CUDA_DRIVER_VERSION = 12040
_GROUP = re.compile(r"^\s*(\d+)\s*[xX]\s*([A-Za-z0-9_.-]+)\s*:\s*(\d+)\s*([KMGT]?)i?B?\s*$")
_UNIT_MIB = {"": 1, "K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}
SPEC_HELP = "expected simulated:<count>x<model>:<memory>, e.g. simulated:2xA100:40G"


class NVMLError(Exception):
    """The simulated library's failure, shaped like ``pynvml.NVMLError``."""


@attrs.frozen
class SimulatedMemory:
    """What ``nvmlDeviceGetMemoryInfo`` returns: bytes total, free and used."""

    total: int
    free: int
    used: int


@attrs.frozen
class SimulatedProcess:
    """One entry of ``nvmlDeviceGetComputeRunningProcesses``: a pid and its memory in bytes."""

    pid: int
    usedGpuMemory: int  # noqa: N815 - pynvml's name


@attrs.frozen
class SimulatedUtilization:
    """What ``nvmlDeviceGetUtilizationRates`` returns: percent busy of SMs and of memory."""

    gpu: int
    memory: int


#: How much of one usage file is read.
USAGE_FILE_LIMIT = 4096


def read_usage_dir(usage_dir: str) -> list[tuple[int, str, int, int]]:
    """(pid, card, MiB, utilisation percent) for every line of every live process's file."""
    try:
        names = os.listdir(usage_dir)
    except OSError:
        return []
    found = []
    for name in names:
        if not name.isdigit() or not psutil.pid_exists(int(name)):
            continue
        try:
            with open(os.path.join(usage_dir, name), "rb") as handle:
                text = handle.read(USAGE_FILE_LIMIT).decode(errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            words = line.split()
            if len(words) in (2, 3) and all(w.isdigit() for w in words[1:]):
                found.append((int(name), words[0], int(words[1]), int(words[2]) if len(words) == 3 else 0))
    return found


@attrs.frozen
class SimulatedDevice:
    """One fake card."""

    index: int
    uuid: str
    name: str
    memory_mib: int
    capability: tuple[int, int]
    numa_node: int


def parse_simulated_spec(spec: str) -> list[tuple[int, str, int]]:
    """``2xA100:40G+1xT4:16G`` as (count, model, memory MiB) groups.

    Raises:
        DiscoveryError: a group is not ``<count>x<model>:<memory>``.
    """
    groups = []
    for part in re.split(r"[+,;]", spec):
        if not part.strip():
            continue
        found = _GROUP.match(part)
        if not found:
            raise DiscoveryError(f"GPU_DISCOVERY: {part.strip()!r} is not a GPU group; {SPEC_HELP}")
        count, model, amount, unit = found.groups()
        memory = int(int(amount) * _UNIT_MIB[unit.upper()])
        if int(count) < 1 or memory < 1:
            raise DiscoveryError(f"GPU_DISCOVERY: {part.strip()!r} needs a count and memory above 0")
        groups.append((int(count), model, memory))
    if not groups:
        raise DiscoveryError(f"GPU_DISCOVERY: no GPU groups in {spec!r}; {SPEC_HELP}")
    return groups


def simulated_uuid(seed: str, index: int) -> str:
    """A stable, UUID-shaped id for fake card ``index``, so ads do not change between runs."""
    digest = hashlib.sha256(f"{seed}/{index}".encode()).hexdigest()
    return f"GPU-{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


class SimulatedNvml:
    """The pynvml functions discovery calls, answered from a list of fake cards.

    Cards are split over two NUMA nodes (first half on node 0) when there are two or more.
    """

    NVMLError = NVMLError

    def __init__(self, spec: str, seed: str = "roost", usage_dir: str | None = None) -> None:
        devices = []
        for count, model, memory in parse_simulated_spec(spec):
            for _ in range(count):
                index = len(devices)
                devices.append(SimulatedDevice(
                    index, simulated_uuid(f"{seed}/{model}", index), f"NVIDIA {model}", memory,
                    MODEL_CAPABILITY.get(model.upper(), DEFAULT_CAPABILITY), 0))
        half = (len(devices) + 1) // 2 if len(devices) > 1 else len(devices)
        self.devices = [attrs.evolve(d, numa_node=0 if d.index < half else 1) for d in devices]
        self._initialized = 0
        self.usage_dir = usage_dir

    def nvmlInit(self) -> None:  # noqa: N802 - pynvml's name
        self._initialized += 1

    def nvmlShutdown(self) -> None:  # noqa: N802
        self._check()
        self._initialized -= 1

    def nvmlDeviceGetCount(self) -> int:  # noqa: N802
        self._check()
        return len(self.devices)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> SimulatedDevice:  # noqa: N802
        self._check()
        if not 0 <= index < len(self.devices):
            raise NVMLError(f"Invalid Argument: no device {index}")
        return self.devices[index]

    def nvmlDeviceGetUUID(self, handle: SimulatedDevice) -> str:  # noqa: N802
        return handle.uuid

    def nvmlDeviceGetName(self, handle: SimulatedDevice) -> str:  # noqa: N802
        return handle.name

    def nvmlDeviceGetMemoryInfo(self, handle: SimulatedDevice) -> SimulatedMemory:  # noqa: N802
        total = handle.memory_mib * 1024 * 1024
        used = min(total, sum(p.usedGpuMemory for p in self.nvmlDeviceGetComputeRunningProcesses(handle)))
        return SimulatedMemory(total=total, free=total - used, used=used)

    def nvmlDeviceGetComputeRunningProcesses(self, handle: SimulatedDevice) -> list[SimulatedProcess]:  # noqa: N802
        """The processes using ``handle`` by the usage files, one entry per pid."""
        used: dict[int, int] = {}
        for pid, _, mib, _ in self._lines_of(handle):
            used[pid] = used.get(pid, 0) + mib * 1024 * 1024
        return [SimulatedProcess(pid, memory) for pid, memory in sorted(used.items())]

    def nvmlDeviceGetUtilizationRates(self, handle: SimulatedDevice) -> SimulatedUtilization:  # noqa: N802
        """The sum of the utilisation its processes report, at most 100."""
        busy = min(100, sum(percent for _, _, _, percent in self._lines_of(handle)))
        return SimulatedUtilization(gpu=busy, memory=busy)

    def _lines_of(self, handle: SimulatedDevice) -> list[tuple[int, str, int, int]]:
        if self.usage_dir is None:
            return []
        short = "GPU-" + handle.uuid[4:].replace("-", "")[:8]
        names = {handle.uuid.lower(), short.lower(), str(handle.index)}
        return [line for line in read_usage_dir(self.usage_dir) if line[1].lower() in names]

    def nvmlDeviceGetCudaComputeCapability(self, handle: SimulatedDevice) -> tuple[int, int]:  # noqa: N802
        return handle.capability

    def nvmlDeviceGetNumaNodeId(self, handle: SimulatedDevice) -> int:  # noqa: N802
        return handle.numa_node

    def nvmlSystemGetDriverVersion(self) -> str:  # noqa: N802
        self._check()
        return SIMULATED_DRIVER_VERSION

    def nvmlSystemGetCudaDriverVersion(self) -> int:  # noqa: N802
        self._check()
        return SIMULATED_CUDA_DRIVER_VERSION

    def _check(self) -> None:
        if self._initialized <= 0:
            raise NVMLError("Uninitialized")
