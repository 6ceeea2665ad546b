"""Simulated per-process card use read through the NVML calls, and the monitor holding a run."""

from __future__ import annotations

import os

import attrs
import pytest
from twisted.internet import task
from twisted.internet.defer import maybeDeferred

import classad
from startd.gpu_monitor import GpuMonitor, sample_cards
from startd.gpu_watchdog import GpuWatchdog
from startd.simulated_nvml import SimulatedNvml


@pytest.fixture
def nvml(tmp_path):
    return SimulatedNvml("2xA100:40G", usage_dir=str(tmp_path))


def short_id(uuid: str) -> str:
    return "GPU-" + uuid[4:].replace("-", "")[:8]


def test_a_live_process_reports_memory_and_utilisation(nvml, tmp_path):
    """A file named by a live pid shows up as that process on the card it names (by id or index)."""
    card = nvml.devices[1]
    (tmp_path / str(os.getpid())).write_text(f"{short_id(card.uuid)} 12000 40\n0 100\nnonsense\n")
    samples = sample_cards(nvml)
    assert [s.uuid for s in samples] == [d.uuid for d in nvml.devices]
    assert [(p.pid, p.used_mib) for p in samples[1].processes] == [(os.getpid(), 12000)]
    assert samples[1].utilisation == 0.4
    assert [(p.pid, p.used_mib) for p in samples[0].processes] == [(os.getpid(), 100)]
    nvml.nvmlInit()
    assert nvml.nvmlDeviceGetMemoryInfo(card).used == 12000 * 1024 * 1024


def test_the_file_of_a_process_that_ended_is_ignored(nvml, tmp_path):
    """A pid that no longer runs (above any pid_max) uses nothing."""
    (tmp_path / "99999999").write_text("0 5000\n")
    assert all(s.processes == () for s in sample_cards(nvml))


@attrs.define
class _Starter:
    pid: int


@attrs.define
class _Run:
    """What the monitor reads of a JobRun, recording the hold it asks for."""

    job_id: str
    starter: _Starter
    machine_ad: classad.ClassAd
    ended: bool = False
    gpu_attributes: dict = attrs.field(factory=dict)
    holds: list = attrs.field(factory=list)

    def hold_for(self, attrs_: dict) -> None:
        self.holds.append(attrs_)


def test_the_monitor_holds_a_run_over_its_share_and_records_its_usage(nvml, tmp_path):
    """Sampled every 10 s with a 30 s grace, a job using 12000 MiB of a 10000 MiB share is held at 40 s."""
    card = nvml.devices[0]
    ad = classad.ClassAd({"AssignedGPUs": short_id(card.uuid), "AssignedGPUMemoryMb": 10000,
                          "AssignedGPUCores": 50, "GPUShareWhole": False})
    ad["GPUs_" + short_id(card.uuid).replace("-", "_")] = classad.ClassAd({"UUID": card.uuid})
    run = _Run("3.0", _Starter(os.getpid()), ad)
    (tmp_path / str(os.getpid())).write_text(f"{card.uuid} 12000 80\n")
    clock = task.Clock()
    monitor = GpuMonitor(clock, nvml, GpuWatchdog(grace=30), 10, maybeDeferred, lambda: [run])
    monitor.start()
    for _ in range(3):
        clock.advance(10)
    assert run.holds == []
    assert monitor.latest() == {"3.0": {card.uuid: (12000, 0.8)}}
    clock.advance(10)
    clock.advance(10)
    assert [h["HoldReasonCode"] for h in run.holds] == [34]
    assert run.holds[0]["HoldReason"] == (f"GPU {short_id(card.uuid)}: job used 12000 MiB of its 10000 MiB "
                                          "share for more than 30 s")
    assert run.gpu_attributes == {"GPUsMemoryUsage": 12000, "GPUsAverageUsage": 0.8}
    monitor.stop()
