"""MPS control daemons with a stand-in nvidia-cuda-mps-control first on PATH (a real subprocess):
one started per card at start-up with its own directories, a share job pointed at its card's
daemon, and each told to quit when the startd stops."""

from __future__ import annotations

import os

import pytest

import classad
from daemoncore.config import Config, ConfigError
from startd.gpu_enforcement import build_gpu_enforcement
from startd.gpu_sharing import gpu_environment
from startd.gpus import nvml_backend, read_gpus
from startd.mps import mps_control, stop_mps_daemons
from tests.support import mps_stand_in

pytestmark = pytest.mark.integration


@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    binary, record = mps_stand_in.install(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{binary.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    return record


def enforcement(tmp_path, knobs=""):
    config = Config.from_text(f"LOCAL_DIR = {tmp_path}\nGPU_SHARING_MODE = mps\n"
                              f"GPU_DISCOVERY = simulated:2xA100:40G\n{knobs}", env={})
    gpus = read_gpus(nvml_backend(config, seed="h"))
    return gpus, build_gpu_enforcement(config, str(tmp_path / "execute"), "h", gpus, None, lambda f, *a: f(*a))


def test_start_up_starts_one_daemon_per_card_with_its_own_directories(tmp_path, stand_in):
    """Each card's daemon is `-d` with CUDA_VISIBLE_DEVICES = its UUID and pipe/log dirs under LOCAL_DIR/mps/<id>."""
    gpus, found = enforcement(tmp_path)
    started = mps_stand_in.calls(stand_in)
    assert [call["args"] for call in started] == [["-d"], ["-d"]]
    for gpu, call in zip(gpus, started, strict=True):
        pipe, log = tmp_path / "mps" / gpu.id / "pipe", tmp_path / "mps" / gpu.id / "log"
        assert call["env"] == {"CUDA_VISIBLE_DEVICES": gpu.uuid, "CUDA_MPS_PIPE_DIRECTORY": str(pipe),
                               "CUDA_MPS_LOG_DIRECTORY": str(log)}
        assert pipe.is_dir() and log.is_dir()
        assert found.sharing.mps[gpu.id].pipe == str(pipe)


def test_a_share_job_is_pointed_at_its_cards_daemon_with_its_limits(tmp_path, stand_in):
    """A 10000-MiB, 30%-cores share of the second card gets that card's pipe directory and the MPS limits."""
    gpus, found = enforcement(tmp_path)
    card = gpus[1]
    slot = classad.ClassAd({"AssignedGPUs": card.id, "AssignedGPUMemoryMb": 10000, "AssignedGPUCores": 30,
                            "GPUShareWhole": False, card.attr_name: classad.ClassAd({"UUID": card.uuid})})
    env = gpu_environment(slot, found.sharing)
    assert env["CUDA_MPS_PIPE_DIRECTORY"] == str(tmp_path / "mps" / card.id / "pipe")
    assert env["CUDA_MPS_LOG_DIRECTORY"] == str(tmp_path / "mps" / card.id / "log")
    assert env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] == "0=10000M"
    assert env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] == "30"
    assert env["CUDA_VISIBLE_DEVICES"] == card.id


def test_stopping_quits_each_daemon_it_started(tmp_path, stand_in):
    """stop sends `quit` on stdin to each card's daemon, named by its pipe directory."""
    gpus, found = enforcement(tmp_path)
    stop_mps_daemons(found.mps)
    quits = mps_stand_in.calls(stand_in)[2:]
    assert [(call["args"], call["stdin"]) for call in quits] == [([], "quit\n"), ([], "quit\n")]
    assert sorted(call["env"]["CUDA_MPS_PIPE_DIRECTORY"] for call in quits) == \
        sorted(str(tmp_path / "mps" / gpu.id / "pipe") for gpu in gpus)


def test_a_card_whose_daemon_fails_to_start_runs_without_mps(tmp_path):
    """A control program that exits 1 leaves the cards without daemons, and nothing to stop."""
    failing = tmp_path / "failing-mps"
    failing.write_text("#!/bin/sh\necho no driver >&2\nexit 1\n")
    failing.chmod(0o755)
    _, found = enforcement(tmp_path, f"GPU_MPS_CONTROL = {failing}\n")
    assert dict(found.sharing.mps) == {} and dict(found.mps.dirs) == {}


def test_gpu_mps_control_names_the_binary_and_a_bad_one_is_a_config_error(tmp_path, stand_in):
    """GPU_MPS_CONTROL overrides PATH; a path that is no executable stops the startd naming the knob."""
    other, record = mps_stand_in.install(tmp_path / "other")
    assert mps_control(Config.from_text(f"GPU_MPS_CONTROL = {other}\n", env={})) == str(other)
    enforcement(tmp_path, f"GPU_MPS_CONTROL = {other}\n")
    assert len(mps_stand_in.calls(record)) == 2 and mps_stand_in.calls(stand_in) == []
    with pytest.raises(ConfigError, match="GPU_MPS_CONTROL = /nowhere/mps"):
        enforcement(tmp_path, "GPU_MPS_CONTROL = /nowhere/mps\n")
