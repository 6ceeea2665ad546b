"""The sampler: every ``WEB_SAMPLE_INTERVAL`` it reads the jobs running, idle and held
(summed from the Submitter ads, so a large queue costs nothing) and each accounting
group's use and quota (the negotiator's last cycle), and records them in the store.
The read runs in a worker thread; a failed read is logged and skipped."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from twisted.internet import task
from twisted.internet.threads import deferToThreadPool
from twisted.logger import Logger

from web.reader import READ_ERRORS, PoolReader
from web.store import HistoryStore, JobSample

_log = Logger()


def _count(value: object) -> int:
    return int(value) if type(value) in (int, float) else 0


def job_sample(time: float, submitters: Iterable[Mapping]) -> JobSample:
    """The queue's counts at ``time`` from the Submitter ads."""
    ads = list(submitters)
    return JobSample(time, sum(_count(ad.get("RunningJobs")) for ad in ads),
                     sum(_count(ad.get("IdleJobs")) for ad in ads), sum(_count(ad.get("HeldJobs")) for ad in ads))


def _number(value: object) -> float:
    return float(value) if type(value) in (int, float) else 0.0


def group_sample(cycle: Mapping) -> dict[str, tuple[float, float]]:
    """Each group's (in use, quota) from the last cycle's answer."""
    return {group["name"]: (_number(group.get("in_use")), _number(group.get("quota")))
            for group in cycle.get("groups") or ()
            if isinstance(group, Mapping) and isinstance(group.get("name"), str)}


class Sampler:
    """Samples the pool into ``store`` every ``interval`` seconds with ``reader()``'s reader."""

    def __init__(self, reactor, threadpool, store: HistoryStore, reader: Callable[[], PoolReader],
                 interval: float) -> None:
        self._reactor = reactor
        self._threads = threadpool
        self._store = store
        self._reader = reader
        self._loop = task.LoopingCall(self._sample)
        self._loop.clock = reactor
        self._interval = interval

    def start(self) -> None:
        """Sample now and every interval."""
        self._loop.start(self._interval, now=True)

    def stop(self) -> None:
        """Stop sampling."""
        if self._loop.running:
            self._loop.stop()

    def sample_once(self) -> None:
        """Read the pool and record one sample (blocking: a worker thread's work)."""
        reader = self._reader()
        now = self._reactor.seconds()
        jobs = job_sample(now, reader.ads("Submitter", ("RunningJobs", "IdleJobs", "HeldJobs")))
        try:
            groups = group_sample(reader.last_cycle())
        except READ_ERRORS:
            groups = {}
        self._store.record(jobs, groups)

    def _sample(self):
        done = deferToThreadPool(self._reactor, self._threads, self.sample_once)
        done.addErrback(lambda failure: _log.warn("web: sampling the pool failed: {why}",
                                                  why=failure.getErrorMessage()))
        return done
