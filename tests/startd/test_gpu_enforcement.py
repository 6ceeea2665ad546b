"""Start-up of GPU enforcement in build_startd: the knobs' checks, the simulated usage directory,
and mps mode without the MPS binary."""

from __future__ import annotations

import os
import stat

import pytest

from daemoncore.config import Config, ConfigError
from daemoncore.security import create_signing_key
from startd.gpu_enforcement import build_gpu_enforcement
from startd.gpus import nvml_backend, read_gpus
from startd.service import build_startd
from tests.support.daemon_settings import daemon_settings


def startd(tmp_path, clock, knobs: str):
    key_file = tmp_path / "POOL"
    create_signing_key(str(key_file))
    config = Config.from_text(f"LOCAL_DIR = {tmp_path}\nEXECUTE = {tmp_path / 'execute'}\n{knobs}", env={})
    settings = daemon_settings(".", "STARTD", "Machine", signing_key_file=str(key_file))
    return build_startd(settings, clock, config)


def test_an_unknown_sharing_mode_stops_the_startd_at_start(tmp_path, clock):
    """GPU_SHARING_MODE = mig is a config error naming the modes, with or without cards."""
    with pytest.raises(ConfigError, match="GPU_SHARING_MODE = 'mig'"):
        startd(tmp_path, clock, "GPU_SHARING_MODE = mig\nGPU_DISCOVERY = none\n")


@pytest.mark.parametrize("knob", ["GPU_SAMPLE_INTERVAL = 0", "GPU_OVERUSE_GRACE = soon"])
def test_bad_sampling_durations_are_config_errors(tmp_path, clock, knob):
    """The watchdog's durations must be durations above 0."""
    with pytest.raises(ConfigError, match=knob.split()[0]):
        startd(tmp_path, clock, f"{knob}\nGPU_DISCOVERY = simulated:1xT4:16G\n")


def test_simulated_cards_get_a_monitor_and_a_usage_directory_jobs_are_told(tmp_path, clock):
    """With simulated cards the startd samples every GPU_SAMPLE_INTERVAL, and the sticky usage
    directory under EXECUTE is what jobs find in ROOST_SIMULATED_GPU_USAGE."""
    service = startd(tmp_path, clock, "GPU_DISCOVERY = simulated:2xA100:40G\nGPU_SAMPLE_INTERVAL = 2\n"
                                      "GPU_OVERUSE_GRACE = 5\n")
    monitor = service.gpu_monitor
    assert (monitor.interval, monitor.watchdog.grace) == (2, 5)
    usage = service.run_settings.gpu_sharing.simulated_usage_dir
    assert usage == str(tmp_path / "execute" / "simulated_gpu_usage")
    assert stat.S_IMODE(os.stat(usage).st_mode) == 0o1777
    assert monitor.nvml.usage_dir == usage


def test_no_cards_no_monitor(tmp_path, clock):
    """A machine without cards samples nothing."""
    service = startd(tmp_path, clock, "GPU_DISCOVERY = none\n")
    assert service.gpu_monitor is None
    assert service.run_settings.gpu_sharing.mode == "hami-core"


def test_mps_without_the_binary_runs_jobs_without_mps(tmp_path, clock, monkeypatch):
    """No nvidia-cuda-mps-control on PATH: no daemons, no error."""
    monkeypatch.setenv("PATH", str(tmp_path))
    config = Config.from_text("GPU_SHARING_MODE = mps\nGPU_DISCOVERY = simulated:1xA100:40G\n", env={})
    gpus = read_gpus(nvml_backend(config, seed="h"))
    found = build_gpu_enforcement(config, str(tmp_path / "execute"), "h", gpus, clock, lambda f, *a: f(*a))
    assert (found.sharing.mode, dict(found.sharing.mps)) == ("mps", {})
