"""The environment a GPU job gets in each GPU_SHARING_MODE, and the mode knob's check."""

from __future__ import annotations

import pytest

import classad
from daemoncore.config import Config, ConfigError
from startd.gpu_sharing import GpuSharing, MpsDirs, gpu_environment, hami_library, sharing_mode

UUID = "GPU-aaaa0000-1111-2222-3333-444455556666"


def slot_ad(ids: str = "GPU-aaaa0000", memory: int | None = 8192, cores: int | None = 30,
            whole: bool = False) -> classad.ClassAd:
    ad = classad.ClassAd({"AssignedGPUs": ids, "GPUShareWhole": whole})
    if memory is not None:
        ad["AssignedGPUMemoryMb"] = memory
    if cores is not None:
        ad["AssignedGPUCores"] = cores
    ad["GPUs_GPU_aaaa0000"] = classad.ClassAd({"UUID": UUID, "Index": 3})
    return ad


def test_every_mode_shows_the_cards_as_htcondor_does():
    """CUDA_VISIBLE_DEVICES, GPU_DEVICE_ORDINAL and NVIDIA_VISIBLE_DEVICES name the assigned ids."""
    for mode in ("hami-core", "mps", "none"):
        env = gpu_environment(slot_ad("GPU-aaaa0000,GPU-bbbb1111", whole=True), GpuSharing(mode))
        for name in ("CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "NVIDIA_VISIBLE_DEVICES"):
            assert env[name] == "GPU-aaaa0000,GPU-bbbb1111"


def test_hami_core_limits_each_visible_card_and_preloads_the_library(tmp_path):
    """A share of two cards: one memory limit per visible index, the SM limit, LD_PRELOAD of the library."""
    library = tmp_path / "libvgpu.so"
    library.write_bytes(b"")
    config = Config.from_text(f"GPU_HAMI_CORE_LIBRARY = {library}\n", env={})
    env = gpu_environment(slot_ad("GPU-aaaa0000,GPU-bbbb1111"), GpuSharing("hami-core", hami_library(config)))
    assert env["CUDA_DEVICE_MEMORY_LIMIT_0"] == env["CUDA_DEVICE_MEMORY_LIMIT_1"] == "8192m"
    assert env["CUDA_DEVICE_SM_LIMIT"] == "30"
    assert env["LD_PRELOAD"] == str(library)


def test_hami_core_without_the_library_or_for_a_whole_card():
    """A library path that is no file preloads nothing; a whole card gets no limits."""
    config = Config.from_text("GPU_HAMI_CORE_LIBRARY = /nonexistent/libvgpu.so\n", env={})
    assert hami_library(config) is None
    assert "LD_PRELOAD" not in gpu_environment(slot_ad(), GpuSharing("hami-core", hami_library(config)))
    whole = gpu_environment(slot_ad(memory=None, cores=None, whole=True), GpuSharing("hami-core"))
    assert not [name for name in whole if name.startswith("CUDA_DEVICE_")]


def test_mps_points_a_share_at_its_cards_daemon():
    """The card's pipe and log directories, the pinned memory limit and the thread percentage."""
    dirs = MpsDirs("/l/mps/GPU-aaaa0000/pipe", "/l/mps/GPU-aaaa0000/log")
    env = gpu_environment(slot_ad(), GpuSharing("mps", mps={"GPU-aaaa0000": dirs}))
    assert env["CUDA_MPS_PIPE_DIRECTORY"] == dirs.pipe
    assert env["CUDA_MPS_LOG_DIRECTORY"] == dirs.log
    assert env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] == "0=8192M"
    assert env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] == "30"
    assert "CUDA_DEVICE_MEMORY_LIMIT_0" not in env


def test_mps_without_a_daemon_runs_the_job_without_mps():
    """No daemon for the card (the binary is missing): visibility only, the job still runs."""
    env = gpu_environment(slot_ad(), GpuSharing("mps"))
    assert env["CUDA_VISIBLE_DEVICES"] == "GPU-aaaa0000"
    assert not [name for name in env if name.startswith("CUDA_MPS_")]


def test_none_is_visibility_only():
    """GPU_SHARING_MODE = none gives a share no limits."""
    env = gpu_environment(slot_ad(), GpuSharing("none"))
    assert set(env) == {"CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "NVIDIA_VISIBLE_DEVICES",
                        "_CONDOR_AssignedGPUs"}


def test_the_mode_knob():
    """Unset is hami-core, case does not matter, anything else is a config error naming the choices."""
    assert sharing_mode(Config.from_text("", env={})) == "hami-core"
    assert sharing_mode(Config.from_text("GPU_SHARING_MODE = MPS\n", env={})) == "mps"
    with pytest.raises(ConfigError, match="GPU_SHARING_MODE = 'mig'.*hami-core, mps, none"):
        sharing_mode(Config.from_text("GPU_SHARING_MODE = mig\n", env={}))
