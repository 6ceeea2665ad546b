"""GPU discovery through NVML: what each card is, read once at startd start-up.

The backend is pynvml (the ``nvidia-ml-py`` package) or, with
``GPU_DISCOVERY = simulated:<spec>``, :class:`startd.simulated_nvml.SimulatedNvml`;
both are driven by the same :func:`read_gpus`. Without a GPU (no library, no
driver) and without the knob, the machine simply has no GPUs.
"""

from __future__ import annotations

import importlib
from typing import Any

import attrs

from daemoncore.config import Config
from startd.errors import DiscoveryError
from startd.simulated_nvml import SimulatedNvml

GPU_DISCOVERY = "GPU_DISCOVERY"
_OFF = {"none", "off", "false", "no", "0"}
_AUTO = {"", "auto", "true", "yes", "1"}


@attrs.frozen
class GpuDevice:
    """One card as NVML describes it. ``id`` is HTCondor's short form, ``GPU-`` and 8 hex digits."""

    index: int
    uuid: str
    name: str
    memory_mb: int
    capability: float
    driver_version: str
    cuda_driver_version: int
    numa_node: int

    @property
    def id(self) -> str:
        """The id HTCondor's ``condor_gpu_discovery`` prints by default (``GPU-1a2b3c4d``)."""
        bare = self.uuid[4:] if self.uuid.startswith("GPU-") else self.uuid
        return "GPU-" + bare.replace("-", "")[:8]

    @property
    def attr_name(self) -> str:
        """The slot-ad attribute holding this card's property ad (``GPUs_GPU_1a2b3c4d``)."""
        return "GPUs_" + self.id.replace("-", "_")


def nvml_backend(config: Config, seed: str = "roost") -> Any | None:
    """The NVML module (or stand-in) that ``GPU_DISCOVERY`` selects, or None for no GPUs.

    ``auto`` (the default) uses pynvml when it loads and finds a driver; ``nvml`` insists
    on it; ``none`` turns discovery off; ``simulated:<spec>`` fakes the cards.

    Raises:
        DiscoveryError: the knob's value is unknown, malformed, or ``nvml`` cannot load.
    """
    raw = (config.param(GPU_DISCOVERY) or "auto").strip()
    mode, _, spec = raw.partition(":")
    mode = mode.strip().lower()
    if mode in _OFF:
        return None
    if mode == "simulated":
        return SimulatedNvml(spec, seed)
    if mode in _AUTO or mode == "nvml":
        module = _load_pynvml()
        if module is None and mode == "nvml":
            raise DiscoveryError("GPU_DISCOVERY = nvml, but the pynvml module (package nvidia-ml-py) "
                                 "is not installed")
        return module
    raise DiscoveryError(f"GPU_DISCOVERY = {raw!r}: expected auto, nvml, none or "
                         "simulated:<count>x<model>:<memory>")


def _load_pynvml() -> Any | None:
    try:
        return importlib.import_module("pynvml")
    except ImportError:
        return None


def read_gpus(nvml: Any | None) -> tuple[GpuDevice, ...]:
    """Every card ``nvml`` reports, in index order; none when the library or driver is absent."""
    if nvml is None:
        return ()
    try:
        nvml.nvmlInit()
    except Exception:  # noqa: BLE001 - no driver or library means no GPUs, not a failure
        return ()
    try:
        driver = _text(nvml.nvmlSystemGetDriverVersion())
        cuda = _optional(nvml, "nvmlSystemGetCudaDriverVersion", 0)
        return tuple(_read_device(nvml, i, driver, cuda) for i in range(nvml.nvmlDeviceGetCount()))
    finally:
        try:
            nvml.nvmlShutdown()
        except Exception:  # noqa: BLE001 - shutting down a library we are done with
            pass


def _read_device(nvml: Any, index: int, driver: str, cuda: int) -> GpuDevice:
    handle = nvml.nvmlDeviceGetHandleByIndex(index)
    major, minor = nvml.nvmlDeviceGetCudaComputeCapability(handle)
    memory = nvml.nvmlDeviceGetMemoryInfo(handle)
    return GpuDevice(
        index=index,
        uuid=_text(nvml.nvmlDeviceGetUUID(handle)),
        name=_text(nvml.nvmlDeviceGetName(handle)),
        memory_mb=int(memory.total) // (1024 * 1024),
        capability=float(f"{major}.{minor}"),
        driver_version=driver,
        cuda_driver_version=int(cuda),
        numa_node=int(_optional(nvml, "nvmlDeviceGetNumaNodeId", -1, handle)),
    )


def _optional(nvml: Any, name: str, default: int, *args: Any) -> int:
    """A call that older drivers or libraries lack; ``default`` when it is missing or fails."""
    function = getattr(nvml, name, None)
    if function is None:
        return default
    try:
        return function(*args)
    except Exception:  # noqa: BLE001 - NVML raises its own error classes per failure
        return default


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value


def cuda_version_number(cuda_driver_version: int) -> float:
    """NVML's 12040 as HTCondor's ``DriverVersion`` 12.4."""
    return cuda_driver_version // 1000 + (cuda_driver_version % 1000) // 10 / 10
