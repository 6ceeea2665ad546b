"""Start-up of GPU share enforcement: read ``GPU_SHARING_MODE``, ``GPU_HAMI_CORE_LIBRARY``,
``GPU_MPS_CONTROL``, ``GPU_SAMPLE_INTERVAL`` and ``GPU_OVERUSE_GRACE``, start MPS daemons in
``mps`` mode (the startd stops them when it stops), and build the sampling loop for a
machine with cards.

With ``GPU_DISCOVERY = simulated:...`` the simulated cards read per-process use from
``<EXECUTE>/simulated_gpu_usage`` (sticky and world-writable, like /tmp, so a job of any
account can report its own pid there: the execute directory is one every job account
can reach, unlike a root pool's LOCAL_DIR), and jobs are told that directory.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import attrs

from daemoncore.config import Config, ConfigError
from startd.gpu_monitor import GpuMonitor
from startd.gpu_sharing import GpuSharing, hami_library, sharing_mode
from startd.gpu_watchdog import DEFAULT_OVERUSE_GRACE, DEFAULT_SAMPLE_INTERVAL, GpuWatchdog
from startd.gpus import GpuDevice, nvml_backend
from startd.mps import MpsDaemons, mps_control, start_mps_daemons
from startd.simulated_nvml import SimulatedNvml

SIMULATED_USAGE_DIR = "simulated_gpu_usage"
MPS_DIR = "mps"


@attrs.frozen
class GpuEnforcement:
    """How jobs are told their shares, the loop that samples the cards (None without cards), and
    the MPS daemons to stop with the startd."""

    sharing: GpuSharing
    monitor: GpuMonitor | None
    mps: MpsDaemons = attrs.field(factory=MpsDaemons)


def positive_duration(config: Config, name: str, default: float) -> float:
    """Knob ``name`` as a duration above 0.

    Raises:
        ConfigError: it is not a duration, or not above 0.
    """
    value = config.param_duration(name, default)
    if value is None or value <= 0:
        raise ConfigError(f"{name} = {value}: expected a duration above 0 (seconds, or e.g. 30s, 1m)")
    return value


def build_gpu_enforcement(config: Config, execute_dir: str, hostname: str, gpus: tuple[GpuDevice, ...],
                          reactor, run_blocking: Callable[..., Any]) -> GpuEnforcement:
    """The enforcement of this startd's cards ``gpus`` (discovered on ``hostname``).

    Raises:
        ConfigError: an unknown ``GPU_SHARING_MODE``, a bad duration knob (checked with or without
            cards), or in ``mps`` mode a ``GPU_MPS_CONTROL`` that is not an executable.
    """
    mode = sharing_mode(config)
    interval = positive_duration(config, "GPU_SAMPLE_INTERVAL", DEFAULT_SAMPLE_INTERVAL)
    grace = positive_duration(config, "GPU_OVERUSE_GRACE", DEFAULT_OVERUSE_GRACE)
    binary = mps_control(config) if mode == "mps" else None
    if not gpus:
        return GpuEnforcement(GpuSharing(mode), None)
    base = config.param("LOCAL_DIR") or os.path.dirname(execute_dir)
    nvml = nvml_backend(config, seed=hostname)
    usage_dir = None
    if isinstance(nvml, SimulatedNvml):
        usage_dir = _shared_dir(os.path.join(execute_dir, SIMULATED_USAGE_DIR))
        nvml.usage_dir = usage_dir
    daemons = start_mps_daemons(((g.id, g.uuid) for g in gpus), os.path.join(base, MPS_DIR), binary) \
        if mode == "mps" else MpsDaemons()
    sharing = GpuSharing(mode, hami_library(config) if mode == "hami-core" else None, daemons.dirs, usage_dir)
    monitor = GpuMonitor(reactor, nvml, GpuWatchdog(grace), interval, run_blocking) if nvml else None
    return GpuEnforcement(sharing, monitor, daemons)


def _shared_dir(path: str) -> str:
    """``path`` made (emptied of old reports) with mode 1777."""
    os.makedirs(path, exist_ok=True)
    for name in os.listdir(path):
        try:
            os.remove(os.path.join(path, name))
        except OSError:
            pass
    os.chmod(path, 0o1777)
    return path
