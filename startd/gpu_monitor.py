"""The startd's GPU sampling loop: every ``GPU_SAMPLE_INTERVAL`` it reads each card's
processes and utilisation through NVML and the running jobs' process trees (in a thread:
NVML calls may block), lets :class:`~startd.gpu_watchdog.GpuWatchdog` decide, holds the
jobs it names and gives every run its ``GPUsMemoryUsage``/``GPUsAverageUsage``.

A sample is not started while the last one is still out, so a hung driver costs one thread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from twisted.internet import task
from twisted.internet.defer import Deferred
from twisted.logger import Logger

from startd.gpu_sharing import assigned_cards
from startd.gpu_watchdog import CardLimit, CardSample, GpuWatchdog, ProcessUse, WatchedJob
from startd.usage import tree_processes

_log = Logger()
MIB = 1024 * 1024


def sample_cards(nvml: Any) -> tuple[CardSample, ...]:
    """Every card's processes (pid, MiB) and utilisation, by pynvml's calls (or the simulation's)."""
    nvml.nvmlInit()
    try:
        found = []
        for index in range(nvml.nvmlDeviceGetCount()):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            uuid = nvml.nvmlDeviceGetUUID(handle)
            uuid = uuid.decode() if isinstance(uuid, bytes) else uuid
            processes = tuple(ProcessUse(int(p.pid), int(p.usedGpuMemory or 0) // MIB)
                              for p in nvml.nvmlDeviceGetComputeRunningProcesses(handle))
            busy = nvml.nvmlDeviceGetUtilizationRates(handle).gpu
            found.append(CardSample(uuid, max(0.0, min(1.0, busy / 100)), processes))
        return tuple(found)
    finally:
        nvml.nvmlShutdown()


def tree_pids(pid: int | None) -> frozenset[int]:
    """The pids of ``pid``'s process tree now (none once it is gone)."""
    return frozenset(p.pid for p in tree_processes(pid)) if pid is not None else frozenset()


def _limits(machine_ad) -> tuple[CardLimit, ...]:
    return tuple(CardLimit(card.uuid, card.id, card.memory_mib) for card in assigned_cards(machine_ad))


def read_sample(nvml: Any, roots: list[tuple[str, int | None, tuple[CardLimit, ...]]]
                ) -> tuple[tuple[CardSample, ...], list[WatchedJob]]:
    """The cards and the jobs' process trees, read together (blocking: run in a thread)."""
    jobs = [WatchedJob(job_id, tree_pids(pid), cards) for job_id, pid, cards in roots]
    return sample_cards(nvml), jobs


# Mutable: the loop and the watchdog's state.
class GpuMonitor:
    """Samples the cards of ``nvml`` every ``interval`` seconds for the runs ``runs()`` returns."""

    def __init__(self, reactor, nvml: Any, watchdog: GpuWatchdog, interval: float,
                 run_blocking: Callable[..., Deferred], runs: Callable[[], Iterable[Any]] = tuple) -> None:
        self.reactor = reactor
        self.nvml = nvml
        self.watchdog = watchdog
        self.interval = interval
        self._runs = runs
        self._run_blocking = run_blocking
        self._loop = task.LoopingCall(self.sample)
        self._loop.clock = reactor

    def watch(self, runs: Callable[[], Iterable[Any]]) -> None:
        """Sample for the runs ``runs()`` returns (the startd's running jobs)."""
        self._runs = runs

    def start(self) -> None:
        """Sample every interval from now on."""
        if not self._loop.running:
            self._loop.start(self.interval, now=False)

    def stop(self) -> None:
        """Stop sampling."""
        if self._loop.running:
            self._loop.stop()

    def latest(self) -> dict[str, dict[str, tuple[int, float]]]:
        """The last sample's use: per job id, per card UUID, (MiB used, utilisation 0..1)."""
        return self.watchdog.latest()

    def sample(self) -> Deferred:
        """One sample; the Deferred fires once its decisions are applied, and never fails."""
        runs = {run.job_id: run for run in self._runs() if _watchable(run)}
        roots = [(job_id, run.starter.pid, _limits(run.machine_ad)) for job_id, run in runs.items()]
        reading = self._run_blocking(read_sample, self.nvml, roots)
        reading.addCallback(self._apply, runs)
        reading.addErrback(lambda failure: _log.warn("GPU sample failed: {why}", why=failure.getErrorMessage()))
        return reading

    def _apply(self, read: tuple[tuple[CardSample, ...], list[WatchedJob]], runs: dict[str, Any]) -> None:
        samples, jobs = read
        for overuse in self.watchdog.observe(self.reactor.seconds(), samples, jobs):
            run = runs.get(overuse.job_id)
            if run is not None:
                run.hold_for(overuse.hold_attributes())
        for job_id, run in runs.items():
            run.gpu_attributes = self.watchdog.job_attributes(job_id)


def _watchable(run: Any) -> bool:
    """A run whose job process is up and that has cards."""
    starter = getattr(run, "starter", None)
    return (starter is not None and starter.pid is not None and not run.ended
            and bool(assigned_cards(run.machine_ad)))
