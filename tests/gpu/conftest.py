"""Tests on a real NVIDIA GPU: each asks for the ``nvml`` fixture, which skips with the reason
when pynvml is not installed, NVML does not start (no driver), or it sees no device."""

from __future__ import annotations

import importlib
from typing import Any

import pytest


def nvml_or_reason() -> tuple[Any | None, str | None]:
    """The started pynvml module, or why these tests cannot run here."""
    try:
        nvml = importlib.import_module("pynvml")
    except ImportError:
        return None, "needs a real NVIDIA GPU: pynvml (package nvidia-ml-py) is not installed"
    try:
        nvml.nvmlInit()
    except Exception as exc:  # noqa: BLE001 - every NVML failure means no usable GPU here
        return None, f"needs a real NVIDIA GPU: nvmlInit failed: {exc}"
    try:
        count = nvml.nvmlDeviceGetCount()
    except Exception as exc:  # noqa: BLE001
        count, reason = 0, f"nvmlDeviceGetCount failed: {exc}"
    else:
        reason = "NVML sees no device"
    if count < 1:
        nvml.nvmlShutdown()
        return None, f"needs a real NVIDIA GPU: {reason}"
    return nvml, None


@pytest.fixture(scope="session")
def nvml():
    """pynvml, started for the session (NVML counts starts, so the code's own init/shutdown nest)."""
    module, reason = nvml_or_reason()
    if module is None:
        pytest.skip(reason)
    yield module
    module.nvmlShutdown()


@pytest.fixture
def nvml_config(tmp_path):
    """A startd configuration that insists on NVML discovery."""
    from daemoncore.config import Config

    return Config.from_text(f"LOCAL_DIR = {tmp_path}\nEXECUTE = {tmp_path / 'execute'}\nGPU_DISCOVERY = nvml\n",
                            env={})
