"""The pool as the site last read it: slots, GPU slots, jobs, schedds, submitters and the
negotiator's view, read in a worker thread through the REST routes and kept until the
next read. Pages are rendered from it, so a page costs the same for 10 slots or 10,000:
reading 100,000 jobs takes the schedd seconds, and no request waits for that.

The reads go one after another, ``interval`` seconds after the last one ended, so a big
pool is read as often as it can be without loading its daemons; while reads are cheap
(a small pool), a page asks for one of its own, so it never shows a stale queue. A failed
read keeps the last good snapshot and says why."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import attrs
from attrs import frozen
from twisted.internet.defer import Deferred, succeed
from twisted.internet.threads import deferToThreadPool
from twisted.logger import Logger

from web import pages
from web.card_utilisation import card_utilisation
from web.reader import READ_ERRORS, PoolReader

#: Jobs the queue page links to at most.
MAX_JOB_LINKS = 200
#: A read of the pool faster than this is made for each page asked (coalesced), so pages are never stale.
CHEAP_READ_SECONDS = 0.5

_log = Logger()


@frozen
class Snapshot:
    """What one read of the pool found at ``time``, already made into each page's data
    (the ads themselves are not kept); ``problem`` says what could not be read."""

    time: float
    pool: dict = attrs.field(factory=lambda: pages.pool_page(()))
    gpus: dict = attrs.field(factory=lambda: pages.gpus_page(()))
    queue: dict = attrs.field(factory=lambda: pages.queue_page(()))
    job_links: tuple[dict, ...] = ()
    fairshare: dict = attrs.field(factory=lambda: pages.fairshare_page((), {}))
    flocking: dict = attrs.field(factory=lambda: pages.flocking_page((), (), ()))
    problem: str | None = None


def job_links(jobs: Sequence[Mapping], count: int = MAX_JOB_LINKS) -> tuple[dict, ...]:
    """The first ``count`` jobs as the queue page links them."""
    return tuple({"id": f"{job.get('ClusterId')}.{job.get('ProcId')}", "owner": job.get("Owner", ""),
                  "batch": job.get("JobBatchName", ""), "status": job.get("JobStatus")} for job in jobs[:count])


def take_snapshot(reader: PoolReader, now: float) -> Snapshot:
    """Read the pool and make each page's data (blocking). A negotiator that does not
    answer leaves the fair-share page empty and says so.

    Raises:
        RemoteError, Unreachable, ValueError, OSError: the collector or a schedd did not answer.
    """
    pool = pages.pool_page(reader.slots())
    gpu_slots = reader.ads("Machine", (), "TotalSlotGPUs > 0")
    gpus = pages.gpus_page(gpu_slots, card_utilisation(gpu_slots, reader.metrics, READ_ERRORS))
    schedds = reader.schedds()
    jobs = reader.jobs()
    flocking = pages.flocking_page(schedds, reader.ads("Submitter"), jobs)
    problem = None
    try:
        fairshare = pages.fairshare_page(reader.priorities(), reader.last_cycle())
    except READ_ERRORS as exc:
        fairshare, problem = pages.fairshare_page((), {}), f"the negotiator did not answer: {exc}"
    return Snapshot(now, pool, gpus, pages.queue_page(jobs), job_links(jobs), fairshare, flocking, problem)


class SnapshotKeeper:
    """Keeps the latest snapshot fresh: reads again ``interval`` seconds after each read ends.

    While a read of the pool takes less than ``cheap`` seconds, a page waits for a read
    that starts after it was asked for (one read serves every page waiting), so a job
    just submitted is on the next page; once reads are slower, a page gets the latest."""

    def __init__(self, reactor, threadpool, reader: Callable[[], PoolReader], interval: float,
                 cheap: float = CHEAP_READ_SECONDS) -> None:
        self._reactor = reactor
        self._threads = threadpool
        self._reader = reader
        self._interval = interval
        self._cheap = cheap
        self._next = None
        self._stopped = False
        self._reading = False
        self._began = False  # the read under way has started reading (set in its worker thread)
        self._last_duration = 0.0
        self._waiting: list[Deferred] = []  # served by the read under way
        self._queued: list[Deferred] = []  # asked during a read: served by the one after it
        self.latest: Snapshot | None = None

    @property
    def last_duration(self) -> float:
        """Seconds the last read of the pool took (0 before the first)."""
        return self._last_duration

    def current(self) -> Deferred:
        """Fires with the snapshot a page shows: a fresh read's when reads are cheap, else the latest."""
        if self.latest is not None and self._last_duration > self._cheap:
            return succeed(self.latest)
        waiter: Deferred = Deferred()
        if self._reading and self._began:
            self._queued.append(waiter)
        elif self._reading:
            self._waiting.append(waiter)  # the read has not begun: what it reads is newer than the question
        else:
            self._waiting.append(waiter)
            self._read()
        return waiter

    def start(self) -> None:
        """Read now, then keep reading."""
        self._stopped = False
        if not self._reading:
            self._read()

    def stop(self) -> None:
        """Stop reading."""
        self._stopped = True
        if self._next is not None and self._next.active():
            self._next.cancel()

    def _read(self) -> None:
        if self._next is not None and self._next.active():
            self._next.cancel()
        self._reading, self._began = True, False
        started = self._reactor.seconds()
        done = deferToThreadPool(self._reactor, self._threads, self._take, self._reader(), started)
        done.addCallbacks(self._keep, self._failed, errbackArgs=(started,))
        done.addBoth(self._again, started)

    def _take(self, reader: PoolReader, now: float) -> Snapshot:
        self._began = True
        return take_snapshot(reader, now)

    def _keep(self, snapshot: Snapshot) -> None:
        self.latest = snapshot

    def _failed(self, failure, now: float) -> None:
        why = f"the pool did not answer: {failure.getErrorMessage()}"
        _log.warn("web: reading the pool failed: {why}", why=why)
        self.latest = attrs.evolve(self.latest, problem=why) if self.latest else Snapshot(now, problem=why)

    def _again(self, _result, started: float) -> None:
        self._reading = False
        self._last_duration = self._reactor.seconds() - started
        waiting, self._waiting = self._waiting, []
        for waiter in waiting:
            waiter.callback(self.latest)
        if self._queued:
            self._waiting, self._queued = self._queued, []
            self._read()
        elif not self._stopped:
            self._next = self._reactor.callLater(self._interval, self._read)
